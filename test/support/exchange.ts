import bs58check from 'bs58check';
import { HDNodeWallet } from 'ethers';

/* Oracles of the exchange tests, independent of Cashgate's own code. */

/** The TRON address at m/44'/195'/0'/0/i of an account xpub, computed with ethers and bs58check only. */
export function tronAddressAt(xpub: string, index: number): string {
  const evm = HDNodeWallet.fromExtendedKey(xpub).derivePath(`0/${index}`).address;
  return bs58check.encode(Buffer.from(`41${evm.slice(2)}`, 'hex'));
}

/** Fixed-point arithmetic of the test's own: a decimal string times 10^places as a bigint. */
export function units(text: string, places: number): bigint {
  const [whole = '', fraction = ''] = text.split('.');
  return BigInt(whole + fraction.padEnd(places, '0'));
}

/** The four exchange endpoints (2–5). */
export const TO_WALLET = '/api/v3/exchange/fiat/to/wallet';
export const TO_FIAT = '/api/v3/exchange/wallet/to/fiat';
export const QUERY_TO_WALLET = '/api/v3/exchange/query/exchange/orderinfo';
export const QUERY_TO_FIAT = '/api/v3/exchange/query/wallet/exchange/orderinfo';

/** Well-formed TRON addresses for addressTo and addressFrom. */
export const TRON_TO = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
export const TRON_FROM = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';
