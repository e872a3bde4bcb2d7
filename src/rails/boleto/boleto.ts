/**
 * Boleto de cobrança bancária: the 44-digit barcode and the 47-digit linha digitável a payer types.
 * Barcode: bank(3) currency(1) DAC(1) fator de vencimento(4) amount in cents(10) campo livre(25).
 */

const DAY_MS = 86_400_000;
/** Day 0 of the fator de vencimento (FEBRABAN). */
const FACTOR_BASE = Date.UTC(1997, 9, 7);
/** FEBRABAN restarted the fator at 1000 on this day, after 9999 was reached on 2025-02-21. */
const CURRENT_CYCLE_START = Date.UTC(2025, 1, 22);
/** Days a cycle of factors 1000..9999 covers. */
const CYCLE_DAYS = 9000;

/** First and last due dates `dueFactor` encodes: the cycle that started with the 2025 reset. */
export const DUE_DATE_RANGE = { first: '2025-02-22', last: '2049-10-13' } as const;

/** The Real; Cashgate issues and accepts boletos in reais only. */
const CURRENCY_REAL = '9';

export interface BoletoBarcodeInput {
  /** Three-digit COMPE code of the issuing bank, e.g. '341'. */
  bankCode: string;
  /** 'YYYY-MM-DD' within DUE_DATE_RANGE. */
  dueDate: string;
  /** Amount in centavos, 0..9_999_999_999. */
  amountCents: bigint | number;
  /** The bank's 25-digit campo livre (agency, account, nosso número… in the bank's layout). */
  freeField: string;
}

export interface BoletoBarcodeFields {
  bankCode: string;
  currency: string;
  checkDigit: number;
  dueFactor: number;
  amountCents: bigint;
  freeField: string;
}

function parseIsoDate(date: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (match === null) throw new RangeError(`dueDate must be a date in the form YYYY-MM-DD; got "${date}"`);
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const time = Date.UTC(y, m - 1, d);
  const check = new Date(time);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d) {
    throw new RangeError(`dueDate ${date} is not a calendar date`);
  }
  return time;
}

function isoDate(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/**
 * The fator de vencimento of a due date. Only the cycle that began on 2025-02-22 (fator 1000) is
 * encoded, through 2049-10-13 (fator 9999): a new boleto cannot be due before today, and dates of
 * the old cycle would collide with factors of the current one.
 */
export function dueFactor(dueDate: string): number {
  const time = parseIsoDate(dueDate);
  const days = Math.round((time - CURRENT_CYCLE_START) / DAY_MS);
  if (days < 0 || days >= CYCLE_DAYS) {
    throw new RangeError(
      `dueDate ${dueDate} is outside ${DUE_DATE_RANGE.first}..${DUE_DATE_RANGE.last}, the fator de vencimento cycle Cashgate issues in`,
    );
  }
  return 1000 + days;
}

/**
 * The due date a fator de vencimento stands for, read as the candidate closest to `referenceDate`
 * ('YYYY-MM-DD', normally today): factors repeat every 9000 days, so the fator alone is ambiguous.
 * Undefined for fator 0000, which carries no due date.
 */
export function dueDateFromFactor(factor: number, referenceDate: string): string | undefined {
  if (!Number.isInteger(factor) || factor < 0 || factor > 9999 || (factor > 0 && factor < 1000)) {
    throw new RangeError(`fator de vencimento must be 0000 or 1000..9999; got ${factor}`);
  }
  if (factor === 0) return undefined;
  const reference = parseIsoDate(referenceDate);
  // Cycle 0 is 1000 = 2000-07-03 … 9999 = 2025-02-21; each later cycle starts 9000 days on.
  const firstCycle = FACTOR_BASE + factor * DAY_MS;
  const cycle = Math.max(0, Math.round((reference - firstCycle) / (CYCLE_DAYS * DAY_MS)));
  return isoDate(firstCycle + cycle * CYCLE_DAYS * DAY_MS);
}

/** Módulo 11 with weights 2..9 from the right; the boleto DAC maps 0, 10 and 11 to 1. */
function mod11Dac(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const dv = 11 - (sum % 11);
  return dv === 10 || dv === 11 ? 1 : dv;
}

/** Módulo 10 with weights 2,1,2,1… from the right, two-digit products summed digit by digit. */
function mod10(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? product - 9 : product;
    weight = weight === 2 ? 1 : 2;
  }
  return (10 - (sum % 10)) % 10;
}

function toCents(amountCents: bigint | number): bigint {
  if (typeof amountCents === 'number' && !Number.isSafeInteger(amountCents)) {
    throw new RangeError(`amountCents must be an integer number of centavos; got ${amountCents}`);
  }
  const cents = BigInt(amountCents);
  if (cents < 0n || cents > 9_999_999_999n)
    throw new RangeError(`amountCents must be 0..9999999999 centavos to fit 10 digits; got ${cents}`);
  return cents;
}

/** Builds the 44-digit barcode with its mod-11 DAC in position 5. */
export function boletoBarcode(input: BoletoBarcodeInput): string {
  if (!/^\d{3}$/.test(input.bankCode))
    throw new RangeError(`bankCode must be the bank's 3-digit COMPE code; got "${input.bankCode}"`);
  if (!/^\d{25}$/.test(input.freeField))
    throw new RangeError(`freeField must be 25 digits; got ${input.freeField.length} characters`);
  const factor = String(dueFactor(input.dueDate));
  const amount = toCents(input.amountCents).toString().padStart(10, '0');
  const head = input.bankCode + CURRENCY_REAL;
  const tail = factor + amount + input.freeField;
  return head + String(mod11Dac(head + tail)) + tail;
}

/** Whether a 44-digit barcode is in reais and its DAC matches. */
export function isValidBarcode(code: string): boolean {
  if (!/^\d{44}$/.test(code) || code[3] !== CURRENCY_REAL) return false;
  return Number(code[4]) === mod11Dac(code.slice(0, 4) + code.slice(5));
}

/** The fields of a valid barcode; throws RangeError for an invalid one. */
export function boletoBarcodeFields(code: string): BoletoBarcodeFields {
  if (!isValidBarcode(code))
    throw new RangeError('barcode must be 44 digits in reais (currency 9) with a matching mod-11 DAC');
  return {
    bankCode: code.slice(0, 3),
    currency: code.slice(3, 4),
    checkDigit: Number(code[4]),
    dueFactor: Number(code.slice(5, 9)),
    amountCents: BigInt(code.slice(9, 19)),
    freeField: code.slice(19, 44),
  };
}

/** The 47-digit linha digitável of a valid barcode: three mod-10 checked fields, the DAC, fator + amount. */
export function linhaDigitavel(barcode: string): string {
  if (!isValidBarcode(barcode))
    throw new RangeError('barcode must be 44 digits in reais (currency 9) with a matching mod-11 DAC');
  const field1 = barcode.slice(0, 4) + barcode.slice(19, 24);
  const field2 = barcode.slice(24, 34);
  const field3 = barcode.slice(34, 44);
  return `${field1}${mod10(field1)}${field2}${mod10(field2)}${field3}${mod10(field3)}${barcode.slice(4, 5)}${barcode.slice(5, 19)}`;
}

/** Payers paste the line with its dots and spaces; only those are stripped. */
function stripLine(line: string): string {
  return line.replace(/[.\s]/g, '');
}

function lineFieldsCheck(line: string): boolean {
  return (
    mod10(line.slice(0, 9)) === Number(line[9]) &&
    mod10(line.slice(10, 20)) === Number(line[20]) &&
    mod10(line.slice(21, 31)) === Number(line[31])
  );
}

function barcodeOf(line: string): string {
  return line.slice(0, 4) + line.slice(32, 47) + line.slice(4, 9) + line.slice(10, 20) + line.slice(21, 31);
}

/** Whether a linha digitável (dots and spaces allowed) has valid field DVs and a barcode DAC in reais. */
export function isValidLinhaDigitavel(line: string): boolean {
  const digits = stripLine(line);
  if (!/^\d{47}$/.test(digits)) return false;
  return lineFieldsCheck(digits) && isValidBarcode(barcodeOf(digits));
}

/** The 44-digit barcode of a valid linha digitável; throws RangeError for an invalid one. */
export function barcodeFromLinha(line: string): string {
  const digits = stripLine(line);
  if (!/^\d{47}$/.test(digits))
    throw new RangeError(`linha digitável must be 47 digits; got ${digits.length} after removing dots and spaces`);
  if (!lineFieldsCheck(digits))
    throw new RangeError('linha digitável has a field whose mod-10 check digit does not match');
  const barcode = barcodeOf(digits);
  if (!isValidBarcode(barcode))
    throw new RangeError('linha digitável is not in reais (currency 9) or its mod-11 DAC does not match');
  return barcode;
}

/** The printed form `AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE` of a valid line. */
export function formatLinhaDigitavel(line: string): string {
  const d = stripLine(line);
  if (!isValidLinhaDigitavel(d)) throw new RangeError('linha digitável must be 47 digits with matching check digits');
  return `${d.slice(0, 5)}.${d.slice(5, 10)} ${d.slice(10, 15)}.${d.slice(15, 21)} ${d.slice(21, 26)}.${d.slice(26, 32)} ${d.slice(32, 33)} ${d.slice(33)}`;
}
