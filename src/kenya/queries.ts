import type { Kysely, Selectable } from 'kysely';
import type { Database, DarajaApi, DarajaRequestTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type DarajaRequestRow = Selectable<DarajaRequestTable>;

export async function insertDarajaRequest(db: Db, row: DarajaRequestRow): Promise<void> {
  await db.insertInto('daraja_requests').values(row).execute();
}

export async function updateDarajaRequest(
  db: Db,
  id: string,
  change: Partial<Omit<DarajaRequestRow, 'id' | 'order_id' | 'api' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('daraja_requests').set(change).where('id', '=', id).execute();
}

/** Gives an STK request whose answer was lost the CheckoutRequestID its callback named, unless it has one. */
export async function adoptDarajaRef(db: Db, id: string, ref: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('daraja_requests')
    .set({ ref, state: 'accepted', updated_at: now })
    .where('id', '=', id)
    .where('ref', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function findDarajaRequest(db: ReadDb, id: string): Promise<DarajaRequestRow | undefined> {
  return db.selectFrom('daraja_requests').selectAll().where('id', '=', id).executeTakeFirst();
}

export function darajaRequestByRef(db: ReadDb, api: DarajaApi, ref: string): Promise<DarajaRequestRow | undefined> {
  return db.selectFrom('daraja_requests').selectAll().where('ref', '=', ref).where('api', '=', api).executeTakeFirst();
}

export function darajaRequestsOfHandOver(db: ReadDb, handOverId: string): Promise<DarajaRequestRow[]> {
  return db
    .selectFrom('daraja_requests')
    .selectAll()
    .where('hand_over_id', '=', handOverId)
    .orderBy('created_at')
    .execute();
}

export function darajaRequestsOfOrder(db: ReadDb, orderId: string): Promise<DarajaRequestRow[]> {
  return db.selectFrom('daraja_requests').selectAll().where('order_id', '=', orderId).orderBy('created_at').execute();
}

/**
 * STK requests that may have reached the payer's phone but whose CheckoutRequestID Cashgate never
 * learned (the answer was lost, or the callback came first), for this phone and amount, written
 * after `since`: the candidates a callback with an unknown id may belong to.
 */
export function unansweredStkRequests(
  db: ReadDb,
  match: { phone: string; amount: number; since: number },
): Promise<DarajaRequestRow[]> {
  return db
    .selectFrom('daraja_requests')
    .selectAll()
    .where('api', '=', 'stk')
    .where('ref', 'is', null)
    .where('state', 'in', ['sending', 'unknown'])
    .where('phone', '=', match.phone)
    .where('amount', '=', match.amount)
    .where('created_at', '>=', match.since)
    .execute();
}

/** Whether the order has a later STK prompt that may still be paid (sent, or accepted and not settled). */
export async function laterOpenStkRequest(
  db: ReadDb,
  request: Pick<DarajaRequestRow, 'order_id' | 'created_at' | 'id'>,
): Promise<boolean> {
  const row = await db
    .selectFrom('daraja_requests')
    .select('id')
    .where('order_id', '=', request.order_id)
    .where('api', '=', 'stk')
    .where('id', '<>', request.id)
    .where('created_at', '>=', request.created_at)
    .where('state', 'in', ['sending', 'accepted', 'unknown'])
    .executeTakeFirst();
  return row !== undefined;
}

/** Requests the reconciliation worker asks Daraja about now. */
export function dueDarajaRequests(db: ReadDb, now: number, limit: number): Promise<DarajaRequestRow[]> {
  return db
    .selectFrom('daraja_requests')
    .selectAll()
    .where('deadline_at', 'is not', null)
    .where('deadline_at', '<=', now)
    .orderBy('deadline_at')
    .limit(limit)
    .execute();
}

/** Moves a due request's next look to `until` unless another node did first: true when this node takes it. */
export async function claimDarajaRequest(db: Db, id: string, deadline: number, until: number): Promise<boolean> {
  const result = await db
    .updateTable('daraja_requests')
    .set({ deadline_at: until })
    .where('id', '=', id)
    .where('deadline_at', '=', deadline)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Marks the callbacks about `ref` that reported another result than Daraja's query: they moved nothing. */
export async function refuseContradictedCallbacks(db: Db, ref: string, endpoint: string, code: string): Promise<void> {
  await db
    .updateTable('rail_messages')
    .set({ disposition: 'refused' })
    .where('ref', '=', ref)
    .where('endpoint', '=', endpoint)
    .where('disposition', '=', 'matched')
    .where('code', '<>', code)
    .execute();
}
