import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The durable hand-over of orders to their rails: written in the order's own unit of work,
  // worked after the commit by the node that wrote it, or by any node's worker once its lease ran out.
  await db.schema
    .createTable('rail_tasks')
    // Derived from the order (`<orderId>.start`, `<orderId>.restart.<n>`): the idempotency key the rail is given.
    .addColumn('id', 'varchar(80)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().references('orders.id'))
    // 'start' (hand the new order over) or 'restart' (start it again on the payer's request).
    .addColumn('action', 'varchar(16)', (c) => c.notNull())
    // 'working' (leased to a node), 'pending' (due at next_attempt_at), 'done', 'failed'.
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    // When a worker may take it: the lease's end while 'working', the retry time while 'pending'; null once settled.
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_token', 'varchar(40)')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Only unsettled tasks are looked for; settled ones stay out of the index.
  await db.schema
    .createIndex('rail_tasks_due')
    .on('rail_tasks')
    .column('next_attempt_at')
    .where(sql.ref('next_attempt_at'), 'is not', null)
    .execute();
  await db.schema.createIndex('rail_tasks_order').on('rail_tasks').column('order_id').execute();

  // Orders an earlier version committed but never handed to their rail get their task now; the
  // worker settles at once those no longer waiting in their first status.
  await sql`
    insert into rail_tasks (id, order_id, action, state, attempts, next_attempt_at, lease_token, last_error, created_at, updated_at)
    select id || '.start', id, 'start', 'pending', 1, 0, null, null, created_at, created_at
    from orders where channel_order_id is null
  `.execute(db);
  await db.schema.alterTable('orders').dropColumn('rail_claimed_at').execute();
}
