/**
 * The exchange's SQL: the operator's prices per pair, and the deposit addresses handed to orders
 * with the derivation counters of the operator's extended public keys.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, DepositAddressTable, ExchangeRateTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type ExchangeRateRow = Selectable<ExchangeRateTable>;
export type DepositAddressRow = Selectable<DepositAddressTable>;

/** The stored prices of one currency/token pair. */
export function findRate(db: ReadDb, currency: string, token: string): Promise<ExchangeRateRow | undefined> {
  return db
    .selectFrom('exchange_rates')
    .selectAll()
    .where('currency', '=', currency)
    .where('token', '=', token)
    .executeTakeFirst();
}

/** Writes the prices of a pair, replacing those it had. */
export async function upsertRate(db: Db, row: ExchangeRateRow): Promise<void> {
  await db
    .insertInto('exchange_rates')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['currency', 'token'])
        .doUpdateSet({ buy: row.buy, sell: row.sell, spread_bps: row.spread_bps, updated_at: row.updated_at }),
    )
    .execute();
}

/** Every stored pair, by currency and token. */
export function listRates(db: ReadDb): Promise<ExchangeRateRow[]> {
  return db.selectFrom('exchange_rates').selectAll().orderBy('currency').orderBy('token').execute();
}

/** Creates the key's derivation counter at index 0 unless it has one. */
export async function ensureAddressCounter(db: Db, keyId: string): Promise<void> {
  await db
    .insertInto('address_counters')
    .values({ key_id: keyId, next_index: 0 })
    .onConflict((oc) => oc.column('key_id').doNothing())
    .execute();
}

/**
 * Advances the key's counter by one and returns its new value (the index taken is one less); the
 * row stays locked until the transaction ends.
 */
export async function advanceAddressCounter(db: Db, keyId: string): Promise<number> {
  const row = await db
    .updateTable('address_counters')
    .set((eb) => ({ next_index: eb('next_index', '+', 1) }))
    .where('key_id', '=', keyId)
    .returning('next_index')
    .executeTakeFirstOrThrow();
  return row.next_index;
}

/** Records a deposit address as an order's (unique constraints refuse a second hand-out). */
export async function insertDepositAddress(db: Db, row: DepositAddressRow): Promise<void> {
  await db.insertInto('deposit_addresses').values(row).execute();
}

/** The addresses of `family` handed to orders since `since`: the ones a deposit watcher follows. */
export async function depositAddressesSince(db: ReadDb, family: string, since: number): Promise<string[]> {
  const rows = await db
    .selectFrom('deposit_addresses')
    .select('address')
    .where('family', '=', family)
    .where('created_at', '>=', since)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.address);
}
