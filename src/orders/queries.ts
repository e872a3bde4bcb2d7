import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../store/dialects.js';
import type { ReadDb } from '../store/store.js';
import type { Database, OrderArea, OrderEventTable, OrderKind, OrderTable } from '../store/schema.js';

type Db = Kysely<Database>;

export type OrderRow = Selectable<OrderTable>;
export type OrderEventRow = Selectable<OrderEventTable>;

export async function insertOrder(db: Db, row: OrderRow): Promise<void> {
  await db.insertInto('orders').values(row).execute();
}

export function findOrder(db: ReadDb, orderId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst();
}

/** The order, locked until the transaction ends (PostgreSQL; SQLite's writer lock already holds). */
export function lockOrder(db: ReadDb, dialect: DialectName, orderId: string): Promise<OrderRow | undefined> {
  const query = db.selectFrom('orders').selectAll().where('id', '=', orderId);
  return (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

export function findByExternalId(
  db: ReadDb,
  key: { merchantId: string; area: OrderArea; kind: OrderKind; externalOrderId: string },
): Promise<OrderRow | undefined> {
  return db
    .selectFrom('orders')
    .selectAll()
    .where('merchant_id', '=', key.merchantId)
    .where('area', '=', key.area)
    .where('kind', '=', key.kind)
    .where('external_order_id', '=', key.externalOrderId)
    .executeTakeFirst();
}

export function findByCashier(db: ReadDb, cashierId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('cashier_id', '=', cashierId).executeTakeFirst();
}

export async function updateOrder(db: Db, orderId: string, changes: Partial<OrderRow>): Promise<void> {
  await db.updateTable('orders').set(changes).where('id', '=', orderId).execute();
}

export async function insertOrderEvent(db: Db, row: OrderEventRow): Promise<void> {
  await db.insertInto('order_events').values(row).execute();
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

/**
 * Takes over the hand-over of an order that has no rail reference yet, if nobody took it since
 * `seen` (compare-and-set on rail_claimed_at); true when this caller has it now.
 */
export async function claimRailHandOver(db: Db, orderId: string, seen: number | null, now: number): Promise<boolean> {
  const result = await db
    .updateTable('orders')
    .set({ rail_claimed_at: now })
    .where('id', '=', orderId)
    .where('channel_order_id', 'is', null)
    .where((eb) => (seen === null ? eb('rail_claimed_at', 'is', null) : eb('rail_claimed_at', '=', seen)))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Keeps the rail's reference of an order; `firstOnly` leaves one already kept as it is. */
export async function setChannelOrderId(
  db: Db,
  orderId: string,
  channelOrderId: string,
  firstOnly: boolean,
): Promise<void> {
  const query = db.updateTable('orders').set({ channel_order_id: channelOrderId }).where('id', '=', orderId);
  await (firstOnly ? query.where('channel_order_id', 'is', null) : query).execute();
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
