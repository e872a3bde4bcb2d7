/**
 * The Brazil module's queries: the vouchers table, one row per successful order whose voucher link
 * was asked for, keyed by the unguessable token of its public link. Each works on SQLite and
 * PostgreSQL alike.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, VoucherTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type VoucherRow = Selectable<VoucherTable>;

/** The token of the order's voucher; undefined while it has none. */
export async function voucherTokenOfOrder(db: ReadDb, orderId: string): Promise<string | undefined> {
  const row = await db.selectFrom('vouchers').select('token').where('order_id', '=', orderId).executeTakeFirst();
  return row?.token;
}

/** Records a voucher; does nothing when the order (or the token) already has one. */
export async function insertVoucher(db: Db, row: VoucherRow): Promise<void> {
  await db
    .insertInto('vouchers')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The id of the order whose voucher has the token; undefined for an unknown token. */
export async function orderOfVoucher(db: ReadDb, token: string): Promise<string | undefined> {
  const row = await db.selectFrom('vouchers').select('order_id').where('token', '=', token).executeTakeFirst();
  return row?.order_id;
}
