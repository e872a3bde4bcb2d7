import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Deposit addresses derived ahead of the orders that will take them, per xpub and index. An index
  // is claimed from address_counters together with its row (address null until derived); a create
  // deletes the row it takes in the unit of work that records the address in deposit_addresses.
  await db.schema
    .createTable('deposit_address_pool')
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('path_index', 'bigint', (c) => c.notNull())
    .addColumn('family', 'varchar(8)', (c) => c.notNull())
    .addColumn('address', 'varchar(64)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('deposit_address_pool_pk', ['key_id', 'path_index'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deposit_address_pool').execute();
}
