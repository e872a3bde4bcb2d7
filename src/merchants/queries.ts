import { prepared } from '../store/prepared.js';
import type { ReadDb } from '../store/store.js';
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeyTable, Database, MerchantTable } from '../store/schema.js';
import type { Pausable } from './pause.js';

type Db = Kysely<Database>;

export type MerchantRow = Selectable<MerchantTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type AuthKeyRow = ApiKeyRow & {
  merchant_language: string;
  paused_payments_at: number | null;
  paused_payouts_at: number | null;
  cashier_lifetime_ms: number;
};

const merchantById = prepared((db, p: { merchantId: string }) =>
  db.selectFrom('merchants').selectAll().where('id', '=', p.merchantId),
);

export async function findMerchant(db: ReadDb, merchantId: string): Promise<MerchantRow | undefined> {
  return (await merchantById(db, { merchantId })).rows[0];
}

export function listMerchants(db: ReadDb): Promise<MerchantRow[]> {
  return db.selectFrom('merchants').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function insertMerchant(db: Db, row: MerchantRow): Promise<void> {
  await db.insertInto('merchants').values(row).execute();
}

export async function updateMerchant(
  db: Db,
  merchantId: string,
  changes: Partial<
    Pick<
      MerchantRow,
      'callback_url' | 'settlement_delay_ms' | 'cashier_lifetime_ms' | 'cashier_methods' | 'cashier_currency'
    >
  > & { updated_at: number },
): Promise<void> {
  await db.updateTable('merchants').set(changes).where('id', '=', merchantId).execute();
}

/** A pause as stored: since when, why, by whom. */
export interface PauseRecord {
  at: number;
  reason: string;
  by: string;
}

/** The merchant's pause of `what`, or null when it is not paused. */
export function pauseOf(row: MerchantRow, what: Pausable): PauseRecord | null {
  const [at, reason, by] =
    what === 'payments'
      ? [row.paused_payments_at, row.paused_payments_reason, row.paused_payments_by]
      : [row.paused_payouts_at, row.paused_payouts_reason, row.paused_payouts_by];
  return at === null ? null : { at, reason: reason ?? '', by: by ?? '' };
}

function pauseColumns(what: Pausable, pause: PauseRecord | null) {
  const [at, reason, by] = pause === null ? [null, null, null] : [pause.at, pause.reason, pause.by];
  return what === 'payments'
    ? { paused_payments_at: at, paused_payments_reason: reason, paused_payments_by: by }
    : { paused_payouts_at: at, paused_payouts_reason: reason, paused_payouts_by: by };
}

/** Pauses `what` unless it is paused already (the first pause stays); false when it was. */
export async function pauseMerchant(db: Db, merchantId: string, what: Pausable, pause: PauseRecord): Promise<boolean> {
  const result = await db
    .updateTable('merchants')
    .set({ ...pauseColumns(what, pause), updated_at: pause.at })
    .where('id', '=', merchantId)
    .where(`paused_${what}_at`, 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Lifts the pause of `what`; false when it was not paused. */
export async function resumeMerchant(db: Db, merchantId: string, what: Pausable, now: number): Promise<boolean> {
  const result = await db
    .updateTable('merchants')
    .set({ ...pauseColumns(what, null), updated_at: now })
    .where('id', '=', merchantId)
    .where(`paused_${what}_at`, 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export function findApiKey(db: ReadDb, merchantId: string, accessKey: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('access_key', '=', accessKey)
    .executeTakeFirst();
}

export function listApiKeys(db: ReadDb, merchantId: string, includeDeleted = false): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .$if(!includeDeleted, (q) => q.where('status', '!=', 'deleted'))
    .orderBy('created_at')
    .orderBy('access_key')
    .execute();
}

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function updateApiKey(
  db: Db,
  accessKey: string,
  changes: Partial<Omit<ApiKeyRow, 'access_key' | 'merchant_id' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('api_keys').set(changes).where('access_key', '=', accessKey).execute();
}

/**
 * Schedules a roll's end on a key that is active and not yet rolled (as of `now`); false when another
 * roll, a disabling or a deletion got there first, so two rolls at once cannot both succeed.
 */
export async function scheduleKeyRollEnd(
  db: Db,
  accessKey: string,
  roll: { disableAt: number; replacedBy: string; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ disable_at: roll.disableAt, replaced_by: roll.replacedBy, updated_at: roll.now })
    .where('access_key', '=', accessKey)
    .where('status', '=', 'active')
    .where('disable_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** The key with its merchant's language, for request authentication. */
const keyForAuth = prepared((db, p: { accessKey: string }) =>
  db
    .selectFrom('api_keys')
    .innerJoin('merchants', 'merchants.id', 'api_keys.merchant_id')
    .selectAll('api_keys')
    .select([
      'merchants.language as merchant_language',
      // The merchant's pauses come with the key: the create routes check them without a query of their own.
      'merchants.paused_payments_at',
      'merchants.paused_payouts_at',
      // So are the settings a create needs (a collection's lifetime).
      'merchants.cashier_lifetime_ms',
    ])
    .where('api_keys.access_key', '=', p.accessKey),
);

export async function findKeyForAuth(db: ReadDb, accessKey: string): Promise<AuthKeyRow | undefined> {
  return (await keyForAuth(db, { accessKey })).rows[0];
}

/** Records a use of the key unless a later one is already stored (uses are written in batches, see MerchantService). */
export async function recordKeyUse(db: Db, accessKey: string, at: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('access_key', '=', accessKey)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}
