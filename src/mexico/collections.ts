/**
 * What Mexico's methods need when an aggregate cashier makes an order: a CLABE of its own for a
 * SPEI transfer, or the last day of its OXXO voucher; and what a payment adds to the order.
 */
import { buildClabe } from '../rails/stp/clabe.js';
import { mexicoCityDate } from '../rails/stp/client.js';
import type { Tx } from '../store/store.js';
import type { MexicoSettlement } from './kinds.js';
import * as q from './queries.js';

/** The last 7-digit sequence a CLABE prefix has; past it, the sequence starts again from 1. */
const LAST_SEQUENCE = 9_999_999;

/**
 * A CLABE passes to another order only this long after it was last given: a payer who saved it as
 * a contact and pays months later reaches an ended order, whose transfers are returned, never a
 * stranger's waiting one. With ten million CLABEs under a prefix, reuse is rare anyway.
 */
export const CLABE_QUIET_MS = 400 * 86_400_000;

/** The time zone of Mexico's deadlines (no daylight saving time since October 2022). */
export const MEXICO_CITY = 'America/Mexico_City';

/** The sandbox's CLABE prefix when STP_CLABE_PREFIX is not set: STP (646), Mexico City (180), company 0000. */
export const SANDBOX_CLABE_PREFIX = '6461800000';

/**
 * Stripe confirms an OXXO payment by the next business day: the order waits this long past its
 * voucher's expiry (a long weekend included) before Cashgate ends it, unless Stripe says first that
 * the voucher expired unpaid.
 */
export const OXXO_CONFIRMATION_WINDOW_MS = 4 * 86_400_000;

/** Made once: Intl formatters are costly to build. */
const MEXICO_CITY_OFFSET = new Intl.DateTimeFormat('en-US', { timeZone: MEXICO_CITY, timeZoneName: 'longOffset' });

/** Mexico City's UTC offset at `ms`, in ms (negative: west of Greenwich). */
function mexicoCityOffsetMs(ms: number): number {
  const name = MEXICO_CITY_OFFSET.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  if (match === null) return 0;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) * 60_000;
}

/** The calendar date at `ms` in Mexico City: `{ y, m (1-12), d }` (from STP's operating-day format, `YYYYMMDD`). */
export function mexicoCityDay(ms: number): { y: number; m: number; d: number } {
  const day = mexicoCityDate(ms);
  return { y: Number(day.slice(0, 4)), m: Number(day.slice(4, 6)), d: Number(day.slice(6, 8)) };
}

/** 23:59:59 in Mexico City, `days` calendar days after the day of `ms` there: an OXXO voucher's last moment. */
export function mexicoCityEndOfDay(ms: number, days: number): number {
  const { y, m, d } = mexicoCityDay(ms);
  const wall = Date.UTC(y, m - 1, d + days, 23, 59, 59);
  return wall - mexicoCityOffsetMs(wall);
}

/** Calendar days in Mexico City from the day of `from` to the day of `to` (0 on the same day). */
export function mexicoCityDaysBetween(from: number, to: number): number {
  const a = mexicoCityDay(from);
  const b = mexicoCityDay(to);
  return Math.round((Date.UTC(b.y, b.m - 1, b.d) - Date.UTC(a.y, a.m - 1, a.d)) / 86_400_000);
}

export class MexicoCollections {
  constructor(
    private readonly config: {
      /** The 10 digits every CLABE Cashgate issues starts with (STP_CLABE_PREFIX). */
      clabePrefix: string;
      /** OXXO_EXPIRES_AFTER_DAYS: 1–7. */
      oxxoExpiresAfterDays: number;
    },
  ) {}

  /**
   * The CLABE of a new SPEI order, in its create transaction: the next sequence under the prefix
   * (its row lock serialises creates), skipping, once the sequence wrapped, any CLABE given to an
   * order within CLABE_QUIET_MS.
   */
  async issueClabe(tx: Tx, orderId: string, now: number): Promise<string> {
    const prefix = this.config.clabePrefix;
    for (let tries = 0; tries < 1000; tries += 1) {
      let sequence = await q.nextClabeSequence(tx, prefix);
      if (sequence > LAST_SEQUENCE) {
        await q.resetClabeSequence(tx, prefix, 1);
        sequence = 1;
      }
      const clabe = buildClabe(prefix, sequence);
      const given = await q.clabeAssignedAt(tx, clabe);
      if (given !== undefined && given + CLABE_QUIET_MS > now) continue;
      await q.assignClabe(tx, clabe, orderId, now);
      return clabe;
    }
    throw new Error(`no CLABE under prefix ${prefix} has been quiet for ${CLABE_QUIET_MS} ms: configure a new prefix`);
  }

  /** When a voucher made now stops being payable: 23:59:59 in Mexico City, OXXO_EXPIRES_AFTER_DAYS days from today. */
  oxxoDeadline(now: number): number {
    return mexicoCityEndOfDay(now, this.config.oxxoExpiresAfterDays);
  }
}

/** What a Mexican rail reports with a payment, kept in the order's details. */
export function mexicoSuccessDetails(data: Readonly<Record<string, string>> = {}): Partial<MexicoSettlement> {
  const keys = ['payerBank', 'payerBankCode', 'payerAccount', 'payerName', 'claveRastreo', 'paymentIntent'] as const;
  return Object.fromEntries(keys.filter((k) => data[k] !== undefined).map((k) => [k, data[k]]));
}
