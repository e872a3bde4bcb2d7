/**
 * The console's read queries: the order search, an order's ledger entries, and the ledger statement
 * of one currency. Every query is scoped to one merchant and uses an existing index
 * (orders_merchant_idx, ledger_journals_order_idx, ledger_entries_account_idx); each works on SQLite
 * and PostgreSQL alike.
 */
import type { Kysely } from 'kysely';
import type { MerchantAccountKind } from '../ledger/ledger.js';
import { fromDb, type Currency, type Minor } from '../ledger/money.js';
import type { OrderRow } from '../orders/queries.js';
import type { Database, OrderArea, OrderKind } from '../store/schema.js';

type Db = Kysely<Database>;

/** The merchant accounts a statement covers, in the order it shows them. */
export const STATEMENT_ACCOUNTS: readonly MerchantAccountKind[] = ['available', 'frozen', 'awaiting_settlement'];

/** A position in a newest-first list: the last row shown. */
export interface OrderCursor {
  createdAt: number;
  id: string;
}

export interface OrderSearch {
  merchantId: string;
  /** An exact orderId or externalOrderId. */
  q?: string | undefined;
  area?: OrderArea | undefined;
  kind?: OrderKind | undefined;
  status?: number | undefined;
  /** created_at ≥ from (ms). */
  from?: number | undefined;
  /** created_at < until (ms). */
  until?: number | undefined;
  /** Rows older than this one only (keyset paging). */
  before?: OrderCursor | undefined;
  limit: number;
}

/** The merchant's orders matching the search, newest first. */
export function searchOrders(db: Db, s: OrderSearch): Promise<OrderRow[]> {
  let query = db.selectFrom('orders').selectAll().where('merchant_id', '=', s.merchantId);
  const q = s.q;
  if (q !== undefined && q !== '')
    query = query.where((eb) => eb.or([eb('id', '=', q), eb('external_order_id', '=', q)]));
  if (s.area !== undefined) query = query.where('area', '=', s.area);
  if (s.kind !== undefined) query = query.where('kind', '=', s.kind);
  if (s.status !== undefined) query = query.where('status', '=', s.status);
  if (s.from !== undefined) query = query.where('created_at', '>=', s.from);
  if (s.until !== undefined) query = query.where('created_at', '<', s.until);
  const before = s.before;
  if (before !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', before.createdAt),
        eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)]),
      ]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(s.limit).execute();
}

/** One of the merchant's orders; undefined for an unknown id or another merchant's order. */
export function merchantOrder(db: Db, merchantId: string, orderId: string): Promise<OrderRow | undefined> {
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

function entryBase(db: Db) {
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
export async function orderEntries(db: Db, merchantId: string, orderId: string): Promise<EntryView[]> {
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
  db: Db,
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
export async function statementCount(db: Db, r: StatementRange): Promise<number> {
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
  db: Db,
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
