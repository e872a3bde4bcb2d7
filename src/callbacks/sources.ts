import type { ReadDb } from '../store/store.js';

/** What a domain module hands over when an order reaches a state that merchants are told about. */
export interface OrderCallback {
  orderId: string;
  /** e.g. `test`, `bra.collection`: which source rebuilds the payload on a manual re-trigger. */
  orderKind: string;
  merchantId: string;
  /** The key that placed the order; its secret signs the callback. */
  accessKey: string;
  /** The order's own notifyUrl, which wins over the merchant's unified address. */
  notifyUrl: string | null;
  /** The callback body: the spec's payload for the order kind. */
  payload: Readonly<Record<string, unknown>>;
}

/** A kind of order that sends callbacks: it can rebuild an order's callback from its current state. */
export interface CallbackOrderSource {
  readonly kind: string;
  /** The callback for the order as it is now, or undefined when this source does not know the order. */
  currentCallback(db: ReadDb, orderId: string): Promise<OrderCallback | undefined>;
}
