import type { ReadDb } from '../store/store.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, FeeScheduleTable, LedgerAccountTable, LedgerSettlementTable } from '../store/schema.js';

type Db = Kysely<Database>;

export type LedgerAccountRow = Selectable<LedgerAccountTable>;
export type LedgerSettlementRow = Selectable<LedgerSettlementTable>;
export type FeeScheduleRow = Selectable<FeeScheduleTable>;

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

export function feeSchedule(db: ReadDb, merchantId: string, channel: string): Promise<FeeScheduleRow | undefined> {
  return db
    .selectFrom('fee_schedules')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('channel', '=', channel)
    .executeTakeFirst();
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
