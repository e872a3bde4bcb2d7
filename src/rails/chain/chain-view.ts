import type { ReadDb } from '../../store/store.js';
import * as q from '../queries.js';

/** What happened on chain for one order, as the operator's API and the console show it. */
export interface ChainView {
  /** The order's token send (fiat → token), if it has one. */
  send: {
    chain: string;
    state: string;
    from: string | null;
    to: string;
    units: string;
    nonce: number | null;
    txHash: string | null;
    blockNumber: number | null;
    blockHash: string | null;
    confirmations: number | null;
    failure: string | null;
    signedAt: number | null;
    updatedAt: number;
    /** Every transaction signed for it, oldest first (a replacement is another). */
    attempts: {
      txHash: string;
      nonce: number | null;
      maxFeePerGas: string | null;
      maxPriorityFeePerGas: string | null;
      expiresAt: number | null;
      createdAt: number;
      broadcastAt: number | null;
      outcome: string | null;
    }[];
  } | null;
  /** Transfers the deposit watcher saw to the order's deposit address (token → fiat, cashier USDT). */
  deposits: {
    chain: string;
    txHash: string;
    logIndex: number;
    from: string;
    units: string;
    blockNumber: number;
    blockHash: string;
    state: string;
    seenAt: number;
    reportedAt: number | null;
  }[];
}

/** The chain view of an order: its send and the deposits to `depositAddress` (its rail reference), if any. */
export async function chainView(db: ReadDb, orderId: string, depositAddress: string | null): Promise<ChainView> {
  const send = await q.chainSend(db, orderId);
  const attempts = send === undefined ? [] : await q.chainSendAttempts(db, orderId);
  const transfers = depositAddress === null ? [] : await q.chainTransfersTo(db, depositAddress);
  return {
    send:
      send === undefined
        ? null
        : {
            chain: send.chain,
            state: send.state,
            from: send.from_address,
            to: send.to_address,
            units: send.units,
            nonce: send.nonce,
            txHash: send.tx_hash,
            blockNumber: send.block_number,
            blockHash: send.block_hash,
            confirmations: send.confirmations,
            failure: send.failure,
            signedAt: send.signed_at,
            updatedAt: send.updated_at,
            attempts: attempts.map((a) => ({
              txHash: a.tx_hash,
              nonce: a.nonce,
              maxFeePerGas: a.max_fee,
              maxPriorityFeePerGas: a.priority_fee,
              expiresAt: a.expires_at,
              createdAt: a.created_at,
              broadcastAt: a.broadcast_at,
              outcome: a.outcome,
            })),
          },
    deposits: transfers.map((t) => ({
      chain: t.chain,
      txHash: t.tx_hash,
      logIndex: t.log_index,
      from: t.from_address,
      units: t.units,
      blockNumber: t.block_number,
      blockHash: t.block_hash,
      state: t.state,
      seenAt: t.seen_at,
      reportedAt: t.reported_at,
    })),
  };
}
