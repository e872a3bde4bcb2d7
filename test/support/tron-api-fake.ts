/**
 * A local TronGrid-compatible HTTP API for tests: a java-tron full node's HTTP API (/wallet/… and
 * /walletsolidity/…) and TronGrid's v1 TRC-20 history, over an in-memory chain with TRX balances,
 * bandwidth and energy, and one TRC-20 token (USDT, 6 decimals) at a configurable contract address.
 * It listens on 127.0.0.1 on a free port; tests drive its chain (`mine`, `reorg`, `fund`, `mint`,
 * `deposit`), inject the failures a real endpoint shows (`failNext`, `delayNext`, `dropNext`,
 * `lagBlocks`) and read what was asked of it (`calls`).
 *
 * Written from java-tron's sources (tronprotocol/java-tron: services/http/*Servlet.java, Util.java,
 * JsonFormat.java, core/Wallet.java#broadcastTransaction, db/Manager.java#pushTransaction and
 * #processTransaction, db/BandwidthProcessor.java, actuator/VMActuator.java) and the HTTP API reference
 * (developers.tron.network/reference); each rule below says where it comes from. It does not share
 * code with Cashgate's TRON module: transactions are rebuilt from their JSON `raw_data` with tronweb's
 * protobuf classes, as java-tron rebuilds them (Util.packTransaction), and signatures are recovered
 * with @noble/curves.
 *
 * Not modelled: TRX transfers and contracts other than the token (refused as OTHER_ERROR), multi-
 * signature permissions, the dynamic energy penalty (a transfer's energy is a fixed figure per case),
 * resource usage recovering over its 24 h window (a test lasts seconds of it), staking as TRX frozen
 * (staked energy/bandwidth are given as limits), witnesses and their signatures, the event server.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { TronWeb, utils as tronUtils } from 'tronweb';

/** Mainnet USDT (TRC-20). */
export const MAINNET_USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** One slot: java-tron produces a block every 3 s (ChainConstant.BLOCK_PRODUCED_INTERVAL). */
const BLOCK_INTERVAL_MS = 3000;
/** Constant.MAXIMUM_TIME_UNTIL_EXPIRATION: a transaction may expire at most a day after the head block. */
const MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;
/** Constant.MAX_RESULT_SIZE_IN_TX: bandwidth counts the transaction plus 64 bytes of result. */
const RESULT_BYTES = 64;
/** Constant.TRANSACTION_MAX_BYTE_SIZE. */
const MAX_TX_BYTES = 500 * 1024;
const TRANSFER_TOPIC = bytesHex(keccak_256(new TextEncoder().encode('Transfer(address,address,uint256)')));
const selectorOf = (signature: string): string => bytesHex(keccak_256(new TextEncoder().encode(signature))).slice(0, 8);
const SELECTORS = {
  transfer: selectorOf('transfer(address,uint256)'),
  balanceOf: selectorOf('balanceOf(address)'),
  decimals: selectorOf('decimals()'),
  symbol: selectorOf('symbol()'),
  name: selectorOf('name()'),
};

function bytesHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
const hexBytes = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'hex'));
const isHex = (text: unknown, bytes?: number): text is string =>
  typeof text === 'string' && /^(?:[0-9a-fA-F]{2})*$/.test(text) && (bytes === undefined || text.length === bytes * 2);
const utf8Hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex');
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
/** Either address form to `41…` hex, or undefined. */
function hex41(address: unknown): string | undefined {
  if (typeof address !== 'string') return undefined;
  if (/^41[0-9a-fA-F]{40}$/.test(address)) return address.toLowerCase();
  if (address.startsWith('T') && TronWeb.isAddress(address)) return TronWeb.address.toHex(address).toLowerCase();
  return undefined;
}
const base58 = (hex: string): string => TronWeb.address.fromHex(hex);

export interface TronApiFakeOptions {
  /** When set, every request must carry it as `TRON-PRO-API-KEY` (401 otherwise). */
  apiKey?: string;
  /** The token's contract (Base58; default mainnet USDT). */
  contract?: string;
  /** The number of the first block (default 70,000,000: ref_block_bytes then wrap like mainnet's). */
  startNumber?: bigint;
  /** Blocks made at start (default solidityDepth + 2), so there is a solidified block from the first call. */
  initialBlocks?: number;
  /** Clock of block times (default Date.now); a block is never less than a slot (3 s) after its parent. */
  now?: () => number;
  /** When set, a block is mined every `blockTimeMs` as well as on `mine()`. */
  blockTimeMs?: number;
  /** Blocks a block must be under for /walletsolidity to see it (default 19: 2/3 of 27 witnesses + 1). */
  solidityDepth?: number;
  /** Sun per energy unit (chain parameter getEnergyFee; default 100). */
  energyPriceSun?: bigint;
  /** Sun per byte of bandwidth bought with TRX (getTransactionFee; default 1000). */
  bandwidthPriceSun?: bigint;
  /** Free bandwidth per account per day (getFreeNetLimit; default 600). */
  freeNetLimit?: bigint;
  /** Highest fee_limit (getMaxFeeLimit; default 15,000 TRX). */
  maxFeeLimitSun?: bigint;
  /**
   * Energy of a USDT transfer: to an address already holding the token (default 64,285), to one that
   * does not (130,285), and until a revert (default 1,000, an estimate: java-tron charges what ran).
   * The two transfer figures are what mainnet USDT transfers use with the dynamic energy penalty
   * (e.g. docs.catfee.io/en/energy/usdt-transfer-energy-on-tron: 64,285 and 130,285).
   */
  transferEnergy?: { existingHolder?: bigint; newHolder?: bigint; revert?: bigint };
}

/** One recorded request. */
export interface TronApiCall {
  /** The path without its leading slash, e.g. `wallet/broadcasttransaction`. */
  path: string;
  method: string;
  body: Record<string, unknown>;
  query: Record<string, string>;
  apiKey: string | undefined;
  at: number;
  /** The fault injected on it, if any. */
  fault?: 'fail' | 'delay' | 'drop';
  status: number;
}

export interface TronFakeBalances {
  /** TRX, sun. */
  sun: bigint;
  /** Token base units. */
  units: bigint;
  exists: boolean;
  energyLimit: bigint;
  energyUsed: bigint;
  netLimit: bigint;
  netUsed: bigint;
  freeNetUsed: bigint;
}

export interface TronApiFake {
  url: string;
  /** The token contract (Base58). */
  contract: string;
  close(): Promise<void>;
  /** Mines `n` blocks now, each packing the pool; answers the new blocks. */
  mine(n?: number): { number: bigint; id: string; timestamp: number; transactions: string[] }[];
  /**
   * Replaces the last `depth` blocks with as many new ones (new ids, same slots, empty). Their
   * transactions go back to the pool (and are mined again if still valid) unless `drop`.
   */
  reorg(depth: number, options?: { drop?: boolean }): void;
  /** The real head (whatever `lagBlocks` makes the API answer). */
  head(): { number: bigint; id: string; timestamp: number };
  /** Moves the fake's clock on by `ms` (blocks carry that clock's time, never less than a slot after their parent). */
  advanceTime(ms: number): void;
  /** Gives TRX (sun), creating the account: as if it always had it (every block's state). */
  fund(address: string, sun: bigint): void;
  /** Gives token units (as if always held; TRC-20 balances do not create accounts). */
  mint(address: string, units: bigint): void;
  /** Gives the account staked energy and bandwidth (as limits), creating it. */
  stake(address: string, resources: { energy?: bigint; net?: bigint }): void;
  /**
   * A payer's token transfer signed elsewhere, mined in the next block (it REVERTs if the payer is
   * short). Its resources are the payer's concern: it costs the payer no TRX here. Answers its txID.
   */
  deposit(from: string, to: string, units: bigint): string;
  balances(address: string): TronFakeBalances;
  /** txIDs in the pool, in order. */
  pool(): string[];
  /** The next `times` requests to `path` answer `status` without being acted on. */
  failNext(path: string, options?: { status?: 500 | 502 | 503 | 429; times?: number }): void;
  /** The next `times` requests to `path` wait `ms` before being acted on and answered. */
  delayNext(path: string, ms: number, times?: number): void;
  /** The next `times` requests to `path` are acted on, then their connection is destroyed unanswered. */
  dropNext(path: string, times?: number): void;
  /**
   * The API answers getnowblock `n` blocks behind the head, as a load-balanced node that is behind
   * does; with `receipts`, gettransactioninfobyblocknum/byid also answer nothing for those blocks
   * (while getblockbynum still serves them, from a node that has them).
   */
  lagBlocks(n: number, options?: { receipts?: boolean }): void;
  /** Forgets the faults still queued for `path`. */
  clearFaults(path: string): void;
  /** Changes the energy price (the chain parameter getEnergyFee, which the network votes on). */
  setEnergyPrice(sun: bigint): void;
  calls(path?: string): TronApiCall[];
}

interface Account {
  balance: bigint;
  createTime: number;
  energyLimit: bigint;
  energyUsed: bigint;
  netLimit: bigint;
  netUsed: bigint;
  freeNetUsed: bigint;
}

interface State {
  accounts: Map<string, Account>;
  tokens: Map<string, bigint>;
}

const cloneState = (state: State): State => ({
  accounts: new Map([...state.accounts].map(([k, v]) => [k, { ...v }])),
  tokens: new Map(state.tokens),
});

/** A transaction as the fake keeps it: what was sent, and what it says. */
interface Tx {
  txID: string;
  rawDataHex: string;
  rawData: Record<string, unknown>;
  signature: string[];
  owner: string;
  contract: string;
  data: string;
  feeLimit: bigint;
  expiration: number;
  refBlockBytes: string;
  refBlockHash: string;
  /** Bytes of bandwidth it takes (serialized with its signatures, plus the result allowance). */
  bytes: bigint;
  /** Made by `deposit()`: a payer's transaction, not checked nor charged. */
  foreign: boolean;
  /** The outcome of its execution on the pending state (gettransactionbyid's ret). */
  pendingRet?: string;
}

interface Mined {
  tx: Tx;
  contractRet: string;
  /** TransactionInfo as java-tron prints it (visible = false). */
  info: Record<string, unknown>;
  /** Transfer logs: from/to 41-hex, for the v1 API. */
  transfers: { from: string; to: string; units: bigint }[];
}

interface Block {
  number: bigint;
  id: string;
  parentHash: string;
  timestamp: number;
  txs: Mined[];
  /** The state after the block (shared with its parent when the block changed nothing). */
  state: State;
}

interface Fault {
  kind: 'fail' | 'delay' | 'drop';
  times: number;
  status?: number;
  ms?: number;
}

/** A broadcast refused with a java-tron Return code. */
class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const normalize = (path: string): string => path.replace(/^\/+/, '').replace(/\/+$/, '');

export async function startTronApi(options: TronApiFakeOptions = {}): Promise<TronApiFake> {
  const tokenHex = hex41(options.contract ?? MAINNET_USDT);
  if (tokenHex === undefined) throw new TypeError(`not a TRON address: ${options.contract ?? ''}`);
  const token: string = tokenHex;
  const solidityDepth = options.solidityDepth ?? 19;
  let energyPrice = options.energyPriceSun ?? 100n;
  const bandwidthPrice = options.bandwidthPriceSun ?? 1000n;
  const freeNetLimit = options.freeNetLimit ?? 600n;
  const maxFeeLimit = options.maxFeeLimitSun ?? 15_000_000_000n;
  const energy = {
    existingHolder: options.transferEnergy?.existingHolder ?? 64_285n,
    newHolder: options.transferEnergy?.newHolder ?? 130_285n,
    revert: options.transferEnergy?.revert ?? 1_000n,
  };
  const clock = options.now ?? Date.now;
  let clockOffset = 0;
  const now = (): number => clock() + clockOffset;

  const blocks: Block[] = [];
  let pool: Tx[] = [];
  /** txID → the block number it is in (canonical chain). */
  const minedAt = new Map<string, bigint>();
  const faults = new Map<string, Fault[]>();
  const log: TronApiCall[] = [];
  let lag = 0;
  let lagReceipts = false;

  const newBlockId = (number: bigint): string =>
    number.toString(16).padStart(16, '0') + randomBytes(24).toString('hex');
  const headBlock = (): Block => {
    const head = blocks.at(-1);
    if (head === undefined) throw new Error('no blocks');
    return head;
  };
  const blockAt = (number: bigint): Block | undefined => {
    const first = blocks[0];
    if (first === undefined) return undefined;
    const index = Number(number - first.number);
    return index >= 0 ? blocks[index] : undefined;
  };

  // --- Execution ----------------------------------------------------------------------------

  /**
   * Bandwidth, as BandwidthProcessor.consume charges a TriggerSmartContract: the owner's staked
   * bandwidth (useAccountNet), else its free bandwidth (useFreeNet), else TRX at the transaction fee
   * per byte (useTransactionFee); a missing owner is "account [...] does not exist".
   */
  function chargeBandwidth(state: State, tx: Tx): { netUsage: bigint; netFee: bigint } {
    const account = state.accounts.get(tx.owner);
    if (account === undefined)
      throw new Refusal(
        'CONTRACT_VALIDATE_ERROR',
        `Contract validate error : account [${base58(tx.owner)}] does not exist`,
      );
    if (account.netLimit - account.netUsed >= tx.bytes) {
      account.netUsed += tx.bytes;
      return { netUsage: tx.bytes, netFee: 0n };
    }
    if (freeNetLimit - account.freeNetUsed >= tx.bytes) {
      account.freeNetUsed += tx.bytes;
      return { netUsage: tx.bytes, netFee: 0n };
    }
    const fee = tx.bytes * bandwidthPrice;
    if (account.balance >= fee) {
      account.balance -= fee;
      return { netUsage: 0n, netFee: fee };
    }
    throw new Refusal('BANDWITH_ERROR', 'Account resource insufficient error.');
  }

  /** VMActuator.validate for a TriggerSmartContract, as far as the fake's one contract goes. */
  function validateContract(tx: Tx): void {
    if (tx.contract !== token)
      throw new Refusal('CONTRACT_VALIDATE_ERROR', 'Contract validate error : No contract or not a smart contract');
    if (tx.feeLimit < 0n || tx.feeLimit > maxFeeLimit)
      throw new Refusal(
        'CONTRACT_VALIDATE_ERROR',
        `Contract validate error : feeLimit must be >= 0 and <= ${maxFeeLimit}`,
      );
  }

  /**
   * Runs the token call: energy limit = min(left staked energy + balance / price, fee_limit / price)
   * (VMActuator.getAccountEnergyLimitWithFixRatio); staked energy is used first, the rest burnt at the
   * energy price. Out of energy uses the whole limit and moves nothing; a short sender reverts.
   */
  function execute(state: State, tx: Tx, at: { number: bigint; timestamp: number } | undefined): Mined {
    const info: Record<string, unknown> = { id: tx.txID };
    const transfers: Mined['transfers'] = [];
    let netUsage = 0n;
    let netFee = 0n;
    if (!tx.foreign) ({ netUsage, netFee } = chargeBandwidth(state, tx));
    const selector = tx.data.slice(0, 8);
    const to = `41${tx.data.slice(32, 72)}`;
    const units = tx.data.length === 136 ? BigInt(`0x${tx.data.slice(72)}`) : 0n;
    const fromUnits = state.tokens.get(tx.owner) ?? 0n;
    const wellFormed =
      selector === SELECTORS.transfer && tx.data.length === 136 && /^0{24}$/.test(tx.data.slice(8, 32));
    const reverts = !wellFormed || fromUnits < units;
    const needed = reverts
      ? energy.revert
      : (state.tokens.get(to) ?? 0n) > 0n
        ? energy.existingHolder
        : energy.newHolder;
    let result: 'SUCCESS' | 'REVERT' | 'OUT_OF_ENERGY';
    let used = needed;
    let staked = 0n;
    let burnt = 0n;
    if (tx.foreign) {
      result = reverts ? 'REVERT' : 'SUCCESS';
      staked = needed;
    } else {
      const account = state.accounts.get(tx.owner);
      if (account === undefined) throw new Error('unreachable: bandwidth checked the owner');
      const leftStaked = account.energyLimit > account.energyUsed ? account.energyLimit - account.energyUsed : 0n;
      const limit = [leftStaked + account.balance / energyPrice, tx.feeLimit / energyPrice].reduce((a, b) =>
        a < b ? a : b,
      );
      if (needed > limit) {
        result = 'OUT_OF_ENERGY';
        used = limit;
      } else result = reverts ? 'REVERT' : 'SUCCESS';
      staked = used < leftStaked ? used : leftStaked;
      burnt = (used - staked) * energyPrice;
      account.energyUsed += staked;
      account.balance -= burnt;
    }
    if (result === 'SUCCESS') {
      state.tokens.set(tx.owner, fromUnits - units);
      state.tokens.set(to, (state.tokens.get(to) ?? 0n) + units);
      transfers.push({ from: tx.owner, to, units });
    }
    const fee = burnt + netFee;
    if (fee > 0n) info.fee = Number(fee);
    if (at !== undefined) {
      info.blockNumber = Number(at.number);
      info.blockTimeStamp = at.timestamp;
    }
    info.contractResult = [result === 'SUCCESS' ? '1'.padStart(64, '0') : ''];
    info.contract_address = tx.contract;
    const receipt: Record<string, unknown> = {};
    if (staked > 0n) receipt.energy_usage = Number(staked);
    if (burnt > 0n) receipt.energy_fee = Number(burnt);
    if (used > 0n) receipt.energy_usage_total = Number(used);
    if (netUsage > 0n) receipt.net_usage = Number(netUsage);
    if (netFee > 0n) receipt.net_fee = Number(netFee);
    receipt.result = result;
    info.receipt = receipt;
    if (result === 'SUCCESS') {
      // TransactionInfo.Log: the contract's 20-byte body, topics and data in hex (JsonFormat, visible = false).
      info.log = [
        {
          address: token.slice(2),
          topics: [TRANSFER_TOPIC, tx.owner.slice(2).padStart(64, '0'), to.slice(2).padStart(64, '0')],
          data: units.toString(16).padStart(64, '0'),
        },
      ];
    } else {
      info.result = 'FAILED';
      info.resMessage = utf8Hex(
        result === 'REVERT'
          ? 'REVERT opcode executed'
          : `Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[${used}], curOpEnergy[${needed - used}], usedEnergy[${used}]`,
      );
    }
    return { tx, contractRet: result, info, transfers };
  }

  /** The pool run on the head state: what java-tron's pending state is. */
  function pendingState(): State {
    const state = cloneState(headBlock().state);
    for (const tx of pool) {
      try {
        tx.pendingRet = execute(state, tx, undefined).contractRet;
      } catch {
        // A pool transaction that no longer fits is dropped when the next block is packed.
      }
    }
    return state;
  }

  /** Manager.validateTapos: ref_block_bytes picks a recent block (by its number's low 2 bytes), whose id bytes 8..16 must match. */
  function taposHolds(tx: Tx): boolean {
    for (let i = blocks.length - 1; i >= 0 && i >= blocks.length - 65536; i--) {
      const block = blocks[i];
      if (block === undefined) break;
      if ((block.number & 0xffffn).toString(16).padStart(4, '0') === tx.refBlockBytes)
        return block.id.slice(16, 32) === tx.refBlockHash;
    }
    return false;
  }

  // --- Mining ---------------------------------------------------------------------------------

  function mineOne(txs: Tx[], timestamp?: number): Block {
    const parent = headBlock();
    const number = parent.number + 1n;
    const time = timestamp ?? Math.max(now(), parent.timestamp + BLOCK_INTERVAL_MS);
    // A block's state is its parent's until a transaction changes it (states are never changed in place).
    let state = parent.state;
    const mined: Mined[] = [];
    for (const tx of txs) {
      // Packing re-runs processTransaction: an expired, stale or duplicate transaction, or one the
      // owner can no longer pay bandwidth for, is left out of the block and dropped.
      const expired = tx.expiration <= parent.timestamp || tx.expiration < time;
      if (minedAt.has(tx.txID) || (!tx.foreign && (expired || !taposHolds(tx)))) continue;
      const attempt = cloneState(state);
      try {
        const done = execute(attempt, tx, { number, timestamp: time });
        state = attempt;
        mined.push(done);
      } catch {
        // Dropped, as java-tron drops a pending transaction that fails when a block is packed.
      }
    }
    const block: Block = { number, id: newBlockId(number), parentHash: parent.id, timestamp: time, txs: mined, state };
    blocks.push(block);
    for (const m of mined) minedAt.set(m.tx.txID, number);
    return block;
  }

  function mine(n = 1): ReturnType<TronApiFake['mine']> {
    const made: ReturnType<TronApiFake['mine']> = [];
    for (let i = 0; i < n; i++) {
      const txs = pool;
      pool = [];
      const block = mineOne(txs);
      made.push({
        number: block.number,
        id: block.id,
        timestamp: block.timestamp,
        transactions: block.txs.map((m) => m.tx.txID),
      });
    }
    return made;
  }

  // Genesis and the blocks before the tests start.
  const start = options.startNumber ?? 70_000_000n;
  const initial = Math.max(1, options.initialBlocks ?? solidityDepth + 2);
  const firstTime = now() - initial * BLOCK_INTERVAL_MS;
  blocks.push({
    number: start,
    id: newBlockId(start),
    parentHash: randomBytes(32).toString('hex'),
    timestamp: firstTime,
    txs: [],
    state: { accounts: new Map(), tokens: new Map() },
  });
  for (let i = 1; i < initial; i++) mineOne([], firstTime + i * BLOCK_INTERVAL_MS);

  /** Applies a change to every block's state, as if it held from genesis (states are shared between blocks). */
  function everywhere(change: (state: State) => void): void {
    const seen = new Set<State>();
    for (const block of blocks) {
      if (seen.has(block.state)) continue;
      seen.add(block.state);
      change(block.state);
    }
  }
  const account = (state: State, address: string): Account => {
    let found = state.accounts.get(address);
    if (found === undefined) {
      found = {
        balance: 0n,
        createTime: now(),
        energyLimit: 0n,
        energyUsed: 0n,
        netLimit: 0n,
        netUsed: 0n,
        freeNetUsed: 0n,
      };
      state.accounts.set(address, found);
    }
    return found;
  };
  const requireAddress = (address: string): string => {
    const hex = hex41(address);
    if (hex === undefined) throw new TypeError(`not a TRON address: ${address}`);
    return hex;
  };

  // --- Transactions from JSON -----------------------------------------------------------------

  /**
   * Util.packTransaction: the transaction is rebuilt from its JSON raw_data (raw_data_hex is not
   * read); a malformed one is a servlet error.
   */
  function packTransaction(body: Record<string, unknown>): Tx {
    const visible = body.visible === true;
    const raw = body.raw_data;
    if (raw === null || typeof raw !== 'object') throw new TypeError('raw_data is missing');
    const rawData = structuredClone(raw) as Record<string, unknown>;
    const contracts = rawData.contract;
    if (!Array.isArray(contracts) || contracts.length !== 1)
      throw new Refusal('OTHER_ERROR', 'Error: contract size should be exactly 1');
    const contract = contracts[0] as Record<string, unknown>;
    if (contract.type !== 'TriggerSmartContract')
      throw new Refusal(
        'OTHER_ERROR',
        `Error: the local TRON API runs TriggerSmartContract only, not ${String(contract.type)}`,
      );
    const value = ((contract.parameter ?? {}) as Record<string, unknown>).value as Record<string, unknown> | undefined;
    if (value === undefined) throw new TypeError('contract parameter value is missing');
    for (const field of ['owner_address', 'contract_address'] as const) {
      const hex = visible ? hex41(value[field]) : isHex(value[field], 21) ? value[field] : undefined;
      if (hex === undefined) throw new TypeError(`${field} is not an address`);
      value[field] = hex.toLowerCase();
    }
    if (value.data !== undefined && !isHex(value.data)) throw new TypeError('data is not hex');
    for (const field of ['ref_block_bytes', 'ref_block_hash'] as const)
      if (!isHex(rawData[field])) throw new TypeError(`${field} is not hex`);
    for (const field of ['expiration', 'timestamp', 'fee_limit'] as const)
      if (rawData[field] !== undefined && !Number.isSafeInteger(rawData[field]))
        throw new TypeError(`${field} is not an integer`);
    const pb = tronUtils.transaction.txJsonToPb({ raw_data: rawData, visible: false });
    const rawPb = pb.getRawData();
    const rawBytes: Uint8Array = rawPb.serializeBinary();
    const parameter = rawPb.getContractList()[0].getParameter();
    const Proto = (globalThis as unknown as { TronWebProto: any }).TronWebProto;
    const trigger = Proto.TriggerSmartContract.deserializeBinary(parameter.getValue_asU8());
    const signature = Array.isArray(body.signature)
      ? body.signature.filter((s): s is string => typeof s === 'string')
      : [];
    // The serialized Transaction: field 1 raw, field 2 each signature (each: tag, length, bytes).
    const lengthOf = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : 3);
    const size =
      1 +
      lengthOf(rawBytes.length) +
      rawBytes.length +
      signature.reduce((sum, s) => sum + 1 + lengthOf(s.length / 2) + s.length / 2, 0);
    return {
      txID: sha256(rawBytes),
      rawDataHex: bytesHex(rawBytes),
      rawData: printRawData(rawPb, trigger),
      signature: signature.map((s) => s.toLowerCase()),
      owner: bytesHex(trigger.getOwnerAddress_asU8()),
      contract: bytesHex(trigger.getContractAddress_asU8()),
      data: bytesHex(trigger.getData_asU8()),
      feeLimit: BigInt(rawPb.getFeeLimit()),
      expiration: Number(rawPb.getExpiration()),
      refBlockBytes: bytesHex(rawPb.getRefBlockBytes_asU8()),
      refBlockHash: bytesHex(rawPb.getRefBlockHash_asU8()),
      bytes: BigInt(size + RESULT_BYTES),
      foreign: false,
    };
  }

  /** raw_data as java-tron prints it (Util.printTransactionToJSON, visible = false). */
  function printRawData(rawPb: any, trigger: any): Record<string, unknown> {
    const value: Record<string, unknown> = {
      data: bytesHex(trigger.getData_asU8()),
      owner_address: bytesHex(trigger.getOwnerAddress_asU8()),
      contract_address: bytesHex(trigger.getContractAddress_asU8()),
    };
    if (Number(trigger.getCallValue()) !== 0) value.call_value = Number(trigger.getCallValue());
    const raw: Record<string, unknown> = {
      contract: [
        {
          parameter: { value, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: bytesHex(rawPb.getRefBlockBytes_asU8()),
      ref_block_hash: bytesHex(rawPb.getRefBlockHash_asU8()),
      expiration: Number(rawPb.getExpiration()),
    };
    if (Number(rawPb.getFeeLimit()) !== 0) raw.fee_limit = Number(rawPb.getFeeLimit());
    if (Number(rawPb.getTimestamp()) !== 0) raw.timestamp = Number(rawPb.getTimestamp());
    return raw;
  }

  /**
   * TransactionCapsule.validatePubSignature / checkWeight: at least one signature of 65 bytes or
   * more; v (byte 64) is the recovery id, 0/1 or 27/28; the signer must be the owner (the default
   * owner permission: the owner's own key, threshold 1).
   */
  function checkSignature(tx: Tx): void {
    if (tx.signature.length === 0) throw new Refusal('SIGERROR', 'Validate signature error: miss sig or contract');
    for (const sig of tx.signature) {
      if (!isHex(sig) || sig.length < 130)
        throw new Refusal('SIGERROR', `Validate signature error: Signature size is ${Math.floor(sig.length / 2)}`);
      let signer: string;
      try {
        let v = parseInt(sig.slice(128, 130), 16);
        if (v < 27) v += 27;
        if (v < 27 || v > 34) throw new Error(`Header byte out of range: ${v}`);
        const recovery = (v >= 31 ? v - 4 : v) - 27;
        const recovered = new Uint8Array(65);
        recovered[0] = recovery;
        recovered.set(hexBytes(sig.slice(0, 128)), 1);
        const point = secp256k1.Point.fromBytes(
          secp256k1.recoverPublicKey(recovered, hexBytes(tx.txID), { prehash: false }),
        ).toBytes(false);
        signer = `41${bytesHex(keccak_256(point.subarray(1)).subarray(-20))}`;
      } catch (error) {
        throw new Refusal(
          'SIGERROR',
          `Validate signature error: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (signer !== tx.owner)
        throw new Refusal(
          'SIGERROR',
          `Validate signature error: ${sig} is signed by ${base58(signer)} but it is not contained of permission.`,
        );
    }
    if (tx.signature.length > 1) throw new Refusal('SIGERROR', 'Validate signature error: sig error');
  }

  /**
   * Wallet.broadcastTransaction: checkExpiration against the next slot, then pushTransaction
   * (signature), then processTransaction: validateTapos, validateCommon (size; expiration after the
   * head block and at most 24 h after it), validateDup, consumeBandwidth, then the contract's
   * validation and a run on the pending state. Errors map to Return codes and messages as there.
   */
  function broadcast(body: Record<string, unknown>): Record<string, unknown> {
    let tx: Tx;
    try {
      tx = packTransaction(body);
    } catch (error) {
      if (error instanceof Refusal) return { code: error.code, message: utf8Hex(error.message) };
      return { Error: `class org.tron.core.services.http.JsonFormat$ParseException : ${String(error)}` };
    }
    const answer = (refusal: Refusal): Record<string, unknown> => ({
      // result is false: java-tron leaves a false bool out (JsonFormat prints set fields only).
      code: refusal.code,
      message: body.visible === true ? refusal.message : utf8Hex(refusal.message),
      txid: tx.txID,
    });
    try {
      const head = headBlock();
      if (tx.expiration < head.timestamp + BLOCK_INTERVAL_MS)
        throw new Refusal('TRANSACTION_EXPIRATION_ERROR', 'Transaction expired');
      checkSignature(tx);
      if (!taposHolds(tx)) throw new Refusal('TAPOS_ERROR', 'Tapos check error.');
      if (tx.bytes > BigInt(MAX_TX_BYTES)) throw new Refusal('TOO_BIG_TRANSACTION_ERROR', 'Too big transaction');
      if (tx.expiration <= head.timestamp || tx.expiration > head.timestamp + MAX_EXPIRATION_MS)
        throw new Refusal('TRANSACTION_EXPIRATION_ERROR', 'Transaction expired');
      if (minedAt.has(tx.txID) || pool.some((p) => p.txID === tx.txID))
        throw new Refusal('DUP_TRANSACTION_ERROR', 'Dup transaction.');
      const state = pendingState();
      const bandwidth = cloneState(state);
      chargeBandwidth(bandwidth, tx);
      validateContract(tx);
      tx.pendingRet = execute(state, tx, undefined).contractRet;
    } catch (error) {
      if (error instanceof Refusal) return answer(error);
      throw error;
    }
    pool.push(tx);
    return { result: true, txid: tx.txID };
  }

  // --- Printing (Util.printBlock / printTransaction, visible = false) ----------------------------

  function printTx(tx: Tx, contractRet: string | undefined): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (contractRet !== undefined) out.ret = [{ contractRet }];
    out.signature = tx.signature;
    out.txID = tx.txID;
    out.raw_data = tx.rawData;
    out.raw_data_hex = tx.rawDataHex;
    return out;
  }

  function printBlock(block: Block): Record<string, unknown> {
    const raw: Record<string, unknown> = {
      number: Number(block.number),
      txTrieRoot: sha256(hexBytes(block.txs.map((m) => m.tx.txID).join(''))),
      witness_address: `41${'00'.repeat(19)}01`,
      parentHash: block.parentHash,
      version: 32,
      timestamp: block.timestamp,
    };
    const out: Record<string, unknown> = {
      blockID: block.id,
      block_header: { raw_data: raw, witness_signature: sha256(hexBytes(block.id)).repeat(2) + '00' },
    };
    if (block.txs.length > 0) out.transactions = block.txs.map((m) => printTx(m.tx, m.contractRet));
    return out;
  }

  // --- HTTP -----------------------------------------------------------------------------------

  const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

  function takeFault(path: string): Fault | undefined {
    const queue = faults.get(path);
    const fault = queue?.[0];
    if (queue === undefined || fault === undefined) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) queue.shift();
    return fault;
  }

  /** The view a request sees: the full node's chain, or /walletsolidity's (solidityDepth blocks under the head). */
  function viewHead(solidity: boolean): bigint {
    const head = headBlock().number;
    return solidity ? head - BigInt(solidityDepth) : head;
  }

  function handle(
    path: string,
    body: Record<string, unknown>,
    query: Record<string, string>,
  ): { status: number; json: unknown } {
    const solidity = path.startsWith('walletsolidity/');
    const name = path.replace(/^wallet(solidity)?\//, '');
    const top = viewHead(solidity);
    const param = (key: string): unknown => body[key] ?? query[key];
    const blockNumber = (): bigint => {
      const value = Number(param('num') ?? 0);
      return Number.isSafeInteger(value) ? BigInt(value) : 0n;
    };
    const text = (key: string): string => {
      const value = param(key);
      return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
    };
    const visible = param('visible') === true || param('visible') === 'true';
    const receiptsHidden = (number: bigint): boolean =>
      !solidity && lagReceipts && number > headBlock().number - BigInt(lag);
    // The full node's stores include its pending transactions' changes (they run in a session on
    // top of the head: Manager.pushTransaction); /walletsolidity reads the solidified block's state.
    const stateAt = (): State => {
      if (!solidity) return pendingState();
      const block = blockAt(top);
      return block?.state ?? { accounts: new Map(), tokens: new Map() };
    };
    const ok = (json: unknown) => ({ status: 200, json });
    if (path.startsWith('wallet/') || path.startsWith('walletsolidity/')) {
      switch (name) {
        case 'getnowblock': {
          const at = solidity ? top : top - BigInt(lag);
          const block = blockAt(at) ?? blocks[0];
          return ok(block === undefined ? {} : printBlock(block));
        }
        case 'getblockbynum': {
          const number = blockNumber();
          const block = number <= top ? blockAt(number) : undefined;
          return ok(block === undefined ? {} : printBlock(block));
        }
        case 'gettransactioninfobyblocknum': {
          const number = blockNumber();
          // GetTransactionInfoByBlockNumServlet: num <= 0 answers {}; a block the node lacks, [].
          if (number <= 0n) return ok({});
          const block = number <= top && !receiptsHidden(number) ? blockAt(number) : undefined;
          return ok(block === undefined ? [] : block.txs.map((m) => m.info));
        }
        case 'gettransactioninfobyid':
        case 'gettransactionbyid': {
          const id = text('value').toLowerCase();
          const number = minedAt.get(id);
          const block = number !== undefined && number <= top ? blockAt(number) : undefined;
          const mined = block?.txs.find((m) => m.tx.txID === id);
          if (name === 'gettransactioninfobyid')
            return ok(mined === undefined || receiptsHidden(block?.number ?? 0n) ? {} : mined.info);
          if (mined !== undefined) return ok(printTx(mined.tx, mined.contractRet));
          // The full node's transaction store holds pending transactions too (processTransaction puts them there).
          const pending = solidity ? undefined : pool.find((tx) => tx.txID === id);
          return ok(pending === undefined ? {} : printTx(pending, pending.pendingRet));
        }
        case 'getaccount': {
          const address = hex41(param('address'));
          const found = address === undefined ? undefined : stateAt().accounts.get(address);
          if (address === undefined || found === undefined) return ok({});
          const out: Record<string, unknown> = { address: visible ? base58(address) : address };
          if (found.balance > 0n) out.balance = Number(found.balance);
          out.create_time = found.createTime;
          if (found.freeNetUsed > 0n) out.free_net_usage = Number(found.freeNetUsed);
          if (found.netUsed > 0n) out.net_usage = Number(found.netUsed);
          out.account_resource = found.energyUsed > 0n ? { energy_usage: Number(found.energyUsed) } : {};
          return ok(out);
        }
        case 'getaccountresource': {
          if (solidity) break;
          const address = hex41(param('address'));
          const found = address === undefined ? undefined : stateAt().accounts.get(address);
          if (found === undefined) return ok({});
          const out: Record<string, unknown> = {};
          if (found.freeNetUsed > 0n) out.freeNetUsed = Number(found.freeNetUsed);
          out.freeNetLimit = Number(freeNetLimit);
          if (found.netUsed > 0n) out.NetUsed = Number(found.netUsed);
          if (found.netLimit > 0n) out.NetLimit = Number(found.netLimit);
          out.TotalNetLimit = 43_200_000_000;
          out.TotalNetWeight = 26_000_000_000;
          if (found.energyUsed > 0n) out.EnergyUsed = Number(found.energyUsed);
          if (found.energyLimit > 0n) out.EnergyLimit = Number(found.energyLimit);
          out.TotalEnergyLimit = 180_000_000_000;
          out.TotalEnergyWeight = 19_000_000_000;
          return ok(out);
        }
        case 'triggerconstantcontract': {
          const contract = hex41(param('contract_address'));
          const fail = (message: string) =>
            ok({ result: { code: 'CONTRACT_VALIDATE_ERROR', message: utf8Hex(message) }, transaction: {} });
          if (contract === undefined) return fail('Invalid contract address');
          if (contract !== token) return fail('No contract or not a smart contract');
          const selectorText = param('function_selector');
          const data =
            typeof selectorText === 'string' && selectorText !== ''
              ? selectorOf(selectorText.replace(/\s/g, '')) + text('parameter')
              : text('data');
          const state = stateAt();
          const word = (value: bigint): string => value.toString(16).padStart(64, '0');
          const string = (text: string): string =>
            word(32n) + word(BigInt(text.length)) + Buffer.from(text).toString('hex').padEnd(64, '0');
          let constant: string | undefined;
          const selector = data.slice(0, 8);
          if (selector === SELECTORS.decimals) constant = word(6n);
          else if (selector === SELECTORS.symbol) constant = string('USDT');
          else if (selector === SELECTORS.name) constant = string('Tether USD');
          else if (selector === SELECTORS.balanceOf && /^0{24}[0-9a-fA-F]{40}$/.test(data.slice(8)))
            constant = word(state.tokens.get(`41${data.slice(32).toLowerCase()}`) ?? 0n);
          const transaction = { ret: [constant === undefined ? { ret: 'FAILED' } : {}], visible: false };
          if (constant === undefined)
            return ok({
              result: { result: true, message: utf8Hex('REVERT opcode executed') },
              energy_used: Number(energy.revert),
              constant_result: [''],
              transaction,
            });
          return ok({ result: { result: true }, energy_used: 500, constant_result: [constant], transaction });
        }
        case 'broadcasttransaction':
          if (solidity) break;
          return ok(broadcast(body));
        default:
          break;
      }
      return { status: 404, json: undefined };
    }
    const history = /^v1\/accounts\/([^/]+)\/transactions\/trc20$/.exec(path);
    if (history !== null) return trc20History(history[1] ?? '', query);
    return { status: 404, json: undefined };
  }

  /**
   * TronGrid v1 "Get TRC20 transaction info by account address"
   * (developers.tron.network/reference/get-trc20-transaction-info-by-account-address): data[] with
   * transaction_id, token_info, block_timestamp, from, to, type, value; newest first by default;
   * only_to / only_from, contract_address, min/max_timestamp, only_confirmed / only_unconfirmed
   * (confirmed: solidified), limit (default 20, at most 200) and fingerprint paging.
   */
  function trc20History(address: string, query: Record<string, string>): { status: number; json: unknown } {
    const bad = (error: string) => ({ status: 400, json: { success: false, error, statusCode: 400 } });
    const who = hex41(address);
    if (who === undefined) return bad('Invalid address provided');
    const flag = (key: string, camel: string): boolean => (query[key] ?? query[camel]) === 'true';
    const onlyTo = flag('only_to', 'onlyTo');
    const onlyFrom = flag('only_from', 'onlyFrom');
    const onlyConfirmed = flag('only_confirmed', 'onlyConfirmed');
    const onlyUnconfirmed = flag('only_unconfirmed', 'onlyUnconfirmed');
    const limit = Number(query.limit ?? 20);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) return bad('limit should be between 1 and 200');
    const contractFilter = query.contract_address ?? query.contractAddress;
    if (contractFilter !== undefined && hex41(contractFilter) !== token)
      return ok200({ data: [], success: true, meta: meta(0) });
    const min = Number(query.min_timestamp ?? query.min_block_timestamp ?? 0);
    const max = Number(query.max_timestamp ?? query.max_block_timestamp ?? Number.MAX_SAFE_INTEGER);
    const solid = viewHead(true);
    const rows: Record<string, unknown>[] = [];
    for (const block of blocks) {
      const confirmed = block.number <= solid;
      if ((onlyConfirmed && !confirmed) || (onlyUnconfirmed && confirmed)) continue;
      if (block.timestamp < min || block.timestamp > max) continue;
      for (const mined of block.txs)
        for (const transfer of mined.transfers) {
          const to = transfer.to === who;
          const from = transfer.from === who;
          // The filters are not exclusive: only_to and only_from together mean either.
          if (!(to || from) || (onlyTo && !onlyFrom && !to) || (onlyFrom && !onlyTo && !from)) continue;
          rows.push({
            transaction_id: mined.tx.txID,
            token_info: { symbol: 'USDT', address: base58(token), decimals: 6, name: 'Tether USD' },
            block_timestamp: block.timestamp,
            from: base58(transfer.from),
            to: base58(transfer.to),
            type: 'Transfer',
            value: transfer.units.toString(),
          });
        }
    }
    if ((query.order_by ?? 'block_timestamp,desc') !== 'block_timestamp,asc') rows.reverse();
    const offset = query.fingerprint === undefined ? 0 : Number(Buffer.from(query.fingerprint, 'base64url').toString());
    const page = rows.slice(offset, offset + limit);
    const extra: Record<string, unknown> = {};
    if (offset + limit < rows.length) {
      const fingerprint = Buffer.from(String(offset + limit)).toString('base64url');
      extra.fingerprint = fingerprint;
      extra.links = {
        next: `${url}/v1/accounts/${address}/transactions/trc20?limit=${limit}&fingerprint=${fingerprint}`,
      };
    }
    return ok200({ data: page, success: true, meta: { ...meta(page.length), ...extra } });
  }
  const ok200 = (json: unknown) => ({ status: 200, json });
  const meta = (size: number) => ({ at: now(), page_size: size });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = normalize(target.pathname);
    const query = Object.fromEntries(target.searchParams);
    let body: Record<string, unknown> = {};
    const text = Buffer.concat(chunks).toString('utf8');
    const apiKeyHeader = req.headers['tron-pro-api-key'];
    const call: TronApiCall = {
      path,
      method: req.method ?? 'GET',
      body,
      query,
      apiKey: typeof apiKeyHeader === 'string' ? apiKeyHeader : undefined,
      at: Date.now(),
      status: 200,
    };
    log.push(call);
    const send = (status: number, json: unknown): void => {
      call.status = status;
      if (json === undefined) {
        res
          .writeHead(status, { 'content-type': 'text/html' })
          .end(`<html><body><h2>HTTP ERROR ${status}</h2></body></html>`);
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(json)}\n`);
    };
    if (options.apiKey !== undefined && call.apiKey !== options.apiKey) {
      send(401, { success: false, error: 'ApiKey not exists', statusCode: 401 });
      return;
    }
    if (text.trim() !== '') {
      try {
        const parsed = JSON.parse(text) as unknown;
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          throw new TypeError('not an object');
        body = parsed as Record<string, unknown>;
        call.body = body;
      } catch (error) {
        send(200, { Error: `class com.alibaba.fastjson.JSONException : ${String(error)}` });
        return;
      }
    }
    const fault = takeFault(path);
    if (fault !== undefined) call.fault = fault.kind;
    if (fault?.kind === 'fail') {
      const status = fault.status ?? 500;
      send(status, status === 429 ? { success: false, error: 'Too Many Requests', statusCode: 429 } : undefined);
      return;
    }
    if (fault?.kind === 'delay') await sleep(fault.ms ?? 0);
    const { status, json } = handle(path, body, query);
    if (fault?.kind === 'drop') {
      call.status = 0;
      res.socket?.destroy();
      return;
    }
    send(status, json);
  }

  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ Error: String(error) }));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const miner = options.blockTimeMs === undefined ? undefined : setInterval(() => mine(1), options.blockTimeMs);
  miner?.unref();

  const addFault = (path: string, fault: Fault): void => {
    const key = normalize(path);
    faults.set(key, [...(faults.get(key) ?? []), fault]);
  };

  return {
    url,
    contract: base58(token),
    close: async () => {
      if (miner !== undefined) clearInterval(miner);
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
    mine,
    reorg: (depth, reorgOptions = {}) => {
      if (depth < 1 || depth >= blocks.length)
        throw new RangeError(`cannot replace ${depth} of ${blocks.length} blocks`);
      const removed = blocks.splice(blocks.length - depth, depth);
      const txs = removed.flatMap((block) => block.txs.map((m) => m.tx));
      for (const tx of txs) minedAt.delete(tx.txID);
      if (reorgOptions.drop !== true) pool = [...txs, ...pool];
      // The other fork's blocks fill the same slots, without these transactions.
      for (const block of removed) mineOne([], block.timestamp);
    },
    head: () => {
      const { number, id, timestamp } = headBlock();
      return { number, id, timestamp };
    },
    advanceTime: (ms) => {
      clockOffset += ms;
    },
    fund: (address, sun) => {
      const hex = requireAddress(address);
      everywhere((state) => (account(state, hex).balance += sun));
    },
    mint: (address, units) => {
      const hex = requireAddress(address);
      everywhere((state) => state.tokens.set(hex, (state.tokens.get(hex) ?? 0n) + units));
    },
    stake: (address, resources) => {
      const hex = requireAddress(address);
      everywhere((state) => {
        const found = account(state, hex);
        found.energyLimit += resources.energy ?? 0n;
        found.netLimit += resources.net ?? 0n;
      });
    },
    deposit: (from, to, units) => {
      const owner = requireAddress(from);
      const recipient = requireAddress(to);
      const head = headBlock();
      const data = SELECTORS.transfer + recipient.slice(2).padStart(64, '0') + units.toString(16).padStart(64, '0');
      const rawData = {
        contract: [
          {
            parameter: {
              value: { data, owner_address: owner, contract_address: token },
              type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
            },
            type: 'TriggerSmartContract',
          },
        ],
        ref_block_bytes: (head.number & 0xffffn).toString(16).padStart(4, '0'),
        ref_block_hash: head.id.slice(16, 32),
        expiration: head.timestamp + 60_000,
        fee_limit: 100_000_000,
        timestamp: now() + Math.floor(Math.random() * 1000),
      };
      const tx = packTransaction({ raw_data: rawData, signature: [randomBytes(65).toString('hex')] });
      tx.foreign = true;
      pool.push(tx);
      return tx.txID;
    },
    balances: (address) => {
      const hex = requireAddress(address);
      const state = headBlock().state;
      const found = state.accounts.get(hex);
      return {
        sun: found?.balance ?? 0n,
        units: state.tokens.get(hex) ?? 0n,
        exists: found !== undefined,
        energyLimit: found?.energyLimit ?? 0n,
        energyUsed: found?.energyUsed ?? 0n,
        netLimit: found?.netLimit ?? 0n,
        netUsed: found?.netUsed ?? 0n,
        freeNetUsed: found?.freeNetUsed ?? 0n,
      };
    },
    pool: () => pool.map((tx) => tx.txID),
    failNext: (path, failOptions = {}) =>
      addFault(path, { kind: 'fail', times: failOptions.times ?? 1, status: failOptions.status ?? 500 }),
    delayNext: (path, ms, times = 1) => addFault(path, { kind: 'delay', times, ms }),
    dropNext: (path, times = 1) => addFault(path, { kind: 'drop', times }),
    lagBlocks: (n, lagOptions = {}) => {
      lag = n;
      lagReceipts = lagOptions.receipts === true;
    },
    clearFaults: (path) => {
      faults.delete(normalize(path));
    },
    setEnergyPrice: (sun) => {
      energyPrice = sun;
    },
    calls: (path) => (path === undefined ? [...log] : log.filter((call) => call.path === normalize(path))),
  };
}
