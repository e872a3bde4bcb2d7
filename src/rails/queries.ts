/**
 * Queries shared by every rail connector: the redacted messages to and from rails (the operator's
 * view of an order's rail traffic) and where a rail's reconciliation has read up to.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, RailMessageTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type RailMessageRow = Selectable<RailMessageTable>;

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
