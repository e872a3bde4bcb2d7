/** Currencies the ledger keeps, with the number of decimal places of their minor unit. */
export const CURRENCIES = { BRL: 2, MXN: 2, KES: 0 } as const;

export type Currency = keyof typeof CURRENCIES;

/** The currency codes, in the order CURRENCIES lists them. */
export const CURRENCY_CODES = Object.keys(CURRENCIES) as readonly Currency[];

export function isCurrency(value: string): value is Currency {
  return Object.hasOwn(CURRENCIES, value);
}

/** Money is an integer number of minor units (cents; whole shillings for KES), never a float. */
export type Minor = bigint;

/** The largest amount the ledger stores exactly (a database bigint read as an exact number). */
export const MAX_MINOR: Minor = BigInt(Number.MAX_SAFE_INTEGER);

/** Canonical decimal text: no leading zeros ("0.5", not "00.5"; "10", not "010"). */
const PLAIN_DECIMAL = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * Reads an amount sent as a JSON string or number: plain decimal notation, no exponent, at most
 * `decimals` places. Returns minor units, or undefined when the text breaks a rule.
 */
export function parseDecimal(input: unknown, decimals: number, options: { signed?: boolean } = {}): Minor | undefined {
  // Merchant API amounts arrive as the text sent (src/http/raw-numbers.ts); a number that reaches
  // here otherwise (an admin body) is read by its shortest text.
  const text =
    typeof input === 'string' ? input : typeof input === 'number' && Number.isFinite(input) ? String(input) : undefined;
  if (text === undefined) return undefined;
  const match = PLAIN_DECIMAL.exec(text);
  if (match === null) return undefined;
  const [, sign = '', whole = '', fraction = ''] = match;
  if (sign === '-' && options.signed !== true) return undefined;
  if (fraction.length > decimals) return undefined;
  const minor = BigInt(whole + fraction.padEnd(decimals, '0'));
  return sign === '-' ? -minor : minor;
}

/** Minor units as the API shows them: "1500.00" for BRL, "1500" for KES. */
export function formatMinor(amount: Minor, decimals: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const text = decimals === 0 ? whole : `${whole}.${digits.slice(digits.length - decimals)}`;
  return negative ? `-${text}` : text;
}

export function formatMoney(amount: Minor, currency: Currency): string {
  return formatMinor(amount, CURRENCIES[currency]);
}

/** The rule an amount must meet: plain decimal text with `decimals` places, within its bounds. */
export interface AmountRule {
  decimals: number;
  minimum: Minor;
  maximum: Minor;
  signed: boolean;
}

/** The rule for an amount in `currency` (default: more than zero, up to what the ledger stores). */
export function amountRule(
  currency: Currency,
  options: { decimals?: number; minimum?: Minor; maximum?: Minor; signed?: boolean } = {},
): AmountRule {
  return {
    decimals: options.decimals ?? CURRENCIES[currency],
    minimum: options.minimum ?? 1n,
    maximum: options.maximum ?? MAX_MINOR,
    signed: options.signed === true,
  };
}

/** Reads an amount under its rule; undefined when the input breaks it (a signed amount is never zero). */
export function readAmount(input: unknown, rule: AmountRule): Minor | undefined {
  const amount = parseDecimal(input, rule.decimals, { signed: rule.signed });
  if (amount === undefined) return undefined;
  const magnitude = amount < 0n ? -amount : amount;
  const acceptable = magnitude <= rule.maximum && (rule.signed ? amount !== 0n : amount >= rule.minimum);
  return acceptable ? amount : undefined;
}

/** Converts minor units for a bigint column, refusing values a database integer cannot hold exactly. */
export function toDbMinor(amount: Minor): number {
  const value = Number(amount);
  if (!Number.isSafeInteger(value))
    throw new RangeError(`amount ${amount} is outside the range the ledger stores exactly`);
  return value;
}

/** Reads a bigint column or an aggregate (SQLite returns numbers, PostgreSQL sums as numeric text). */
export function fromDb(value: number | string | bigint | null): Minor {
  if (value === null) return 0n;
  return BigInt(value);
}
