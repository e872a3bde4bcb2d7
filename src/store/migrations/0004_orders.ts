import type { Kysely } from 'kysely';

/** For merchants that exist before this migration: 30 minutes, as merchants created later. */
const DEFAULT_CASHIER_LIFETIME_MS = 1_800_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('merchants')
    .addColumn('cashier_lifetime_ms', 'bigint', (c) => c.notNull().defaultTo(DEFAULT_CASHIER_LIFETIME_MS))
    .execute();

  await db.schema
    .createTable('orders')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('area', 'varchar(8)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('external_order_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('create_result', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('channel_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('pay_type', 'integer', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('fee', 'bigint', (c) => c.notNull())
    .addColumn('actual_amount', 'bigint')
    .addColumn('notify_url', 'varchar(2048)')
    .addColumn('return_url', 'varchar(2048)')
    .addColumn('remark', 'varchar(255)')
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('cashier_id', 'varchar(40)', (c) => c.unique())
    .addColumn('cashier_expire_at', 'bigint')
    .addColumn('channel_order_id', 'varchar(64)')
    .addColumn('rail_ref', 'varchar(64)')
    .addColumn('rail_claimed_at', 'bigint')
    .addColumn('error_msg', 'text')
    .addColumn('error_msg_en', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('pay_time', 'bigint')
    .addColumn('complete_time', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Idempotent creation: one order per merchant, area, kind and externalOrderId, even across nodes.
    .addUniqueConstraint('orders_external_id_unique', ['merchant_id', 'area', 'kind', 'external_order_id'])
    .execute();
  await db.schema.createIndex('orders_expiry_idx').on('orders').columns(['status', 'cashier_expire_at']).execute();
  await db.schema.createIndex('orders_rail_ref_idx').on('orders').column('rail_ref').execute();
  await db.schema.createIndex('orders_merchant_idx').on('orders').columns(['merchant_id', 'created_at']).execute();

  await db.schema
    .createTable('order_events')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().references('orders.id'))
    .addColumn('event', 'varchar(32)', (c) => c.notNull())
    .addColumn('from_status', 'integer')
    .addColumn('to_status', 'integer', (c) => c.notNull())
    .addColumn('source', 'varchar(32)', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('order_events_order_idx').on('order_events').columns(['order_id', 'at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('order_events').execute();
  await db.schema.dropTable('orders').execute();
  await db.schema.alterTable('merchants').dropColumn('cashier_lifetime_ms').execute();
}
