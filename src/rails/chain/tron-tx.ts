/**
 * TRON transactions as Cashgate's token sender makes them: a TRC-20 `transfer` call
 * (`TriggerSmartContract`) in a `Transaction.raw` protobuf, its txID (sha256 of those bytes), the
 * JSON `raw_data` a java-tron node prints for it, a secp256k1 signature over the txID, and a strict
 * reader of the same bytes (the sender checks what it signs; the local TRON API reads what it is sent).
 * Pure functions: nothing here talks to a node.
 *
 * References (tronprotocol/protocol): core/Tron.proto `Transaction.raw` (ref_block_bytes = 1,
 * ref_block_hash = 4, expiration = 8, contract = 11, timestamp = 14, fee_limit = 18),
 * `Transaction.Contract` (type = 1, parameter = 2 as google.protobuf.Any), ContractType
 * TriggerSmartContract = 31; core/contract/smart_contract.proto `TriggerSmartContract`
 * (owner_address = 1, contract_address = 2, call_value = 3, data = 4). java-tron signs and checks
 * `r || s || v` over the txID (TransactionCapsule.validateSignature, ECKey.signatureToKeyBytes:
 * v is the recovery id, as 0/1 or 27/28).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check, hex } from '@scure/base';
import { isTronAddress, tronAddress } from './addresses.js';
import { concat, erc20Transfer, fromHex, keccak256, selector, toHex } from './evm-tx.js';

/** The Any type URL of a TriggerSmartContract parameter. */
export const TRIGGER_SMART_CONTRACT_TYPE_URL = 'type.googleapis.com/protocol.TriggerSmartContract';
/** Transaction.Contract.ContractType.TriggerSmartContract. */
const TRIGGER_SMART_CONTRACT = 31n;
/** java-tron refuses a transaction that expires more than a day after its head block (Constant.MAXIMUM_TIME_UNTIL_EXPIRATION). */
export const MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;

const TRANSFER_SELECTOR = selector('transfer(address,uint256)');
/** Base58Check with the double-SHA256 checksum, as TRON addresses are written. */
const base58check = createBase58check(sha256);

// ---------------------------------------------------------------------------------------------
// Addresses

/** The `41…` hex form (42 hex digits) of a TRON Base58 address. */
export function tronHex(address: string): string {
  if (!isTronAddress(address)) throw new TypeError(`not a TRON address: ${address}`);
  return hex.encode(base58check.decode(address));
}

/** The Base58 form of a TRON address in `41…` hex (21 bytes). */
export function tronFromHex(text: string): string {
  const bytes = fromHex(text);
  if (bytes.length !== 21 || bytes[0] !== 0x41) throw new TypeError(`not a 41-prefixed TRON address: ${text}`);
  return tronAddress(bytes.subarray(1));
}

/** The 21 bytes (0x41 + body) of a TRON Base58 address. */
const addressBytes = (address: string): Uint8Array => fromHex(tronHex(address));

/** The TRON address of a secp256k1 private key: 0x41 + the last 20 bytes of keccak256(public key). */
export function tronAddressOfKey(privateKey: Uint8Array): string {
  const publicKey = secp256k1.getPublicKey(privateKey, false);
  return tronAddress(keccak256(publicKey.subarray(1)).subarray(-20));
}

// ---------------------------------------------------------------------------------------------
// Protobuf wire format (varint and length-delimited fields: all Transaction.raw needs)

const WIRE_VARINT = 0;
const WIRE_LENGTH = 2;

function varint(value: bigint): Uint8Array {
  if (value < 0n || value >= 2n ** 64n) throw new RangeError(`a varint is 0 to 2^64 - 1: ${value}`);
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return Uint8Array.from(out);
}

const key = (field: number, wire: number): Uint8Array => varint(BigInt((field << 3) | wire));
const lengthField = (field: number, bytes: Uint8Array): Uint8Array =>
  concat([key(field, WIRE_LENGTH), varint(BigInt(bytes.length)), bytes]);
/** A proto3 integer field: left out when 0, as protobuf writes defaults. */
const integerField = (field: number, value: bigint): Uint8Array =>
  value === 0n ? new Uint8Array(0) : concat([key(field, WIRE_VARINT), varint(value)]);

/** A protobuf message read field by field; any malformation throws. */
class ProtoReader {
  #at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.#at >= this.bytes.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.bytes[this.#at++];
      if (byte === undefined) throw new TypeError('a varint runs past the end');
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        if (value >= 2n ** 64n) throw new TypeError('a varint over 64 bits');
        return value;
      }
    }
    throw new TypeError('a varint over 10 bytes');
  }

  field(): { field: number; wire: number } {
    const tag = this.varint();
    const field = Number(tag >> 3n);
    if (field === 0) throw new TypeError('field number 0');
    return { field, wire: Number(tag & 7n) };
  }

  bytesField(): Uint8Array {
    const length = Number(this.varint());
    const end = this.#at + length;
    if (end > this.bytes.length) throw new TypeError('a length-delimited field runs past the end');
    const out = this.bytes.slice(this.#at, end);
    this.#at = end;
    return out;
  }
}

/**
 * The fields of a message as `{field: value}`, each field allowed once with the wire type `expected`
 * gives it; an unexpected field, a repeated one or another wire type throws.
 */
function readMessage(
  bytes: Uint8Array,
  expected: Record<number, number>,
  what: string,
): Map<number, bigint | Uint8Array> {
  const reader = new ProtoReader(bytes);
  const fields = new Map<number, bigint | Uint8Array>();
  while (!reader.done) {
    const { field, wire } = reader.field();
    if (expected[field] !== wire) throw new TypeError(`${what}: unexpected field ${field} (wire type ${wire})`);
    if (fields.has(field)) throw new TypeError(`${what}: field ${field} appears twice`);
    fields.set(field, wire === WIRE_VARINT ? reader.varint() : reader.bytesField());
  }
  return fields;
}

function bytesOf(fields: Map<number, bigint | Uint8Array>, field: number, what: string): Uint8Array {
  const value = fields.get(field);
  if (!(value instanceof Uint8Array)) throw new TypeError(`${what} is missing`);
  return value;
}

function integerOf(fields: Map<number, bigint | Uint8Array>, field: number): bigint {
  const value = fields.get(field);
  return typeof value === 'bigint' ? value : 0n;
}

// ---------------------------------------------------------------------------------------------
// The TRC-20 transfer transaction

/** Transaction.raw of one TriggerSmartContract, as bytes. */
interface RawFields {
  refBlockBytes: Uint8Array;
  refBlockHash: Uint8Array;
  expiration: bigint;
  owner: Uint8Array;
  contract: Uint8Array;
  data: Uint8Array;
  timestamp: bigint;
  feeLimit: bigint;
}

/** Fields in field-number order, as protobuf serializers (java-tron's included) write them. */
function encodeRaw(raw: RawFields): Uint8Array {
  const trigger = concat([lengthField(1, raw.owner), lengthField(2, raw.contract), lengthField(4, raw.data)]);
  const parameter = concat([
    lengthField(1, new TextEncoder().encode(TRIGGER_SMART_CONTRACT_TYPE_URL)),
    lengthField(2, trigger),
  ]);
  const contract = concat([integerField(1, TRIGGER_SMART_CONTRACT), lengthField(2, parameter)]);
  return concat([
    lengthField(1, raw.refBlockBytes),
    lengthField(4, raw.refBlockHash),
    integerField(8, raw.expiration),
    lengthField(11, contract),
    integerField(14, raw.timestamp),
    integerField(18, raw.feeLimit),
  ]);
}

/** The JSON `raw_data` of a TriggerSmartContract transaction as java-tron prints it (visible = false: hex addresses). */
export interface TronRawData {
  contract: [
    {
      parameter: {
        value: { data: string; owner_address: string; contract_address: string };
        type_url: typeof TRIGGER_SMART_CONTRACT_TYPE_URL;
      };
      type: 'TriggerSmartContract';
    },
  ];
  ref_block_bytes: string;
  ref_block_hash: string;
  expiration: number;
  fee_limit: number;
  timestamp: number;
}

/** A block a transaction refers to (TaPoS): its number, its blockID (64 hex) and its time (ms). */
export interface TronBlockRef {
  number: bigint;
  id: string;
  timestamp: number;
}

export interface Trc20TransferRequest {
  /** Base58 address of the sender (the key that signs). */
  owner: string;
  /** Base58 address of the TRC-20 token contract. */
  contract: string;
  /** Base58 address of the recipient. */
  to: string;
  /** Token base units. */
  units: bigint;
  /** The recent block the transaction refers to; a node refuses the transaction unless it has that block. */
  refBlock: TronBlockRef;
  /** How long after the reference block's time the transaction expires (java-tron refuses more than 24 h). */
  expirationMs: number;
  /** When the transaction was made (ms). */
  timestamp: number;
  /** The most TRX (sun) the call may burn for energy. */
  feeLimitSun: bigint;
}

export interface UnsignedTronTransaction {
  txID: string;
  rawDataHex: string;
  rawData: TronRawData;
}

function safeInteger(value: bigint | number, what: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number <= 0)
    throw new RangeError(`${what} must be a positive safe integer: ${value}`);
  return number;
}

function rawData(raw: RawFields): TronRawData {
  return {
    contract: [
      {
        parameter: {
          value: {
            data: hex.encode(raw.data),
            owner_address: hex.encode(raw.owner),
            contract_address: hex.encode(raw.contract),
          },
          type_url: TRIGGER_SMART_CONTRACT_TYPE_URL,
        },
        type: 'TriggerSmartContract',
      },
    ],
    ref_block_bytes: hex.encode(raw.refBlockBytes),
    ref_block_hash: hex.encode(raw.refBlockHash),
    expiration: Number(raw.expiration),
    fee_limit: Number(raw.feeLimit),
    timestamp: Number(raw.timestamp),
  };
}

/** The transaction's id: sha256 of its raw bytes, 64 hex without 0x. */
export const tronTxId = (rawDataHex: string): string => hex.encode(sha256(fromHex(rawDataHex)));

/** TaPoS: bytes 6..8 of the 8-byte big-endian block number, and bytes 8..16 of the blockID. */
export function refBlockFields(refBlock: TronBlockRef): { refBlockBytes: Uint8Array; refBlockHash: Uint8Array } {
  if (refBlock.number < 0n || refBlock.number >= 2n ** 63n)
    throw new RangeError(`not a block number: ${refBlock.number}`);
  const id = fromHex(refBlock.id);
  if (id.length !== 32) throw new TypeError(`a blockID is 32 bytes: ${refBlock.id}`);
  const number = fromHex(refBlock.number.toString(16).padStart(16, '0'));
  return { refBlockBytes: number.slice(6, 8), refBlockHash: id.slice(8, 16) };
}

/** An unsigned TRC-20 `transfer(to, units)` from `owner`: its raw bytes, txID and JSON. */
export function buildTrc20Transfer(request: Trc20TransferRequest): UnsignedTronTransaction {
  if (request.units <= 0n) throw new RangeError(`a transfer moves at least one unit: ${request.units}`);
  if (
    !Number.isSafeInteger(request.expirationMs) ||
    request.expirationMs <= 0 ||
    request.expirationMs > MAX_EXPIRATION_MS
  )
    throw new RangeError(`expirationMs must be 1 ms to 24 h: ${request.expirationMs}`);
  const expiration = safeInteger(request.refBlock.timestamp + request.expirationMs, 'the expiration');
  const to = addressBytes(request.to);
  const raw: RawFields = {
    ...refBlockFields(request.refBlock),
    expiration: BigInt(expiration),
    owner: addressBytes(request.owner),
    contract: addressBytes(request.contract),
    data: fromHex(erc20Transfer(toHex(to.subarray(1)), request.units)),
    timestamp: BigInt(safeInteger(request.timestamp, 'the timestamp')),
    feeLimit: BigInt(safeInteger(request.feeLimitSun, 'the fee limit')),
  };
  const rawDataHex = hex.encode(encodeRaw(raw));
  return { txID: tronTxId(rawDataHex), rawDataHex, rawData: rawData(raw) };
}

/** What a TRC-20 transfer transaction says, read back from its raw bytes. */
export interface Trc20Transfer {
  owner: string;
  contract: string;
  to: string;
  units: bigint;
  /** Hex, 2 bytes. */
  refBlockBytes: string;
  /** Hex, 8 bytes. */
  refBlockHash: string;
  expiration: number;
  timestamp: number;
  feeLimit: bigint;
}

/**
 * Reads a `Transaction.raw` that is exactly one TRC-20 `transfer(address,uint256)` call with no TRX
 * attached, written canonically (it re-encodes to the same bytes, so its txID says what it reads as);
 * anything else throws.
 */
export function decodeTrc20Transfer(rawDataHex: string): Trc20Transfer {
  const bytes = fromHex(rawDataHex);
  const raw = readMessage(
    bytes,
    { 1: WIRE_LENGTH, 4: WIRE_LENGTH, 8: WIRE_VARINT, 11: WIRE_LENGTH, 14: WIRE_VARINT, 18: WIRE_VARINT },
    'Transaction.raw',
  );
  const contract = readMessage(
    bytesOf(raw, 11, 'the contract'),
    { 1: WIRE_VARINT, 2: WIRE_LENGTH },
    'Transaction.Contract',
  );
  if (integerOf(contract, 1) !== TRIGGER_SMART_CONTRACT) throw new TypeError('not a TriggerSmartContract');
  const any = readMessage(bytesOf(contract, 2, 'the contract parameter'), { 1: WIRE_LENGTH, 2: WIRE_LENGTH }, 'Any');
  if (new TextDecoder().decode(bytesOf(any, 1, 'the type_url')) !== TRIGGER_SMART_CONTRACT_TYPE_URL)
    throw new TypeError('the parameter is not a TriggerSmartContract');
  const trigger = readMessage(
    bytesOf(any, 2, 'the TriggerSmartContract'),
    { 1: WIRE_LENGTH, 2: WIRE_LENGTH, 4: WIRE_LENGTH },
    'TriggerSmartContract',
  );
  const address = (value: Uint8Array, what: string): string => {
    if (value.length !== 21 || value[0] !== 0x41) throw new TypeError(`${what} is not a TRON address`);
    return tronAddress(value.subarray(1));
  };
  const data = bytesOf(trigger, 4, 'the call data');
  const body = hex.encode(data);
  if (data.length !== 68 || !body.startsWith(TRANSFER_SELECTOR))
    throw new TypeError('the call is not transfer(address,uint256)');
  if (data.subarray(4, 16).some((b) => b !== 0)) throw new TypeError('the recipient word is not an address');
  const refBlockBytes = bytesOf(raw, 1, 'ref_block_bytes');
  const refBlockHash = bytesOf(raw, 4, 'ref_block_hash');
  if (refBlockBytes.length !== 2 || refBlockHash.length !== 8) throw new TypeError('the reference block is malformed');
  const fields: RawFields = {
    refBlockBytes,
    refBlockHash,
    expiration: integerOf(raw, 8),
    owner: bytesOf(trigger, 1, 'the owner address'),
    contract: bytesOf(trigger, 2, 'the contract address'),
    data,
    timestamp: integerOf(raw, 14),
    feeLimit: integerOf(raw, 18),
  };
  if (hex.encode(encodeRaw(fields)) !== hex.encode(bytes))
    throw new TypeError('the transaction is not written canonically');
  const transfer: Trc20Transfer = {
    owner: address(fields.owner, 'the owner'),
    contract: address(fields.contract, 'the contract'),
    to: tronAddress(data.subarray(16, 36)),
    units: BigInt(`0x${body.slice(72)}`),
    refBlockBytes: hex.encode(refBlockBytes),
    refBlockHash: hex.encode(refBlockHash),
    expiration: safeInteger(fields.expiration, 'the expiration'),
    timestamp: safeInteger(fields.timestamp, 'the timestamp'),
    feeLimit: fields.feeLimit,
  };
  if (transfer.feeLimit <= 0n) throw new TypeError('the transaction has no fee limit');
  return transfer;
}

// ---------------------------------------------------------------------------------------------
// Signatures

/**
 * Signs a txID (RFC 6979 deterministic): 65 bytes `r || s || v`, hex, with v = 27 + recovery id as
 * tronweb writes it (java-tron reads 0/1 and 27/28 alike).
 */
export function signTronTransaction(txID: string, privateKey: Uint8Array): string {
  const digest = fromHex(txID);
  if (digest.length !== 32) throw new TypeError(`a txID is 32 bytes: ${txID}`);
  const signature = secp256k1.sign(digest, privateKey, { prehash: false, format: 'recovered' });
  const recovery = signature[0] ?? 0;
  return `${hex.encode(signature.subarray(1, 65))}${(27 + recovery).toString(16)}`;
}

/** The Base58 address whose key made `signature` over `txID`; throws when it recovers no key. */
export function recoverTronSigner(txID: string, signature: string): string {
  const digest = fromHex(txID);
  const bytes = fromHex(signature);
  if (digest.length !== 32) throw new TypeError(`a txID is 32 bytes: ${txID}`);
  if (bytes.length !== 65) throw new TypeError(`a signature is 65 bytes, got ${bytes.length}`);
  const v = bytes[64] ?? 0;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) throw new TypeError(`the signature's recovery byte is out of range: ${v}`);
  const recovered = concat([Uint8Array.of(recovery), bytes.subarray(0, 64)]);
  const publicKey = secp256k1.recoverPublicKey(recovered, digest, { prehash: false });
  const point = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return tronAddress(keccak256(point.subarray(1)).subarray(-20));
}
