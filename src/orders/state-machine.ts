import type { OrderKind } from '../store/schema.js';

/**
 * Collection orders: 1 and 2 are the spec's; 3 (a cashier that expired unpaid) and 4 (the payer
 * cancelled the payment at the rail) are Cashgate's documented extensions.
 */
export const COLLECTION_STATUS = { pending: 1, paid: 2, expired: 3, cancelled: 4 } as const;

/** Transfer orders, as the spec numbers them. */
export const TRANSFER_STATUS = { accepted: 1, processing: 2, bankRejected: 4, succeeded: 8, failed: 16 } as const;

/** Exchange orders, as the spec numbers them (both directions). */
export const EXCHANGE_STATUS = {
  waitPayCurrency: 1,
  receivingCurrency: 2,
  waitReceiveToken: 4,
  complete: 8,
  failed: 32,
} as const;

export type CollectionEvent = 'paid' | 'expired' | 'cancelled';
export type TransferEvent = 'processing' | 'succeeded' | 'bank_rejected' | 'failed';
/** Fiat → token: the fiat is taken (`paid`, or its synonym `currency_received`), the tokens are sent, then confirmed at addressTo. */
export type FiatToTokenEvent = 'paid' | 'currency_received' | 'token_sent' | 'token_received' | 'expired' | 'failed';
/** Token → fiat: the deposit is confirmed (or refused), or the quote runs out first. */
export type TokenToFiatEvent = 'token_received' | 'deposit_refused' | 'expired' | 'failed';
export type OrderEvent = CollectionEvent | TransferEvent | FiatToTokenEvent | TokenToFiatEvent;

interface Transition {
  from: readonly number[];
  to: number;
}

/** Every allowed transition: an event moves an order only from the listed states. */
const TRANSITIONS: {
  collection: Record<CollectionEvent, Transition>;
  transfer: Record<TransferEvent, Transition>;
  fiat_to_token: Record<FiatToTokenEvent, Transition>;
  token_to_fiat: Record<TokenToFiatEvent, Transition>;
} = {
  collection: {
    paid: { from: [COLLECTION_STATUS.pending], to: COLLECTION_STATUS.paid },
    expired: { from: [COLLECTION_STATUS.pending], to: COLLECTION_STATUS.expired },
    cancelled: { from: [COLLECTION_STATUS.pending], to: COLLECTION_STATUS.cancelled },
  },
  transfer: {
    processing: { from: [TRANSFER_STATUS.accepted], to: TRANSFER_STATUS.processing },
    succeeded: { from: [TRANSFER_STATUS.processing], to: TRANSFER_STATUS.succeeded },
    bank_rejected: { from: [TRANSFER_STATUS.accepted, TRANSFER_STATUS.processing], to: TRANSFER_STATUS.bankRejected },
    failed: { from: [TRANSFER_STATUS.accepted, TRANSFER_STATUS.processing], to: TRANSFER_STATUS.failed },
  },
  fiat_to_token: {
    paid: { from: [EXCHANGE_STATUS.waitPayCurrency], to: EXCHANGE_STATUS.receivingCurrency },
    currency_received: { from: [EXCHANGE_STATUS.waitPayCurrency], to: EXCHANGE_STATUS.receivingCurrency },
    token_sent: { from: [EXCHANGE_STATUS.receivingCurrency], to: EXCHANGE_STATUS.waitReceiveToken },
    token_received: { from: [EXCHANGE_STATUS.waitReceiveToken], to: EXCHANGE_STATUS.complete },
    // The quote lapses when the fiat was not taken in time: the rate is held no longer.
    expired: { from: [EXCHANGE_STATUS.waitPayCurrency], to: EXCHANGE_STATUS.failed },
    failed: {
      from: [EXCHANGE_STATUS.waitPayCurrency, EXCHANGE_STATUS.receivingCurrency, EXCHANGE_STATUS.waitReceiveToken],
      to: EXCHANGE_STATUS.failed,
    },
  },
  token_to_fiat: {
    token_received: { from: [EXCHANGE_STATUS.waitReceiveToken], to: EXCHANGE_STATUS.complete },
    deposit_refused: { from: [EXCHANGE_STATUS.waitReceiveToken], to: EXCHANGE_STATUS.failed },
    expired: { from: [EXCHANGE_STATUS.waitReceiveToken], to: EXCHANGE_STATUS.failed },
    failed: { from: [EXCHANGE_STATUS.waitReceiveToken], to: EXCHANGE_STATUS.failed },
  },
};

/** The status a new order starts in. */
export const INITIAL_STATUS: Record<OrderKind, number> = {
  collection: COLLECTION_STATUS.pending,
  transfer: TRANSFER_STATUS.accepted,
  fiat_to_token: EXCHANGE_STATUS.waitPayCurrency,
  token_to_fiat: EXCHANGE_STATUS.waitReceiveToken,
};

const FINAL: Record<OrderKind, ReadonlySet<number>> = {
  collection: new Set([COLLECTION_STATUS.paid, COLLECTION_STATUS.expired, COLLECTION_STATUS.cancelled]),
  transfer: new Set([TRANSFER_STATUS.bankRejected, TRANSFER_STATUS.succeeded, TRANSFER_STATUS.failed]),
  fiat_to_token: new Set([EXCHANGE_STATUS.complete, EXCHANGE_STATUS.failed]),
  token_to_fiat: new Set([EXCHANGE_STATUS.complete, EXCHANGE_STATUS.failed]),
};

const EXCHANGE_STATUS_TEXT = {
  1: 'WAIT_PAY_CURRENCY',
  2: 'RECEIVING_CURRENCY',
  4: 'WAIT_RECEIVE_TOKEN',
  8: 'EXCHANGE_COMPLETE',
  32: 'EXCHANGE_FAIL',
};

/** The text of each status, as `orderStatus` (create results, callbacks) and `orderStatusCode` (queries) carry it. */
const STATUS_TEXT: Record<OrderKind, Record<number, string>> = {
  collection: { 1: 'WAITING_PAYMENT', 2: 'PAYMENT_SUCCESS', 3: 'EXPIRED', 4: 'CANCELLED' },
  transfer: { 1: 'ACCEPTED', 2: 'BANK_PROCESSING', 4: 'BANK_REJECTED', 8: 'SUCCESS', 16: 'FAILED' },
  fiat_to_token: EXCHANGE_STATUS_TEXT,
  token_to_fiat: EXCHANGE_STATUS_TEXT,
};

export function eventsOf(kind: OrderKind): string[] {
  return Object.keys(TRANSITIONS[kind]);
}

/** The events the order's state allows now. */
export function allowedEvents(kind: OrderKind, status: number): string[] {
  return Object.entries(TRANSITIONS[kind] as Record<string, Transition>)
    .filter(([, t]) => t.from.includes(status))
    .map(([event]) => event);
}

/** Whether a collection still waits for its payer although its cashier time is up (the expiry worker has not marked it yet). */
export function isTimeUp(
  order: { kind: OrderKind; status: number; cashier_expire_at: number | null },
  now: number,
): boolean {
  return (
    order.kind === 'collection' &&
    order.status === COLLECTION_STATUS.pending &&
    order.cashier_expire_at !== null &&
    order.cashier_expire_at <= now
  );
}

/** The events the order allows at `now`: a collection whose cashier time is up can only expire. */
export function allowedEventsAt(
  order: { kind: OrderKind; status: number; cashier_expire_at: number | null },
  now: number,
): string[] {
  return isTimeUp(order, now) ? ['expired'] : allowedEvents(order.kind, order.status);
}

/** The status `event` leads to from `status`, or undefined when the event is not allowed there. */
export function nextStatus(kind: OrderKind, status: number, event: string): number | undefined {
  const transition = (TRANSITIONS[kind] as Record<string, Transition | undefined>)[event];
  return transition?.from.includes(status) === true ? transition.to : undefined;
}

export function isFinal(kind: OrderKind, status: number): boolean {
  return FINAL[kind].has(status);
}

export function statusText(kind: OrderKind, status: number): string {
  return STATUS_TEXT[kind][status] ?? String(status);
}
