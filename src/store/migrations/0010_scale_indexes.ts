import { sql, type Kysely } from 'kysely';

// Indexes that keep the console and the metrics as fast at a million orders as at ten thousand
// (measured by `npm run bench:scale`; figures in docs/operations.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  // The console's order list: newest first, ties broken by id, from the index alone.
  await db.schema.dropIndex('orders_merchant_idx').execute();
  await db.schema
    .createIndex('orders_merchant_time')
    .on('orders')
    .columns(['merchant_id', 'created_at', 'id'])
    .execute();
  // The list filtered by status (alone or with an area and kind): a rare status no longer scans the
  // merchant's whole history for fifty matches.
  await db.schema
    .createIndex('orders_merchant_status_time')
    .on('orders')
    .columns(['merchant_id', 'status', 'created_at', 'id'])
    .execute();

  // The expiry worker looks for waiting orders of some kinds whose deadline passed: with the kind in
  // the index it no longer steps over every order of another kind in the same status (the cancelled
  // collections beside the token -> fiat orders waiting in status 4), a scan that grew with the history.
  await db.schema.dropIndex('orders_expiry_idx').execute();
  await db.schema.createIndex('orders_expiry').on('orders').columns(['status', 'kind', 'cashier_expire_at']).execute();

  // The callback log lists a merchant's attempts newest first: each attempt carries its merchant.
  await db.schema
    .alterTable('callback_attempts')
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`
    update callback_attempts set merchant_id =
      (select e.merchant_id from callback_events e where e.id = callback_attempts.event_id)
  `.execute(db);
  await db.schema
    .createIndex('callback_attempts_merchant_time')
    .on('callback_attempts')
    .columns(['merchant_id', 'started_at', 'id'])
    .execute();
  // Events of one state (callbacks without a target, failed ones) of a merchant, newest first.
  await db.schema
    .createIndex('callback_events_merchant_state_time')
    .on('callback_events')
    .columns(['merchant_id', 'state', 'created_at', 'id'])
    .execute();
  // The queue's depth on /metrics counts the waiting events, not every event ever made.
  await db.schema
    .createIndex('callback_events_state_due')
    .on('callback_events')
    .columns(['state', 'next_attempt_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('callback_events_state_due').execute();
  await db.schema.dropIndex('callback_events_merchant_state_time').execute();
  await db.schema.dropIndex('callback_attempts_merchant_time').execute();
  await db.schema.alterTable('callback_attempts').dropColumn('merchant_id').execute();
  await db.schema.dropIndex('orders_expiry').execute();
  await db.schema.createIndex('orders_expiry_idx').on('orders').columns(['status', 'cashier_expire_at']).execute();
  await db.schema.dropIndex('orders_merchant_status_time').execute();
  await db.schema.dropIndex('orders_merchant_time').execute();
  await db.schema.createIndex('orders_merchant_idx').on('orders').columns(['merchant_id', 'created_at']).execute();
}
