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
