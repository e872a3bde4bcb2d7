import type { Clock } from '../../clock.js';
import * as q from '../queries.js';
import { derivedHex } from '../rails.js';
import type { Chain } from './addresses.js';
import type { ChainRail } from './rail.js';

/**
 * A real chain as the exchange's orders see it. Watching needs no call: the deposit watcher reads
 * the addresses of waiting orders from the database. A send is queued as the order's `chain_sends`
 * row, written with the hand-over's answer; the chain's token sender takes it from there.
 */
export function liveChainRail(options: {
  chain: Chain;
  confirmations: number;
  clock: Clock;
  /** Why sends cannot happen on this chain (the variable the operator must set), if they cannot. */
  sendUnavailable?: string;
  maxPerOrder: bigint;
}): ChainRail {
  const { chain, clock } = options;
  return {
    name: `${chain.toLowerCase()} (live)`,
    chain,
    confirmations: options.confirmations,
    live: true,
    ...(options.sendUnavailable !== undefined && { sendUnavailable: options.sendUnavailable }),
    maxPerOrder: options.maxPerOrder,
    watchDeposits: (r) => Promise.resolve({ watchId: `WATCH${derivedHex(r.idempotencyKey, 20).toUpperCase()}` }),
    send: (r) => {
      if (options.sendUnavailable !== undefined)
        return Promise.reject(new Error(`${chain} cannot send tokens: ${options.sendUnavailable} is not set`));
      return Promise.resolve({
        sendId: `SEND${derivedHex(r.idempotencyKey, 20).toUpperCase()}`,
        record: async (tx) => {
          const now = clock.now();
          await q.insertChainSend(tx, {
            order_id: r.orderId,
            chain,
            to_address: r.to,
            units: r.units.toString(),
            state: 'queued',
            from_address: null,
            nonce: null,
            tx_hash: null,
            block_number: null,
            block_hash: null,
            confirmations: null,
            failure: null,
            signed_at: null,
            created_at: now,
            updated_at: now,
          });
        },
      });
    },
  };
}
