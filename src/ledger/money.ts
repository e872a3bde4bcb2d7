import { ApiError } from '../http/failures.js';

/** Currencies the ledger keeps, with the number of decimal places of their minor unit. */
export const CURRENCIES = { BRL: 2, MXN: 2, KES: 0 } as const;

export type Currency = keyof typeof CURRENCIES;

export function isCurrency(value: string): value is Currency {
  return Object.hasOwn(CURRENCIES, value);
}

/** Money is an integer number of minor units (cents; whole shillings for KES), never a float. */
export type Minor = bigint;

/** The largest amount the ledger stores exactly (a database bigint read as an exact number). */
export const MAX_MINOR: Minor = BigInt(Number.MAX_SAFE_INTEGER);

const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

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

/**
 * An amount field of a request, in `currency`: refused with code 300 naming the field and the rule
 * when it is not plain decimal text with the currency's places, or is below `minimum` (default: > 0).
 */
export function amountField(
  field: string,
  input: unknown,
  currency: Currency,
  options: { decimals?: number; minimum?: Minor; maximum?: Minor; signed?: boolean } = {},
): Minor {
  const decimals = options.decimals ?? CURRENCIES[currency];
  const minimum = options.minimum ?? 1n;
  const maximum = options.maximum ?? MAX_MINOR;
  const amount = parseDecimal(input, decimals, { signed: options.signed === true });
  const magnitude = amount !== undefined && amount < 0n ? -amount : amount;
  const acceptable =
    amount !== undefined &&
    magnitude !== undefined &&
    magnitude <= maximum &&
    (options.signed === true ? amount !== 0n : amount >= minimum);
  if (!acceptable) {
    throw new ApiError({
      kind: 'invalid_field',
      field,
      rule: {
        rule: 'amount',
        decimals,
        minimum: formatMinor(minimum, decimals),
        maximum: formatMinor(maximum, decimals),
        signed: options.signed === true,
      },
    });
  }
  return amount;
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
