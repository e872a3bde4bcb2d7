import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../store/dialects.js';
import type {
  CallbackAttemptTable,
  CallbackEventState,
  CallbackEventTable,
  CallbackTestTable,
  Database,
} from '../store/schema.js';

type Db = Kysely<Database>;

export type CallbackEventRow = Selectable<CallbackEventTable>;
export type CallbackAttemptRow = Selectable<CallbackAttemptTable>;
export type CallbackTestRow = Selectable<CallbackTestTable>;

export async function insertEvent(db: Db, row: CallbackEventRow): Promise<void> {
  await db.insertInto('callback_events').values(row).execute();
}

/**
 * Events whose next look is due: pending ones, and deliveries whose lease ran out (a worker died),
 * leaving out hosts that already have their share in flight here.
 */
export function selectDueEvents(
  db: Db,
  dialect: DialectName,
  now: number,
  limit: number,
  busyHosts: readonly string[],
): Promise<CallbackEventRow[]> {
  const query = db
    .selectFrom('callback_events')
    .selectAll()
    .where('next_attempt_at', '<=', now)
    .where('state', 'in', ['pending', 'delivering'])
    .$if(busyHosts.length > 0, (qb) => qb.where('target_host', 'not in', busyHosts))
    .orderBy('next_attempt_at')
    .limit(limit);
  // Other workers skip the rows this one is claiming instead of waiting for them.
  return (dialect === 'postgres' ? query.forUpdate().skipLocked() : query).execute();
}

export async function leaseEvents(
  db: Db,
  eventIds: readonly string[],
  lease: { token: string; until: number; now: number },
): Promise<void> {
  if (eventIds.length === 0) return;
  await db
    .updateTable('callback_events')
    .set({
      state: 'delivering',
      lease_token: lease.token,
      next_attempt_at: lease.until,
      first_attempt_at: sql<number>`coalesce(first_attempt_at, ${lease.now})`,
      updated_at: lease.now,
    })
    .where('id', 'in', eventIds)
    .execute();
}

/** Records an attempt's effect on its event, only while the lease is still this worker's. */
export async function finishAttempt(
  db: Db,
  eventId: string,
  leaseToken: string,
  change: { state: CallbackEventState; nextAttemptAt: number | null; attempts: number; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('callback_events')
    .set({
      state: change.state,
      next_attempt_at: change.nextAttemptAt,
      attempts: change.attempts,
      lease_token: null,
      updated_at: change.now,
    })
    .where('id', '=', eventId)
    .where('lease_token', '=', leaseToken)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertAttempts(db: Db, rows: readonly CallbackAttemptRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('callback_attempts').values([...rows]).execute();
}

/** Adds one made attempt to each event (an interrupted one). */
export async function countAttempts(db: Db, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db
    .updateTable('callback_events')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', eventIds)
    .execute();
}

/** Retries that fell due after the retry window closed (no worker ran meanwhile) fail without a send. */
export async function expireLateRetries(db: Db, eventIds: readonly string[], now: number): Promise<void> {
  if (eventIds.length === 0) return;
  await db
    .updateTable('callback_events')
    .set({ state: 'failed', next_attempt_at: null, updated_at: now })
    .where('id', 'in', eventIds)
    .execute();
}

export function eventsOfOrder(db: Db, orderId: string): Promise<CallbackEventRow[]> {
  return db
    .selectFrom('callback_events')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findEvent(db: Db, eventId: string): Promise<CallbackEventRow | undefined> {
  return db.selectFrom('callback_events').selectAll().where('id', '=', eventId).executeTakeFirst();
}

export function attemptsOfEvents(db: Db, eventIds: readonly string[]): Promise<CallbackAttemptRow[]> {
  if (eventIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('callback_attempts')
    .selectAll()
    .where('event_id', 'in', eventIds)
    .orderBy('started_at')
    .orderBy('attempt_no')
    .execute();
}

/** Queue depth and the age of the oldest due event, for /metrics. */
export async function queueStats(db: Db, now: number): Promise<{ depth: number; oldestDueAt: number | null }> {
  const row = await db
    .selectFrom('callback_events')
    .select((eb) => eb.fn.countAll<number | string>().as('depth'))
    .where('state', 'in', ['pending', 'delivering'])
    .executeTakeFirst();
  const due = await db
    .selectFrom('callback_events')
    .select((eb) => eb.fn.min('next_attempt_at').as('oldest'))
    .where('state', 'in', ['pending', 'delivering'])
    .where('next_attempt_at', '<=', now)
    .executeTakeFirst();
  return { depth: Number(row?.depth ?? 0), oldestDueAt: due?.oldest ?? null };
}

export async function insertTest(db: Db, row: CallbackTestRow): Promise<void> {
  await db.insertInto('callback_tests').values(row).execute();
}

export function findTest(db: Db, id: string): Promise<CallbackTestRow | undefined> {
  return db.selectFrom('callback_tests').selectAll().where('id', '=', id).executeTakeFirst();
}
