/**
 * EVM transactions as Cashgate's token sender makes them: RLP, EIP-1559 (type 2) transactions
 * signed with secp256k1 over keccak-256, their hash, and the ERC-20 calls the sender needs
 * (`transfer`, `balanceOf`, `decimals`). Pure functions: nothing here talks to a node.
 *
 * References: the Ethereum yellow paper's appendix B (RLP), EIP-2718 (typed transaction envelope),
 * EIP-1559 (the fee market transaction: `0x02 || rlp([chainId, nonce, maxPriorityFeePerGas,
 * maxFeePerGas, gasLimit, to, value, data, accessList, yParity, r, s])`, signed over
 * `keccak256(0x02 || rlp([the first nine]))`), EIP-155 chain ids, and ERC-20's ABI.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { hex } from '@scure/base';
import { evmChecksumAddress } from './addresses.js';

/** An RLP item: a byte string, or a list of items. */
export type RlpItem = Uint8Array | readonly RlpItem[];

/** The bytes of `parts`, one after another. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The big-endian bytes of a non-negative integer, without leading zeros (0 is the empty string). */
export function integerBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError(`an RLP integer cannot be negative: ${value}`);
  if (value === 0n) return new Uint8Array(0);
  const digits = value.toString(16);
  return hex.decode(digits.length % 2 === 0 ? digits : `0${digits}`);
}

function lengthPrefix(length: number, short: number): Uint8Array {
  if (length < 56) return Uint8Array.of(short + length);
  const size = integerBytes(BigInt(length));
  return concat([Uint8Array.of(short + 55 + size.length), size]);
}

/** Recursive-length-prefix encoding. */
export function rlpEncode(item: RlpItem): Uint8Array {
  if (item instanceof Uint8Array) {
    const first = item[0];
    if (item.length === 1 && first !== undefined && first < 0x80) return item;
    return concat([lengthPrefix(item.length, 0x80), item]);
  }
  const body = concat(item.map(rlpEncode));
  return concat([lengthPrefix(body.length, 0xc0), body]);
}

/** `0x`-prefixed lower-case hex of bytes. */
export const toHex = (bytes: Uint8Array): string => `0x${hex.encode(bytes)}`;

/** Bytes from hex, with or without `0x`; refuses anything else. */
export function fromHex(text: string): Uint8Array {
  const digits = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(digits)) throw new TypeError(`not an even-length hex string: ${text}`);
  return hex.decode(digits.toLowerCase());
}

/** The quantity of a JSON-RPC answer (`0x1a`) as an integer. */
export function quantity(text: unknown): bigint {
  if (typeof text !== 'string' || !/^0x[0-9a-fA-F]+$/.test(text))
    throw new TypeError(`not a quantity: ${String(text)}`);
  return BigInt(text);
}

/** A JSON-RPC quantity from an integer (`0x0`, `0x1a`: no leading zeros). */
export const toQuantity = (value: bigint | number): string => `0x${BigInt(value).toString(16)}`;

export const keccak256 = (bytes: Uint8Array): Uint8Array => keccak_256(bytes);

/** A private key (32 bytes, hex with or without `0x`), checked to be a valid secp256k1 scalar. */
export function privateKeyFromHex(text: string): Uint8Array {
  const key = fromHex(text.trim());
  if (key.length !== 32 || !secp256k1.utils.isValidSecretKey(key))
    throw new RangeError('must be a 32-byte secp256k1 private key in hex');
  return key;
}

/** The EIP-55 address of a private key. */
export function addressOf(privateKey: Uint8Array): string {
  const publicKey = secp256k1.getPublicKey(privateKey, false);
  return evmChecksumAddress(keccak256(publicKey.subarray(1)).subarray(-20));
}

/** An EIP-1559 transaction before it is signed. Amounts in wei; `data` hex. */
export interface Eip1559Transaction {
  chainId: bigint;
  nonce: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  gasLimit: bigint;
  to: string;
  value: bigint;
  data: string;
}

function fields(tx: Eip1559Transaction): RlpItem[] {
  return [
    integerBytes(tx.chainId),
    integerBytes(tx.nonce),
    integerBytes(tx.maxPriorityFeePerGas),
    integerBytes(tx.maxFeePerGas),
    integerBytes(tx.gasLimit),
    fromHex(tx.to),
    integerBytes(tx.value),
    fromHex(tx.data),
    [],
  ];
}

/** A signed transaction: what `eth_sendRawTransaction` takes, and the hash the chain will know it by. */
export interface SignedTransaction {
  raw: string;
  hash: string;
}

/** Signs an EIP-1559 transaction (RFC 6979 deterministic: the same transaction always signs the same). */
export function signEip1559(tx: Eip1559Transaction, privateKey: Uint8Array): SignedTransaction {
  if (fromHex(tx.to).length !== 20) throw new TypeError(`to must be a 20-byte address: ${tx.to}`);
  if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) throw new RangeError('maxPriorityFeePerGas exceeds maxFeePerGas');
  const unsigned = fields(tx);
  const digest = keccak256(concat([Uint8Array.of(0x02), rlpEncode(unsigned)]));
  // 'recovered': the recovery bit, then r and s (32 bytes each); low-s as Ethereum requires.
  const signature = secp256k1.sign(digest, privateKey, { prehash: false, format: 'recovered' });
  const recovery = signature[0] ?? 0;
  const r = BigInt(toHex(signature.subarray(1, 33)));
  const s = BigInt(toHex(signature.subarray(33, 65)));
  const raw = concat([
    Uint8Array.of(0x02),
    rlpEncode([...unsigned, integerBytes(BigInt(recovery)), integerBytes(r), integerBytes(s)]),
  ]);
  return { raw: toHex(raw), hash: toHex(keccak256(raw)) };
}

/** A 32-byte ABI word of an unsigned integer, or of an address (exactly 20 bytes). */
function word(value: bigint | string): string {
  if (typeof value === 'string') {
    const address = fromHex(value);
    if (address.length !== 20) throw new TypeError(`an address is 20 bytes: ${value}`);
    return hex.encode(address).padStart(64, '0');
  }
  if (value < 0n || value >= 2n ** 256n) throw new RangeError(`a uint256 is 0 to 2^256 - 1: ${value}`);
  return value.toString(16).padStart(64, '0');
}

/** The four-byte selector of a function signature, e.g. `transfer(address,uint256)` → `a9059cbb`. */
export const selector = (signature: string): string =>
  hex.encode(keccak256(new TextEncoder().encode(signature)).subarray(0, 4));

/** Calldata of ERC-20 `transfer(to, units)`. */
export const erc20Transfer = (to: string, units: bigint): string =>
  `0x${selector('transfer(address,uint256)')}${word(to)}${word(units)}`;

/** Calldata of ERC-20 `balanceOf(owner)`. */
export const erc20BalanceOf = (owner: string): string => `0x${selector('balanceOf(address)')}${word(owner)}`;

/** Calldata of ERC-20 `decimals()`. */
export const erc20Decimals = (): string => `0x${selector('decimals()')}`;

/** keccak256("Transfer(address,address,uint256)"): topic 0 of every ERC-20 transfer log. */
export const TRANSFER_TOPIC = toHex(keccak256(new TextEncoder().encode('Transfer(address,address,uint256)')));

/** The 32-byte topic of an indexed address. */
export const addressTopic = (address: string): string => `0x${word(address)}`;

/** The address an indexed-address topic holds, in EIP-55 form. */
export function topicAddress(topic: string): string {
  const bytes = fromHex(topic);
  if (bytes.length !== 32 || bytes.subarray(0, 12).some((b) => b !== 0))
    throw new TypeError(`not an address topic: ${topic}`);
  return evmChecksumAddress(bytes.subarray(12));
}
