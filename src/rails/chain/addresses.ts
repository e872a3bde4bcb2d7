/**
 * Address and transaction-hash formats of the chains Cashgate accepts USDT on. No network access.
 * TRON: Base58Check of 0x41 + 20-byte body. ETH/BSC: 0x + 40 hex with the EIP-55 checksum.
 */
import { randomBytes } from 'node:crypto';
import { createBase58check, hex } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

export const CHAINS = ['ETH', 'TRON', 'BSC'] as const;
export type Chain = (typeof CHAINS)[number];

/** The tokens the chains carry for Cashgate. */
export const TOKENS = ['USDT'] as const;
export type Token = (typeof TOKENS)[number];

/** Version byte of a TRON mainnet address. */
const TRON_VERSION = 0x41;
const TRON_ADDRESS_LENGTH = 34;
const BODY_LENGTH = 20;
const BASE58_TEXT = /^[1-9A-HJ-NP-Za-km-z]+$/;
const EVM_TEXT = /^0x[0-9a-fA-F]{40}$/;
const HASH_HEX = /^[0-9a-fA-F]{64}$/;

/** Base58Check with the double-SHA256 4-byte checksum. */
const base58check = createBase58check(sha256);

function requireBody(body20: Uint8Array): void {
  if (body20.length !== BODY_LENGTH)
    throw new RangeError(`address body must be ${BODY_LENGTH} bytes, got ${body20.length}`);
}

export function isTronAddress(text: string): boolean {
  if (text.length !== TRON_ADDRESS_LENGTH || !BASE58_TEXT.test(text)) return false;
  let payload: Uint8Array;
  try {
    payload = base58check.decode(text);
  } catch {
    return false;
  }
  return payload.length === BODY_LENGTH + 1 && payload[0] === TRON_VERSION;
}

/** The Base58Check text of 0x41 + body20. */
export function tronAddress(body20: Uint8Array): string {
  requireBody(body20);
  const payload = new Uint8Array(BODY_LENGTH + 1);
  payload[0] = TRON_VERSION;
  payload.set(body20, 1);
  return base58check.encode(payload);
}

/** EIP-55 form of the lowercase hex `lower` (40 chars, no 0x). */
function eip55(lower: string): string {
  const digest = hex.encode(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const char = lower.charAt(i);
    out += parseInt(digest.charAt(i), 16) >= 8 ? char.toUpperCase() : char;
  }
  return out;
}

/** The EIP-55 text of a 20-byte address body. */
export function evmChecksumAddress(body20: Uint8Array): string {
  requireBody(body20);
  return eip55(hex.encode(body20));
}

/** 0x + 40 hex; all-lower and all-upper carry no checksum and pass, mixed case must be EIP-55. */
export function isEvmAddress(text: string): boolean {
  if (!EVM_TEXT.test(text)) return false;
  const digits = text.slice(2);
  const lower = digits.toLowerCase();
  if (digits === lower || digits === digits.toUpperCase()) return true;
  return eip55(lower) === text;
}

export function isChainAddress(chain: Chain, text: string): boolean {
  return chain === 'TRON' ? isTronAddress(text) : isEvmAddress(text);
}

/** TRON txID: 64 hex without 0x. ETH/BSC tx hash: 0x + 64 hex. */
export function isTradeHash(chain: Chain, text: string): boolean {
  if (chain === 'TRON') return HASH_HEX.test(text);
  return text.startsWith('0x') && HASH_HEX.test(text.slice(2));
}

/** A random lowercase hash in the chain's format, for the chain sandbox. */
export function randomTradeHash(chain: Chain): string {
  const digits = randomBytes(32).toString('hex');
  return chain === 'TRON' ? digits : `0x${digits}`;
}
