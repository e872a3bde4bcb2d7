import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { Clock } from '../clock.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Minor } from '../money.js';
import { collectionTransitions, transferTransitions } from '../orders/effects.js';
import type { OrderRow } from '../orders/queries.js';
import { MARK_STATUS_NONE, money, paymentCallbackPayload, payTypeText } from '../orders/records.js';
import { transferResult, type TransferResultData } from '../orders/schemas.js';
import type { OrderKindSpec } from '../orders/service.js';
import type { BoletoDetails } from './boleto-live.js';
import { statusText } from '../orders/state-machine.js';
import type { Rails } from '../rails/rails.js';
import {
  brazilCollectionCode,
  type BrazilCollectionChannel,
  type BrazilRails,
  type CollectionCode,
} from './collection-codes.js';
import { brazilDetails, type BrazilDetails, type BrazilSettlement } from './details.js';

export const BRAZIL_CURRENCY = 'BRL' as const;

/** payType of a Brazil collection by channelType (the spec's aggregate cashier codes); transfers 201 PIX, 202 BANK. */
export const BRAZIL_COLLECTION_PAY_TYPE = { PIX: 101, PIX_DYNAMIC: 103, BOLETO: 109 } as const;

/** The largest amount each payment code can carry: a BR Code's tag 54 (13 characters), a boleto's 10-digit amount field. */
export const MAX_COLLECTION_CENTS = {
  PIX: 999_999_999_999n,
  PIX_DYNAMIC: 999_999_999_999n,
  BOLETO: 9_999_999_999n,
} as const;

export const BrazilCollectionResult = Type.Object({
  cashierCurrencyAmount: Type.String(),
  cashierExpireTime: Type.Integer(),
  cashierId: Type.String(),
  cashierUrl: Type.String(),
  currency: Type.String(),
  currencyOrderVo: Type.Object({
    amount: Type.String(),
    currency: Type.String(),
    externalOrderId: Type.String(),
    orderId: Type.String(),
    orderStatus: Type.String(),
    orderStatusCode: Type.Integer({ description: '1 pending payment, 2 payment successful' }),
    orderTime: Type.Integer(),
    payParam: Type.String({
      description: 'PIX and PIX_DYNAMIC: the BR Code (copy and paste); BOLETO: the 47-digit linha digitável',
    }),
    payType: Type.Integer(),
    tradeNote: Type.String(),
  }),
  isCreateOrder: Type.Boolean(),
  payType: Type.Integer({ description: '101 PIX, 103 PIX_DYNAMIC, 109 BOLETO' }),
  returnUrl: Type.String(),
  userInfoName: Type.String(),
  userInfoNo: Type.String(),
  userInfoType: Type.String(),
  payTypeCode: Type.String(),
});

/** The Brazil transfer callback of the spec. */
function transferCallback(order: OrderRow): Record<string, unknown> {
  const d = brazilDetails(order);
  return {
    currencyType: order.currency,
    userInfoNo: d.personId ?? '',
    orderId: order.id,
    userInfoType: d.personIdType ?? '',
    accountType: d.accountType ?? '',
    orderFee: money(order, order.fee),
    orderStatus: statusText('transfer', order.status),
    externalOrderId: order.external_order_id,
    tradeNote: order.remark ?? '',
    payTypeName: payTypeText(order.pay_type),
    orderAmount: money(order, order.amount),
    orderTime: order.created_at,
    payType: order.pay_type,
    userInfoName: d.personName ?? '',
    accountNo: d.accountId ?? '',
    orderStatusCode: order.status,
    markStatus: MARK_STATUS_NONE,
    orderPayTime: order.pay_time,
    errorMsg: order.error_msg,
    errorMsgEn: order.error_msg_en,
  };
}

/** ISPB of the sandbox's settlement participant in end-to-end ids (Banco do Brasil's ISPB is all zeros). */
const SANDBOX_ISPB = '00000000';

/**
 * What the rail settles on success: the Pix end-to-end id (the PSP's, as it reported it; the
 * sandbox makes one: E + ISPB + yyyyMMddHHmm + 11 characters), the payer the PSP named, and an
 * authentication code for the voucher.
 */
export function successDetails(
  order: OrderRow,
  now: number,
  data: Readonly<Record<string, string>> = {},
): BrazilSettlement &
  Pick<BrazilDetails, 'payerName' | 'payerDocument'> &
  Pick<BoletoDetails, 'boletoPaidBy' | 'boletoPaidAt' | 'boletoNossoNumero'> {
  const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const random = randomBytes(16).toString('hex').toUpperCase();
  return {
    endToEndId: data.endToEndId ?? `E${SANDBOX_ISPB}${stamp}${random.slice(0, 11)}`,
    ...(data.payerName !== undefined && { payerName: data.payerName }),
    ...(data.payerDocument !== undefined && { payerDocument: data.payerDocument }),
    // A boleto at an issuer: how and when it was paid, and the bank's nosso número, as the issuer said.
    ...(data.boletoPaidBy !== undefined && { boletoPaidBy: data.boletoPaidBy }),
    ...(data.boletoPaidAt !== undefined && { boletoPaidAt: data.boletoPaidAt }),
    ...(data.boletoNossoNumero !== undefined && { boletoNossoNumero: data.boletoNossoNumero }),
    authenticationCode: random.slice(11, 31),
    settledAt: now,
    voucherToken: randomBytes(24).toString('base64url'),
  };
}

export interface BrazilKinds {
  /** False when Pix is live on a PSP (BRAZIL_RAIL=apipix) and boletos are still the sandbox's. */
  boletoLive: boolean;
  /** The amounts the boleto issuer registers, centavos, when one does (BRAZIL_BOLETO_RAIL=efi|inter). */
  boletoLimits: { min: Minor; max: Minor } | undefined;
  collection: OrderKindSpec<Static<typeof BrazilCollectionResult>>;
  transfer: OrderKindSpec<TransferResultData>;
  /** The payment code of a new collection (also one made on an aggregate cashier), from its order id. */
  collectionCode(
    orderId: string,
    channelType: BrazilCollectionChannel,
    amount: Minor,
    cashierLifetimeMs: number,
  ): CollectionCode;
}

/** The Brazil order kinds: collections by Pix (static or dynamic) or boleto, and Pix or bank (TED) payouts. */
export function brazilKinds(deps: {
  rails: Pick<Rails, 'pix' | 'boleto' | 'pixPayout' | 'bankPayout'>;
  ledger: Ledger;
  publicBaseUrl: string;
  /** The operator's Pix key and boleto bank, written into the codes. */
  codes: BrazilRails;
  boletoLimits?: { min: Minor; max: Minor } | undefined;
  clock: Clock;
}): BrazilKinds {
  return {
    boletoLive: deps.codes.live !== true || deps.codes.boleto.issuer !== undefined,
    boletoLimits: deps.boletoLimits,
    collectionCode: (orderId, channelType, amount, cashierLifetimeMs) =>
      brazilCollectionCode({
        orderId,
        channelType,
        amount,
        cashierLifetimeMs,
        now: deps.clock.now(),
        rails: deps.codes,
        publicBaseUrl: deps.publicBaseUrl,
      }),
    collection: {
      area: 'bra',
      kind: 'collection',
      createResult: (order) => {
        const d = brazilDetails(order);
        return {
          cashierCurrencyAmount: money(order, order.amount) ?? '',
          cashierExpireTime: order.cashier_expire_at ?? 0,
          cashierId: order.cashier_id ?? '',
          cashierUrl: `${deps.publicBaseUrl}/cashier/${order.cashier_id ?? ''}`,
          currency: BRAZIL_CURRENCY,
          currencyOrderVo: {
            amount: money(order, order.amount) ?? '',
            currency: BRAZIL_CURRENCY,
            externalOrderId: order.external_order_id,
            orderId: order.id,
            orderStatus: statusText('collection', order.status),
            orderStatusCode: order.status,
            orderTime: order.created_at,
            payParam: d.payParam ?? '',
            payType: order.pay_type,
            tradeNote: order.remark ?? '',
          },
          isCreateOrder: true,
          payType: order.pay_type,
          returnUrl: order.return_url ?? '',
          userInfoName: d.userInfoName ?? '',
          userInfoNo: d.userInfoNo ?? '',
          userInfoType: d.userInfoType ?? '',
          payTypeCode: payTypeText(order.pay_type),
        };
      },
      callbackPayload: (order) => paymentCallbackPayload(order, brazilDetails(order).payParam ?? ''),
      rail: (order) => (order.channel_type === 'BOLETO' ? deps.rails.boleto : deps.rails.pix),
      transition: collectionTransitions(deps.ledger, { successDetails }),
    },
    transfer: {
      area: 'bra',
      kind: 'transfer',
      createResult: transferResult,
      callbackPayload: transferCallback,
      rail: (order) => (order.channel_type === 'BANK' ? deps.rails.bankPayout : deps.rails.pixPayout),
      transition: transferTransitions(deps.ledger, { successDetails }),
    },
  };
}
