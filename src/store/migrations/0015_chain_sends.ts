import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each chain's hot wallet as the token sender uses it: the next nonce it gives (EVM) and the node sending for it.
  await db.schema
    .createTable('chain_hot_wallets')
    .addColumn('chain', 'varchar(8)', (c) => c.primaryKey())
    .addColumn('address', 'varchar(64)', (c) => c.notNull())
    .addColumn('next_nonce', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'varchar(40)')
    .addColumn('lease_until', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // One token send per fiat → token order, from queued to confirmed, failed or cancelled.
  await db.schema
    .createTable('chain_sends')
    .addColumn('order_id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('chain', 'varchar(8)', (c) => c.notNull())
    .addColumn('to_address', 'varchar(64)', (c) => c.notNull())
    .addColumn('units', 'varchar(80)', (c) => c.notNull())
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('from_address', 'varchar(64)')
    .addColumn('nonce', 'bigint')
    .addColumn('tx_hash', 'varchar(80)')
    .addColumn('block_number', 'bigint')
    .addColumn('block_hash', 'varchar(80)')
    .addColumn('confirmations', 'integer')
    .addColumn('failure', 'varchar(500)')
    .addColumn('signed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chain_sends_open').on('chain_sends').columns(['chain', 'state']).execute();
  await db.schema.createIndex('chain_sends_signed').on('chain_sends').columns(['chain', 'signed_at']).execute();
  // Every transaction signed for a send (a replacement is another), stored before it is broadcast.
  await db.schema
    .createTable('chain_send_attempts')
    .addColumn('tx_hash', 'varchar(80)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('chain', 'varchar(8)', (c) => c.notNull())
    .addColumn('nonce', 'bigint')
    .addColumn('raw', 'text', (c) => c.notNull())
    .addColumn('max_fee', 'varchar(40)')
    .addColumn('priority_fee', 'varchar(40)')
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('broadcast_at', 'bigint')
    .addColumn('outcome', 'varchar(300)')
    .execute();
  await db.schema.createIndex('chain_send_attempts_order').on('chain_send_attempts').columns(['order_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('chain_send_attempts').execute();
  await db.schema.dropTable('chain_sends').execute();
  await db.schema.dropTable('chain_hot_wallets').execute();
}
