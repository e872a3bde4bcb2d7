import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An approval has a kind: a balance adjustment (every request before this migration) or the
  // assignment of an unmatched incoming payment to an order, which names the payment and the order
  // (its merchant_id, currency and amount are the order's merchant and the payment's).
  await db.schema
    .alterTable('balance_adjustment_requests')
    .addColumn('kind', 'varchar(24)', (c) => c.notNull().defaultTo('balance_adjustment'))
    .execute();
  await db.schema.alterTable('balance_adjustment_requests').addColumn('e2eid', 'varchar(64)').execute();
  await db.schema.alterTable('balance_adjustment_requests').addColumn('order_id', 'varchar(40)').execute();
  // A received Pix assigned by an operator to an order (order_id, disposition credited): by whom,
  // why and when; approval_id names the approval that holds it while pending (nothing else may
  // return or assign it then) and, once approved, the one that carried it out.
  await db.schema.alterTable('pix_received').addColumn('approval_id', 'varchar(40)').execute();
  await db.schema.alterTable('pix_received').addColumn('assigned_by', 'varchar(254)').execute();
  await db.schema.alterTable('pix_received').addColumn('assigned_reason', 'text').execute();
  await db.schema.alterTable('pix_received').addColumn('assigned_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['assigned_at', 'assigned_reason', 'assigned_by', 'approval_id'])
    await db.schema.alterTable('pix_received').dropColumn(column).execute();
  for (const column of ['order_id', 'e2eid', 'kind'])
    await db.schema.alterTable('balance_adjustment_requests').dropColumn(column).execute();
}
