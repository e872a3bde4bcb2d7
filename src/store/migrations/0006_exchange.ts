import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The operator's prices per fiat currency and token: what Cashgate pays (buy) and asks (sell)
  // for one token, as decimal text, and a spread applied on top of both.
  await db.schema
    .createTable('exchange_rates')
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('token', 'varchar(16)', (c) => c.notNull())
    .addColumn('buy', 'varchar(40)', (c) => c.notNull())
    .addColumn('sell', 'varchar(40)', (c) => c.notNull())
    .addColumn('spread_bps', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('exchange_rates_pk', ['currency', 'token'])
    .execute();

  // The next unused derivation index per extended public key: one row, locked by every allocation.
  await db.schema
    .createTable('address_counters')
    .addColumn('key_id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('next_index', 'bigint', (c) => c.notNull())
    .execute();

  // Every deposit address handed out. Both unique constraints make a second hand-out of one
  // address impossible, whatever a counter says.
  await db.schema
    .createTable('deposit_addresses')
    .addColumn('address', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('family', 'varchar(8)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('path_index', 'bigint', (c) => c.notNull())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().unique().references('orders.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('deposit_addresses_index_unique', ['key_id', 'path_index'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deposit_addresses').execute();
  await db.schema.dropTable('address_counters').execute();
  await db.schema.dropTable('exchange_rates').execute();
}
