import { Type, type Static } from '@sinclair/typebox';
import { formatMoney, fromDb } from '../money.js';
import type { OrderRow } from './queries.js';
import { sharedDetails } from './details.js';
import { statusText } from './state-machine.js';

/** orderType of the order record: the spec leaves its values open; Cashgate's are these. */
export const ORDER_TYPE = {
  collection: { code: 1, text: 'COLLECTION' },
  transfer: { code: 2, text: 'TRANSFER' },
} as const;

/** orderResourceType: how the order came to be. */
export const ORDER_RESOURCE_TYPE = { api: { code: 1, text: 'API' } } as const;

/** markStatus: 0 = not marked (no manual review flag). */
export const MARK_STATUS_NONE = 0;

/** markStatus 1: a collection was paid with an amount other than the order's (orderActualAmount says how much). */
export const MARK_STATUS_AMOUNT_DIFFERS = 1;

/** A collection's markStatus: marked when what was paid differs from what was asked (in reais, or in token units). */
export function collectionMarkStatus(order: Pick<OrderRow, 'actual_amount' | 'amount' | 'details'>): number {
  const differs =
    order.actual_amount !== null &&
    (order.actual_amount !== order.amount || sharedDetails(order).amountDiffers === true);
  return differs ? MARK_STATUS_AMOUNT_DIFFERS : MARK_STATUS_NONE;
}

/** payType codes of the spec, with their text (payTypeCode, payTypeName). */
export const PAY_TYPES = {
  101: 'PIX',
  102: 'BANK',
  103: 'PIX_DYNAMIC',
  107: 'CHARGE',
  109: 'BOLETO',
  112: 'WALLET',
  201: 'PIX',
  202: 'BANK',
} as const satisfies Record<number, string>;

export function payTypeText(payType: number): string {
  return (PAY_TYPES as Record<number, string>)[payType] ?? String(payType);
}

export const money = (order: OrderRow, amount: number | null): string | null =>
  amount === null ? null : formatMoney(fromDb(amount), order.currency);

/** Who is paid or pays: account fields of the order record. */
export interface OrderAccount {
  accountType: string;
  accountName: string;
  accountNo: string;
}

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);

/** The collection and transfer order record (queries 8, 9, 14, 15). */
export function OrderRecordSchema(orderFee: 'string' | 'integer') {
  return Type.Object({
    orderId: Type.String(),
    cashierId: Type.String({ description: 'empty for transfers' }),
    orderType: Type.Integer({ description: '1 COLLECTION, 2 TRANSFER' }),
    orderResourceType: Type.Integer({ description: '1 API (created through the merchant API)' }),
    userId: Type.String({ description: 'the merchant that created the order' }),
    orderStatus: Type.Integer(),
    orderTime: Type.Integer(),
    channelOrderId: Type.String({ description: "the rail's reference; empty until the rail gives one" }),
    externalOrderId: Type.String(),
    orderAmount: Type.String(),
    orderActualAmount: NullableString,
    orderEntryAmount: Type.String({
      description:
        'collections: credited to the merchant (actual − fee); transfers: taken from the balance (amount + fee; 0 once released)',
    }),
    orderFee: orderFee === 'integer' ? Type.Integer() : Type.String(),
    orderPayTime: NullableInteger,
    orderCompleteTime: NullableInteger,
    currencyType: Type.String(),
    payType: Type.Integer(),
    tradeNote: Type.String({ description: 'the remark' }),
    notifyUrl: Type.String(),
    markStatus: Type.Integer({
      description: "0: not marked; 1: a collection paid with another amount than the order's",
    }),
    errorMsg: NullableString,
    errorMsgEn: NullableString,
    accountType: Type.String(),
    accountName: Type.String(),
    accountNo: Type.String(),
    orderTypeCode: Type.String(),
    orderResourceTypeCode: Type.String(),
    orderStatusCode: Type.String(),
    payTypeCode: Type.String(),
  });
}
export type OrderRecord = Static<ReturnType<typeof OrderRecordSchema>>;

/** The order record of the spec, from an order row. */
export function orderRecord(order: OrderRow, account: OrderAccount): OrderRecord {
  const fee = fromDb(order.fee);
  const actual = order.actual_amount === null ? null : fromDb(order.actual_amount);
  const released = order.kind === 'transfer' && (order.status === 4 || order.status === 16);
  const entry =
    order.kind === 'collection' ? (actual === null ? 0n : actual - fee) : released ? 0n : fromDb(order.amount) + fee;
  // Exchange orders have their own record (src/exchange/records.ts).
  const type = ORDER_TYPE[order.kind as keyof typeof ORDER_TYPE];
  return {
    orderId: order.id,
    cashierId: order.cashier_id ?? '',
    orderType: type.code,
    orderResourceType: ORDER_RESOURCE_TYPE.api.code,
    userId: order.merchant_id,
    orderStatus: order.status,
    orderTime: order.created_at,
    channelOrderId: order.channel_order_id ?? '',
    externalOrderId: order.external_order_id,
    orderAmount: money(order, order.amount) ?? '',
    orderActualAmount: money(order, order.actual_amount),
    orderEntryAmount: formatMoney(entry, order.currency),
    orderFee: money(order, order.fee) ?? '',
    orderPayTime: order.pay_time,
    orderCompleteTime: order.complete_time,
    currencyType: order.currency,
    payType: order.pay_type,
    tradeNote: order.remark ?? '',
    notifyUrl: order.notify_url ?? '',
    markStatus: order.kind === 'collection' ? collectionMarkStatus(order) : MARK_STATUS_NONE,
    errorMsg: order.error_msg,
    errorMsgEn: order.error_msg_en,
    ...account,
    orderTypeCode: type.text,
    orderResourceTypeCode: ORDER_RESOURCE_TYPE.api.text,
    orderStatusCode: statusText(order.kind, order.status),
    payTypeCode: payTypeText(order.pay_type),
  };
}

/** The payment callback (collections of Kenya and Brazil), as the spec's Events section lists it. */
export function paymentCallbackPayload(order: OrderRow, payParam: string): Record<string, unknown> {
  return {
    currencyType: order.currency,
    orderActualAmount: money(order, order.actual_amount),
    orderId: order.id,
    orderFee: money(order, order.fee),
    orderStatus: statusText('collection', order.status),
    payParam,
    externalOrderId: order.external_order_id,
    tradeNote: order.remark ?? '',
    payTypeName: payTypeText(order.pay_type),
    orderAmount: money(order, order.amount),
    orderTime: order.created_at,
    payType: order.pay_type,
    orderStatusCode: order.status,
    markStatus: collectionMarkStatus(order),
    orderPayTime: order.pay_time,
    errorMsg: order.error_msg,
    errorMsgEn: order.error_msg_en,
  };
}
