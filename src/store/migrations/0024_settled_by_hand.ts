import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A payout in doubt (its rail's outcome unknown) that an operator settled by hand after checking
  // with the provider out of band: one row per order, written in the unit of work that ends it.
  await db.schema
    .createTable('order_settled_by_hand')
    .addColumn('order_id', 'varchar(40)', (c) => c.primaryKey())
    // paid or failed: what the operator found out.
    .addColumn('outcome', 'varchar(8)', (c) => c.notNull())
    // The status the order was in before (1 accepted, 2 processing).
    .addColumn('from_status', 'integer', (c) => c.notNull())
    // Who: the operator's e-mail (or root-token, cli:<user>), and the operator's id when an operator.
    .addColumn('settled_by', 'varchar(254)', (c) => c.notNull())
    .addColumn('operator_id', 'varchar(40)')
    .addColumn('reason', 'varchar(500)', (c) => c.notNull())
    .addColumn('settled_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('order_settled_by_hand').execute();
}
