/**
 * The exchange's SQL: the operator's prices per pair, and the deposit addresses handed to orders
 * with the derivation counters of the operator's extended public keys and the pool of addresses
 * derived ahead.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DialectName } from '../store/dialects.js';
import { prepared } from '../store/prepared.js';
import type { Database, DepositAddressTable, ExchangeRateTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

/** An index of an xpub claimed for the pool: its address once derived (null until then), never an order's yet. */
export interface DepositAddressPoolTable {
  key_id: string;
  path_index: number;
  family: string;
  address: string | null;
  created_at: number;
}

// The pool's table joins the schema here, beside the only SQL that reads or writes it.
declare module '../store/schema.js' {
  interface Database {
    deposit_address_pool: DepositAddressPoolTable;
  }
}

type Db = Kysely<Database>;

export type ExchangeRateRow = Selectable<ExchangeRateTable>;
export type DepositAddressRow = Selectable<DepositAddressTable>;

const rateOfPair = prepared((db, p: { currency: string; token: string }) =>
  db.selectFrom('exchange_rates').selectAll().where('currency', '=', p.currency).where('token', '=', p.token),
);

/** The stored prices of one currency/token pair (every exchange create reads them). */
export async function findRate(db: ReadDb, currency: string, token: string): Promise<ExchangeRateRow | undefined> {
  return (await rateOfPair(db, { currency, token })).rows[0];
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

const ensureCounterRow = prepared((db, p: { keyId: string }) =>
  db
    .insertInto('address_counters')
    .values({ key_id: p.keyId, next_index: 0 })
    .onConflict((oc) => oc.column('key_id').doNothing()),
);

/** Creates the key's derivation counter at index 0 unless it has one. */
export async function ensureAddressCounter(db: Db, keyId: string): Promise<void> {
  await ensureCounterRow(db, { keyId });
}

const advanceCounterRow = prepared((db, p: { keyId: string }) =>
  db
    .updateTable('address_counters')
    .set((eb) => ({ next_index: eb('next_index', '+', 1) }))
    .where('key_id', '=', p.keyId)
    .returning('next_index'),
);

/**
 * Advances the key's counter by one and returns its new value (the index taken is one less); the
 * row stays locked until the transaction ends.
 */
export async function advanceAddressCounter(db: Db, keyId: string): Promise<number> {
  const row = (await advanceCounterRow(db, { keyId })).rows[0];
  if (row === undefined) throw new Error(`no address counter for key ${keyId}`);
  return row.next_index;
}

const insertDepositAddressRow = prepared((db, row: DepositAddressRow) =>
  db.insertInto('deposit_addresses').values(row),
);

/** Records a deposit address as an order's (unique constraints refuse a second hand-out). */
export async function insertDepositAddress(db: Db, row: DepositAddressRow): Promise<void> {
  await insertDepositAddressRow(db, row);
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

/** The index of the lowest derived address in the key's pool (the take's subquery). */
function lowestPooled(db: Kysely<Database>, keyId: string) {
  return db
    .selectFrom('deposit_address_pool')
    .select('path_index')
    .where('key_id', '=', keyId)
    .where('address', 'is not', null)
    .orderBy('path_index')
    .limit(1);
}

/**
 * Deletes the lowest derived address of the key's pool and returns it. On PostgreSQL a row another
 * unit of work is taking is skipped rather than waited for (SKIP LOCKED), so concurrent creates on
 * any node take different rows; SQLite's single writer runs one unit at a time.
 */
const takePooled = {
  postgres: prepared((db, p: { keyId: string }) =>
    db
      .deleteFrom('deposit_address_pool')
      .where('key_id', '=', p.keyId)
      .where('path_index', '=', lowestPooled(db, p.keyId).forUpdate().skipLocked())
      .returning(['path_index', 'address']),
  ),
  sqlite: prepared((db, p: { keyId: string }) =>
    db
      .deleteFrom('deposit_address_pool')
      .where('key_id', '=', p.keyId)
      .where('path_index', '=', lowestPooled(db, p.keyId))
      .returning(['path_index', 'address']),
  ),
};

/** Takes a derived address out of the key's pool, in `db`'s unit of work; undefined when none is free. */
export async function takePooledAddress(
  db: Db,
  dialect: DialectName,
  keyId: string,
): Promise<{ index: number; address: string } | undefined> {
  const row = (await takePooled[dialect](db, { keyId })).rows[0];
  return row?.address == null ? undefined : { index: row.path_index, address: row.address };
}

/** How many indexes the key's pool holds, derived or still being derived. */
export async function pooledCount(db: ReadDb, keyId: string): Promise<number> {
  const row = await db
    .selectFrom('deposit_address_pool')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('key_id', '=', keyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Claims the key's next `count` indexes for the pool, as rows whose address is not derived yet,
 * and returns the first; the counter row stays locked until the transaction ends.
 */
export async function claimPoolIndexes(
  db: Db,
  claim: { keyId: string; family: string; count: number; now: number },
): Promise<number> {
  const { next_index: next } = await db
    .updateTable('address_counters')
    .set((eb) => ({ next_index: eb('next_index', '+', claim.count) }))
    .where('key_id', '=', claim.keyId)
    .returning('next_index')
    .executeTakeFirstOrThrow();
  const first = next - claim.count;
  await db
    .insertInto('deposit_address_pool')
    .values(
      Array.from({ length: claim.count }, (_, n) => ({
        key_id: claim.keyId,
        path_index: first + n,
        family: claim.family,
        address: null,
        created_at: claim.now,
      })),
    )
    .execute();
  return first;
}

/**
 * Indexes of the key's pool whose address is still to be derived and that were claimed before
 * `claimedBefore`: a batch whose worker died, or stalled, between claiming and deriving.
 */
export async function pendingPoolIndexes(
  db: ReadDb,
  keyId: string,
  claimedBefore: number,
  limit: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom('deposit_address_pool')
    .select('path_index')
    .where('key_id', '=', keyId)
    .where('address', 'is', null)
    .where('created_at', '<', claimedBefore)
    .orderBy('path_index')
    .limit(limit)
    .execute();
  return rows.map((row) => row.path_index);
}

const fillPooledRow = prepared((db, p: { keyId: string; index: number; address: string }) =>
  db
    .updateTable('deposit_address_pool')
    .set({ address: p.address })
    .where('key_id', '=', p.keyId)
    .where('path_index', '=', p.index)
    .where('address', 'is', null),
);

/** Writes a claimed index's derived address (a no-op when another worker wrote it first). */
export async function fillPooledAddress(db: Db, p: { keyId: string; index: number; address: string }): Promise<void> {
  await fillPooledRow(db, p);
}
