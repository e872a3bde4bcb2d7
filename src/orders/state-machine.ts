import type { OrderKind } from '../store/schema.js';

/** Collection orders: 1 and 2 are the spec's; 3 is Cashgate's documented extension for a cashier that expired unpaid. */
export const COLLECTION_STATUS = { pending: 1, paid: 2, expired: 3 } as const;

/** Transfer orders, as the spec numbers them. */
export const TRANSFER_STATUS = { accepted: 1, processing: 2, bankRejected: 4, succeeded: 8, failed: 16 } as const;

export type CollectionEvent = 'paid' | 'expired';
export type TransferEvent = 'processing' | 'succeeded' | 'bank_rejected' | 'failed';
export type OrderEvent = CollectionEvent | TransferEvent;

interface Transition {
  from: readonly number[];
  to: number;
}

/** Every allowed transition: an event moves an order only from the listed states. */
const TRANSITIONS: { collection: Record<CollectionEvent, Transition>; transfer: Record<TransferEvent, Transition> } = {
  collection: {
    paid: { from: [COLLECTION_STATUS.pending], to: COLLECTION_STATUS.paid },
    expired: { from: [COLLECTION_STATUS.pending], to: COLLECTION_STATUS.expired },
  },
  transfer: {
    processing: { from: [TRANSFER_STATUS.accepted], to: TRANSFER_STATUS.processing },
    succeeded: { from: [TRANSFER_STATUS.processing], to: TRANSFER_STATUS.succeeded },
    bank_rejected: { from: [TRANSFER_STATUS.accepted, TRANSFER_STATUS.processing], to: TRANSFER_STATUS.bankRejected },
    failed: { from: [TRANSFER_STATUS.accepted, TRANSFER_STATUS.processing], to: TRANSFER_STATUS.failed },
  },
};

const FINAL: Record<OrderKind, ReadonlySet<number>> = {
  collection: new Set([COLLECTION_STATUS.paid, COLLECTION_STATUS.expired]),
  transfer: new Set([TRANSFER_STATUS.bankRejected, TRANSFER_STATUS.succeeded, TRANSFER_STATUS.failed]),
};

/** The text of each status, as `orderStatus` (create results, callbacks) and `orderStatusCode` (queries) carry it. */
const STATUS_TEXT: Record<OrderKind, Record<number, string>> = {
  collection: { 1: 'WAITING_PAYMENT', 2: 'PAYMENT_SUCCESS', 3: 'EXPIRED' },
  transfer: { 1: 'ACCEPTED', 2: 'BANK_PROCESSING', 4: 'BANK_REJECTED', 8: 'SUCCESS', 16: 'FAILED' },
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
