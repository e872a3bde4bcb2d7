import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('merchants')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('language', 'varchar(8)', (c) => c.notNull())
    .addColumn('callback_url', 'varchar(2048)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('access_key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('label', 'varchar(100)', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('ip_whitelist', 'text', (c) => c.notNull())
    .addColumn('debug', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('active_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_merchant_idx').on('api_keys').column('merchant_id').execute();

  await db.schema
    .createTable('request_nonces')
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('nonce', 'varchar(36)', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('request_nonces_pk', ['access_key', 'nonce'])
    .execute();
  await db.schema.createIndex('request_nonces_expiry_idx').on('request_nonces').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_nonces').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('merchants').execute();
}
