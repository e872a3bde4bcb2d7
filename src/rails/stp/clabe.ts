/**
 * CLABE (Clave Bancaria Estandarizada), Mexico's 18-digit account key: bank 3 + plaza 3 + account 11
 * + check digit 1. The check digit weighs the first 17 digits 3, 7, 1, 3, 7, 1…, sums each product
 * mod 10, and is `(10 − sum mod 10) mod 10` (the rule and vectors of docs/stp.md).
 */

/** A CLABE's sequence part, when Cashgate builds one from a 10-digit prefix: 7 digits. */
const SEQUENCE_LIMIT = 10_000_000n;

/** The check digit of the first 17 digits of a CLABE. Throws RangeError for anything but 17 digits. */
export function clabeCheckDigit(first17: string): number {
  if (!/^\d{17}$/.test(first17)) throw new RangeError('a CLABE check digit is computed over exactly 17 digits');
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    // The weights repeat 3, 7, 1.
    const weight = i % 3 === 0 ? 3 : i % 3 === 1 ? 7 : 1;
    sum += (Number(first17[i]) * weight) % 10;
  }
  return (10 - (sum % 10)) % 10;
}

/**
 * Whether `s` is 18 digits whose last is the check digit of the others. Says nothing of whether
 * the bank or plaza exist (bank `000` passes): `bankOfClabe` tells a known bank.
 */
export function isValidClabe(s: unknown): boolean {
  return typeof s === 'string' && /^\d{18}$/.test(s) && clabeCheckDigit(s.slice(0, 17)) === Number(s[17]);
}

/**
 * A CLABE from a 10-digit prefix (STP's client CLABEs: `646` STP + `180` plaza + the company's
 * 4 digits) and a sequence written as 7 digits, zero-padded, then the check digit.
 * Throws RangeError when the prefix is not 10 digits or the sequence not an integer in 0…9 999 999.
 */
export function buildClabe(prefix10: string, sequence: bigint | number): string {
  if (!/^\d{10}$/.test(prefix10)) throw new RangeError('a CLABE prefix is exactly 10 digits');
  if (typeof sequence === 'number' && !Number.isSafeInteger(sequence))
    throw new RangeError('a CLABE sequence is an integer');
  const n = BigInt(sequence);
  if (n < 0n || n >= SEQUENCE_LIMIT) throw new RangeError('a CLABE sequence is 0 to 9 999 999 (7 digits)');
  const first17 = `${prefix10}${n.toString().padStart(7, '0')}`;
  return `${first17}${clabeCheckDigit(first17)}`;
}

/** The 3-digit bank code a CLABE starts with. Throws RangeError for anything but 18 digits. */
export function clabeBankCode(clabe: string): string {
  if (!/^\d{18}$/.test(clabe)) throw new RangeError('a CLABE is exactly 18 digits');
  return clabe.slice(0, 3);
}

/**
 * A CLABE grouped as people read it aloud or copy it by hand: bank, plaza, account, check digit
 * (`646 180 15703632589 2`). Anything that is not 18 digits comes back as it was.
 */
export function formatClabeForReading(clabe: string): string {
  if (!/^\d{18}$/.test(clabe)) return clabe;
  return `${clabe.slice(0, 3)} ${clabe.slice(3, 6)} ${clabe.slice(6, 17)} ${clabe.slice(17)}`;
}

export interface MxBank {
  /** Banxico's 5-digit participant key: what SPEI orders name (`institucionContraparte`). */
  code5: string;
  name: string;
}

/**
 * The common SPEI participants by the 3-digit code a CLABE starts with (the last 3 digits of the
 * Banxico key: `40xxx` commercial banks, `37xxx` development banks, `90xxx` non-bank participants).
 * From cuenca-mx/clabe-python `banks.py` and stpmex-python `types.py`; Banxico's CEP institution list
 * is the authoritative, current one.
 */
export const MX_BANKS: Readonly<Record<string, MxBank>> = Object.freeze({
  '002': { code5: '40002', name: 'BANAMEX' },
  '006': { code5: '37006', name: 'BANCOMEXT' },
  '009': { code5: '37009', name: 'BANOBRAS' },
  '012': { code5: '40012', name: 'BBVA MEXICO' },
  '014': { code5: '40014', name: 'SANTANDER' },
  '021': { code5: '40021', name: 'HSBC' },
  '030': { code5: '40030', name: 'BAJIO' },
  '036': { code5: '40036', name: 'INBURSA' },
  '042': { code5: '40042', name: 'MIFEL' },
  '044': { code5: '40044', name: 'SCOTIABANK' },
  '058': { code5: '40058', name: 'BANREGIO' },
  '059': { code5: '40059', name: 'INVEX' },
  '060': { code5: '40060', name: 'BANSI' },
  '062': { code5: '40062', name: 'AFIRME' },
  '072': { code5: '40072', name: 'BANORTE' },
  '127': { code5: '40127', name: 'AZTECA' },
  '130': { code5: '40130', name: 'COMPARTAMOS' },
  '133': { code5: '40133', name: 'ACTINVER' },
  '135': { code5: '37135', name: 'NAFIN' },
  '137': { code5: '40137', name: 'BANCOPPEL' },
  '143': { code5: '40143', name: 'CIBANCO' },
  '638': { code5: '90638', name: 'NU MEXICO' },
  '646': { code5: '90646', name: 'STP' },
  '684': { code5: '90684', name: 'TRANSFER' },
  '706': { code5: '90706', name: 'ARCUS' },
  '722': { code5: '90722', name: 'MERCADO PAGO W' },
  '728': { code5: '90728', name: 'SPIN BY OXXO' },
});

/** The bank a CLABE belongs to, when its 3-digit code is one of MX_BANKS (and the CLABE is valid). */
export function bankOfClabe(clabe: string): (MxBank & { code3: string }) | undefined {
  if (!isValidClabe(clabe)) return undefined;
  const code3 = clabe.slice(0, 3);
  const bank = Object.hasOwn(MX_BANKS, code3) ? MX_BANKS[code3] : undefined;
  return bank === undefined ? undefined : { code3, ...bank };
}

/** The bank of a Banxico 5-digit participant key, when it is one of MX_BANKS. */
export function bankOfCode5(code5: string): (MxBank & { code3: string }) | undefined {
  for (const [code3, bank] of Object.entries(MX_BANKS)) if (bank.code5 === code5) return { code3, ...bank };
  return undefined;
}
