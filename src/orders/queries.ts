import { sql, type Kysely, type Selectable } from 'kysely';
import { byOwner } from '../nodes/leases.js';
import { ownerNotEnded } from '../nodes/queries.js';
import type { DialectName } from '../store/dialects.js';
import { prepared } from '../store/prepared.js';
import type { ReadDb } from '../store/store.js';
import type {
  Database,
  OrderArea,
  OrderEventTable,
  OrderKind,
  OrderSettledByHandTable,
  OrderTable,
  RailTaskTable,
} from '../store/schema.js';

type Db = Kysely<Database>;

export type OrderRow = Selectable<OrderTable>;
export type OrderEventRow = Selectable<OrderEventTable>;

const insertOrderRow = prepared((db, row: OrderRow) => db.insertInto('orders').values(row));

export async function insertOrder(db: Db, row: OrderRow): Promise<void> {
  await insertOrderRow(db, row);
}

export function findOrder(db: ReadDb, orderId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst();
}

export function findOrders(db: ReadDb, orderIds: readonly string[]): Promise<OrderRow[]> {
  if (orderIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('orders').selectAll().where('id', 'in', orderIds).execute();
}

/** The order, locked until the transaction ends (PostgreSQL; SQLite's writer lock already holds). */
export function lockOrder(db: ReadDb, dialect: DialectName, orderId: string): Promise<OrderRow | undefined> {
  const query = db.selectFrom('orders').selectAll().where('id', '=', orderId);
  return (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

const orderByExternalId = prepared(
  (db, key: { merchantId: string; area: OrderArea; kind: OrderKind; externalOrderId: string }) =>
    db
      .selectFrom('orders')
      .selectAll()
      .where('merchant_id', '=', key.merchantId)
      .where('area', '=', key.area)
      .where('kind', '=', key.kind)
      .where('external_order_id', '=', key.externalOrderId),
);

export async function findByExternalId(
  db: ReadDb,
  key: { merchantId: string; area: OrderArea; kind: OrderKind; externalOrderId: string },
): Promise<OrderRow | undefined> {
  return (await orderByExternalId(db, key)).rows[0];
}

export function findByCashier(db: ReadDb, cashierId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('cashier_id', '=', cashierId).executeTakeFirst();
}

export async function updateOrder(db: Db, orderId: string, changes: Partial<OrderRow>): Promise<void> {
  await db.updateTable('orders').set(changes).where('id', '=', orderId).execute();
}

const insertOrderEventRow = prepared((db, row: OrderEventRow) => db.insertInto('order_events').values(row));

export async function insertOrderEvent(db: Db, row: OrderEventRow): Promise<void> {
  await insertOrderEventRow(db, row);
}

export function eventsOfOrder(db: ReadDb, orderId: string): Promise<OrderEventRow[]> {
  return db
    .selectFrom('order_events')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('at')
    .orderBy('id')
    .execute();
}

/** Orders whose time ran out while they waited: collections unpaid, exchange quotes whose fiat was not taken or whose deposit did not come. */
export function expiredOrders(db: ReadDb, now: number, limit: number): Promise<{ id: string }[]> {
  return db
    .selectFrom('orders')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 1), eb('kind', 'in', ['collection', 'fiat_to_token'])]),
        eb.and([eb('status', '=', 4), eb('kind', '=', 'token_to_fiat')]),
      ]),
    )
    .where('cashier_expire_at', '<=', now)
    .orderBy('cashier_expire_at')
    .limit(limit)
    .execute();
}

export function findByRailRef(db: ReadDb, railRef: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('rail_ref', '=', railRef).executeTakeFirst();
}

export type RailTaskRow = Selectable<RailTaskTable>;

const insertRailTaskRow = prepared((db, task: RailTaskRow) => db.insertInto('rail_tasks').values(task));

export async function insertRailTask(db: Db, task: RailTaskRow): Promise<void> {
  await insertRailTaskRow(db, task);
}

/**
 * Hand-overs a worker may take: pending ones that are due and working ones whose lease ran out
 * (the node working them died or stalled). On PostgreSQL other workers skip the rows this one is
 * claiming instead of waiting for them.
 */
export function selectDueRailTasks(
  db: ReadDb,
  dialect: DialectName,
  now: number,
  limit: number,
): Promise<RailTaskRow[]> {
  const query = db
    .selectFrom('rail_tasks')
    .selectAll()
    .where('next_attempt_at', 'is not', null)
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit);
  return (dialect === 'postgres' ? query.forUpdate().skipLocked() : query).execute();
}

export async function anyRailTaskDue(db: ReadDb, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('rail_tasks')
    .select('id')
    .where('next_attempt_at', 'is not', null)
    .where('next_attempt_at', '<=', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Leases the tasks to node `owner` until `until`, each one more attempt begun; returns how many it
 * leased (none when `owner` is a node that ended: see `ownerNotEnded`).
 */
export async function leaseRailTasks(
  db: Db,
  taskIds: readonly string[],
  lease: { token: string; owner: string; until: number; now: number },
): Promise<number> {
  if (taskIds.length === 0) return 0;
  const result = await db
    .updateTable('rail_tasks')
    .set((eb) => ({
      state: 'working',
      attempts: eb('attempts', '+', 1),
      lease_token: lease.token,
      lease_owner: lease.owner,
      next_attempt_at: lease.until,
      updated_at: lease.now,
    }))
    .where('id', 'in', taskIds)
    .where(ownerNotEnded(lease.owner))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Frees the hand-overs `owners` work: due for any node at `now`, their old leases void. */
export async function freeRailTasks(db: Db, owners: readonly string[], now: number): Promise<number> {
  if (owners.length === 0) return 0;
  const result = await db
    .updateTable('rail_tasks')
    .set({ state: 'pending', next_attempt_at: now, lease_token: null, lease_owner: null, updated_at: now })
    .where('lease_owner', 'in', owners)
    .where('state', '=', 'working')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Hand-overs being worked, by the node working them. */
export async function railTaskLeases(db: ReadDb): Promise<Map<string, number>> {
  return byOwner(
    await db
      .selectFrom('rail_tasks')
      .select((eb) => ['lease_owner as owner', eb.fn.countAll<number>().as('n')])
      .where('lease_owner', 'is not', null)
      .where('state', '=', 'working')
      .groupBy('lease_owner')
      .execute(),
  );
}

/**
 * Settles a task, or sets its next attempt, only while the lease is still `leaseToken`'s: a worker
 * whose lease ran out records nothing. True when recorded.
 */
const finishRailTaskRow = prepared(
  (
    db,
    p: Pick<RailTaskRow, 'state' | 'next_attempt_at' | 'last_error' | 'updated_at'> & {
      id: string;
      leaseToken: string;
    },
  ) =>
    db
      .updateTable('rail_tasks')
      .set({
        state: p.state,
        next_attempt_at: p.next_attempt_at,
        last_error: p.last_error,
        updated_at: p.updated_at,
        lease_token: null,
        lease_owner: null,
      })
      .where('id', '=', p.id)
      .where('lease_token', '=', p.leaseToken),
);

export async function finishRailTask(
  db: Db,
  taskId: string,
  leaseToken: string,
  change: Pick<RailTaskRow, 'state' | 'next_attempt_at' | 'last_error' | 'updated_at'>,
): Promise<boolean> {
  const result = await finishRailTaskRow(db, { ...change, id: taskId, leaseToken });
  return (result.numAffectedRows ?? 0n) > 0n;
}

export function railTasksOfOrder(db: ReadDb, orderId: string): Promise<RailTaskRow[]> {
  return db.selectFrom('rail_tasks').selectAll().where('order_id', '=', orderId).orderBy('created_at').execute();
}

/**
 * Ends every hand-over of the order not yet settled (waiting to retry, or being worked): no worker
 * takes it again, and a node still working one records nothing (its lease is gone). How many.
 */
export async function endRailTasksOf(
  db: Db,
  orderId: string,
  end: Pick<RailTaskRow, 'last_error' | 'updated_at'>,
): Promise<number> {
  const result = await db
    .updateTable('rail_tasks')
    .set({ state: 'failed', next_attempt_at: null, lease_token: null, lease_owner: null, ...end })
    .where('order_id', '=', orderId)
    .where('state', 'in', ['pending', 'working'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** When the live lease of a hand-over of the order ends (a node is calling its rail now), or undefined. */
export async function liveHandOverLeaseEnd(db: Db, orderId: string, now: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('rail_tasks')
    .select('next_attempt_at')
    .where('order_id', '=', orderId)
    .where('state', '=', 'working')
    .where('lease_owner', 'is not', null)
    .where('next_attempt_at', '>', now)
    .orderBy('next_attempt_at', 'desc')
    .executeTakeFirst();
  return row?.next_attempt_at ?? undefined;
}

export type SettledByHandRow = Selectable<OrderSettledByHandTable>;

export async function insertSettledByHand(db: Db, row: SettledByHandRow): Promise<void> {
  await db.insertInto('order_settled_by_hand').values(row).execute();
}

export function findSettledByHand(db: ReadDb, orderId: string): Promise<SettledByHandRow | undefined> {
  return db.selectFrom('order_settled_by_hand').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

/** Unsettled hand-overs, for the metrics: how many wait, and the oldest one's creation time. */
export async function unsettledRailTasks(db: ReadDb): Promise<{ count: number; oldest: number | null }> {
  const row = await db
    .selectFrom('rail_tasks')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('count'),
      eb.fn.min<number | string | null>('created_at').as('oldest'),
    ])
    .where('next_attempt_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: row.oldest === null ? null : Number(row.oldest) };
}

const setChannelOrderIdAlways = prepared((db, p: { orderId: string; channelOrderId: string }) =>
  db.updateTable('orders').set({ channel_order_id: p.channelOrderId }).where('id', '=', p.orderId),
);
const setChannelOrderIdFirst = prepared((db, p: { orderId: string; channelOrderId: string }) =>
  db
    .updateTable('orders')
    .set({ channel_order_id: p.channelOrderId })
    .where('id', '=', p.orderId)
    .where('channel_order_id', 'is', null),
);

/** Keeps the rail's reference of an order; `firstOnly` leaves one already kept as it is. */
export async function setChannelOrderId(
  db: Db,
  orderId: string,
  channelOrderId: string,
  firstOnly: boolean,
): Promise<void> {
  await (firstOnly ? setChannelOrderIdFirst : setChannelOrderIdAlways)(db, { orderId, channelOrderId });
}

/** What the order's merchant settles and reads in: its settlement delay and language. */
export function merchantTermsOf(
  db: ReadDb,
  merchantId: string,
): Promise<{ settlement_delay_ms: number; language: string }> {
  return db
    .selectFrom('merchants')
    .select(['settlement_delay_ms', 'language'])
    .where('id', '=', merchantId)
    .executeTakeFirstOrThrow();
}

/** How many of an order's journals are of `kind` (a number on SQLite, its text on PostgreSQL). */
const journalCount = (kind: string) => sql<number | string>`sum(case when j.kind = ${kind} then 1 else 0 end)`;

/** An order's kind and status, and per journal kind asked for, how many journals of it the order has. */
export type OrderJournalCounts<K extends string> = Pick<OrderRow, 'id' | 'kind' | 'status'> &
  Record<K, number | string>;

/** Every order with, for each of `journalKinds`, the number of its ledger journals of that kind. */
export function journalCountsOfOrders<K extends string>(
  db: ReadDb,
  journalKinds: readonly K[],
): Promise<OrderJournalCounts<K>[]> {
  return db
    .selectFrom('orders as o')
    .leftJoin('ledger_journals as j', 'j.order_id', 'o.id')
    .select(['o.id', 'o.kind', 'o.status', ...journalKinds.map((kind) => journalCount(kind).as(kind))])
    .groupBy(['o.id', 'o.kind', 'o.status'])
    .$castTo<OrderJournalCounts<K>>()
    .execute();
}
