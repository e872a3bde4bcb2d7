/**
 * An operator's pause of a merchant's payments (money in) or payouts (money out), as operators see
 * it. The refusal of the paused creates is the signed-route pipeline's (src/auth/paused.ts).
 */
import type { Pausable } from '../auth/paused.js';

export { PAUSABLE, type Pausable } from '../auth/paused.js';

/** A pause: since when (Unix ms), why (never shown to the merchant), by whom (e-mail or root-token). */
export interface MerchantPause {
  since: number;
  reason: string;
  by: string;
}

/** The merchant's pauses of its payments and payouts; null: not paused. */
export type MerchantPauses = Record<Pausable, MerchantPause | null>;
