import { Type, type Static } from '@sinclair/typebox';
import type { Ledger } from '../ledger/ledger.js';
import { detailsOf, withDetails } from '../orders/details.js';
import { collectionTransitions, transferTransitions } from '../orders/effects.js';
import type { OrderRow } from '../orders/queries.js';
import { MARK_STATUS_NONE, money, paymentCallbackPayload, payTypeText } from '../orders/records.js';
import { transferResult, type TransferResultData } from '../orders/schemas.js';
import type { OrderKindSpec } from '../orders/service.js';
import { statusText, TRANSFER_STATUS } from '../orders/state-machine.js';
import type { TransitionStep } from '../orders/effects.js';
import type { Rails } from '../rails/rails.js';

export const KENYA_CURRENCY = 'KES' as const;

/** What a Kenya order keeps in its details. */
export interface KenyaDetails {
  phone: string;
  checkingPhone?: string;
  bankName?: string;
  /** Daraja: the M-Pesa receipt (transaction id) of a paid collection or a completed payout. */
  mpesaReceipt?: string;
  /** Daraja: the phone that paid a collection, as M-Pesa reported it. */
  mpesaPhone?: string;
  /** Daraja: the payout's receiver as M-Pesa names them. */
  receiverName?: string;
  /** Daraja: why the last STK prompt was not paid (the order stays payable). */
  mpesaLastResult?: { code: string; desc: string };
}

declare module '../orders/details.js' {
  interface OrderDetailsByArea {
    ken: { collection: KenyaDetails; transfer: KenyaDetails };
  }
}

export const kenyaDetails = (order: Pick<OrderRow, 'id' | 'area' | 'details'>) => detailsOf(order, 'ken');

export const KenyaCollectionResult = Type.Object({
  cashierUrl: Type.String(),
  cashierExpireTime: Type.Integer(),
  currency: Type.String(),
  cashierCurrencyAmount: Type.String(),
  returnUrl: Type.String(),
  currencyOrderVo: Type.Object({ externalOrderId: Type.String(), tradeNote: Type.String(), orderId: Type.String() }),
});

/** The Kenya transfer callback of the spec: strings unless the spec types them. */
function transferCallback(order: OrderRow): Record<string, unknown> {
  const details = kenyaDetails(order);
  return {
    currencyType: order.currency,
    accountCode: details.bankName ?? '',
    accountName: details.receiverName ?? '',
    orderId: order.id,
    accountType: 'MOBILE',
    orderFee: money(order, order.fee),
    orderStatus: statusText('transfer', order.status),
    externalOrderId: order.external_order_id,
    payTypeName: payTypeText(order.pay_type),
    orderAmount: money(order, order.amount),
    orderPayTime: order.pay_time,
    orderTime: order.created_at,
    payType: order.pay_type,
    userInfoName: '',
    accountNo: details.phone,
    orderStatusCode: order.status,
    markStatus: String(MARK_STATUS_NONE),
  };
}

export interface KenyaKinds {
  collection: OrderKindSpec<Static<typeof KenyaCollectionResult>>;
  transfer: OrderKindSpec<TransferResultData>;
}

/** What the rail reported with the event (Daraja's receipt, payer, receiver), kept in the order's details. */
function reported(step: TransitionStep, keys: readonly (keyof KenyaDetails)[]): Partial<KenyaDetails> {
  const data = step.options.data ?? {};
  return Object.fromEntries(keys.filter((key) => (data[key] ?? '') !== '').map((key) => [key, data[key]]));
}

/** The Kenya order kinds: M-Pesa collections by STK push, and payouts to M-Pesa phones (B2C). */
export function kenyaKinds(deps: {
  rails: Pick<Rails, 'mpesaStk' | 'mpesaB2c'>;
  ledger: Ledger;
  publicBaseUrl: string;
}): KenyaKinds {
  const transfer = transferTransitions(deps.ledger);
  return {
    collection: {
      area: 'ken',
      kind: 'collection',
      createResult: (order) => ({
        cashierUrl: `${deps.publicBaseUrl}/cashier/${order.cashier_id ?? ''}`,
        cashierExpireTime: order.cashier_expire_at ?? 0,
        currency: KENYA_CURRENCY,
        cashierCurrencyAmount: money(order, order.amount) ?? '',
        returnUrl: order.return_url ?? '',
        currencyOrderVo: { externalOrderId: order.external_order_id, tradeNote: order.remark ?? '', orderId: order.id },
      }),
      // payParam carries the M-Pesa receipt once the rail reported one.
      callbackPayload: (order) => paymentCallbackPayload(order, kenyaDetails(order).mpesaReceipt ?? ''),
      rail: () => deps.rails.mpesaStk,
      transition: collectionTransitions(deps.ledger, {
        before: (step) => {
          const paid = step.event === 'paid' ? reported(step, ['mpesaReceipt', 'mpesaPhone']) : {};
          return Object.keys(paid).length === 0 ? {} : { details: withDetails(step.order.details, paid) };
        },
      }),
    },
    transfer: {
      area: 'ken',
      kind: 'transfer',
      createResult: transferResult,
      callbackPayload: transferCallback,
      rail: () => deps.rails.mpesaB2c,
      transition: async (step) => {
        const effects = await transfer(step);
        if (step.to === TRANSFER_STATUS.succeeded) {
          const done = reported(step, ['mpesaReceipt', 'receiverName']);
          if (Object.keys(done).length > 0)
            effects.changes.details = withDetails(effects.changes.details ?? step.order.details, done);
        }
        return effects;
      },
    },
  };
}
