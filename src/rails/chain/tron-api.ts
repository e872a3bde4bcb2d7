/**
 * A client of a TronGrid-compatible HTTP API (the java-tron full node HTTP API, as TronGrid serves
 * it), as the TRON connector uses it: one POST per call with `visible: false` (addresses in `41…`
 * hex, bytes in hex), a timeout, the `TRON-PRO-API-KEY` header when a key is set, and every failure
 * sorted by what it means for the caller:
 *
 * - `rejected`: the API answered that it did not do it: a broadcast refused with a java-tron
 *   `Return` code (`SIGERROR`, `TAPOS_ERROR`, `DUP_TRANSACTION_ERROR`, …), a servlet error
 *   (`{"Error": …}`), or an HTTP refusal such as 401 (`code` says which);
 * - `not-sent`: the connection was refused or never made: nothing reached the API;
 * - `unknown`: a timeout, a reset, a 5xx or a 429 after the request left: whether the node acted on
 *   it is not known (for a broadcast, ask for the transaction by its txID; a second broadcast of the
 *   same transaction answers `DUP_TRANSACTION_ERROR` when the first one got in);
 * - `invalid`: the API answered something that does not read as the endpoint's answer.
 *
 * Calls are counted by chain ("TRON"), API path and outcome on `/metrics`, in the same metrics as
 * the EVM nodes' calls.
 *
 * Endpoints (developers.tron.network/reference, "FullNode HTTP API"): /wallet/getnowblock,
 * /wallet/getblockbynum, /wallet/gettransactioninfobyblocknum, /wallet/triggerconstantcontract,
 * /wallet/getaccount, /wallet/getaccountresource, /wallet/broadcasttransaction,
 * /wallet/gettransactionbyid, /wallet/gettransactioninfobyid and /walletsolidity/gettransactioninfobyid.
 * java-tron prints protobuf messages leaving out fields at their default (0, false, empty), so an
 * absent number is 0 and an unknown transaction or account is `{}`.
 */
import type { Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { isConnectError } from '../network.js';
import { tronAddress } from './addresses.js';
import type { ChainTransfer, DepositSource } from './deposit-watcher.js';
import { chainRpcMetrics } from './evm-rpc.js';
import { fromHex, TRANSFER_TOPIC } from './evm-tx.js';
import { tronFromHex, tronHex, type TronRawData } from './tron-tx.js';

export type TronApiErrorKind = 'rejected' | 'not-sent' | 'unknown' | 'invalid';

export class TronApiError extends Error {
  constructor(
    readonly kind: TronApiErrorKind,
    /** The API path, e.g. `wallet/broadcasttransaction`. */
    readonly path: string,
    message: string,
    /** For `rejected`: java-tron's response code (`TAPOS_ERROR`, …), `ERROR` for a servlet error, or `HTTP_<status>`. */
    readonly code?: string,
  ) {
    super(`${path}: ${code === undefined ? '' : `${code}: `}${message}`);
    this.name = 'TronApiError';
  }
}

export interface TronApiOptions {
  /** The API's base URL, e.g. `https://api.trongrid.io`. */
  url: string;
  /** TronGrid's API key, sent as `TRON-PRO-API-KEY`. */
  apiKey?: string;
  timeoutMs: number;
}

/** A block's identity and time. */
export interface TronBlock {
  number: bigint;
  /** The blockID: 64 hex (its first 8 bytes are the number). */
  id: string;
  /** Milliseconds. */
  timestamp: number;
}

/** A block with the ids of its transactions (in block order). */
export interface TronBlockWithTransactions extends TronBlock {
  transactions: string[];
}

/** A log of a transaction as java-tron prints it: the emitting contract's 20-byte body and words, hex without 0x. */
export interface TronLog {
  address: string;
  topics: string[];
  data: string;
}

/** One entry of `gettransactioninfobyblocknum`. */
export interface TronBlockTransactionInfo {
  id: string;
  blockNumber: bigint;
  /** `receipt.result` (SUCCESS, REVERT, OUT_OF_ENERGY, …); `DEFAULT` for a transaction that ran no contract. */
  receiptResult: string;
  /** TransactionInfo.result: FAILED, or SUCCESS (java-tron leaves SUCESS = 0 out). */
  result: 'SUCCESS' | 'FAILED';
  logs: TronLog[];
}

/** A TRC-20 `Transfer(from, to, value)` log; addresses in Base58. */
export interface TronTransferLog {
  txID: string;
  blockNumber: bigint;
  /** The log's position in its transaction. */
  logIndex: number;
  contract: string;
  from: string;
  to: string;
  units: bigint;
}

/** A transaction's execution receipt (`gettransactioninfobyid`). Amounts in sun. */
export interface TronTransactionInfo {
  id: string;
  blockNumber: bigint;
  blockTimestamp: number;
  /** Everything the transaction cost the owner (energy and bandwidth burnt), sun. */
  fee: bigint;
  result: 'SUCCESS' | 'FAILED';
  /** `receipt.result`: SUCCESS, REVERT, OUT_OF_ENERGY, … (`DEFAULT` when java-tron left it out). */
  receiptResult: string;
  /** Why it failed, as text (java-tron sends it hex-encoded). */
  resMessage: string | undefined;
  energyUsageTotal: bigint;
  energyFee: bigint;
  netUsage: bigint;
  netFee: bigint;
  logs: TronLog[];
}

/** A transaction the node knows (`gettransactionbyid`): mined, or in its pending pool. */
export interface TronTransaction {
  txID: string;
  rawDataHex: string;
  signature: string[];
  /** `ret[0].contractRet` when the node has executed it. */
  contractRet: string | undefined;
}

/** An account's resources (`getaccountresource`), in energy and bandwidth units. */
export interface TronResources {
  energyLimit: bigint;
  energyUsed: bigint;
  freeNetLimit: bigint;
  freeNetUsed: bigint;
  netLimit: bigint;
  netUsed: bigint;
}

/** A signed transaction as `broadcasttransaction` takes it. */
export interface TronSignedTransaction {
  txID: string;
  raw_data: TronRawData;
  raw_data_hex: string;
  signature: string[];
}

const HASH = /^[0-9a-fA-F]{64}$/;

const obj = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const isEmpty = (value: unknown): boolean => Object.keys(obj(value)).length === 0;
function str(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`${what} is not a string`);
  return value;
}
function hash(value: unknown, what: string): string {
  const text = str(value, what);
  if (!HASH.test(text)) throw new TypeError(`${what} is not 64 hex: ${text.slice(0, 80)}`);
  return text.toLowerCase();
}
/** A protobuf int64 java-tron printed: a JSON number (or absent: 0). */
function int(value: unknown, what: string): bigint {
  if (value === undefined) return 0n;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError(`${what} is not an integer`);
  return BigInt(value);
}
/** Bytes java-tron printed as hex, read as UTF-8 text (the text itself when it is not hex). */
function hexText(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(value)) return value;
  return new TextDecoder().decode(fromHex(value));
}
/** One 32-byte word of a constant call's result, as an integer. */
function word(value: unknown): bigint {
  const text = str(value, 'constant_result[0]');
  if (!/^[0-9a-fA-F]{64}$/.test(text))
    throw new TypeError(`constant_result[0] is not one 32-byte word: ${text.slice(0, 80)}`);
  return BigInt(`0x${text}`);
}
/** The address an indexed-address topic holds, in Base58. */
function topicAddress(topic: string): string {
  const bytes = fromHex(topic);
  if (bytes.length !== 32 || bytes.subarray(0, 12).some((b) => b !== 0))
    throw new TypeError(`not an address topic: ${topic}`);
  return tronAddress(bytes.subarray(12));
}

function readBlock(answer: unknown): TronBlockWithTransactions {
  const block = obj(answer);
  const raw = obj(obj(block.block_header).raw_data);
  const id = hash(block.blockID, 'blockID');
  const number = int(raw.number, 'block_header.raw_data.number');
  // A blockID starts with the block's number (BlockCapsule.BlockId), so the two must agree.
  if (BigInt(`0x${id.slice(0, 16)}`) !== number) throw new TypeError(`blockID ${id} is not block ${number}`);
  const transactions = block.transactions === undefined ? [] : block.transactions;
  if (!Array.isArray(transactions)) throw new TypeError('transactions is not a list');
  return {
    number,
    id,
    timestamp: Number(int(raw.timestamp, 'block_header.raw_data.timestamp')),
    transactions: transactions.map((tx) => hash(obj(tx).txID, 'transactions[].txID')),
  };
}

function readLogs(value: unknown): TronLog[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError('log is not a list');
  return value.map((entry) => {
    const log = obj(entry);
    const topics = log.topics === undefined ? [] : log.topics;
    if (!Array.isArray(topics)) throw new TypeError('log.topics is not a list');
    return {
      address: str(log.address, 'log.address').toLowerCase(),
      topics: topics.map((topic) => str(topic, 'log.topics[]').toLowerCase()),
      data: typeof log.data === 'string' ? log.data.toLowerCase() : '',
    };
  });
}

const resultOf = (value: unknown): 'SUCCESS' | 'FAILED' => (value === 'FAILED' ? 'FAILED' : 'SUCCESS');

function readBlockInfo(entry: unknown): TronBlockTransactionInfo {
  const info = obj(entry);
  return {
    id: hash(info.id, 'id'),
    blockNumber: int(info.blockNumber, 'blockNumber'),
    receiptResult: typeof obj(info.receipt).result === 'string' ? (obj(info.receipt).result as string) : 'DEFAULT',
    result: resultOf(info.result),
    logs: readLogs(info.log),
  };
}

const TRANSFER = TRANSFER_TOPIC.slice(2);

/** The TRC-20 `Transfer` logs of a block's successful transactions. */
export function transferLogsOf(infos: readonly TronBlockTransactionInfo[]): TronTransferLog[] {
  const transfers: TronTransferLog[] = [];
  for (const info of infos) {
    if (info.result !== 'SUCCESS' || info.receiptResult !== 'SUCCESS') continue;
    info.logs.forEach((log, logIndex) => {
      if (log.topics.length !== 3 || log.topics[0] !== TRANSFER || !/^[0-9a-f]{64}$/.test(log.data)) return;
      const address = fromHex(log.address);
      if (address.length !== 20) return;
      transfers.push({
        txID: info.id,
        blockNumber: info.blockNumber,
        logIndex,
        contract: tronAddress(address),
        from: topicAddress(log.topics[1] ?? ''),
        to: topicAddress(log.topics[2] ?? ''),
        units: BigInt(`0x${log.data}`),
      });
    });
  }
  return transfers;
}

export class TronApiClient {
  readonly #agent: Agent;
  readonly #metrics: ReturnType<typeof chainRpcMetrics> | undefined;

  constructor(
    readonly options: TronApiOptions,
    registry?: Registry,
  ) {
    this.#agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
    this.#metrics = registry === undefined ? undefined : chainRpcMetrics(registry);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /**
   * One POST to `path` (`wallet/…`): its answer as `read` reads it, or a TronApiError of the kind
   * that says what to do next (an answer that does not read is `invalid`).
   */
  async call<T>(path: string, body: Record<string, unknown>, read: (answer: unknown) => T): Promise<T> {
    const started = performance.now();
    let outcome = 'ok';
    try {
      const answer = await this.#post(path, body);
      try {
        return read(answer);
      } catch (error) {
        if (error instanceof TronApiError) throw error;
        throw new TronApiError('invalid', path, error instanceof Error ? error.message : String(error));
      }
    } catch (error) {
      outcome =
        error instanceof TronApiError
          ? error.kind === 'rejected'
            ? `rejected-${error.code ?? 'error'}`
            : error.kind
          : 'unknown';
      throw error;
    } finally {
      const labels = { chain: 'TRON', method: path };
      this.#metrics?.calls.inc({ ...labels, outcome });
      this.#metrics?.latency.observe(labels, (performance.now() - started) / 1000);
    }
  }

  async #post(path: string, body: Record<string, unknown>): Promise<unknown> {
    let status: number;
    let text: string;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey !== undefined) headers['TRON-PRO-API-KEY'] = this.options.apiKey;
    try {
      const response = await request(new URL(`/${path}`, this.options.url), {
        method: 'POST',
        dispatcher: this.#agent,
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw new TronApiError(
        isConnectError(error) ? 'not-sent' : 'unknown',
        path,
        error instanceof Error ? error.message : String(error),
      );
    }
    // A gateway that failed or throttled says nothing of what the node behind it did.
    if (status >= 500 || status === 429) throw new TronApiError('unknown', path, `HTTP ${status}`);
    if (status < 200 || status >= 300)
      throw new TronApiError('rejected', path, text.slice(0, 200) || `HTTP ${status}`, `HTTP_${status}`);
    let answer: unknown;
    try {
      answer = JSON.parse(text) as unknown;
    } catch {
      throw new TronApiError('invalid', path, `HTTP ${status}, not JSON`);
    }
    // A servlet that threw answers {"Error": "<exception class> : <message>"} (Util.printErrorMsg).
    const error = obj(answer).Error;
    if (typeof error === 'string') throw new TronApiError('rejected', path, error, 'ERROR');
    return answer;
  }

  /** The node's head block. */
  async head(): Promise<TronBlock> {
    return this.call('wallet/getnowblock', {}, (answer) => {
      const { number, id, timestamp } = readBlock(answer);
      return { number, id, timestamp };
    });
  }

  /** A block and its transactions' ids; undefined when the node has none at that height. */
  async block(number: bigint): Promise<TronBlockWithTransactions | undefined> {
    return this.call('wallet/getblockbynum', { num: Number(number), visible: false }, (answer) => {
      if (isEmpty(answer)) return undefined;
      const block = readBlock(answer);
      if (block.number !== number) throw new TypeError(`asked for block ${number}, got ${block.number}`);
      return block;
    });
  }

  /** The receipts of a block's transactions (empty for a block the node does not have). */
  async blockTransactionInfos(number: bigint): Promise<TronBlockTransactionInfo[]> {
    return this.call('wallet/gettransactioninfobyblocknum', { num: Number(number), visible: false }, (answer) => {
      if (!Array.isArray(answer)) {
        if (isEmpty(answer)) return [];
        throw new TypeError('the answer is not a list');
      }
      const infos = answer.map(readBlockInfo);
      for (const info of infos)
        if (info.blockNumber !== number)
          throw new TypeError(`asked for block ${number}, got a receipt of ${info.blockNumber}`);
      return infos;
    });
  }

  /** The TRC-20 `Transfer` logs of a block's successful transactions. */
  async transferLogs(number: bigint): Promise<TronTransferLog[]> {
    return transferLogsOf(await this.blockTransactionInfos(number));
  }

  /** A constant (read-only) call's first returned word. */
  async #constant(contract: string, signature: string, parameter: string): Promise<bigint> {
    const path = 'wallet/triggerconstantcontract';
    const body = {
      // Any existing account may ask; the contract itself always exists.
      owner_address: tronHex(contract),
      contract_address: tronHex(contract),
      function_selector: signature,
      parameter,
      visible: false,
    };
    return this.call(path, body, (answer) => {
      const a = obj(answer);
      const result = obj(a.result);
      if (result.result !== true)
        throw new TronApiError(
          'rejected',
          path,
          hexText(result.message) ?? 'the call failed',
          typeof result.code === 'string' ? result.code : 'OTHER_ERROR',
        );
      const ret = obj(Array.isArray(obj(a.transaction).ret) ? (obj(a.transaction).ret as unknown[])[0] : undefined);
      if (ret.ret === 'FAILED') throw new TronApiError('rejected', path, 'the call reverted', 'REVERT');
      const constant = a.constant_result;
      if (!Array.isArray(constant)) throw new TypeError('constant_result is missing');
      return word(constant[0]);
    });
  }

  /** The TRC-20 token's `decimals()`. */
  async tokenDecimals(contract: string): Promise<number> {
    return Number(await this.#constant(contract, 'decimals()', ''));
  }

  /** The TRC-20 token's `balanceOf(owner)`, in its base units. */
  async tokenBalance(contract: string, owner: string): Promise<bigint> {
    const parameter = tronHex(owner).slice(2).padStart(64, '0');
    return this.#constant(contract, 'balanceOf(address)', parameter);
  }

  /** The TRX balance (sun) of an account; 0 for an account the chain does not have. */
  async balance(owner: string): Promise<bigint> {
    return this.call('wallet/getaccount', { address: tronHex(owner), visible: false }, (answer) =>
      int(obj(answer).balance, 'balance'),
    );
  }

  /** The account's energy and bandwidth (all 0 but the free bandwidth for a plain account). */
  async resources(owner: string): Promise<TronResources> {
    return this.call('wallet/getaccountresource', { address: tronHex(owner), visible: false }, (answer) => {
      const a = obj(answer);
      return {
        energyLimit: int(a.EnergyLimit, 'EnergyLimit'),
        energyUsed: int(a.EnergyUsed, 'EnergyUsed'),
        freeNetLimit: int(a.freeNetLimit, 'freeNetLimit'),
        freeNetUsed: int(a.freeNetUsed, 'freeNetUsed'),
        netLimit: int(a.NetLimit, 'NetLimit'),
        netUsed: int(a.NetUsed, 'NetUsed'),
      };
    });
  }

  /**
   * Broadcasts a signed transaction. Resolves when the node took it into its pool; a refusal throws
   * `rejected` with java-tron's code and its message as text.
   */
  async broadcast(tx: TronSignedTransaction): Promise<void> {
    const path = 'wallet/broadcasttransaction';
    return this.call(path, { ...tx, visible: false }, (answer) => {
      const a = obj(answer);
      if (a.result === true) {
        // java-tron answers the id of the transaction it rebuilt from raw_data.
        if (typeof a.txid === 'string' && a.txid.toLowerCase() !== tx.txID.toLowerCase())
          throw new TypeError(`the node took transaction ${a.txid}, not ${tx.txID}`);
        return;
      }
      if (typeof a.code !== 'string') throw new TypeError('neither result nor code');
      throw new TronApiError('rejected', path, hexText(a.message) ?? a.code, a.code);
    });
  }

  /** The transaction, mined or pending; undefined when the node does not know it. */
  async transaction(txID: string): Promise<TronTransaction | undefined> {
    return this.call('wallet/gettransactionbyid', { value: txID, visible: false }, (answer) => {
      if (isEmpty(answer)) return undefined;
      const tx = obj(answer);
      const signature = Array.isArray(tx.signature) ? tx.signature.map((s) => str(s, 'signature[]')) : [];
      const ret = Array.isArray(tx.ret) ? obj(tx.ret[0]) : {};
      return {
        txID: hash(tx.txID, 'txID'),
        rawDataHex: str(tx.raw_data_hex, 'raw_data_hex'),
        signature,
        contractRet: typeof ret.contractRet === 'string' ? ret.contractRet : undefined,
      };
    });
  }

  /**
   * The transaction's receipt once it is in a block (`solidified`: once the block is irreversible,
   * from /walletsolidity); undefined before.
   */
  async transactionInfo(
    txID: string,
    options: { solidified?: boolean } = {},
  ): Promise<TronTransactionInfo | undefined> {
    const path =
      options.solidified === true ? 'walletsolidity/gettransactioninfobyid' : 'wallet/gettransactioninfobyid';
    return this.call(path, { value: txID, visible: false }, (answer) => {
      if (isEmpty(answer)) return undefined;
      const info = obj(answer);
      const receipt = obj(info.receipt);
      return {
        id: hash(info.id, 'id'),
        blockNumber: int(info.blockNumber, 'blockNumber'),
        blockTimestamp: Number(int(info.blockTimeStamp, 'blockTimeStamp')),
        fee: int(info.fee, 'fee'),
        result: resultOf(info.result),
        receiptResult: typeof receipt.result === 'string' ? receipt.result : 'DEFAULT',
        resMessage: hexText(info.resMessage),
        energyUsageTotal: int(receipt.energy_usage_total, 'receipt.energy_usage_total'),
        energyFee: int(receipt.energy_fee, 'receipt.energy_fee'),
        netUsage: int(receipt.net_usage, 'receipt.net_usage'),
        netFee: int(receipt.net_fee, 'receipt.net_fee'),
        logs: readLogs(info.log),
      };
    });
  }
}

/**
 * A TRON chain read for the deposit watcher: the head, blocks by number, and the TRC-20 token's
 * `Transfer` logs whose recipient (topic 2) is one of the watched addresses. TRON has no log filter
 * over a range, so each block of the range is read (the watcher keeps ranges small): the block (its
 * id and transactions) and its receipts. Load-balanced nodes may answer one call from a node that
 * has the block and the next from one that does not yet: receipts that are not exactly the block's
 * transactions throw, so a block is never taken as empty by mistake. Addresses are Base58.
 */
export function tronDepositSource(client: TronApiClient, contract: string): DepositSource {
  const token = tronFromHex(tronHex(contract));
  return {
    head: async () => (await client.head()).number,
    block: async (number) => {
      const block = await client.block(number);
      return block === undefined ? undefined : { number: block.number, hash: block.id };
    },
    transfers: async ({ from, to }, recipients) => {
      if (recipients.length === 0) return [];
      const watched = new Set(recipients);
      const found: ChainTransfer[] = [];
      for (let number = from; number <= to; number++) {
        const block = await client.block(number);
        if (block === undefined) throw new Error(`the TRON API has no block ${number} yet`);
        const infos = await client.blockTransactionInfos(number);
        const ids = new Set(infos.map((info) => info.id));
        if (ids.size !== block.transactions.length || block.transactions.some((id) => !ids.has(id)))
          throw new Error(
            `the TRON API's receipts of block ${number} (${ids.size}) are not its transactions (${block.transactions.length})`,
          );
        for (const log of transferLogsOf(infos)) {
          if (log.contract !== token || !watched.has(log.to)) continue;
          found.push({
            txHash: log.txID,
            logIndex: log.logIndex,
            from: log.from,
            to: log.to,
            units: log.units,
            blockNumber: number,
            blockHash: block.id,
          });
        }
      }
      return found;
    },
  };
}
