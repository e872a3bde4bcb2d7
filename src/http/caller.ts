import type { Tx } from '../store/store.js';
import type { Language } from './language.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchantCaller: MerchantCaller | null;
    callerHints: CallerHints;
  }
}

/** Who is calling, once a signed request has passed every check. */
export interface MerchantCaller {
  merchantId: string;
  accessKey: string;
  language: Language;
  debug: boolean;
  /** Since when the operator paused the merchant's payments and payouts (null: not paused), as read with the key. */
  pausedSince: PausedSince;
  /** How long the merchant's payers have to pay a collection created now, as read with the key. */
  cashierLifetimeMs: number;
  /** The request's nonce: recorded in the first unit of work the request commits, or alone before it is answered. */
  nonce: RequestNonce;
}

/** Since when (Unix ms) an operator paused a merchant's payments (money in) and payouts (money out); null: not paused. */
export interface PausedSince {
  payments: number | null;
  payouts: number | null;
}

/**
 * The nonce of a signed request, not yet durable when the request is authenticated: the request's
 * own unit of work records it (one commit per request), and a request that commits none records it
 * in a unit of its own before it is answered. Either way a replay is refused.
 */
export interface RequestNonce {
  /** Records the nonce in `tx`, unless a committed unit already holds it; throws the 307 `nonce_reused` on a replay. */
  record(tx: Tx): Promise<void>;
  /** Records the nonce in a unit of its own unless a committed unit already holds it; throws on a replay. */
  settle(): Promise<void>;
}

/** The access key of a debug-mode caller: its requests are recorded in the request log. */
export interface DebugKey {
  accessKey: string;
  merchantId: string;
  signedString: string | undefined;
  verified: boolean;
}

/** What the error handler needs to word a failure before authentication has finished. */
export interface CallerHints {
  language: Language | undefined;
  debug: boolean;
  /** Known once the access key is: the request is recorded in the request log when the key is in debug mode. */
  debugKey?: DebugKey;
}
