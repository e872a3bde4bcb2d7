/**
 * A JSON-RPC client of an EVM node (Ethereum, BSC), as the chain connectors use it: one POST per
 * call, a timeout, and every failure sorted by what it means for the caller:
 *
 * - `rpc`: the node answered with a JSON-RPC error (`code`, `message`): it did not do it (a
 *   rejected transaction, a reverted call, a range too wide);
 * - `not-sent`: the connection was refused or never made: nothing reached the node;
 * - `unknown`: a timeout, a reset or an HTTP failure after the request left: whether the node
 *   acted on it is not known (for `eth_sendRawTransaction`, ask the node for the hash);
 * - `invalid`: the node answered something that is not JSON-RPC.
 *
 * Calls are counted by chain, method and outcome on `/metrics`.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { isConnectError } from '../network.js';
import type { Chain } from './addresses.js';
import { erc20BalanceOf, erc20Decimals, quantity } from './evm-tx.js';

export type EvmRpcErrorKind = 'rpc' | 'not-sent' | 'unknown' | 'invalid';

export class EvmRpcError extends Error {
  constructor(
    readonly kind: EvmRpcErrorKind,
    readonly method: string,
    message: string,
    /** The JSON-RPC error code, for `rpc`. */
    readonly code?: number,
  ) {
    super(`${method}: ${message}`);
    this.name = 'EvmRpcError';
  }
}

export interface EvmRpcOptions {
  chain: Extract<Chain, 'ETH' | 'BSC'>;
  url: string;
  timeoutMs: number;
}

/** A log as `eth_getLogs` returns it (the fields Cashgate reads). */
export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: bigint;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
  removed: boolean;
}

/** A block's identity: what a watcher's cursor keeps. */
export interface EvmBlockRef {
  number: bigint;
  hash: string;
  parentHash: string;
  timestamp: bigint;
  baseFeePerGas: bigint | undefined;
}

/** A receipt's outcome (`status` 1 succeeded, 0 reverted). */
export interface EvmReceipt {
  transactionHash: string;
  blockNumber: bigint;
  blockHash: string;
  status: 0 | 1;
  gasUsed: bigint;
  effectiveGasPrice: bigint | undefined;
}

interface RpcMetrics {
  calls: Counter<'chain' | 'method' | 'outcome'>;
  latency: Histogram<'chain' | 'method'>;
}

const METRICS = new WeakMap<Registry, RpcMetrics>();

/** The registry's chain-node call metrics, made once however many chains (EVM and TRON clients alike) share it. */
export function chainRpcMetrics(registry: Registry): RpcMetrics {
  let metrics = METRICS.get(registry);
  if (metrics === undefined) {
    metrics = {
      calls: new Counter({
        name: 'cashgate_chain_rpc_requests_total',
        help:
          'Calls to chain nodes (EVM JSON-RPC methods, TRON API paths) by chain, method and outcome ' +
          '(ok, rpc-<code>, rejected-<code>, not-sent, unknown, invalid)',
        labelNames: ['chain', 'method', 'outcome'],
        registers: [registry],
      }),
      latency: new Histogram({
        name: 'cashgate_chain_rpc_request_duration_seconds',
        help: 'Time chain nodes took to answer, by chain and method',
        labelNames: ['chain', 'method'],
        buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
    };
    METRICS.set(registry, metrics);
  }
  return metrics;
}

const obj = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const str = (value: unknown, what: string): string => {
  if (typeof value !== 'string') throw new TypeError(`${what} is not a string`);
  return value;
};
/** A 32-byte word an `eth_call` returned, as an integer (`0x` alone: the address has no contract). */
function word(value: unknown): bigint {
  const text = str(value, 'the result');
  if (!/^0x[0-9a-fA-F]{64}$/.test(text))
    throw new TypeError(`the result is not one 32-byte word: ${text.slice(0, 80)}`);
  return BigInt(text);
}
function transactionHash(value: unknown): string {
  const text = str(value, 'the result');
  if (!/^0x[0-9a-fA-F]{64}$/.test(text))
    throw new TypeError(`the result is not a transaction hash: ${text.slice(0, 80)}`);
  return text;
}

export class EvmRpcClient {
  readonly #agent: Agent;
  readonly #metrics: RpcMetrics | undefined;
  #id = 0;

  constructor(
    readonly options: EvmRpcOptions,
    registry?: Registry,
  ) {
    this.#agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
    this.#metrics = registry === undefined ? undefined : chainRpcMetrics(registry);
  }

  get chain(): EvmRpcOptions['chain'] {
    return this.options.chain;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /**
   * One JSON-RPC call: its `result` as `read` reads it, or an EvmRpcError of the kind that says
   * what to do next (a result that does not read is `invalid`).
   */
  async call<T = unknown>(
    method: string,
    params: readonly unknown[],
    read: (result: unknown) => T = (result) => result as T,
  ): Promise<T> {
    const started = performance.now();
    let outcome = 'ok';
    try {
      const result = await this.#call(method, params);
      try {
        return read(result);
      } catch (error) {
        throw new EvmRpcError('invalid', method, error instanceof Error ? error.message : String(error));
      }
    } catch (error) {
      outcome =
        error instanceof EvmRpcError ? (error.kind === 'rpc' ? `rpc-${error.code ?? 'error'}` : error.kind) : 'unknown';
      throw error;
    } finally {
      const labels = { chain: this.chain, method };
      this.#metrics?.calls.inc({ ...labels, outcome });
      this.#metrics?.latency.observe(labels, (performance.now() - started) / 1000);
    }
  }

  async #call(method: string, params: readonly unknown[]): Promise<unknown> {
    const id = ++this.#id;
    let status: number;
    let text: string;
    try {
      const response = await request(this.options.url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw new EvmRpcError(
        isConnectError(error) ? 'not-sent' : 'unknown',
        method,
        error instanceof Error ? error.message : String(error),
      );
    }
    // A gateway in front of the node that failed or throttled says nothing of what the node did,
    // whatever its body says.
    if (status >= 500 || status === 429) throw new EvmRpcError('unknown', method, `HTTP ${status}`);
    let answer: Record<string, unknown>;
    try {
      answer = obj(JSON.parse(text) as unknown);
    } catch {
      throw new EvmRpcError('invalid', method, `HTTP ${status}, not JSON`);
    }
    const failure = obj(answer.error);
    if (answer.error !== undefined && answer.error !== null) {
      // An error names this request, or none (a request the node could not even parse).
      if (answer.id !== id && answer.id !== null)
        throw new EvmRpcError('invalid', method, `HTTP ${status}: an error answering another request`);
      const code = typeof failure.code === 'number' ? failure.code : undefined;
      const message = typeof failure.message === 'string' ? failure.message : 'an error without a message';
      throw new EvmRpcError('rpc', method, message, code);
    }
    if (!('result' in answer) || answer.id !== id)
      throw new EvmRpcError('invalid', method, `HTTP ${status}: not a JSON-RPC answer to request ${id}`);
    return answer.result;
  }

  async chainId(): Promise<bigint> {
    return this.call('eth_chainId', [], quantity);
  }

  async blockNumber(): Promise<bigint> {
    return this.call('eth_blockNumber', [], quantity);
  }

  /** A block by number (`latest` allowed); undefined when the node has none at that height. */
  async block(number: bigint | 'latest'): Promise<EvmBlockRef | undefined> {
    const tag = number === 'latest' ? 'latest' : `0x${number.toString(16)}`;
    return this.call('eth_getBlockByNumber', [tag, false], (block) => {
      if (block === null) return undefined;
      const b = obj(block);
      return {
        number: quantity(b.number),
        hash: str(b.hash, 'block.hash'),
        parentHash: str(b.parentHash, 'block.parentHash'),
        timestamp: quantity(b.timestamp),
        baseFeePerGas:
          b.baseFeePerGas === undefined || b.baseFeePerGas === null ? undefined : quantity(b.baseFeePerGas),
      };
    });
  }

  /** Logs of `address` with these topics, blocks `from` to `to` inclusive. */
  async logs(filter: {
    address: string;
    topics: (string | string[] | null)[];
    from: bigint;
    to: bigint;
  }): Promise<EvmLog[]> {
    const range = {
      address: filter.address,
      topics: filter.topics,
      fromBlock: `0x${filter.from.toString(16)}`,
      toBlock: `0x${filter.to.toString(16)}`,
    };
    return this.call('eth_getLogs', [range], (result) => {
      if (!Array.isArray(result)) throw new TypeError('the result is not a list');
      return result.map((entry) => {
        const log = obj(entry);
        return {
          address: str(log.address, 'log.address'),
          topics: Array.isArray(log.topics) ? log.topics.map((t) => str(t, 'log.topics')) : [],
          data: str(log.data, 'log.data'),
          blockNumber: quantity(log.blockNumber),
          blockHash: str(log.blockHash, 'log.blockHash'),
          transactionHash: str(log.transactionHash, 'log.transactionHash'),
          logIndex: Number(quantity(log.logIndex)),
          removed: log.removed === true,
        };
      });
    });
  }

  /** An `eth_call` at the latest block: the returned bytes, hex. */
  async ethCall(to: string, data: string): Promise<string> {
    return this.call('eth_call', [{ to, data }, 'latest'], (result) => str(result, 'the result'));
  }

  /** The ERC-20 token's `decimals()`. */
  async tokenDecimals(token: string): Promise<number> {
    return Number(await this.call('eth_call', [{ to: token, data: erc20Decimals() }, 'latest'], word));
  }

  /** The ERC-20 token's `balanceOf(owner)`, in its base units. */
  async tokenBalance(token: string, owner: string): Promise<bigint> {
    return this.call('eth_call', [{ to: token, data: erc20BalanceOf(owner) }, 'latest'], word);
  }

  /** The native coin balance (wei) of an address. */
  async balance(address: string): Promise<bigint> {
    return this.call('eth_getBalance', [address, 'latest'], quantity);
  }

  /** The nonce of the address's next transaction: `latest` (mined) or `pending` (the node's pool included). */
  async nonce(address: string, tag: 'latest' | 'pending'): Promise<bigint> {
    return this.call('eth_getTransactionCount', [address, tag], quantity);
  }

  /** The receipt of a transaction; undefined while it is not mined (or unknown). */
  async receipt(hash: string): Promise<EvmReceipt | undefined> {
    return this.call('eth_getTransactionReceipt', [hash], (result) => {
      if (result === null) return undefined;
      const r = obj(result);
      return {
        transactionHash: str(r.transactionHash, 'receipt.transactionHash'),
        blockNumber: quantity(r.blockNumber),
        blockHash: str(r.blockHash, 'receipt.blockHash'),
        status: quantity(r.status) === 1n ? 1 : 0,
        gasUsed: quantity(r.gasUsed),
        effectiveGasPrice:
          r.effectiveGasPrice === undefined || r.effectiveGasPrice === null ? undefined : quantity(r.effectiveGasPrice),
      };
    });
  }

  /** Whether the node knows the transaction at all (mined or in its pool). */
  async knows(hash: string): Promise<boolean> {
    return (await this.call('eth_getTransactionByHash', [hash])) !== null;
  }

  /** Broadcasts a signed transaction; answers its hash. */
  async sendRaw(raw: string): Promise<string> {
    return this.call('eth_sendRawTransaction', [raw], transactionHash);
  }

  /** The node's suggested priority fee (wei per gas). */
  async maxPriorityFee(): Promise<bigint> {
    return this.call('eth_maxPriorityFeePerGas', [], quantity);
  }

  /** Gas the call would use, as the node estimates it. */
  async estimateGas(tx: { from: string; to: string; data: string }): Promise<bigint> {
    return this.call('eth_estimateGas', [tx], quantity);
  }
}
