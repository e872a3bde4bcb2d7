import type { FeeRule } from '../ledger/fees.js';
import type { OrderRow } from './queries.js';

/** What every order keeps in its details besides its area's own members. */
export interface SharedDetails {
  /** The fee schedule in force when the order was made (it also applies to a collection paid later). */
  feeRule: { percentBps: number; fixed: string; minimum: string };
  /** How often the payer asked for the rail to start the order again (an STK prompt resent). */
  railRestarts?: number;
}

/**
 * The order's details (JSON text in the database) as its area's type `D`: the one place details
 * are parsed. Each area names its type (KenyaDetails, BrazilDetails, CashierOrderDetails,
 * ExchangeDetails) and reads it through its own accessor.
 */
// The one cast from the stored text: D is the caller's area type, named where it is read.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function orderDetails<D extends object>(order: Pick<OrderRow, 'details'>): D & SharedDetails {
  return JSON.parse(order.details) as D & SharedDetails;
}

/** Details text with `extra` merged over `details` (text or already parsed). */
export function withDetails(details: string | object, extra: object): string {
  const base: object = typeof details === 'string' ? (JSON.parse(details) as object) : details;
  return JSON.stringify({ ...base, ...extra });
}

/** The fee schedule kept on the order at creation. */
export function storedFeeRule(order: Pick<OrderRow, 'details'>): FeeRule {
  const rule = orderDetails(order).feeRule;
  return { percentBps: rule.percentBps, fixed: BigInt(rule.fixed), minimum: BigInt(rule.minimum) };
}

export function storeFeeRule(rule: FeeRule): SharedDetails['feeRule'] {
  return { percentBps: rule.percentBps, fixed: String(rule.fixed), minimum: String(rule.minimum) };
}
