/** Brazilian taxpayer documents: CPF (people) and CNPJ (companies, numeric or alphanumeric). */

export type DocumentType = 'CPF' | 'CNPJ';

const CNPJ_DV1_WEIGHTS = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const CNPJ_DV2_WEIGHTS = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;

/**
 * The canonical form of a document: the mask's `.`, `-` (and `/` for CNPJ) removed and letters
 * uppercased. It does not validate; pair it with isValidCpf or isValidCnpj.
 */
export function normalizeDocument(type: DocumentType, value: string): string {
  return type === 'CPF' ? value.replace(/[.-]/g, '') : value.replace(/[./-]/g, '').toUpperCase();
}

function cpfCheckDigit(digits: string): number {
  let sum = 0;
  const firstWeight = digits.length + 1;
  for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * (firstWeight - i);
  const rest = (sum * 10) % 11;
  return rest === 10 ? 0 : rest;
}

/** Whether a CPF (11 digits, optionally masked 000.000.000-00) has valid check digits. */
export function isValidCpf(value: string): boolean {
  const cpf = normalizeDocument('CPF', value);
  // The 11 repeated-digit sequences pass the arithmetic but were never issued.
  if (!/^\d{11}$/.test(cpf) || /^(\d)\1{10}$/.test(cpf)) return false;
  const dv1 = cpfCheckDigit(cpf.slice(0, 9));
  const dv2 = cpfCheckDigit(cpf.slice(0, 9) + String(dv1));
  return cpf.endsWith(`${dv1}${dv2}`);
}

function cnpjCheckDigit(chars: string, weights: readonly number[]): number {
  let sum = 0;
  // IN RFB 2.229/2024: each character counts as its ASCII code minus 48, so digits keep their value and A = 17.
  for (let i = 0; i < chars.length; i++) sum += (chars.charCodeAt(i) - 48) * (weights[i] ?? 0);
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/**
 * Whether a CNPJ has valid check digits: 12 characters of root and branch in [0-9A-Z] (alphanumeric
 * CNPJ, IN RFB 2.229/2024) and 2 numeric DVs; masks are stripped and letters uppercased first.
 */
export function isValidCnpj(value: string): boolean {
  const cnpj = normalizeDocument('CNPJ', value);
  if (!/^[0-9A-Z]{12}\d{2}$/.test(cnpj) || /^(.)\1{13}$/.test(cnpj)) return false;
  const dv1 = cnpjCheckDigit(cnpj.slice(0, 12), CNPJ_DV1_WEIGHTS);
  const dv2 = cnpjCheckDigit(cnpj.slice(0, 12) + String(dv1), CNPJ_DV2_WEIGHTS);
  return cnpj.endsWith(`${dv1}${dv2}`);
}

/** Whether a document of the given type is valid. */
export function isValidDocument(type: DocumentType, value: string): boolean {
  return type === 'CPF' ? isValidCpf(value) : isValidCnpj(value);
}

/** A CPF with valid check digits from nine random digits (`randomDigit` yields 0-9), for a payer who gave none. */
export function generateCpf(randomDigit: () => number): string {
  let base = '';
  do {
    base = Array.from({ length: 9 }, () => String(randomDigit())).join('');
  } while (/^(\d)\1{8}$/.test(base));
  const dv1 = cpfCheckDigit(base);
  return `${base}${dv1}${cpfCheckDigit(base + String(dv1))}`;
}

/** The document type of a payer's entry, by its length once the mask is stripped (11: CPF, 14: CNPJ). */
export function documentTypeOf(value: string): DocumentType | undefined {
  const compact = value.replace(/[.\-/\s]/g, '');
  if (compact.length === 11) return 'CPF';
  if (compact.length === 14) return 'CNPJ';
  return undefined;
}
