/**
 * An operator's pause of a merchant's payments (money in) or payouts (money out). While one is on,
 * the merchant API refuses every create of that direction with a 300 (`merchant_paused`), before
 * the route reads the body or writes anything; queries, balances, callbacks and the orders already
 * created go on. Each create route declares its direction (`pausedBy` of its definition) and the
 * signed-route pipeline calls `refuseWhenPaused`, the one check, with the pauses authentication
 * read with the key (no query of its own).
 */
import type { MerchantCaller } from '../http/caller.js';
import { ApiError } from '../http/failures.js';

/** What an operator can pause: `payments` (collections, aggregate cashiers, token-to-fiat exchanges) or `payouts` (transfers, fiat-to-token exchanges). */
export const PAUSABLE = ['payments', 'payouts'] as const;
export type Pausable = (typeof PAUSABLE)[number];

/** Throws the 300 `merchant_paused` when the caller's merchant has `what` paused. */
export function refuseWhenPaused(caller: MerchantCaller, what: Pausable): void {
  const since = caller.pausedSince[what];
  if (since !== null) throw new ApiError({ kind: 'merchant_paused', what, since });
}
