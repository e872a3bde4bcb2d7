import { Type } from '@sinclair/typebox';
import { ExactNumber } from '../http/exact-json.js';
import { formatMoney, fromDb, type Currency } from '../ledger/money.js';
import { orderDetails } from '../orders/details.js';
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

export const exchangeDetails = (order: Pick<OrderRow, 'details'>) => orderDetails<ExchangeDetails>(order);

const fiat = (order: OrderRow, minor: number | string) => formatMoney(fromDb(minor), order.currency as Currency);

/** The exchange order record (queries 3 and 5, and the exchange callback), field for field as the spec lists it. */
export function exchangeRecord(order: OrderRow): Record<string, unknown> {
  const d = exchangeDetails(order);
  const toFiat = order.kind === 'token_to_fiat';
  const fee = fiat(order, order.fee);
  // The fee of a fiat → token order is fixed by its quote; a token → fiat fee depends on the deposit.
  const feeKnown = !toFiat || order.status === EXCHANGE_STATUS.complete;
  return {
    tokenAmount: formatUnits(BigInt(d.tokenUnits), d.tokenDecimals),
    currencyAmount: toFiat ? fiat(order, d.quotedNet ?? '0') : fiat(order, order.amount),
    orderAmount: fiat(order, order.amount),
    orderActualAmount: order.actual_amount === null ? null : Number(fiat(order, order.actual_amount)),
    orderFee: feeKnown ? (toFiat ? fee : Number(fee)) : null,
    orderPayTime: order.pay_time,
    orderCompleteTime: order.complete_time,
    currencyType: order.currency,
    tokenType: d.tokenType,
    chainType: d.chainType,
    exSymbolType: SYMBOL_TYPE[toFiat ? 'token_to_fiat' : 'fiat_to_token'],
    exchangeRate: d.exchangeRate,
    addressTo: d.addressTo,
    remark: order.remark ?? '',
    ...(toFiat && { notifyUrl: order.notify_url ?? '' }),
    tradeHash: d.tradeHash ?? '',
    errorMsg: order.error_msg,
    errorMsgEn: order.error_msg_en,
    orderId: order.id,
    externalOrderId: order.external_order_id,
    orderStatus: order.status,
  };
}

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const NullableInteger = (description?: string) =>
  Type.Union([Type.Integer(), Type.Null()], description === undefined ? {} : { description });
const NullableString = (description?: string) =>
  Type.Union([Type.String(), Type.Null()], description === undefined ? {} : { description });

/** The exchange order record's schema; orderFee is a number (fiat → token) or a string (token → fiat). */
export function ExchangeRecordSchema(direction: 'fiat_to_token' | 'token_to_fiat') {
  return Type.Object({
    tokenAmount: Type.String({ description: 'the quoted token amount' }),
    currencyAmount: Type.String({
      description: 'fiat → token: the fiat taken (fee included); token → fiat: the quoted fiat credit, net of fee',
    }),
    orderAmount: Type.String({ description: "the order's whole fiat value before fee" }),
    orderActualAmount: NullableNumber(
      'fiat actually taken (fiat → token, from status 2) or credited (token → fiat, at 8); null until then',
    ),
    orderFee:
      direction === 'fiat_to_token'
        ? NullableNumber('the fiat fee, fixed by the quote (0 once an order fails)')
        : NullableString('the fiat fee; null until the deposit is confirmed'),
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
    ...(direction === 'token_to_fiat' && { notifyUrl: Type.String() }),
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

/** tokenAmount of a create result: a JSON number with every digit of the quote. */
export function tokenAmountNumber(order: OrderRow): ExactNumber {
  const d = exchangeDetails(order);
  return new ExactNumber(formatUnits(BigInt(d.tokenUnits), d.tokenDecimals));
}
