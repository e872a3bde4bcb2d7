/**
 * Queries shared by every rail connector: the redacted messages to and from rails (the operator's
 * view of an order's rail traffic) and where a rail's reconciliation has read up to.
 */
import type { Kysely, Selectable } from 'kysely';
import { byOwner } from '../nodes/leases.js';
import { ownerNotEnded } from '../nodes/queries.js';
import type {
  ChainHotWalletTable,
  ChainSendAttemptTable,
  ChainSendState,
  ChainSendTable,
  ChainTransferTable,
  ChainWatchTable,
  Database,
  RailMessageTable,
} from '../store/schema.js';
import { newId } from '../store/ids.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type RailMessageRow = Selectable<RailMessageTable>;

/**
 * The record of one call Cashgate made to a rail's provider: what was called, the body sent and the
 * answer, each passed through `redact` (tokens, payers' documents) before it is kept.
 */
export function outboundMessage(
  rail: string,
  exchange: {
    operation: string;
    httpStatus: number | null;
    code: string;
    durationMs: number;
    request: unknown;
    response: unknown;
  },
  about: { orderId: string | null; ref: string | null; at: number },
  redact: (value: unknown) => unknown,
): RailMessageRow {
  return {
    id: newId('rlm'),
    order_id: about.orderId,
    rail,
    direction: 'out',
    endpoint: exchange.operation,
    ref: about.ref,
    http_status: exchange.httpStatus,
    code: exchange.code,
    request: exchange.request === null ? null : JSON.stringify(redact(exchange.request)),
    response: exchange.response === null ? null : JSON.stringify(redact(exchange.response)),
    duration_ms: exchange.durationMs,
    disposition: null,
    at: about.at,
  };
}

/**
 * The record of one message a rail's provider sent Cashgate (a webhook, a notification): its body,
 * passed through `redact`, and what Cashgate made of it (matched to an order, unmatched, refused).
 */
export function inboundMessage(
  rail: string,
  endpoint: string,
  body: unknown,
  about: { orderId: string | null; ref: string | null; disposition: 'matched' | 'unmatched' | 'refused'; at: number },
  redact: (value: unknown) => unknown,
): RailMessageRow {
  return {
    id: newId('rlm'),
    order_id: about.orderId,
    rail,
    direction: 'in',
    endpoint,
    ref: about.ref,
    http_status: null,
    code: null,
    request: null,
    response: JSON.stringify(redact(body ?? null)),
    duration_ms: null,
    disposition: about.disposition,
    at: about.at,
  };
}

export async function insertRailMessages(db: Db, rows: readonly RailMessageRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('rail_messages')
    .values([...rows])
    .execute();
}

export function railMessagesOfOrder(db: ReadDb, orderId: string): Promise<RailMessageRow[]> {
  return db
    .selectFrom('rail_messages')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('at')
    .orderBy('id')
    .execute();
}

/** Callbacks that named no order Cashgate knows, newest first. */
export function unmatchedRailMessages(db: ReadDb, limit: number): Promise<RailMessageRow[]> {
  return db
    .selectFrom('rail_messages')
    .selectAll()
    .where('disposition', '=', 'unmatched')
    .orderBy('at', 'desc')
    .limit(limit)
    .execute();
}

/** The messages a rail sent or received about its reference `ref` at `endpoint`, newest first. */
export function railMessagesAbout(db: ReadDb, rail: string, endpoint: string, ref: string): Promise<RailMessageRow[]> {
  return db
    .selectFrom('rail_messages')
    .selectAll()
    .where('ref', '=', ref)
    .where('rail', '=', rail)
    .where('endpoint', '=', endpoint)
    .orderBy('at', 'desc')
    .limit(20)
    .execute();
}

/** Whether an order with this id exists. */
export async function orderExists(db: ReadDb, orderId: string): Promise<boolean> {
  const row = await db.selectFrom('orders').select('id').where('id', '=', orderId).executeTakeFirst();
  return row !== undefined;
}

/** Where the named reconciliation has read up to; undefined before its first run. */
export async function railCursor(db: ReadDb, name: string): Promise<number | undefined> {
  const row = await db.selectFrom('rail_cursors').select('position').where('name', '=', name).executeTakeFirst();
  return row?.position;
}

export async function setRailCursor(db: Db, name: string, position: number): Promise<void> {
  await db
    .insertInto('rail_cursors')
    .values({ name, position })
    .onConflict((oc) => oc.column('name').doUpdateSet({ position }))
    .execute();
}

// ---- chains: deposit watches and the transfers they saw ---------------------------------------

export type ChainWatchRow = Selectable<ChainWatchTable>;
export type ChainTransferRow = Selectable<ChainTransferTable>;

export function chainWatch(db: ReadDb, chain: string): Promise<ChainWatchRow | undefined> {
  return db.selectFrom('chain_watches').selectAll().where('chain', '=', chain).executeTakeFirst();
}

/** Starts a chain's watch at a block, held by `owner`; nothing when the chain already has one. */
export async function insertChainWatch(db: Db, row: ChainWatchRow): Promise<void> {
  await db
    .insertInto('chain_watches')
    .values(row)
    .onConflict((oc) => oc.column('chain').doNothing())
    .execute();
}

/**
 * Takes (or keeps) a chain's watch (`chain_watches`) or sending (`chain_hot_wallets`) for `owner`
 * until `until`, unless another node holds it now.
 */
export async function leaseChainWork(
  db: Db,
  table: 'chain_watches' | 'chain_hot_wallets',
  chain: string,
  owner: string,
  now: number,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ lease_owner: owner, lease_until: until })
    .where('chain', '=', chain)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
    .where(ownerNotEnded(owner))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Frees the chains' watches or sendings that `owners` hold: free for any node at once. */
export async function freeChainWork(
  db: Db,
  table: 'chain_watches' | 'chain_hot_wallets',
  owners: readonly string[],
): Promise<number> {
  if (owners.length === 0) return 0;
  const result = await db
    .updateTable(table)
    .set({ lease_owner: null, lease_until: null })
    .where('lease_owner', 'in', owners)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The chains' watches or sendings held now, by node. */
export async function chainWorkLeases(
  db: ReadDb,
  table: 'chain_watches' | 'chain_hot_wallets',
  now: number,
): Promise<Map<string, number>> {
  return byOwner(
    await db
      .selectFrom(table)
      .select((eb) => ['lease_owner as owner', eb.fn.countAll<number>().as('n')])
      .where('lease_owner', 'is not', null)
      .where('lease_until', '>', now)
      .groupBy('lease_owner')
      .execute(),
  );
}

/** Moves the chain's cursor, if `owner` still holds the watch. */
export async function moveChainWatch(
  db: Db,
  chain: string,
  owner: string,
  to: { block_number: number; block_hash: string; updated_at: number },
): Promise<boolean> {
  const result = await db
    .updateTable('chain_watches')
    .set(to)
    .where('chain', '=', chain)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertChainTransfers(db: Db, rows: readonly ChainTransferRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('chain_transfers')
    .values([...rows])
    .onConflict((oc) => oc.columns(['chain', 'tx_hash', 'log_index']).doNothing())
    .execute();
}

/** Transfers seen but not reported: those at or below `maxBlock` (final), oldest first. */
export function seenChainTransfers(
  db: ReadDb,
  chain: string,
  maxBlock: number,
  limit: number,
): Promise<ChainTransferRow[]> {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where('chain', '=', chain)
    .where('state', '=', 'seen')
    .where('block_number', '<=', maxBlock)
    .orderBy('block_number')
    .orderBy('log_index')
    .limit(limit)
    .execute();
}

export async function countSeenChainTransfers(db: ReadDb, chain: string): Promise<number> {
  const row = await db
    .selectFrom('chain_transfers')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('chain', '=', chain)
    .where('state', '=', 'seen')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Forgets the unreported transfers above `block` (a reorganisation took their blocks); answers how many. */
export async function dropSeenChainTransfersAbove(db: Db, chain: string, block: number): Promise<number> {
  const result = await db
    .deleteFrom('chain_transfers')
    .where('chain', '=', chain)
    .where('state', '=', 'seen')
    .where('block_number', '>', block)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Reported transfers above `block`: a reorganisation deeper than finality took them. */
export function reportedChainTransfersAbove(db: ReadDb, chain: string, block: number): Promise<ChainTransferRow[]> {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where('chain', '=', chain)
    .where('state', '=', 'reported')
    .where('block_number', '>', block)
    .execute();
}

/** Marks a transfer reported; false when it already was (another node, or an earlier run). */
export async function markChainTransferReported(
  db: Db,
  key: Pick<ChainTransferRow, 'chain' | 'tx_hash' | 'log_index'>,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('chain_transfers')
    .set({ state: 'reported', reported_at: now })
    .where('chain', '=', key.chain)
    .where('tx_hash', '=', key.tx_hash)
    .where('log_index', '=', key.log_index)
    .where('state', '=', 'seen')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export type ChainHotWalletRow = Selectable<ChainHotWalletTable>;
export type ChainSendRow = Selectable<ChainSendTable>;
export type ChainSendAttemptRow = Selectable<ChainSendAttemptTable>;

/** Records the chain's hot wallet, with the nonce its next send starts from; nothing when it exists. */
export async function insertChainHotWallet(db: Db, row: ChainHotWalletRow): Promise<void> {
  await db
    .insertInto('chain_hot_wallets')
    .values(row)
    .onConflict((oc) => oc.column('chain').doNothing())
    .execute();
}

export function chainHotWallet(db: ReadDb, chain: string): Promise<ChainHotWalletRow | undefined> {
  return db.selectFrom('chain_hot_wallets').selectAll().where('chain', '=', chain).executeTakeFirst();
}

/** Whether `owner` holds a chain's watch or sending now (checked in the unit of work that records what it signed). */
export async function holdsChainLease(
  db: Db,
  table: 'chain_watches' | 'chain_hot_wallets',
  chain: string,
  owner: string,
  now: number,
): Promise<boolean> {
  const row = await db
    .selectFrom(table)
    .select('chain')
    .where('chain', '=', chain)
    .where('lease_owner', '=', owner)
    .where('lease_until', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** Hands the chain's sending to another hot wallet (the operator changed the key), its nonces from `nonce`. */
export async function replaceChainHotWallet(db: Db, chain: string, address: string, nonce: number, now: number) {
  await db
    .updateTable('chain_hot_wallets')
    .set({ address, next_nonce: nonce, updated_at: now })
    .where('chain', '=', chain)
    .execute();
}

/**
 * Gives the next nonce of the chain's hot wallet to a send, if `owner` still holds the sending
 * (the update also serialises the sends of a chain across nodes); undefined otherwise.
 */
export async function takeChainNonce(db: Db, chain: string, owner: string, now: number): Promise<number | undefined> {
  const row = await db
    .updateTable('chain_hot_wallets')
    .set((eb) => ({ next_nonce: eb('next_nonce', '+', 1), updated_at: now }))
    .where('chain', '=', chain)
    .where('lease_owner', '=', owner)
    .returning('next_nonce')
    .executeTakeFirst();
  return row === undefined ? undefined : row.next_nonce - 1;
}

/** Moves the wallet's next nonce up to `nonce` (the chain has used nonces Cashgate did not give). */
export async function raiseChainNonce(db: Db, chain: string, nonce: number, now: number): Promise<void> {
  await db
    .updateTable('chain_hot_wallets')
    .set({ next_nonce: nonce, updated_at: now })
    .where('chain', '=', chain)
    .where('next_nonce', '<', nonce)
    .execute();
}

export async function insertChainSend(db: Db, row: ChainSendRow): Promise<void> {
  await db
    .insertInto('chain_sends')
    .values(row)
    .onConflict((oc) => oc.column('order_id').doNothing())
    .execute();
}

export function chainSend(db: ReadDb, orderId: string): Promise<ChainSendRow | undefined> {
  return db.selectFrom('chain_sends').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

/** The chain's sends still under way (queued, signed or broadcast), oldest first. */
export function openChainSends(db: ReadDb, chain: string, limit: number): Promise<ChainSendRow[]> {
  return db
    .selectFrom('chain_sends')
    .selectAll()
    .where('chain', '=', chain)
    .where('state', 'in', ['queued', 'signed', 'broadcast'])
    .orderBy('created_at')
    .orderBy('order_id')
    .limit(limit)
    .execute();
}

/**
 * Moves a send on from the state it was read in (and, with `hash`, from that latest transaction);
 * false when it had moved already.
 */
export async function updateChainSend(
  db: Db,
  orderId: string,
  from: ChainSendState,
  changes: Partial<Omit<ChainSendRow, 'order_id' | 'chain'>>,
  hash?: string,
): Promise<boolean> {
  let update = db.updateTable('chain_sends').set(changes).where('order_id', '=', orderId).where('state', '=', from);
  if (hash !== undefined) update = update.where('tx_hash', '=', hash);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Units of the chain's token signed for sends since `since` (the day's ceiling), failed-before-broadcast excluded. */
export async function unitsSignedSince(db: ReadDb, chain: string, since: number): Promise<bigint> {
  const rows = await db
    .selectFrom('chain_sends')
    .select('units')
    .where('chain', '=', chain)
    .where('signed_at', '>=', since)
    .where('state', '!=', 'cancelled')
    .execute();
  return rows.reduce((sum, row) => sum + BigInt(row.units), 0n);
}

export async function insertChainSendAttempt(db: Db, row: ChainSendAttemptRow): Promise<void> {
  await db.insertInto('chain_send_attempts').values(row).execute();
}

export function chainSendAttempts(db: ReadDb, orderId: string): Promise<ChainSendAttemptRow[]> {
  return db
    .selectFrom('chain_send_attempts')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('created_at')
    .orderBy('tx_hash')
    .execute();
}

export async function updateChainSendAttempt(
  db: Db,
  hash: string,
  changes: Partial<Pick<ChainSendAttemptRow, 'broadcast_at' | 'outcome'>>,
): Promise<void> {
  await db.updateTable('chain_send_attempts').set(changes).where('tx_hash', '=', hash).execute();
}

/** Sends by state per chain, for the operator's metrics. */
export async function countChainSends(db: ReadDb): Promise<{ chain: string; state: string; n: number }[]> {
  const rows = await db
    .selectFrom('chain_sends')
    .select(['chain', 'state', (eb) => eb.fn.countAll<string | number>().as('n')])
    .groupBy(['chain', 'state'])
    .execute();
  return rows.map((row) => ({ chain: row.chain, state: row.state, n: Number(row.n) }));
}

/** The transfers the deposit watcher saw to an address, oldest first. */
export function chainTransfersTo(db: ReadDb, address: string): Promise<ChainTransferRow[]> {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where('to_address', '=', address)
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
}
