import holidays from './holidays-br.json' with { type: 'json' };

/**
 * The business-day calendar of Brazilian bank compensation, which boleto due dates follow.
 *
 * A day is a business day unless it is a Saturday, a Sunday or a day listed in holidays-br.json (national holidays,
 * Carnival, Good Friday, Corpus Christi and the last weekday of the year: see the file's "source" and "notes").
 * Dates are plain `YYYY-MM-DD` strings of the Brasília calendar (UTC−3 all year: Brazil has had no daylight saving
 * time since 2019).
 */

interface HolidayEntry {
  date: string;
  name: string;
}

const TABLE_FILE = 'src/brazil/holidays-br.json';
const DAY_MS = 86_400_000;
/** Brasília is UTC−3 all year. */
const BRASILIA_OFFSET_MS = -3 * 3_600_000;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

const byYear = new Map<number, ReadonlySet<string>>();
for (const [key, entries] of Object.entries(holidays.years as Record<string, readonly HolidayEntry[]>)) {
  const year = Number(key);
  const dates = new Set<string>();
  for (const entry of entries) {
    if (!entry.date.startsWith(`${key}-`)) throw new Error(`${TABLE_FILE}: ${entry.date} is listed under ${key}`);
    dates.add(entry.date);
  }
  byYear.set(year, dates);
}

/** The years holidays-br.json covers, ascending. */
export const HOLIDAY_YEARS: readonly number[] = Object.freeze([...byYear.keys()].sort((a, b) => a - b));

/** Epoch ms of 00:00 UTC of a `YYYY-MM-DD` date, after checking it is a real calendar date. */
function parseDate(date: string): number {
  const match = DATE_PATTERN.exec(date);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  if (Number.isNaN(ms) || formatDate(ms) !== date)
    throw new Error(`not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`);
  return ms;
}

/** The `YYYY-MM-DD` of an epoch ms, read in UTC. */
function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function holidaysOf(year: number): ReadonlySet<string> {
  const dates = byYear.get(year);
  if (!dates) throw new Error(`no Brazilian holiday table for ${year}: add it to ${TABLE_FILE}`);
  return dates;
}

/** Whether banks compensate on this date: not a Saturday, Sunday or listed bank holiday. Throws for a year the table lacks. */
export function isBusinessDay(date: string): boolean {
  const ms = parseDate(date);
  const dates = holidaysOf(new Date(ms).getUTCFullYear());
  const weekday = new Date(ms).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !dates.has(date);
}

/** The date itself when it is a business day, otherwise the first business day after it. */
export function nextBusinessDay(date: string): string {
  let ms = parseDate(date);
  let current = date;
  while (!isBusinessDay(current)) {
    ms += DAY_MS;
    current = formatDate(ms);
  }
  return current;
}

/** Today's date in Brasília at the instant `now` (epoch ms). */
export function brasiliaDate(now: number): string {
  if (!Number.isFinite(now)) throw new Error(`not an instant (epoch ms): ${now}`);
  return formatDate(now + BRASILIA_OFFSET_MS);
}

/**
 * A boleto's due date: `days` calendar days after today in Brasília, moved to the next business day when it falls on a
 * weekend or bank holiday. `endOfDay` is the last millisecond of that date in Brasília, as epoch ms.
 */
export function boletoDueDate(now: number, days: number): { dueDate: string; endOfDay: number } {
  if (!Number.isSafeInteger(days) || days < 0) throw new Error(`boleto due days must be a whole number ≥ 0: ${days}`);
  const calendarDate = formatDate(parseDate(brasiliaDate(now)) + days * DAY_MS);
  const dueDate = nextBusinessDay(calendarDate);
  const endOfDay = parseDate(dueDate) + DAY_MS - BRASILIA_OFFSET_MS - 1;
  return { dueDate, endOfDay };
}
