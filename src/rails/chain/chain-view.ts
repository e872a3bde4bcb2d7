import { Type, type Static } from '@sinclair/typebox';
import type { ReadDb } from '../../store/store.js';
import * as q from '../queries.js';

const UNITS = "in the token's base units, as decimal text (USDT: 6 decimals on TRON and ETH, 18 on BSC)";
const MS = 'ms since the Unix epoch';

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const NullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

/** One transaction signed for a send: a replacement is another. */
const ChainSendAttemptSchema = Type.Object({
  txHash: Type.String({ description: 'its transaction hash (TRON: its txID)' }),
  nonce: NullableInteger('its EVM nonce; null on TRON'),
  maxFeePerGas: NullableString('EVM: the fee it offered, wei per gas, as decimal text; null on TRON'),
  maxPriorityFeePerGas: NullableString('EVM: the priority fee it offered, wei per gas, as decimal text; null on TRON'),
  expiresAt: NullableInteger(`TRON: when it expires unmined, ${MS}; null on EVM chains`),
  createdAt: Type.Integer({ description: `when it was signed, ${MS}` }),
  broadcastAt: NullableInteger(`when a node first accepted it, ${MS}; null until then`),
  outcome: NullableString(
    "what became of it: null while open, 'mined', 'replaced' (another was signed in its place), " +
      "'reverted: …' (mined, but the transfer failed; the reason follows), 'refused: …' (the node would not take it; its answer follows)",
  ),
});

/** The token send of a fiat → token order. */
const ChainSendSchema = Type.Object({
  chain: Type.String({ description: 'TRON, ETH or BSC' }),
  state: Type.Union(
    [
      Type.Literal('queued'),
      Type.Literal('signed'),
      Type.Literal('broadcast'),
      Type.Literal('confirmed'),
      Type.Literal('failed'),
      Type.Literal('cancelled'),
    ],
    {
      description:
        'queued (waiting for the hot wallet), signed (a transaction is signed, no node has taken it yet), broadcast ' +
        '(a node took it: waiting for it to be mined and deep enough), confirmed (final), failed, cancelled',
    },
  ),
  from: NullableString('the hot wallet address it is sent from; null until signed'),
  to: Type.String({ description: "the merchant's receiving address" }),
  units: Type.String({ description: `the amount sent, ${UNITS}` }),
  nonce: NullableInteger('its EVM nonce; null on TRON and until signed'),
  txHash: NullableString('the latest transaction signed for it: once mined, the one that decided; null until signed'),
  blockNumber: NullableInteger('the block that transaction was mined in; null until mined'),
  blockHash: NullableString('the hash of that block; null until mined'),
  confirmations: NullableInteger('how deep that block was when last looked at; null until mined'),
  failure: NullableString('why it failed or was cancelled, in English; null otherwise'),
  signedAt: NullableInteger(`when its first transaction was signed, ${MS}; null until then`),
  updatedAt: Type.Integer({ description: `when it last changed, ${MS}` }),
  attempts: Type.Array(ChainSendAttemptSchema, {
    description: 'every transaction signed for it, oldest first (a stuck send is replaced: each replacement is listed)',
  }),
});

/** A transfer the deposit watcher saw to an order's deposit address. */
const ChainDepositSchema = Type.Object({
  chain: Type.String({ description: 'TRON, ETH or BSC' }),
  txHash: Type.String({ description: 'the transaction that carried it' }),
  logIndex: Type.Integer({ description: 'its place among that transaction’s transfer events' }),
  from: Type.String({ description: 'the address it came from' }),
  units: Type.String({ description: `the amount it carried, ${UNITS}` }),
  blockNumber: Type.Integer({ description: 'the block it was mined in' }),
  blockHash: Type.String({ description: 'the hash of that block' }),
  state: Type.Union([Type.Literal('seen'), Type.Literal('reported')], {
    description:
      'seen (mined, not yet deep enough to be final: a reorganisation may still take it), reported (final, handed to the order)',
  }),
  seenAt: Type.Integer({ description: `when the watcher first saw it, ${MS}` }),
  reportedAt: NullableInteger(`when it was final and handed to the order, ${MS}; null while seen`),
});

/** What happened on chain for one order, as the operator's API and the console show it. */
export const ChainViewSchema = Type.Object(
  {
    send: Type.Union([ChainSendSchema, Type.Null()], {
      description: "the order's token send (fiat → token under CHAIN_RAIL=live); null when it has none",
    }),
    deposits: Type.Array(ChainDepositSchema, {
      description:
        "transfers the deposit watcher saw to the order's deposit address (token → fiat, cashier USDT), in block order; empty when none",
    }),
  },
  { description: 'What happened on chain for an order: its token send and the deposits to its deposit address' },
);

export type ChainView = Static<typeof ChainViewSchema>;

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
