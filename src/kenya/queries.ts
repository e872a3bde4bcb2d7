import type { Kysely, Selectable } from 'kysely';
import { byOwner } from '../nodes/leases.js';
import { ownerNotEnded } from '../nodes/queries.js';
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
  // A new next look ends the reconciliation's claim on the request.
  const set = 'deadline_at' in change ? { ...change, lease_owner: null } : change;
  await db.updateTable('daraja_requests').set(set).where('id', '=', id).execute();
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

/**
 * Moves a due request's next look to `until` in node `owner`'s name, unless another node did first
 * (or `owner` is a node that ended): true when this node takes it.
 */
export async function claimDarajaRequest(
  db: Db,
  id: string,
  claim: { deadline: number; owner: string; until: number },
): Promise<boolean> {
  const result = await db
    .updateTable('daraja_requests')
    .set({ deadline_at: claim.until, lease_owner: claim.owner })
    .where('id', '=', id)
    .where('deadline_at', '=', claim.deadline)
    .where(ownerNotEnded(claim.owner))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Frees the requests `owners` were asking Daraja about: due again at `now`. */
export async function freeDarajaClaims(db: Db, owners: readonly string[], now: number): Promise<number> {
  if (owners.length === 0) return 0;
  const result = await db
    .updateTable('daraja_requests')
    .set({ deadline_at: now, lease_owner: null })
    .where('lease_owner', 'in', owners)
    .where('deadline_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Requests being asked about, by the node asking. */
export async function darajaClaims(db: ReadDb, now: number): Promise<Map<string, number>> {
  return byOwner(
    await db
      .selectFrom('daraja_requests')
      .select((eb) => ['lease_owner as owner', eb.fn.countAll<number>().as('n')])
      .where('lease_owner', 'is not', null)
      .where('deadline_at', '>', now)
      .groupBy('lease_owner')
      .execute(),
  );
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

/** Makes the order's requests still waiting for Daraja's answer due now (an operator asks again); how many. */
export async function darajaRequestsDueNow(db: Db, orderId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('daraja_requests')
    .set({ deadline_at: now })
    .where('order_id', '=', orderId)
    .where('deadline_at', 'is not', null)
    .where('deadline_at', '>', now)
    .executeTakeFirst();
  const waiting = await db
    .selectFrom('daraja_requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('order_id', '=', orderId)
    .where('deadline_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Math.max(Number(result.numUpdatedRows), waiting.n);
}
