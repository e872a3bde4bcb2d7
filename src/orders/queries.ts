import type { Kysely, Selectable } from 'kysely';
import type { DialectName } from '../store/dialects.js';
import type { Database, OrderArea, OrderEventTable, OrderKind, OrderTable } from '../store/schema.js';

type Db = Kysely<Database>;

export type OrderRow = Selectable<OrderTable>;
export type OrderEventRow = Selectable<OrderEventTable>;

export async function insertOrder(db: Db, row: OrderRow): Promise<void> {
  await db.insertInto('orders').values(row).execute();
}

export function findOrder(db: Db, orderId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst();
}

/** The order, locked until the transaction ends (PostgreSQL; SQLite's writer lock already holds). */
export function lockOrder(db: Db, dialect: DialectName, orderId: string): Promise<OrderRow | undefined> {
  const query = db.selectFrom('orders').selectAll().where('id', '=', orderId);
  return (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

export function findByExternalId(
  db: Db,
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

export function findByCashier(db: Db, cashierId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('cashier_id', '=', cashierId).executeTakeFirst();
}

export async function updateOrder(db: Db, orderId: string, changes: Partial<OrderRow>): Promise<void> {
  await db.updateTable('orders').set(changes).where('id', '=', orderId).execute();
}

export async function insertOrderEvent(db: Db, row: OrderEventRow): Promise<void> {
  await db.insertInto('order_events').values(row).execute();
}

export function eventsOfOrder(db: Db, orderId: string): Promise<OrderEventRow[]> {
  return db
    .selectFrom('order_events')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('at')
    .orderBy('id')
    .execute();
}

/** Orders whose time ran out while they waited: collections unpaid, exchange quotes whose fiat was not taken or whose deposit did not come. */
export function expiredOrders(db: Db, now: number, limit: number): Promise<{ id: string }[]> {
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
