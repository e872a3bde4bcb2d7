import type { FeeRule } from '../ledger/fees.js';
import type { OrderArea } from '../store/schema.js';
import type { OrderRow } from './queries.js';

/** What every order keeps in its details besides its area's own members. */
export interface SharedDetails {
  /** The fee schedule in force when the order was made (it also applies to a collection paid later). */
  feeRule: { percentBps: number; fixed: string; minimum: string };
  /** How often the payer asked for the rail to start the order again (an STK prompt resent). */
  railRestarts?: number;
  /** When the order was last started again on its rail (the payer's resend), for the cooldown. */
  railRestartedAt?: number;
  /**
   * What was paid differs from what was asked in a way the amount columns cannot show (a token
   * collection paid with other units than quoted): the order is marked (markStatus 1).
   */
  amountDiffers?: boolean;
}

/**
 * What an order keeps in its details, by area and then kind. Each area adds its own entry beside
 * its kinds, by declaration merging (`declare module '../orders/details.js'`), so this module names
 * no area; an area without an entry has no details type and cannot read them.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by each area
export interface OrderDetailsByArea {}

/** The areas that registered their details. */
export type DetailedArea = keyof OrderDetailsByArea & OrderArea;

/** The details of an order of area `A`, whichever of its kinds. */
export type DetailsOf<A extends DetailedArea> = OrderDetailsByArea[A][keyof OrderDetailsByArea[A]] & SharedDetails;

/**
 * The details of an order that must be of one of `areas`, parsed from the JSON text the
 * database keeps: the one place an area's details are read. The text was written from the same
 * area's type; another area is a programming error (a Kenya page reading a Brazil order) and throws
 * rather than reading the wrong members.
 */
export function detailsOf<A extends DetailedArea>(
  order: Pick<OrderRow, 'id' | 'area' | 'details'>,
  ...areas: readonly A[]
): DetailsOf<A> {
  if (!(areas as readonly OrderArea[]).includes(order.area)) {
    throw new Error(`order ${order.id} is of area ${order.area}, not ${areas.join(' or ')}`);
  }
  return JSON.parse(order.details) as DetailsOf<A>;
}

/** The members every order's details have, whatever its area. */
export function sharedDetails(order: Pick<OrderRow, 'details'>): SharedDetails {
  return JSON.parse(order.details) as SharedDetails;
}

/** Details text with `extra` merged over `details` (text or already parsed). */
export function withDetails(details: string | object, extra: object): string {
  const base: object = typeof details === 'string' ? (JSON.parse(details) as object) : details;
  return JSON.stringify({ ...base, ...extra });
}

/** The fee schedule kept on the order at creation. */
export function storedFeeRule(order: Pick<OrderRow, 'details'>): FeeRule {
  const rule = sharedDetails(order).feeRule;
  return { percentBps: rule.percentBps, fixed: BigInt(rule.fixed), minimum: BigInt(rule.minimum) };
}

export function storeFeeRule(rule: FeeRule): SharedDetails['feeRule'] {
  return { percentBps: rule.percentBps, fixed: String(rule.fixed), minimum: String(rule.minimum) };
}
