import { Type, type Static } from '@sinclair/typebox';
import type { MerchantCaller } from '../auth/plugin.js';
import { signedRoute, type SignedRouteDef } from '../auth/signed-route.js';
import { FormattedString } from '../http/validation.js';
import type { OrderRow } from './queries.js';
import { OrderRecordSchema, orderRecord, type OrderAccount, type OrderRecord } from './records.js';
import type { OrderService } from './service.js';
import { statusText } from './state-machine.js';
import type { OrderArea, OrderKind } from '../store/schema.js';

/** Request members every order endpoint shares, with the spec's limits. */
export const ExternalOrderId = FormattedString('identifier', { minLength: 1, maxLength: 64 });
export const Remark = Type.Optional(Type.String({ maxLength: 255 }));
export const OptionalUrl = Type.Optional(FormattedString('url', { maxLength: 2048 }));

/** An amount as a JSON string (preferred) or number; the endpoint checks its decimals and range. */
export function AmountField(description: string) {
  return Type.Union([Type.String(), Type.Number()], { description });
}

/**
 * What every create request hands to its order as it is: the merchant's id for it, the request
 * itself (an identical repeat returns the first result), and the addresses and note.
 */
export function fromCreateRequest(
  caller: MerchantCaller,
  body: {
    externalOrderId: string;
    notifyUrl?: string | undefined;
    returnUrl?: string | undefined;
    remark?: string | undefined;
  },
) {
  return {
    merchantId: caller.merchantId,
    accessKey: caller.accessKey,
    nonce: caller.nonce,
    externalOrderId: body.externalOrderId,
    requestBody: body,
    notifyUrl: body.notifyUrl ?? null,
    returnUrl: body.returnUrl ?? null,
    remark: body.remark ?? null,
  };
}

/** The body of every order query (8, 9, 14, 15): both ids must name the same order. */
export const QueryBody = Type.Object({
  externalOrderId: ExternalOrderId,
  orderId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** The transfer create result (7, 12, 13). */
export const TransferResult = Type.Object({
  orderId: Type.String(),
  orderStatus: Type.String({ description: 'ACCEPTED' }),
  externalOrderId: Type.String(),
  currencyType: Type.String(),
});

export type TransferResultData = Static<typeof TransferResult>;

export function transferResult(order: OrderRow): TransferResultData {
  return {
    orderId: order.id,
    orderStatus: statusText('transfer', order.status),
    externalOrderId: order.external_order_id,
    currencyType: order.currency,
  };
}

/** An order query endpoint: the caller's order named by both ids, as an array of one order record. */
export function orderQueryRoute(def: {
  path: string;
  /** The area of the orders it finds; more than one when another area's orders share the record (aggregate cashier orders in reais). */
  area: OrderArea | readonly OrderArea[];
  kind: OrderKind;
  tag: string;
  summary: string;
  orders: OrderService;
  account(order: OrderRow): OrderAccount;
  /** Members a query adds to the record, or replaces (e.g. orderFee as an integer). */
  extra?: (order: OrderRow, record: OrderRecord) => Record<string, unknown>;
  extraSchema?: ReturnType<typeof Type.Object>;
  orderFee?: 'string' | 'integer';
  desc?: boolean;
}): SignedRouteDef {
  const record = OrderRecordSchema(def.orderFee ?? 'string');
  return signedRoute({
    method: 'POST',
    path: def.path,
    permission: 'query',
    tag: def.tag,
    summary: def.summary,
    ...(def.desc === true && { desc: true }),
    body: QueryBody,
    data: Type.Array(def.extraSchema === undefined ? record : Type.Composite([record, def.extraSchema])),
    handle: async ({
      body,
      caller,
    }: {
      body: { externalOrderId: string; orderId: string };
      caller: MerchantCaller;
    }) => {
      const order = await def.orders.findForQuery(caller.merchantId, def.area, def.kind, body);
      const base = orderRecord(order, def.account(order));
      return [{ ...base, ...def.extra?.(order, base) }];
    },
  });
}
