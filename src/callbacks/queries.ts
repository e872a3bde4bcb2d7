import type { ReadDb } from '../store/store.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import { byOwner } from '../nodes/leases.js';
import { ownerNotEnded } from '../nodes/queries.js';
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
  db: ReadDb,
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

/** Leases the events to node `owner`; returns how many (none when `owner` is a node that ended). */
export async function leaseEvents(
  db: Db,
  eventIds: readonly string[],
  lease: { token: string; owner: string; until: number; now: number },
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await db
    .updateTable('callback_events')
    .set({
      state: 'delivering',
      lease_token: lease.token,
      lease_owner: lease.owner,
      next_attempt_at: lease.until,
      first_attempt_at: sql<number>`coalesce(first_attempt_at, ${lease.now})`,
      updated_at: lease.now,
    })
    .where('id', 'in', eventIds)
    .where(ownerNotEnded(lease.owner))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Frees the deliveries `owners` hold: due at `now` for any node, which records the cut attempt as
 * interrupted and sends the callback again; the old holder's result is no longer recorded.
 */
export async function freeEventLeases(db: Db, owners: readonly string[], now: number): Promise<number> {
  if (owners.length === 0) return 0;
  const result = await db
    .updateTable('callback_events')
    .set({ next_attempt_at: now, lease_token: null, lease_owner: null })
    .where('lease_owner', 'in', owners)
    .where('state', '=', 'delivering')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deliveries in flight, by the node delivering them. */
export async function eventLeases(db: ReadDb): Promise<Map<string, number>> {
  return byOwner(
    await db
      .selectFrom('callback_events')
      .select((eb) => ['lease_owner as owner', eb.fn.countAll<number>().as('n')])
      .where('lease_owner', 'is not', null)
      .where('state', '=', 'delivering')
      .groupBy('lease_owner')
      .execute(),
  );
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
      lease_owner: null,
      updated_at: change.now,
    })
    .where('id', '=', eventId)
    .where('lease_token', '=', leaseToken)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertAttempts(db: Db, rows: readonly CallbackAttemptRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('callback_attempts')
    .values([...rows])
    .execute();
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

export function eventsOfOrder(db: ReadDb, orderId: string): Promise<CallbackEventRow[]> {
  return db
    .selectFrom('callback_events')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findEvent(db: ReadDb, eventId: string): Promise<CallbackEventRow | undefined> {
  return db.selectFrom('callback_events').selectAll().where('id', '=', eventId).executeTakeFirst();
}

export function attemptsOfEvents(db: ReadDb, eventIds: readonly string[]): Promise<CallbackAttemptRow[]> {
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
export async function queueStats(db: ReadDb, now: number): Promise<{ depth: number; oldestDueAt: number | null }> {
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

/** The merchant's unified callback address (null when it has none); throws when there is no such merchant. */
export async function merchantCallbackUrl(db: ReadDb, merchantId: string): Promise<string | null> {
  const merchant = await db
    .selectFrom('merchants')
    .select('callback_url')
    .where('id', '=', merchantId)
    .executeTakeFirstOrThrow();
  return merchant.callback_url;
}

/**
 * The key a callback signed now takes when nothing names one: the merchant's newest key that is
 * active and past its activation moment. An order callback carries the key that placed its order,
 * and authentication admits only such a key, so this is the key an order placed now would carry.
 */
export function keyInEffect(db: ReadDb, merchantId: string, now: number): Promise<{ access_key: string } | undefined> {
  return (
    db
      .selectFrom('api_keys')
      .select('access_key')
      .where('merchant_id', '=', merchantId)
      .where('status', '=', 'active')
      .where('active_at', '<=', now)
      // A rolled key past its disable time is disabled, even before anything wrote it down.
      .where((eb) => eb.or([eb('disable_at', 'is', null), eb('disable_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst()
  );
}

/**
 * The key a test callback is signed with: `accessKey` when given and not deleted, else the key in
 * effect (`keyInEffect`, as for order callbacks); undefined when there is none.
 */
export function testSigningKey(
  db: ReadDb,
  merchantId: string,
  accessKey: string | undefined,
  now: number,
): Promise<{ access_key: string } | undefined> {
  if (accessKey === undefined) return keyInEffect(db, merchantId, now);
  return db
    .selectFrom('api_keys')
    .select('access_key')
    .where('merchant_id', '=', merchantId)
    .where('access_key', '=', accessKey)
    .where('status', '!=', 'deleted')
    .executeTakeFirst();
}

export async function insertTest(db: Db, row: CallbackTestRow): Promise<void> {
  await db.insertInto('callback_tests').values(row).execute();
}

export function findTest(db: ReadDb, id: string): Promise<CallbackTestRow | undefined> {
  return db.selectFrom('callback_tests').selectAll().where('id', '=', id).executeTakeFirst();
}

/** An attempt with what the merchant's log shows of its event. */
export interface MerchantAttemptRow extends CallbackAttemptRow {
  order_id: string;
  order_kind: string;
  trigger: CallbackEventRow['trigger'];
  notify_id: string;
  /** The event's state, its attempts so far and its next retry (while pending): the outbox's schedule. */
  event_state: CallbackEventState;
  event_attempts: number;
  next_attempt_at: number | null;
}

/** The merchant's orders with this externalOrderId (one per kind at most). */
export async function ordersWithExternalId(db: ReadDb, merchantId: string, externalOrderId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('orders')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .where('external_order_id', '=', externalOrderId)
    .execute();
  return rows.map((r) => r.id);
}

/** Filters of the merchant's callback log; times are Unix ms, `to` exclusive. */
export interface MerchantLogFilter {
  failedOnly?: boolean;
  /** Only this order (with `orderIds` too: only if it is one of them). */
  orderId?: string | undefined;
  /** Only these orders (an order ID, or the orders of an externalOrderId); empty matches nothing. */
  orderIds?: readonly string[] | undefined;
  /** Only events of these order kinds (the callback's event: payment, transfer, …). */
  orderKinds?: readonly string[] | undefined;
  from?: number | undefined;
  to?: number | undefined;
  /** Keyset: only attempts older than this one (started_at, then id). */
  before?: { startedAt: number; id: string } | undefined;
}

/** The orders a filter narrows to (its orderId within its orderIds), or undefined for every order. */
function orderScope(filter: Pick<MerchantLogFilter, 'orderId' | 'orderIds'>): readonly string[] | undefined {
  const { orderId, orderIds } = filter;
  if (orderId === undefined) return orderIds;
  return orderIds === undefined || orderIds.includes(orderId) ? [orderId] : [];
}

function attemptsWithEvents(db: ReadDb) {
  return db.selectFrom('callback_attempts as a').innerJoin('callback_events as e', 'e.id', 'a.event_id');
}

/**
 * The attempts of a few orders' events, found from those events (through callback_events_order_idx):
 * the CTE and the cross join keep a planner from walking the merchant's whole log newest first.
 */
function attemptsOfOrders(db: ReadDb, orderIds: readonly string[]): ReturnType<typeof attemptsWithEvents> {
  return db
    .with(
      (cte) => cte('e').materialized(),
      (d) =>
        d
          .selectFrom('callback_events')
          .selectAll()
          .where('order_id', 'in', orderIds.length === 0 ? [''] : [...orderIds]),
    )
    .selectFrom('e')
    .crossJoin('callback_attempts as a')
    .whereRef('a.event_id', '=', 'e.id');
}

/** The merchant's callback attempts across orders, newest first. */
export function attemptsOfMerchant(
  db: ReadDb,
  merchantId: string,
  filter: MerchantLogFilter,
  limit: number,
): Promise<MerchantAttemptRow[]> {
  const { orderKinds, from, to, before } = filter;
  const orderIds = orderScope(filter);
  return (orderIds === undefined ? attemptsWithEvents(db) : attemptsOfOrders(db, orderIds))
    .select([
      'a.id',
      'a.event_id',
      'a.merchant_id',
      'a.attempt_no',
      'a.url',
      'a.started_at',
      'a.latency_ms',
      'a.http_status',
      'a.outcome',
      'a.error',
      'a.response_excerpt',
      'e.order_id',
      'e.order_kind',
      'e.trigger',
      'e.notify_id',
      'e.state as event_state',
      'e.attempts as event_attempts',
      'e.next_attempt_at',
    ])
    .where('a.merchant_id', '=', merchantId)
    .$if(orderKinds !== undefined, (qb) => qb.where('e.order_kind', 'in', [...(orderKinds ?? [])]))
    .$if(filter.failedOnly === true, (qb) => qb.where('a.outcome', '!=', 'delivered'))
    .$if(from !== undefined, (qb) => qb.where('a.started_at', '>=', from ?? 0))
    .$if(to !== undefined, (qb) => qb.where('a.started_at', '<', to ?? 0))
    .$if(before !== undefined, (qb) =>
      qb.where((eb) =>
        eb.or([
          eb('a.started_at', '<', before?.startedAt ?? 0),
          eb.and([eb('a.started_at', '=', before?.startedAt ?? 0), eb('a.id', '<', before?.id ?? '')]),
        ]),
      ),
    )
    .orderBy('a.started_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(limit)
    .execute();
}

/** The merchant's events that had nowhere to go (no notifyUrl, no unified address): how many, and the newest. */
export async function noTargetEventsOfMerchant(
  db: ReadDb,
  merchantId: string,
  filter: Pick<MerchantLogFilter, 'orderId' | 'orderIds' | 'orderKinds' | 'from' | 'to'>,
  limit: number,
): Promise<{ count: number; rows: CallbackEventRow[] }> {
  const { orderKinds, from, to } = filter;
  const orderIds = orderScope(filter);
  const base = db
    .selectFrom('callback_events')
    .where('merchant_id', '=', merchantId)
    .where('state', '=', 'no_target')
    .$if(orderIds !== undefined, (qb) =>
      qb.where('order_id', 'in', orderIds === undefined || orderIds.length === 0 ? [''] : [...orderIds]),
    )
    .$if(orderKinds !== undefined, (qb) => qb.where('order_kind', 'in', [...(orderKinds ?? [])]))
    .$if(from !== undefined, (qb) => qb.where('created_at', '>=', from ?? 0))
    .$if(to !== undefined, (qb) => qb.where('created_at', '<', to ?? 0));
  const counted = await base.select((eb) => eb.fn.countAll<number | string>().as('count')).executeTakeFirst();
  const rows = await base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return { count: Number(counted?.count ?? 0), rows };
}

/**
 * The orders (test callbacks included) with a failed event created in [from, to), newest first, one
 * per order. An order whose failed event was followed by a delivered or still running one is left out.
 */
export async function ordersWithFailedEvents(
  db: ReadDb,
  merchantId: string,
  range: { from: number; to: number },
  limit: number,
  filter: Pick<MerchantLogFilter, 'orderIds' | 'orderKinds'> = {},
): Promise<string[]> {
  const rows = await stillFailedEvents(db, merchantId, range, filter)
    .select('e.order_id')
    .select((eb) => eb.fn.max('e.created_at').as('latest'))
    .groupBy('e.order_id')
    .orderBy('latest', 'desc')
    .orderBy('e.order_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.order_id);
}

/**
 * How many orders (test callbacks included) have a failed event created in [from, to) that nothing
 * delivered or still running followed: the orders a bulk re-trigger of those days would send again.
 */
export async function countOrdersWithFailedEvents(
  db: ReadDb,
  merchantId: string,
  range: { from: number; to: number },
): Promise<number> {
  const row = await stillFailedEvents(db, merchantId, range, {})
    .select(sql<number | string>`count(distinct e.order_id)`.as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The failed events of failedEvents that no delivered or still running event of their order followed. */
function stillFailedEvents(
  db: ReadDb,
  merchantId: string,
  range: { from: number; to: number },
  filter: Pick<MerchantLogFilter, 'orderIds' | 'orderKinds'>,
) {
  return failedEvents(db, merchantId, range, filter).where((eb) =>
    eb.not(
      eb.exists(
        eb
          .selectFrom('callback_events as later')
          .select('later.id')
          .whereRef('later.order_id', '=', 'e.order_id')
          .whereRef('later.created_at', '>', 'e.created_at')
          .where('later.state', 'in', ['delivered', 'pending', 'delivering']),
      ),
    ),
  );
}

/** The merchant's events that failed for good, created in [from, to), narrowed by the filter. */
function failedEvents(
  db: ReadDb,
  merchantId: string,
  range: { from: number; to: number },
  filter: Pick<MerchantLogFilter, 'orderIds' | 'orderKinds'>,
) {
  const { orderIds, orderKinds } = filter;
  return db
    .selectFrom('callback_events as e')
    .where('e.merchant_id', '=', merchantId)
    .where('e.state', '=', 'failed')
    .where('e.created_at', '>=', range.from)
    .where('e.created_at', '<', range.to)
    .$if(orderIds !== undefined, (qb) =>
      qb.where('e.order_id', 'in', orderIds === undefined || orderIds.length === 0 ? [''] : [...orderIds]),
    )
    .$if(orderKinds !== undefined, (qb) => qb.where('e.order_kind', 'in', [...(orderKinds ?? [])]));
}

/**
 * How many events failed for good in [from, to) under the filter, whatever came after them: with
 * ordersWithFailedEvents it tells why a bulk re-trigger found nothing.
 */
export async function countFailedEvents(
  db: ReadDb,
  merchantId: string,
  range: { from: number; to: number },
  filter: Pick<MerchantLogFilter, 'orderIds' | 'orderKinds'> = {},
): Promise<number> {
  const row = await failedEvents(db, merchantId, range, filter)
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
