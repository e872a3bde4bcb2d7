import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';
import { ExactNumber, ExactNumberSchema } from '../http/exact-json.js';
import { CURRENCIES, formatMoney, fromDb } from '../money.js';
import { detailsOf } from '../orders/details.js';
import type { OrderRow } from '../orders/queries.js';
import { EXCHANGE_STATUS } from '../orders/state-machine.js';
import type { Chain } from '../rails/chain/addresses.js';
import { formatUnits, type Token } from './amounts.js';

/** symbolType / exSymbolType: the direction label. */
export const SYMBOL_TYPE = { fiat_to_token: 'FIAT_TO_TOKEN', token_to_fiat: 'TOKEN_TO_FIAT' } as const;

/** What an exchange order keeps beyond the shared order columns (orders.details). */
export interface ExchangeDetails {
  tokenType: Token;
  chainType: Chain;
  /** The quoted token amount in the token's base units. */
  tokenUnits: string;
  tokenDecimals: number;
  /** The rate the order got, fiat per token, fixed at creation. */
  exchangeRate: string;
  /** Fiat → token: the merchant's receiving address. Token → fiat: the deposit address Cashgate derived. */
  addressTo: string;
  /** Token → fiat: the address the payer sends from. */
  addressFrom?: string;
  /** Token → fiat: the deposit address's derivation path. */
  depositPath?: string;
  /** Token → fiat: the quoted fiat credit net of fee, in minor units. */
  quotedNet?: string;
  /** The send's (fiat → token) or the deposit's (token → fiat) transaction hash. */
  tradeHash?: string;
  /** Token → fiat: what the deposit actually carried, in base units, and from where. */
  receivedUnits?: string;
  receivedFrom?: string;
}

declare module '../orders/details.js' {
  interface OrderDetailsByArea {
    exchange: { fiat_to_token: ExchangeDetails; token_to_fiat: ExchangeDetails };
  }
}

export const exchangeDetails = (order: Pick<OrderRow, 'id' | 'area' | 'details'>) => detailsOf(order, 'exchange');

const fiat = (order: OrderRow, minor: number | string) => formatMoney(fromDb(minor), order.currency);

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const NullableInteger = (description?: string) =>
  Type.Union([Type.Integer(), Type.Null()], description === undefined ? {} : { description });
const NullableString = (description?: string) =>
  Type.Union([Type.String(), Type.Null()], description === undefined ? {} : { description });

/**
 * The exchange order record's schema, members in the spec's order: orderFee is a number (fiat →
 * token) or a string (token → fiat), and only a token → fiat record has notifyUrl.
 */
function recordSchema<F extends TSchema, N extends TProperties>(
  direction: keyof typeof SYMBOL_TYPE,
  orderFee: F,
  notifyUrl: N,
) {
  return Type.Object({
    tokenAmount: Type.String({ description: 'the quoted token amount' }),
    currencyAmount: Type.String({
      description: 'fiat → token: the fiat taken (fee included); token → fiat: the quoted fiat credit, net of fee',
    }),
    orderAmount: Type.String({ description: "the order's whole fiat value before fee" }),
    orderActualAmount: NullableNumber(
      'fiat actually taken (fiat → token, from status 2) or credited (token → fiat, at 8); null until then',
    ),
    orderFee,
    orderPayTime: NullableInteger('when the fiat was taken (fiat → token) or the deposit confirmed (token → fiat)'),
    orderCompleteTime: NullableInteger(),
    currencyType: Type.String(),
    tokenType: Type.String(),
    chainType: Type.String(),
    exSymbolType: Type.String({ description: SYMBOL_TYPE[direction] }),
    exchangeRate: Type.String({ description: 'fiat per token, fixed when the order was created' }),
    addressTo: Type.String({
      description: direction === 'fiat_to_token' ? 'the receiving address' : 'the deposit address',
    }),
    remark: Type.String(),
    ...notifyUrl,
    tradeHash: Type.String({ description: 'the transaction hash; empty until known' }),
    errorMsg: NullableString(),
    errorMsgEn: NullableString(),
    orderId: Type.String(),
    externalOrderId: Type.String(),
    orderStatus: Type.Integer({
      description: '1 wait pay currency, 2 receiving currency, 4 wait receive token, 8 complete, 32 failed',
    }),
  });
}

/** Query 3 and the fiat → token callback. */
export const FiatToTokenRecord = recordSchema(
  'fiat_to_token',
  NullableNumber('the fiat fee, fixed by the quote (0 once an order fails)'),
  {},
);

/** Query 5 and the token → fiat callback. */
export const TokenToFiatRecord = recordSchema(
  'token_to_fiat',
  NullableString('the fiat fee; null until the deposit is confirmed'),
  { notifyUrl: Type.String() },
);

type FiatToTokenRecordData = Static<typeof FiatToTokenRecord>;
type TokenToFiatRecordData = Static<typeof TokenToFiatRecord>;

/** The members both records share, as the order has them. */
function recordBase(order: OrderRow, currencyAmount: string) {
  const d = exchangeDetails(order);
  return {
    tokenAmount: formatUnits(BigInt(d.tokenUnits), d.tokenDecimals),
    currencyAmount,
    orderAmount: fiat(order, order.amount),
    orderActualAmount: order.actual_amount === null ? null : Number(fiat(order, order.actual_amount)),
    orderPayTime: order.pay_time,
    orderCompleteTime: order.complete_time,
    currencyType: order.currency,
    tokenType: d.tokenType,
    chainType: d.chainType,
    exSymbolType: SYMBOL_TYPE[order.kind === 'token_to_fiat' ? 'token_to_fiat' : 'fiat_to_token'],
    exchangeRate: d.exchangeRate,
    addressTo: d.addressTo,
    remark: order.remark ?? '',
    tradeHash: d.tradeHash ?? '',
    errorMsg: order.error_msg,
    errorMsgEn: order.error_msg_en,
    orderId: order.id,
    externalOrderId: order.external_order_id,
    orderStatus: order.status,
  };
}

/** A fiat → token order's record: the fiat taken, and its fee fixed by the quote. */
export function fiatToTokenRecord(order: OrderRow): FiatToTokenRecordData {
  return { ...recordBase(order, fiat(order, order.amount)), orderFee: Number(fiat(order, order.fee)) };
}

/** A token → fiat order's record: the quoted credit, and a fee known once the deposit is confirmed. */
export function tokenToFiatRecord(order: OrderRow): TokenToFiatRecordData {
  const fee = order.status === EXCHANGE_STATUS.complete ? fiat(order, order.fee) : null;
  return {
    ...recordBase(order, fiat(order, exchangeDetails(order).quotedNet ?? '0')),
    orderFee: fee,
    notifyUrl: order.notify_url ?? '',
  };
}

/** The exchange callback: the order's record, as its query answers it. */
export function exchangeRecord(order: OrderRow): FiatToTokenRecordData | TokenToFiatRecordData {
  return order.kind === 'token_to_fiat' ? tokenToFiatRecord(order) : fiatToTokenRecord(order);
}

const CreateResultMembers = {
  orderId: Type.String(),
  symbolType: Type.String(),
  externalOrderId: Type.String(),
  currencyType: Type.String(),
  tokenType: Type.String(),
  chainType: Type.String(),
};

/** Endpoint 2's data. */
export const FiatToTokenResult = Type.Object({
  ...CreateResultMembers,
  currencyAmount: Type.Integer({ description: 'the fiat amount taken, fee included (whole units)' }),
  tokenAmount: ExactNumberSchema({
    description:
      'tokens sent to addressTo: (currencyAmount − fee) ÷ rate, rounded down to the chain’s decimals; written digit for digit',
  }),
});

/** Endpoint 4's data. */
export const TokenToFiatResult = Type.Object({
  ...CreateResultMembers,
  currencyAmount: Type.Integer({
    description: 'the quoted credit net of fee, in whole units (the query shows it to the cent)',
  }),
  tokenAmount: ExactNumberSchema(),
  addressTo: Type.String({
    description:
      'the deposit address derived for this order; send exactly tokenAmount from addressFrom before the quote expires',
  }),
});

/** The members both create results share, in the spec's order, up to currencyAmount (whole units of `minor`). */
function createResultBase(order: OrderRow, direction: keyof typeof SYMBOL_TYPE, minor: number | string) {
  const d = exchangeDetails(order);
  return {
    orderId: order.id,
    symbolType: SYMBOL_TYPE[direction],
    externalOrderId: order.external_order_id,
    currencyType: order.currency,
    tokenType: d.tokenType,
    chainType: d.chainType,
    currencyAmount: Number(fromDb(minor) / 10n ** BigInt(CURRENCIES[order.currency])),
    // A JSON number with every digit of the quote.
    tokenAmount: new ExactNumber(formatUnits(BigInt(d.tokenUnits), d.tokenDecimals)),
  };
}

/** Endpoint 2's data: the fiat taken, fee included, in whole units. */
export function fiatToTokenResult(order: OrderRow): Static<typeof FiatToTokenResult> {
  return createResultBase(order, 'fiat_to_token', order.amount);
}

/** Endpoint 4's data: int64 in the spec, whole units of the quoted credit (the query's currencyAmount has the cents). */
export function tokenToFiatResult(order: OrderRow): Static<typeof TokenToFiatResult> {
  const d = exchangeDetails(order);
  return { ...createResultBase(order, 'token_to_fiat', d.quotedNet ?? '0'), addressTo: d.addressTo };
}
