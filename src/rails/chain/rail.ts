import type { Tx } from '../../store/store.js';
import { derivedHex } from '../rails.js';
import type { Chain, Token } from './addresses.js';

/**
 * A chain rail: how Cashgate watches deposits to its addresses and sends tokens. What happens on
 * chain comes back as order events, from a connector's watcher or from the sandbox:
 * `token_received` (a deposit confirmed at a deposit address, or a send confirmed at addressTo),
 * `token_sent` (a send broadcast, with its transaction hash) and `failed`.
 */
export interface ChainRail {
  readonly name: string;
  readonly chain: Chain;
  /** Confirmations after which the rail reports a transfer as received; never reported earlier. */
  readonly confirmations: number;
  /**
   * Whether the rail is a real chain: the sender takes the order's fiat itself before sending (in
   * the sandbox, sandbox events move every step).
   */
  readonly live: boolean;
  /** Why fiat → token orders cannot be sent on this chain (the missing variable), if they cannot. */
  readonly sendUnavailable?: string;
  /** The most one send may carry, in the token's base units, if capped. */
  readonly maxPerOrder?: bigint;
  /**
   * Starts watching a deposit address; returns the rail's reference for the watch. `idempotencyKey`
   * is the order's hand-over (see RailOrder): every attempt of one hand-over gives it the same.
   */
  watchDeposits(request: {
    orderId: string;
    idempotencyKey: string;
    address: string;
    token: Token;
  }): Promise<{ watchId: string }>;
  /**
   * Queues a send of `units` (the token's base units) to `to`, at most once per `idempotencyKey`;
   * returns the rail's reference, and the rail's rows (the queued send), written in the unit of
   * work that records the hand-over's answer.
   */
  send(request: {
    orderId: string;
    idempotencyKey: string;
    to: string;
    token: Token;
    units: bigint;
  }): Promise<{ sendId: string; record?: (tx: Tx) => Promise<void> }>;
}

/** Confirmations real connectors wait for before reporting a transfer as received. */
export const CONFIRMATIONS: Record<Chain, number> = { TRON: 19, ETH: 12, BSC: 15 };

/** The simulated chains: they accept every watch and send, and wait for sandbox events to say what happened. */
export function sandboxChainRail(chain: Chain): ChainRail {
  return {
    name: `${chain.toLowerCase()} (sandbox)`,
    chain,
    confirmations: CONFIRMATIONS[chain],
    live: false,
    watchDeposits: (r) => Promise.resolve({ watchId: `WATCH${derivedHex(r.idempotencyKey, 20).toUpperCase()}` }),
    send: (r) => Promise.resolve({ sendId: `SEND${derivedHex(r.idempotencyKey, 20).toUpperCase()}` }),
  };
}
