import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('callback_events')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('notify_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('order_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('order_kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('trigger', 'varchar(16)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('target_url', 'varchar(2048)')
    .addColumn('target_host', 'varchar(300)')
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('first_attempt_at', 'bigint')
    .addColumn('lease_token', 'varchar(40)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The dispatcher's claim reads due rows in time order: next_attempt_at is set only while an event
  // is pending or leased, so this index holds exactly the queue, in the order it is claimed.
  await db.schema.createIndex('callback_events_due_idx').on('callback_events').column('next_attempt_at').execute();
  await db.schema
    .createIndex('callback_events_order_idx')
    .on('callback_events')
    .columns(['order_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('callback_attempts')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('event_id', 'varchar(40)', (c) => c.notNull().references('callback_events.id'))
    .addColumn('attempt_no', 'integer', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema
    .createIndex('callback_attempts_event_idx')
    .on('callback_attempts')
    .columns(['event_id', 'started_at'])
    .execute();

  await db.schema
    .createTable('callback_tests')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('notify_url', 'varchar(2048)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('callback_tests').execute();
  await db.schema.dropTable('callback_attempts').execute();
  await db.schema.dropTable('callback_events').execute();
}
