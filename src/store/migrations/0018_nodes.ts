import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Every Cashgate process on this database, with its heartbeat: a node whose heartbeat stopped is
  // dead, and whatever it held is freed at once instead of when each lease runs out.
  await db.schema
    .createTable('nodes')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('host', 'varchar(255)', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('version', 'varchar(40)', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    // 'alive', 'gone' (stopped cleanly) or 'dead' (declared so by another node, or by its successor).
    .addColumn('state', 'varchar(8)', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('nodes_state').on('nodes').columns(['state', 'heartbeat_at']).execute();

  // Which node holds each lease, so that a dead node's leases are found and freed by its id.
  for (const table of ['rail_tasks', 'callback_events', 'daraja_requests']) {
    await db.schema.alterTable(table).addColumn('lease_owner', 'varchar(40)').execute();
    await db.schema
      .createIndex(`${table}_lease_owner`)
      .on(table)
      .column('lease_owner')
      .where(sql.ref('lease_owner'), 'is not', null)
      .execute();
  }
}
