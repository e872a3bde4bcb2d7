import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // People who sign in to the merchant console; each belongs to one merchant.
  await db.schema
    .createTable('console_users')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    // Lower-cased; one console login per address across every merchant.
    .addColumn('email', 'varchar(254)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(100)', (c) => c.notNull())
    // scrypt$N$r$p$salt$hash (base64): the parameters travel with the hash.
    .addColumn('password_hash', 'text', (c) => c.notNull())
    // The TOTP secret, sealed with the master key; null while the second factor is off.
    .addColumn('totp_secret_sealed', 'text')
    // The last TOTP time step accepted, so a code cannot be used twice.
    .addColumn('totp_last_step', 'bigint')
    .addColumn('language', 'varchar(8)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  // Signed-in browsers. The cookie holds a random token; only its SHA-256 is stored.
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('console_users.id'))
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull())
    // 'full' once signed in; 'totp' while the second factor is still to be entered.
    .addColumn('stage', 'varchar(8)', (c) => c.notNull())
    .addColumn('csrf_token', 'varchar(64)', (c) => c.notNull())
    // A TOTP secret being enrolled (sealed), until a code confirms it.
    .addColumn('totp_pending_sealed', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_user').on('console_sessions').column('user_id').execute();

  // Failed sign-ins, per e-mail address and per client address, for the sign-in rate limit.
  await db.schema
    .createTable('console_sign_in_failures')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('subject', 'varchar(300)', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('console_sign_in_failures_subject')
    .on('console_sign_in_failures')
    .columns(['subject', 'at'])
    .execute();

  // The console's callback log and bulk re-trigger read a merchant's callbacks by time.
  await db.schema
    .createIndex('callback_events_merchant_time')
    .on('callback_events')
    .columns(['merchant_id', 'created_at'])
    .execute();

  // Recent merchant API requests made with debug-mode keys, for the console's request log.
  await db.schema
    .createTable('request_log')
    .addColumn('request_id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('method', 'varchar(8)', (c) => c.notNull())
    .addColumn('path', 'varchar(300)', (c) => c.notNull())
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('code', 'varchar(8)', (c) => c.notNull())
    .addColumn('msg_en', 'text', (c) => c.notNull())
    // The string the server built to check the sign (the request's own values, never a secret).
    .addColumn('signed_string', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('request_log_merchant_time')
    .on('request_log')
    .columns(['merchant_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_log').execute();
  await db.schema.dropIndex('callback_events_merchant_time').execute();
  await db.schema.dropTable('console_sign_in_failures').execute();
  await db.schema.dropTable('console_sessions').execute();
  await db.schema.dropTable('console_users').execute();
}
