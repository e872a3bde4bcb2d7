import type { Kysely } from 'kysely';

// The merchant's orders newest first, now carrying every column the console's list filters and totals
// read besides a text and the different-amount one (area, kind, status, currency, amount, actual
// amount): a filter the index cannot seek by is checked in the index before any order's row is read,
// and the totals of a range of days are summed from the index alone (docs/console.md, "Totals").
// The same name and leading columns: every plan that walked it still does.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('orders_merchant_time').execute();
  await db.schema
    .createIndex('orders_merchant_time')
    .on('orders')
    .columns(['merchant_id', 'created_at', 'id', 'area', 'kind', 'status', 'currency', 'amount', 'actual_amount'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('orders_merchant_time').execute();
  await db.schema
    .createIndex('orders_merchant_time')
    .on('orders')
    .columns(['merchant_id', 'created_at', 'id'])
    .execute();
}
