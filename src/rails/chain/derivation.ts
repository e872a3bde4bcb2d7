/**
 * Deposit addresses derived from an operator's BIP32 account-level extended public key (BIP-44 layout),
 * so Cashgate never holds a private key. Address i is <account>/0/i.
 */
import { createHmac } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { createBase58check, hex } from '@scure/base';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { evmChecksumAddress, tronAddress } from './addresses.js';

export type AddressFamily = 'tron' | 'evm';

/** The account paths whose xpub the operator configures; addresses are <account>/0/i. */
export const ACCOUNT_PATHS: Record<AddressFamily, string> = { tron: "m/44'/195'/0'", evm: "m/44'/60'/0'" };

export const MAX_ADDRESS_INDEX = 2 ** 31 - 1;

/** Serialized extended key: version(4) depth(1) parent fingerprint(4) index(4) chain code(32) key(33). */
const EXTENDED_KEY_LENGTH = 78;
const ACCOUNT_DEPTH = 3;
/** BIP32 mainnet public version ("xpub"). */
const XPUB_VERSION = 0x0488b21e;
/** Versions of serialized private keys: xprv, tprv, yprv, zprv, Yprv, Zprv, uprv, vprv, Uprv, Vprv (BIP32, SLIP-132). */
const PRIVATE_VERSIONS = new Set([
  0x0488ade4, 0x04358394, 0x049d7878, 0x04b2430c, 0x0295b005, 0x02aa7a99, 0x044a4e28, 0x045f18bc, 0x024285b5,
  0x02575048,
]);

const base58check = createBase58check(sha256);

/** Reads an account-level extended public key; returns a reason text when it is not one. */
export function parseAccountXpub(text: string): { key: HDKey } | { problem: string } {
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(text);
  } catch {
    return { problem: 'not an extended key: the text is not valid base58check' };
  }
  if (bytes.length !== EXTENDED_KEY_LENGTH) {
    return { problem: `not an extended key: ${EXTENDED_KEY_LENGTH} bytes expected, found ${bytes.length}` };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(0, false);
  if (PRIVATE_VERSIONS.has(version) || bytes[45] === 0) {
    return { problem: 'must be an extended PUBLIC key: Cashgate never holds private keys' };
  }
  if (version !== XPUB_VERSION) {
    return {
      problem: `must be an xpub (version 0x0488b21e), found version 0x${version.toString(16).padStart(8, '0')}`,
    };
  }
  const depth = bytes[4] ?? -1;
  if (depth !== ACCOUNT_DEPTH) {
    return {
      problem: `must be the account-level key (depth 3: ${ACCOUNT_PATHS.tron} for TRON, ${ACCOUNT_PATHS.evm} for EVM), found depth ${depth}`,
    };
  }
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(text);
  } catch (err) {
    return { problem: `not a valid extended public key: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (key.privateKey !== null) return { problem: 'must be an extended PUBLIC key: Cashgate never holds private keys' };
  return { key };
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index > MAX_ADDRESS_INDEX) {
    throw new RangeError(`address index must be an integer in 0..${MAX_ADDRESS_INDEX}, got ${index}`);
  }
}

type CurvePoint = ReturnType<typeof secp256k1.Point.fromBytes>;

/**
 * secp256k1's generator with a table of its multiples of its own (window 8, about 3 MB, made on
 * first use): multiplying it by each child's tweak is most of what an address costs, a third less
 * than with the library's shared window-6 table. Still the constant-time multiplication.
 */
let tweakGenerator: CurvePoint | undefined;
function generator(): CurvePoint {
  tweakGenerator ??= secp256k1.Point.fromAffine(secp256k1.Point.BASE.toAffine()).precompute(8, false);
  return tweakGenerator;
}

export class DepositAddressDeriver {
  /** A short stable id of the xpub (hex of the first 8 bytes of sha256 of the xpub text), used to key the address counter per xpub. */
  readonly keyId: string;
  /** The external chain <account>/0: its chain code, compressed public key and that key as a point. */
  readonly #chainCode: Uint8Array;
  readonly #publicKey: Uint8Array;
  readonly #point: CurvePoint;

  constructor(
    readonly family: AddressFamily,
    /** The account-level xpub the addresses derive from. */
    readonly xpub: string,
  ) {
    const parsed = parseAccountXpub(xpub);
    if ('problem' in parsed) throw new Error(`${family} xpub: ${parsed.problem}`);
    const external = parsed.key.deriveChild(0);
    if (external.publicKey === null || external.chainCode === null) throw new Error(`${family} xpub: no public key`);
    this.#chainCode = external.chainCode;
    this.#publicKey = external.publicKey;
    // Decompressed once: the child keys are this point plus a multiple of the generator.
    this.#point = secp256k1.Point.fromBytes(external.publicKey);
    this.keyId = hex.encode(sha256(new TextEncoder().encode(xpub)).subarray(0, 8));
  }

  /**
   * The address at <account>/0/index: TRON base58check or EVM EIP-55. BIP-32's public child
   * derivation (CKDpub) done here rather than by HDKey.deriveChild, to skip what an address does
   * not need (the parent's key decompressed each time, the child's compressed key, fingerprint and
   * chain code): the same keys, for about 40 % of the CPU.
   */
  address(index: number): string {
    checkIndex(index);
    const data = new Uint8Array(37);
    data.set(this.#publicKey);
    new DataView(data.buffer).setUint32(33, index, false);
    const i = createHmac('sha512', this.#chainCode).update(data).digest();
    const tweak = BigInt(`0x${i.subarray(0, 32).toString('hex')}`);
    // BIP-32: parse256(IL) ≥ n, or the point at infinity, makes the index invalid; like HDKey
    // (which Cashgate used before), the key of the next index stands in. Odds: below 2^-127.
    if (tweak >= secp256k1.Point.Fn.ORDER) return this.#nextInstead(index);
    const child = tweak === 0n ? this.#point : this.#point.add(generator().multiply(tweak));
    if (child.is0()) return this.#nextInstead(index);
    const uncompressed = child.toBytes(false);
    const body = keccak_256(uncompressed.subarray(1)).subarray(-20);
    return this.family === 'tron' ? tronAddress(body) : evmChecksumAddress(body);
  }

  #nextInstead(index: number): string {
    if (index >= MAX_ADDRESS_INDEX) throw new Error(`cannot derive a key at index ${index}`);
    return this.address(index + 1);
  }

  /** The full path, e.g. m/44'/195'/0'/0/7 */
  path(index: number): string {
    checkIndex(index);
    return `${ACCOUNT_PATHS[this.family]}/0/${index}`;
  }
}

/**
 * Published test keys for the sandbox: the account xpubs of the BIP-39 test mnemonic
 * "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about" (empty passphrase).
 * Anyone can derive their private keys: never use them for real money.
 * Made once with ethers 6: HDNodeWallet.fromPhrase(mnemonic, undefined, ACCOUNT_PATHS[family]).neuter().extendedKey.
 */
export const SANDBOX_XPUBS: Record<AddressFamily, string> = {
  tron: 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd',
  evm: 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt',
};
