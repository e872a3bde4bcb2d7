/**
 * The console's queries. The reads of its pages: the order search with its totals, the overview's
 * figures, an order's events and ledger entries, and the ledger statement of one currency; every
 * one is scoped to one merchant and uses an existing index (orders_merchant_time,
 * orders_merchant_status_time, the primary key and the externalOrderId key of orders,
 * callback_events_merchant_state_time,
 * ledger_journals_order_idx, ledger_entries_account_idx). A search by a part of a text (or the
 * different amount) reads the merchant's orders in the index's order (newest first), a chunk at a
 * time, until a page is full; totals read the index alone, a day at a time. And
 * the statements of its accounts: console users, their sessions and the failed sign-ins the rate
 * limit counts. And the request log of debug-mode keys. Each works on SQLite and PostgreSQL alike.
 */
import {
  PostgresAdapter,
  sql,
  type Expression,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';
import type { MerchantAccountKind } from '../ledger/ledger.js';
import { fromDb, type Currency, type Minor } from '../money.js';
import type { OrderRow } from '../orders/queries.js';
import { COLLECTION_STATUS, EXCHANGE_STATUS, isFinal, TRANSFER_STATUS } from '../orders/state-machine.js';
import type { DialectName } from '../store/dialects.js';
import type {
  ConsoleSessionTable,
  ConsoleSignInFailureTable,
  ConsoleUserTable,
  Database,
  OrderArea,
  OrderKind,
  RequestLogTable,
} from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

/** Reads take a `ReadDb` (Store.read, or a transaction); writes a `Db`: the transaction of Store.transact. */
type Db = Kysely<Database>;

/** The merchant accounts a statement covers, in the order it shows them. */
export const STATEMENT_ACCOUNTS: readonly MerchantAccountKind[] = ['available', 'frozen', 'awaiting_settlement'];

/** A position in a newest-first list: the last row shown. */
export interface OrderCursor {
  createdAt: number;
  id: string;
}

/** Orders of one kind in one of these statuses. */
export interface StatusMatch {
  kinds: readonly OrderKind[];
  statuses: readonly number[];
}

export interface OrderSearch {
  merchantId: string;
  /**
   * An exact orderId or externalOrderId (those orders only, found by their keys); else a part of
   * the externalOrderId (any case), or of the payer's (a payout's payee's) phone or document.
   */
  q?: string | undefined;
  area?: OrderArea | undefined;
  kind?: OrderKind | undefined;
  /** One status number, whatever the kind. */
  status?: number | undefined;
  /** Any of these (kinds, statuses) pairs. */
  statuses?: readonly StatusMatch[] | undefined;
  /** Only collections paid with an amount other than the order's (markStatus 1). */
  differentAmount?: boolean | undefined;
  /** created_at ≥ from (ms). */
  from?: number | undefined;
  /** created_at < until (ms). */
  until?: number | undefined;
  /** Rows older than this one only (keyset paging). */
  before?: OrderCursor | undefined;
  limit: number;
}

/** The status each kind ends in when it worked. */
export const SUCCESS_STATUS: Readonly<Record<OrderKind, number>> = {
  collection: COLLECTION_STATUS.paid,
  transfer: TRANSFER_STATUS.succeeded,
  fiat_to_token: EXCHANGE_STATUS.complete,
  token_to_fiat: EXCHANGE_STATUS.complete,
};

const KINDS: readonly OrderKind[] = ['collection', 'transfer', 'fiat_to_token', 'token_to_fiat'];

/** Every status of each kind, from the state machine's constants. */
export const KIND_STATUSES: Readonly<Record<OrderKind, readonly number[]>> = {
  collection: Object.values(COLLECTION_STATUS),
  transfer: Object.values(TRANSFER_STATUS),
  fiat_to_token: Object.values(EXCHANGE_STATUS),
  token_to_fiat: Object.values(EXCHANGE_STATUS),
};

/** The orders that worked: each kind in its success status. */
export const SUCCEEDED: readonly StatusMatch[] = KINDS.map((kind) => ({
  kinds: [kind],
  statuses: [SUCCESS_STATUS[kind]],
}));
/** The orders that ended otherwise (expired, cancelled, rejected, failed). */
export const UNSUCCESSFUL: readonly StatusMatch[] = KINDS.map((kind) => ({
  kinds: [kind],
  statuses: KIND_STATUSES[kind].filter((s) => isFinal(kind, s) && s !== SUCCESS_STATUS[kind]),
}));
/** The orders still open. */
export const IN_PROGRESS: readonly StatusMatch[] = KINDS.map((kind) => ({
  kinds: [kind],
  statuses: KIND_STATUSES[kind].filter((s) => !isFinal(kind, s)),
}));

/** The details members that hold a payer's (or a payout's payee's) phone or document, in canonical form. */
const PARTY_FIELDS = ['phone', 'checkingPhone', 'mpesaPhone', 'personId', 'payerDocument'] as const;

/** Which database a connection reads: the two read JSON each their own way. */
function dialectOf(db: ReadDb): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** A details member as text (null when absent), as each database reads JSON. */
function detailsText(dialect: DialectName, member: string): RawBuilder<string | null> {
  return dialect === 'postgres'
    ? sql<string | null>`(cast(details as jsonb) ->> ${sql.lit(member)})`
    : sql<string | null>`json_extract(details, ${sql.lit(`$.${member}`)})`;
}

/** `%text%` for LIKE, with the user's %, _ and \ taken literally (ESCAPE '\'). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * What a phone or document typed with its punctuation (+254 712-345, 529.982.247-25) is stored as:
 * digits and capitals only; a Kenyan number typed in its local form (07…, 01…) also as 2547…, 2541….
 */
export function partyTerms(q: string): string[] {
  const compact = q.replace(/[\s.\-/()+]/g, '').toUpperCase();
  if (!/^[0-9A-Z]+$/.test(compact)) return [];
  return /^0[17]\d*$/.test(compact) ? [compact, `254${compact.slice(1)}`] : [compact];
}

const like = (value: Expression<unknown>, pattern: string) => sql<SqlBool>`${value} like ${pattern} escape '\\'`;

/** The search text as a part: of the externalOrderId, or of a party's phone or document. */
function matchesText(dialect: DialectName, q: string): Expression<SqlBool> {
  const alternatives: Expression<SqlBool>[] = [like(sql`lower(external_order_id)`, containsPattern(q.toLowerCase()))];
  for (const term of partyTerms(q)) {
    const pattern = containsPattern(term);
    for (const member of PARTY_FIELDS) alternatives.push(like(detailsText(dialect, member), pattern));
    // The payer's document, unless Cashgate generated it (an aggregate cashier without userIdentity): that one is no one's.
    alternatives.push(
      sql<SqlBool>`(${like(detailsText(dialect, 'userInfoNo'), pattern)} and coalesce(${detailsText(dialect, 'documentSource')}, '') <> 'generated')`,
    );
  }
  return sql<SqlBool>`(${sql.join(alternatives, sql` or `)})`;
}

/** Orders in one of the (kinds, statuses) pairs. */
function inStatuses(matches: readonly StatusMatch[]): Expression<SqlBool> {
  const parts = matches
    .filter((m) => m.kinds.length > 0 && m.statuses.length > 0)
    .map(
      (m) =>
        sql<SqlBool>`(kind in (${sql.join(m.kinds.map((k) => sql.lit(k)))}) and status in (${sql.join(m.statuses.map((s) => sql.lit(s)))}))`,
    );
  return parts.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`(${sql.join(parts, sql` or `)})`;
}

/** Whether a details member is JSON true, as each database reads JSON. */
function detailsTrue(dialect: DialectName, member: string): RawBuilder<SqlBool> {
  return dialect === 'postgres'
    ? sql<SqlBool>`((cast(details as jsonb) -> ${sql.lit(member)}) = 'true'::jsonb)`
    : sql<SqlBool>`(json_type(details, ${sql.lit(`$.${member}`)}) = 'true')`;
}

/**
 * A collection paid with another amount than asked: markStatus 1, by the rule of
 * collectionMarkStatus (src/orders/records.ts): another actual amount, or a token payment of other
 * units (details.amountDiffers).
 */
function paidDifferentAmount(dialect: DialectName): Expression<SqlBool> {
  return sql<SqlBool>`(kind = 'collection' and actual_amount is not null and (actual_amount <> amount or ${detailsTrue(dialect, 'amountDiffers')}))`;
}

const AREAS: readonly OrderArea[] = ['ken', 'bra', 'exchange', 'cashier'];

/**
 * The orders an exact orderId or externalOrderId names (a handful at most), found through the
 * primary key and the externalOrderId key before any other filter: with the merchant's history
 * beside it, a planner would otherwise walk that history newest first looking for them.
 */
function ordersNamed(db: ReadDb, merchantId: string, q: string): SelectQueryBuilder<Database, 'orders', object> {
  // The CTE has the orders table's columns under its name: the search's filters apply to it alike.
  return db
    .with(
      (cte) => cte('named').materialized(),
      (d) =>
        d
          .selectFrom('orders')
          .selectAll()
          .where('id', '=', q)
          .where('merchant_id', '=', merchantId)
          .unionAll(
            d
              .selectFrom('orders')
              .selectAll()
              .where('merchant_id', '=', merchantId)
              .where('area', 'in', AREAS)
              .where('kind', 'in', KINDS)
              .where('external_order_id', '=', q)
              .where('id', '!=', q),
          ),
    )
    .selectFrom('named as orders');
}

type OrdersQuery = SelectQueryBuilder<Database, 'orders', object>;

/**
 * The search's filters but its days: those orders_merchant_time holds the columns of, so that its
 * walk checks them without reading an order.
 */
function indexedFilters(query: OrdersQuery, s: OrderSearch): OrdersQuery {
  let q = query.where('merchant_id', '=', s.merchantId);
  if (s.area !== undefined) q = q.where('area', '=', s.area);
  if (s.kind !== undefined) q = q.where('kind', '=', s.kind);
  if (s.status !== undefined) q = q.where('status', '=', s.status);
  if (s.statuses !== undefined) q = q.where(inStatuses(s.statuses));
  return q;
}

/** The orders a search reads, whatever their days: with every filter, and with the index's alone when they differ. */
interface SearchScan {
  matching: OrdersQuery;
  /**
   * The filters the index answers, when the search also has one it cannot (a part of a text, the
   * different amount): such a search reads orders a chunk at a time. Undefined otherwise.
   */
  indexed: OrdersQuery | undefined;
}

/**
 * The merchant's orders that pass the search's filters, without its days or paging. A text that
 * names orders exactly (their orderId or externalOrderId) finds those only, through their keys; any
 * other text is looked for as a part, which reads the merchant's orders newest first.
 */
async function searchScan(db: ReadDb, s: OrderSearch): Promise<SearchScan> {
  const q = s.q;
  const differs = s.differentAmount === true ? paidDifferentAmount(dialectOf(db)) : undefined;
  const withDiffers = (query: OrdersQuery) => (differs === undefined ? query : query.where(differs));
  if (q !== undefined && q !== '') {
    const named = await ordersNamed(db, s.merchantId, q).select('id').limit(1).execute();
    // A handful of orders, found through their keys: read whole.
    if (named.length > 0)
      return { matching: withDiffers(indexedFilters(ordersNamed(db, s.merchantId, q), s)), indexed: undefined };
  }
  const indexed = indexedFilters(db.selectFrom('orders'), s);
  const text = q === undefined || q === '' ? undefined : matchesText(dialectOf(db), q);
  if (text === undefined && differs === undefined) return { matching: indexed, indexed: undefined };
  return { matching: withDiffers(text === undefined ? indexed : indexed.where(text)), indexed };
}

/** A stretch of the newest-first order: from `lower` (included) to `upper` (left out); open where undefined. */
interface Span {
  lower: OrderCursor | undefined;
  upper: OrderCursor | undefined;
}

/** A moment's first position: before every order created then ('' sorts before every id). */
const at = (createdAt: number): OrderCursor => ({ createdAt, id: '' });

/** The search's days and its cursor as one span: the cursor, or the end of the days when the cursor is past them. */
function spanOf(s: OrderSearch): Span {
  const { before, until } = s;
  return {
    lower: s.from === undefined ? undefined : at(s.from),
    upper:
      before !== undefined && (until === undefined || before.createdAt < until)
        ? before
        : until === undefined
          ? undefined
          : at(until),
  };
}

/**
 * The orders of the span, its ends as row values ((created_at, id) ≥ …, < …): both databases seek
 * the index to them. One end as a plain created_at and the other as a row value, SQLite seeks by
 * the plain one and walks from there.
 */
function within(query: OrdersQuery, { lower, upper }: Span): OrdersQuery {
  let q = query;
  if (lower !== undefined)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>=', eb.tuple(lower.createdAt, lower.id)));
  if (upper !== undefined)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(upper.createdAt, upper.id)));
  return q;
}

const newestFirst = (query: OrdersQuery, span: Span): OrdersQuery =>
  within(query, span).orderBy('created_at', 'desc').orderBy('id', 'desc');

/**
 * How many orders, of those the index's filters match, a search that reads each order's row reads
 * at a time on SQLite (a few milliseconds at most), after which the event loop is let go before the
 * next chunk: SQLite reads on it, and a rare text over a long history must not hold every other
 * request. PostgreSQL's reads do not hold the event loop: such a search is one statement there.
 */
const ROW_CHUNK = 500;

/** The merchant's orders matching the search, newest first (`chunk`: orders read at a time, undefined for all at once). */
export async function searchOrders(
  db: ReadDb,
  s: OrderSearch,
  chunk: number | undefined = dialectOf(db) === 'sqlite' ? ROW_CHUNK : undefined,
): Promise<OrderRow[]> {
  const { matching, indexed } = await searchScan(db, s);
  let span = spanOf(s);
  if (indexed === undefined || chunk === undefined)
    return newestFirst(matching, span).selectAll().limit(s.limit).execute();
  const found: OrderRow[] = [];
  for (;;) {
    // The oldest order of the next chunk, from the index alone: this chunk reads none older.
    const edge = await newestFirst(indexed, span)
      .select(['created_at', 'id'])
      .limit(1)
      .offset(chunk - 1)
      .executeTakeFirst();
    const last = edge === undefined ? undefined : { createdAt: edge.created_at, id: edge.id };
    const read = newestFirst(matching, last === undefined ? span : { ...span, lower: last });
    found.push(
      ...(await read
        .selectAll()
        .limit(s.limit - found.length)
        .execute()),
    );
    if (found.length >= s.limit || last === undefined) return found;
    span = { ...span, upper: last };
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The totals of one currency over every order the search matches in its days (not one page). */
export interface OrderTotals {
  currency: string;
  count: number;
  /** The orders' amounts. */
  amount: Minor;
  /** What was paid or paid out, over the orders that have an actual amount. */
  actual: Minor;
}

/** The most days the totals sum over in one request: a month, whatever the merchant's volume. */
export const TOTALS_MAX_DAYS = 31;

const DAY_MS = 86_400_000;

/**
 * Per currency: how many orders match the search within [from, until), and their amounts summed in
 * the database (integer minor units). Read from orders_merchant_time alone (it holds every column
 * the filters other than a text or the different-amount one read). On SQLite one UTC day at a time,
 * the event loop let go between days: SQLite reads on it, and a long range must not hold every other
 * request; on PostgreSQL in one statement.
 */
export async function orderTotals(
  db: ReadDb,
  s: OrderSearch & { from: number; until: number },
): Promise<OrderTotals[]> {
  const { matching } = await searchScan(db, s);
  const sums = new Map<string, OrderTotals>();
  const step = dialectOf(db) === 'sqlite' ? DAY_MS : s.until - s.from;
  for (let day = s.from; day < s.until; day += step) {
    if (day > s.from) await new Promise((resolve) => setImmediate(resolve));
    // Plain bounds (the range holds whole moments): PostgreSQL estimates them from its statistics.
    const rows = await matching
      .where('created_at', '>=', day)
      .where('created_at', '<', Math.min(day + step, s.until))
      .select((eb) => [
        'currency',
        eb.fn.countAll<number | string>().as('n'),
        eb.fn.sum<number | string | null>('amount').as('amount'),
        eb.fn.sum<number | string | null>('actual_amount').as('actual'),
      ])
      .groupBy('currency')
      .execute();
    for (const r of rows) {
      const sum = sums.get(r.currency) ?? { currency: r.currency, count: 0, amount: 0n, actual: 0n };
      sum.count += Number(r.n);
      sum.amount += fromDb(r.amount);
      sum.actual += fromDb(r.actual);
      sums.set(r.currency, sum);
    }
  }
  return [...sums.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

/** One group of the overview: orders of an area and kind in one currency, created on one day of the range. */
export interface OverviewFigure {
  area: string;
  kind: string;
  currency: string;
  /** Days since the range's start (0 = its first day). */
  day: number;
  count: number;
  succeeded: number;
  /** Orders that ended otherwise (expired, cancelled, rejected, failed); open ones are in neither. */
  unsuccessful: number;
  differentAmount: number;
  /** What the orders that succeeded moved: the amount paid for a collection, the order's amount otherwise. */
  volume: Minor;
}

const flag = (condition: Expression<SqlBool>) => sql<number>`case when ${condition} then 1 else 0 end`;

/**
 * The overview's figures over [from, until) (whole days of `dayMs`): per area, kind, currency and
 * day, how many orders were created, how many succeeded or ended otherwise, how many were paid a
 * different amount, and the volume of those that succeeded, summed in the database in minor units.
 */
export async function overviewFigures(
  db: ReadDb,
  merchantId: string,
  range: { from: number; until: number; dayMs: number },
): Promise<OverviewFigure[]> {
  const day = sql<number>`(created_at - ${sql.lit(range.from)}) / ${sql.lit(range.dayMs)}`;
  const succeeded = inStatuses(SUCCEEDED);
  const rows = await db
    .selectFrom('orders')
    .select((eb) => [
      'area',
      'kind',
      'currency',
      day.as('day'),
      eb.fn.countAll<number | string>().as('n'),
      eb.fn.sum<number | string | null>(flag(succeeded)).as('succeeded'),
      eb.fn.sum<number | string | null>(flag(inStatuses(UNSUCCESSFUL))).as('unsuccessful'),
      eb.fn.sum<number | string | null>(flag(paidDifferentAmount(dialectOf(db)))).as('differs'),
      eb.fn
        .sum<number | string | null>(
          sql`case when ${succeeded} then (case when kind = 'collection' then coalesce(actual_amount, amount) else amount end) else 0 end`,
        )
        .as('volume'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', range.from)
    .where('created_at', '<', range.until)
    .groupBy(['area', 'kind', 'currency', day])
    .execute();
  return rows.map((r) => ({
    area: r.area,
    kind: r.kind,
    currency: r.currency,
    day: r.day,
    count: Number(r.n),
    succeeded: Number(r.succeeded ?? 0),
    unsuccessful: Number(r.unsuccessful ?? 0),
    differentAmount: Number(r.differs ?? 0),
    volume: fromDb(r.volume),
  }));
}

/**
 * Whether any Pix paid for one of the merchant's orders was not credited (returned, or being): read
 * from the uncredited Pix (the partial index pix_received_uncredited: a few), each one's order found
 * by its key. Joined the other way round, SQLite walked every order of the merchant, on every view
 * of the orders list that asks.
 */
export async function merchantHasUncreditedPix(db: ReadDb, merchantId: string): Promise<boolean> {
  const found = await db
    .selectFrom('pix_received as p')
    .select('p.e2eid')
    .where('p.disposition', '<>', 'credited')
    .where((eb) =>
      eb(eb.selectFrom('orders as o').select('o.merchant_id').whereRef('o.id', '=', 'p.order_id'), '=', merchantId),
    )
    .orderBy('p.created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}

/** One of the merchant's orders; undefined for an unknown id or another merchant's order. */
export function merchantOrder(db: ReadDb, merchantId: string, orderId: string): Promise<OrderRow | undefined> {
  return db
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', orderId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** A ledger entry with its journal. */
export interface EntryView {
  entryId: string;
  journalId: string;
  journalKind: string;
  orderId: string | null;
  accountCode: string;
  /** The account's kind: the last part of its code. */
  account: string;
  amount: Minor;
  currency: string;
  memo: string | null;
  createdAt: number;
}

function entryBase(db: ReadDb) {
  return db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_journals as j', 'j.id', 'e.journal_id')
    .select([
      'e.id as entry_id',
      'e.journal_id as journal_id',
      'j.kind as journal_kind',
      'j.order_id as order_id',
      'e.account_code as account_code',
      'e.amount as amount',
      'e.currency as currency',
      'j.memo as memo',
      'e.created_at as created_at',
    ]);
}

type EntryRow = {
  entry_id: string;
  journal_id: string;
  journal_kind: string;
  order_id: string | null;
  account_code: string;
  amount: number | string;
  currency: string;
  memo: string | null;
  created_at: number | string;
};

function toEntry(row: EntryRow): EntryView {
  return {
    entryId: row.entry_id,
    journalId: row.journal_id,
    journalKind: row.journal_kind,
    orderId: row.order_id,
    accountCode: row.account_code,
    account: row.account_code.split('/').at(-1) ?? row.account_code,
    amount: fromDb(row.amount),
    currency: row.currency,
    memo: row.memo,
    createdAt: Number(row.created_at),
  };
}

/** The merchant's ledger entries of one order's journals, oldest first. */
export async function orderEntries(db: ReadDb, merchantId: string, orderId: string): Promise<EntryView[]> {
  const rows = await entryBase(db)
    .where('j.order_id', '=', orderId)
    .where('e.merchant_id', '=', merchantId)
    .orderBy('e.created_at')
    .orderBy('e.id')
    .execute();
  return rows.map(toEntry);
}

/** The codes of the merchant's three accounts in a currency. */
export function statementCodes(merchantId: string, currency: Currency): string[] {
  return STATEMENT_ACCOUNTS.map((kind) => `${merchantId}/${currency}/${kind}`);
}

export interface StatementRange {
  merchantId: string;
  currency: Currency;
  /** Inclusive, ms. */
  from: number;
  /** Exclusive, ms. */
  until: number;
}

/** Per account kind: the sum of its entries before `from`, and within [from, until). */
export async function statementTotals(
  db: ReadDb,
  r: StatementRange,
): Promise<Map<string, { opening: Minor; period: Minor }>> {
  const codes = statementCodes(r.merchantId, r.currency);
  const sums = (lower: number | undefined, upper: number) => {
    let query = db
      .selectFrom('ledger_entries')
      .select((eb) => ['account_code', eb.fn.sum<number | string | null>('amount').as('total')])
      .where('account_code', 'in', codes)
      .where('created_at', '<', upper);
    if (lower !== undefined) query = query.where('created_at', '>=', lower);
    return query.groupBy('account_code').execute();
  };
  const [opening, period] = await Promise.all([sums(undefined, r.from), sums(r.from, r.until)]);
  const result = new Map<string, { opening: Minor; period: Minor }>();
  for (const kind of STATEMENT_ACCOUNTS) result.set(kind, { opening: 0n, period: 0n });
  const kindOf = (code: string) => code.split('/').at(-1) ?? code;
  for (const row of opening) {
    const entry = result.get(kindOf(row.account_code));
    if (entry !== undefined) entry.opening = fromDb(row.total);
  }
  for (const row of period) {
    const entry = result.get(kindOf(row.account_code));
    if (entry !== undefined) entry.period = fromDb(row.total);
  }
  return result;
}

/** How many entries the statement range holds. */
export async function statementCount(db: ReadDb, r: StatementRange): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_code', 'in', statementCodes(r.merchantId, r.currency))
    .where('created_at', '>=', r.from)
    .where('created_at', '<', r.until)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The range's entries, oldest first, after `after` (keyset paging), at most `limit`. */
export async function statementEntries(
  db: ReadDb,
  r: StatementRange,
  limit: number,
  after?: { createdAt: number; entryId: string },
): Promise<EntryView[]> {
  let query = entryBase(db)
    .where('e.account_code', 'in', statementCodes(r.merchantId, r.currency))
    .where('e.created_at', '>=', r.from)
    .where('e.created_at', '<', r.until);
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('e.created_at', '>', after.createdAt),
        eb.and([eb('e.created_at', '=', after.createdAt), eb('e.id', '>', after.entryId)]),
      ]),
    );
  }
  const rows = await query.orderBy('e.created_at').orderBy('e.id').limit(limit).execute();
  return rows.map(toEntry);
}

export type ConsoleUserRow = Selectable<ConsoleUserTable>;
export type ConsoleSessionRow = Selectable<ConsoleSessionTable>;
export type SignInFailureRow = Selectable<ConsoleSignInFailureTable>;

/** A session with its user: the user's columns and the session's own. */
export type SessionWithUser = ConsoleUserRow &
  Pick<ConsoleSessionRow, 'stage' | 'csrf_token' | 'totp_pending_sealed' | 'last_seen_at' | 'expires_at'>;

/** The merchant a new console user joins, with the language the user starts in. */
export function findMerchantLanguage(
  db: ReadDb,
  merchantId: string,
): Promise<{ id: string; language: string } | undefined> {
  return db.selectFrom('merchants').select(['id', 'language']).where('id', '=', merchantId).executeTakeFirst();
}

export async function merchantExists(db: ReadDb, merchantId: string): Promise<boolean> {
  const row = await db.selectFrom('merchants').select('id').where('id', '=', merchantId).executeTakeFirst();
  return row !== undefined;
}

/** Whether a console user already has the (lower-cased) e-mail address. */
export async function emailTaken(db: ReadDb, email: string): Promise<boolean> {
  const row = await db.selectFrom('console_users').select('id').where('email', '=', email).executeTakeFirst();
  return row !== undefined;
}

export async function insertUser(db: Db, row: ConsoleUserRow): Promise<void> {
  await db.insertInto('console_users').values(row).execute();
}

/** The merchant's console users, oldest first. */
export function usersOfMerchant(db: ReadDb, merchantId: string): Promise<ConsoleUserRow[]> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .execute();
}

/** The user of a (lower-cased) e-mail address. */
export function findUserByEmail(db: ReadDb, email: string): Promise<ConsoleUserRow | undefined> {
  return db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
}

/** One of the merchant's users; undefined for an unknown id or another merchant's user. */
export function findMerchantUser(db: ReadDb, merchantId: string, userId: string): Promise<ConsoleUserRow | undefined> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('id', '=', userId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** A user known to exist (the user of a session); throws when there is none. */
export function getUser(db: ReadDb, userId: string): Promise<ConsoleUserRow> {
  return db.selectFrom('console_users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
}

/** The password hash of a user known to exist; throws when there is none. */
export async function userPasswordHash(db: ReadDb, userId: string): Promise<string> {
  const row = await db
    .selectFrom('console_users')
    .select('password_hash')
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return row.password_hash;
}

export async function setUserPassword(db: Db, userId: string, passwordHash: string, now: number): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

export async function setUserLanguage(db: Db, userId: string, language: string, now: number): Promise<void> {
  await db.updateTable('console_users').set({ language, updated_at: now }).where('id', '=', userId).execute();
}

/** Turns TOTP on: the sealed secret, and the step of the code that confirmed it as already used. */
export async function enableUserTotp(
  db: Db,
  userId: string,
  secretSealed: string,
  step: number,
  now: number,
): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ totp_secret_sealed: secretSealed, totp_last_step: step, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

export async function disableUserTotp(db: Db, userId: string, now: number): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ totp_secret_sealed: null, totp_last_step: null, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

/**
 * Records a TOTP time step as used, only while it is later than the last one used: true when it was
 * recorded, false when that step (or a later one) was taken already.
 */
export async function takeTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('console_users')
    .set({ totp_last_step: step })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteUserById(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('console_users').where('id', '=', userId).execute();
}

export async function insertSession(db: Db, row: ConsoleSessionRow): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** The session (its id is the hash of its token) with its user. */
export function findSessionWithUser(db: ReadDb, sessionId: string): Promise<SessionWithUser | undefined> {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select(['s.stage', 's.csrf_token', 's.totp_pending_sealed', 's.last_seen_at', 's.expires_at'])
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
}

/** Restarts the session's idle time. */
export async function touchSession(db: Db, sessionId: string, now: number): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: now }).where('id', '=', sessionId).execute();
}

/** Keeps a TOTP secret being enrolled (sealed) on the session, or drops it (null). */
export async function setSessionPendingTotp(db: Db, sessionId: string, sealed: string | null): Promise<void> {
  await db.updateTable('console_sessions').set({ totp_pending_sealed: sealed }).where('id', '=', sessionId).execute();
}

/** Keeps the sealed secret of a key just created on the session (replacing any before it). */
export async function setSessionCreatedKey(db: Db, sessionId: string, sealed: string): Promise<void> {
  await db.updateTable('console_sessions').set({ created_key_sealed: sealed }).where('id', '=', sessionId).execute();
}

/** Takes the sealed secret of a key just created off the session: once (undefined after). */
export async function takeSessionCreatedKey(db: Db, sessionId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('console_sessions')
    .select('created_key_sealed')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (row?.created_key_sealed == null) return undefined;
  const taken = await db
    .updateTable('console_sessions')
    .set({ created_key_sealed: null })
    .where('id', '=', sessionId)
    .where('created_key_sealed', '=', row.created_key_sealed)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1 ? row.created_key_sealed : undefined;
}

export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id', '=', sessionId).execute();
}

export async function deleteSessionsOfUser(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('user_id', '=', userId).execute();
}

/** Ends every session of the user but one. */
export async function deleteOtherSessionsOfUser(db: Db, userId: string, keptSessionId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('user_id', '=', userId).where('id', '!=', keptSessionId).execute();
}

/** Drops the sessions past their lifetime or idle since `idleSince`; returns how many. */
export async function deleteEndedSessions(db: Db, now: number, idleSince: number): Promise<number> {
  const result = await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function insertSignInFailures(db: Db, rows: SignInFailureRow[]): Promise<void> {
  await db.insertInto('console_sign_in_failures').values(rows).execute();
}

/** The failures of the subjects at or after `since`, newest first. */
export function recentSignInFailures(db: ReadDb, subjects: string[], since: number): Promise<SignInFailureRow[]> {
  return db
    .selectFrom('console_sign_in_failures')
    .select(['id', 'subject', 'at'])
    .where('subject', 'in', subjects)
    .where('at', '>=', since)
    .orderBy('at', 'desc')
    .execute();
}

/** Withdraws failures by id (the entries of an attempt that went on or was refused). */
export async function deleteSignInFailures(db: Db, ids: string[]): Promise<void> {
  await db.deleteFrom('console_sign_in_failures').where('id', 'in', ids).execute();
}

/** Forgives every failure of a subject (an e-mail address once its user is fully signed in). */
export async function deleteSignInFailuresOfSubject(db: Db, subject: string): Promise<void> {
  await db.deleteFrom('console_sign_in_failures').where('subject', '=', subject).execute();
}

/** Withdraws failures by id and forgives every failure of a subject, in one statement. */
export async function deleteSignInFailuresByIdOrSubject(db: Db, ids: string[], subject: string): Promise<void> {
  await db
    .deleteFrom('console_sign_in_failures')
    .where((eb) => eb.or([eb('id', 'in', ids), eb('subject', '=', subject)]))
    .execute();
}

/** Drops the failures older than `before`, which no longer count; returns how many. */
export async function deleteSignInFailuresBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('console_sign_in_failures').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export type RequestLogRow = Selectable<RequestLogTable>;

export interface RequestLogFilter {
  accessKey?: string | undefined;
  /** Only failures (any code but 200). */
  failedOnly?: boolean | undefined;
  /** Newest first, after this entry (paging: its time and request id). */
  before?: { at: number; requestId: string } | undefined;
  limit: number;
}

export async function insertRequestLogEntry(db: Db, row: RequestLogRow): Promise<void> {
  await db.insertInto('request_log').values(row).execute();
}

/** The merchant's request log entries that pass the filter, newest first. */
export function requestLogEntries(db: ReadDb, merchantId: string, filter: RequestLogFilter): Promise<RequestLogRow[]> {
  return db
    .selectFrom('request_log')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .$if(filter.accessKey !== undefined, (q) => q.where('access_key', '=', filter.accessKey ?? ''))
    .$if(filter.failedOnly === true, (q) => q.where('code', '!=', '200'))
    .$if(filter.before !== undefined, (q) => {
      const { at, requestId } = filter.before ?? { at: 0, requestId: '' };
      return q.where((eb) =>
        eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('request_id', '<', requestId)])]),
      );
    })
    .orderBy('created_at', 'desc')
    .orderBy('request_id', 'desc')
    .limit(filter.limit)
    .execute();
}

/** One request log entry of the merchant's; undefined when unknown or another merchant's. */
export function findRequestLogEntry(
  db: ReadDb,
  merchantId: string,
  requestId: string,
): Promise<RequestLogRow | undefined> {
  return db
    .selectFrom('request_log')
    .selectAll()
    .where('request_id', '=', requestId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** Drops the request log entries older than `before`; returns how many. */
export async function deleteRequestLogBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('request_log').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
