/** Pix keys in the exact form the DICT stores them: no masks, no normalisation on our side. */
import { isValidCnpj, isValidCpf } from './documents.js';

export type PixKeyType = 'CPF' | 'CNPJ' | 'PHONE' | 'EMAIL' | 'EVP';

export const PIX_KEY_TYPES: readonly PixKeyType[] = ['CPF', 'CNPJ', 'PHONE', 'EMAIL', 'EVP'];

/** DICT Key.maxLength. */
export const PIX_KEY_MAX_LENGTH = 77;

/** The DICT e-mail key pattern: lowercase local part, dot-separated lowercase labels of 1-63 characters. */
const EMAIL_KEY =
  /^[a-z0-9.!#$&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A lowercase UUID; the DICT does not require version 4 (its own example is version 1). */
const EVP_KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** +55, a two-digit DDD and a nine-digit mobile number starting with 9: keys are mobile numbers. */
const PHONE_KEY = /^\+55[1-9]\d9\d{8}$/;

/**
 * Checks a payout Pix key against its declared type. Returns the problem, if any.
 * CNPJ keys may be alphanumeric: CNPJs issued from July 2026 (IN RFB 2.229) carry letters.
 */
export function pixKeyProblem(accountType: PixKeyType, accountId: string): string | undefined {
  if (accountId.length > PIX_KEY_MAX_LENGTH)
    return `accountId must be at most ${PIX_KEY_MAX_LENGTH} characters for a Pix key`;
  switch (accountType) {
    case 'CPF':
      if (!/^\d{11}$/.test(accountId)) return 'accountId must be 11 digits without dots or dashes for accountType CPF';
      if (!isValidCpf(accountId)) return 'accountId must be a CPF whose check digits match for accountType CPF';
      return undefined;
    case 'CNPJ':
      if (!/^[0-9A-Z]{12}\d{2}$/.test(accountId)) {
        return 'accountId must be 14 characters without dots, slashes or dashes (12 uppercase letters or digits, then 2 digits) for accountType CNPJ';
      }
      if (!isValidCnpj(accountId)) return 'accountId must be a CNPJ whose check digits match for accountType CNPJ';
      return undefined;
    case 'PHONE':
      return PHONE_KEY.test(accountId)
        ? undefined
        : 'accountId must be a phone number in the form +55DDNNNNNNNNN for accountType PHONE: DDD, then a 9-digit mobile number starting with 9';
    case 'EMAIL':
      if (accountId !== accountId.toLowerCase())
        return 'accountId must be a lowercase e-mail address for accountType EMAIL';
      return EMAIL_KEY.test(accountId)
        ? undefined
        : 'accountId must be an e-mail address in the DICT format for accountType EMAIL';
    case 'EVP':
      return EVP_KEY.test(accountId)
        ? undefined
        : 'accountId must be a lowercase UUID (8-4-4-4-12 hexadecimal digits) for accountType EVP';
  }
}
