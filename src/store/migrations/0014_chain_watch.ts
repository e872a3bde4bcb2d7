import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each chain's deposit watcher: the last block it read (number and hash) and the node holding it.
  await db.schema
    .createTable('chain_watches')
    .addColumn('chain', 'varchar(8)', (c) => c.primaryKey())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_hash', 'varchar(80)', (c) => c.notNull())
    .addColumn('lease_owner', 'varchar(40)')
    .addColumn('lease_until', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Token transfers to watched addresses as the watcher saw them, until reported final.
  await db.schema
    .createTable('chain_transfers')
    .addColumn('chain', 'varchar(8)', (c) => c.notNull())
    .addColumn('tx_hash', 'varchar(80)', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('to_address', 'varchar(64)', (c) => c.notNull())
    .addColumn('from_address', 'varchar(64)', (c) => c.notNull())
    .addColumn('units', 'varchar(80)', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_hash', 'varchar(80)', (c) => c.notNull())
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .addColumn('reported_at', 'bigint')
    .addPrimaryKeyConstraint('chain_transfers_pk', ['chain', 'tx_hash', 'log_index'])
    .execute();
  await db.schema
    .createIndex('chain_transfers_pending')
    .on('chain_transfers')
    .columns(['chain', 'state', 'block_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('chain_transfers').execute();
  await db.schema.dropTable('chain_watches').execute();
}
