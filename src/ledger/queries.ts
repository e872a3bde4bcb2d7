import { prepared } from '../store/prepared.js';
import type { ReadDb, Tx } from '../store/store.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type {
  BalanceAdjustmentRequestTable,
  Database,
  FeeScheduleTable,
  LedgerAccountTable,
  LedgerEntryTable,
  LedgerJournalTable,
  LedgerSettlementTable,
} from '../store/schema.js';

type Db = Kysely<Database>;

export type LedgerAccountRow = Selectable<LedgerAccountTable>;
export type LedgerSettlementRow = Selectable<LedgerSettlementTable>;
export type FeeScheduleRow = Selectable<FeeScheduleTable>;
export type LedgerJournalRow = Selectable<LedgerJournalTable>;
export type LedgerEntryRow = Selectable<LedgerEntryTable>;
/** A sum of minor units as the database returns it (a number on SQLite, text on PostgreSQL). */
export type DbSum = number | string;

export async function ensureAccounts(db: Db, rows: readonly LedgerAccountRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('ledger_accounts')
    .values([...rows])
    .onConflict((oc) => oc.column('code').doNothing())
    .execute();
}

/**
 * Adds `amount` to an account's balance; with `floor`, only when the balance stays at or above it.
 * Returns false when the floor refused the change (the row is locked either way until commit).
 */
export async function moveBalance(db: Db, code: string, amount: number, now: number, floor?: number): Promise<boolean> {
  const result = await db
    .updateTable('ledger_accounts')
    .set({ balance: sql<number>`balance + ${amount}`, updated_at: now })
    .where('code', '=', code)
    .$if(floor !== undefined, (qb) => qb.where(sql<number>`balance + ${amount}`, '>=', floor ?? 0))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function accountsOfMerchant(db: ReadDb, merchantId: string): Promise<LedgerAccountRow[]> {
  return db.selectFrom('ledger_accounts').selectAll().where('merchant_id', '=', merchantId).orderBy('code').execute();
}

export function findAccount(db: ReadDb, code: string): Promise<LedgerAccountRow | undefined> {
  return db.selectFrom('ledger_accounts').selectAll().where('code', '=', code).executeTakeFirst();
}

export async function insertSettlement(db: Db, row: LedgerSettlementRow): Promise<void> {
  await db.insertInto('ledger_settlements').values(row).execute();
}

/** Due settlements; other nodes skip the rows this one takes (PostgreSQL) or wait for the writer (SQLite). */
export function dueSettlements(
  db: ReadDb,
  postgres: boolean,
  now: number,
  limit: number,
): Promise<LedgerSettlementRow[]> {
  const query = db
    .selectFrom('ledger_settlements')
    .selectAll()
    .where('settled_at', 'is', null)
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .limit(limit);
  return (postgres ? query.forUpdate().skipLocked() : query).execute();
}

export async function markSettled(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('ledger_settlements').set({ settled_at: now }).where('id', '=', id).execute();
}

const feeScheduleOf = prepared((db, p: { merchantId: string; channel: string }) =>
  db.selectFrom('fee_schedules').selectAll().where('merchant_id', '=', p.merchantId).where('channel', '=', p.channel),
);

export async function feeSchedule(
  db: ReadDb,
  merchantId: string,
  channel: string,
): Promise<FeeScheduleRow | undefined> {
  return (await feeScheduleOf(db, { merchantId, channel })).rows[0];
}

export function feeSchedules(db: ReadDb, merchantId: string): Promise<FeeScheduleRow[]> {
  return db.selectFrom('fee_schedules').selectAll().where('merchant_id', '=', merchantId).orderBy('channel').execute();
}

export async function upsertFeeSchedule(db: Db, row: FeeScheduleRow): Promise<void> {
  await db
    .insertInto('fee_schedules')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'channel']).doUpdateSet({
        percent_bps: row.percent_bps,
        fixed_minor: row.fixed_minor,
        minimum_minor: row.minimum_minor,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function insertJournal(db: Db, row: LedgerJournalRow): Promise<void> {
  await db.insertInto('ledger_journals').values(row).execute();
}

export async function insertEntries(db: Db, rows: readonly LedgerEntryRow[]): Promise<void> {
  await db
    .insertInto('ledger_entries')
    .values([...rows])
    .execute();
}

/** The sum of all entries, per currency (audit: each is zero). */
export function entryTotalsByCurrency(db: ReadDb): Promise<{ currency: LedgerEntryRow['currency']; total: DbSum }[]> {
  return db
    .selectFrom('ledger_entries')
    .select(['currency', (eb) => eb.fn.sum<DbSum>('amount').as('total')])
    .groupBy('currency')
    .execute();
}

/** Journals whose entries do not sum to zero, with their sum (audit: none). */
export function unbalancedJournals(db: ReadDb): Promise<{ journal_id: string; total: DbSum }[]> {
  return db
    .selectFrom('ledger_entries')
    .select(['journal_id', (eb) => eb.fn.sum<DbSum>('amount').as('total')])
    .groupBy('journal_id')
    .having(sql`sum(amount)`, '!=', 0)
    .execute();
}

/** Every account's kept balance beside the sum of its entries (0 when it has none). */
export function balancesWithEntryTotals(db: ReadDb): Promise<{ code: string; balance: number; total: DbSum }[]> {
  return db
    .selectFrom('ledger_accounts as a')
    .leftJoin('ledger_entries as e', 'e.account_code', 'a.code')
    .select(['a.code', 'a.balance', (eb) => eb.fn.coalesce(eb.fn.sum<DbSum>('e.amount'), sql<number>`0`).as('total')])
    .groupBy(['a.code', 'a.balance'])
    .execute();
}

/** Merchant accounts whose balance is below zero. */
export function negativeMerchantAccounts(db: ReadDb): Promise<Pick<LedgerAccountRow, 'code' | 'balance'>[]> {
  return db
    .selectFrom('ledger_accounts')
    .select(['code', 'balance'])
    .where('merchant_id', 'is not', null)
    .where('balance', '<', 0)
    .execute();
}

/** The sum of the unsettled settlements, per merchant and currency. */
export function unsettledTotals(
  db: ReadDb,
): Promise<(Pick<LedgerSettlementRow, 'merchant_id' | 'currency'> & { total: DbSum })[]> {
  return db
    .selectFrom('ledger_settlements')
    .select(['merchant_id', 'currency', (eb) => eb.fn.sum<DbSum>('amount').as('total')])
    .where('settled_at', 'is', null)
    .groupBy(['merchant_id', 'currency'])
    .execute();
}

/** Every awaiting-settlement account with its balance. */
export function awaitingSettlementAccounts(db: ReadDb): Promise<Pick<LedgerAccountRow, 'code' | 'balance'>[]> {
  return db
    .selectFrom('ledger_accounts')
    .select(['code', 'balance'])
    .where('kind', '=', 'awaiting_settlement')
    .execute();
}

/**
 * Merchant balances summed per currency and kind (available, frozen, awaiting settlement), with how
 * many accounts are below zero: one aggregate over the accounts table (a row per account, not per
 * entry), read at each scrape of /metrics.
 */
export function merchantBalanceTotals(
  db: ReadDb,
): Promise<(Pick<LedgerAccountRow, 'currency' | 'kind'> & { total: DbSum; negative: DbSum })[]> {
  return db
    .selectFrom('ledger_accounts')
    .select([
      'currency',
      'kind',
      (eb) => eb.fn.sum<DbSum>('balance').as('total'),
      sql<DbSum>`sum(case when balance < 0 then 1 else 0 end)`.as('negative'),
    ])
    .where('merchant_id', 'is not', null)
    .where('kind', 'in', ['available', 'frozen', 'awaiting_settlement'])
    .groupBy(['currency', 'kind'])
    .execute();
}

/** When the oldest settlement that is due and not settled fell due (null when none is). */
export async function oldestDueSettlement(db: ReadDb, now: number): Promise<number | null> {
  const row = await db
    .selectFrom('ledger_settlements')
    .select((eb) => eb.fn.min<number | string | null>('due_at').as('oldest'))
    .where('settled_at', 'is', null)
    .where('due_at', '<=', now)
    .executeTakeFirst();
  return row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest);
}

export type AdjustmentRequestRow = Selectable<BalanceAdjustmentRequestTable>;

export async function insertAdjustmentRequest(tx: Tx, row: AdjustmentRequestRow): Promise<void> {
  await tx.insertInto('balance_adjustment_requests').values(row).execute();
}

/** The request, locked for the rest of the unit of work (PostgreSQL; SQLite has one writer). */
export function lockAdjustmentRequest(tx: Tx, id: string): Promise<AdjustmentRequestRow | undefined> {
  // A no-op update takes the row lock on PostgreSQL (SQLite has one writer): two deciders run one after the other.
  return tx
    .updateTable('balance_adjustment_requests')
    .set((eb) => ({ state: eb.ref('state') }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function decideAdjustmentRequest(
  tx: Tx,
  id: string,
  decision: Pick<
    AdjustmentRequestRow,
    'state' | 'decided_by' | 'decided_by_email' | 'decision_reason' | 'journal_id' | 'decided_at'
  >,
): Promise<boolean> {
  const result = await tx
    .updateTable('balance_adjustment_requests')
    .set(decision)
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The request as committed (read outside the unit of work that decides it). */
export function adjustmentRequest(db: ReadDb, id: string): Promise<AdjustmentRequestRow | undefined> {
  return db.selectFrom('balance_adjustment_requests').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listAdjustmentRequests(
  db: ReadDb,
  state: AdjustmentRequestRow['state'] | undefined,
  limit: number,
  kind?: AdjustmentRequestRow['kind'],
): Promise<AdjustmentRequestRow[]> {
  let query = db.selectFrom('balance_adjustment_requests').selectAll();
  if (state !== undefined) query = query.where('state', '=', state);
  if (kind !== undefined) query = query.where('kind', '=', kind);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}
