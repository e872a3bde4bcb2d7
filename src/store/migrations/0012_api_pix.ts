import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each charge (cob) Cashgate created at the Pix PSP for a collection: what the PSP knows it by,
  // and whether it still waits for a payment, was paid, or was removed at the PSP.
  await db.schema
    .createTable('pix_charges')
    .addColumn('txid', 'varchar(35)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().unique().references('orders.id'))
    // 'active' (payable at the PSP), 'paid' (a Pix settled it), 'removed' (Cashgate removed it after the order ended).
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pix_charges_state').on('pix_charges').columns(['state', 'created_at']).execute();

  // Each Pix the PSP received for Cashgate's key, once confirmed with the PSP's own query: credited
  // to its order, returned to the payer (late, a second payment, or refused by the order's rules),
  // or unmatched (no order has its txid), with its refund's progress.
  await db.schema
    .createTable('pix_received')
    .addColumn('e2eid', 'varchar(35)', (c) => c.primaryKey())
    .addColumn('txid', 'varchar(35)')
    .addColumn('order_id', 'varchar(40)')
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('paid_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('payer_name', 'varchar(200)')
    .addColumn('payer_document', 'varchar(14)')
    // 'credited', 'returning' (its refund is asked for or under way), 'returned', 'return_failed', 'unmatched'.
    .addColumn('disposition', 'varchar(16)', (c) => c.notNull())
    .addColumn('reason', 'varchar(200)')
    // The refund (devolução): the id Cashgate chose, derived from the e2eid, and what the PSP said.
    .addColumn('refund_id', 'varchar(35)')
    .addColumn('refund_status', 'varchar(20)')
    .addColumn('refund_rtr_id', 'varchar(35)')
    .addColumn('next_check_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pix_received_order').on('pix_received').column('order_id').execute();
  await db.schema
    .createIndex('pix_received_due')
    .on('pix_received')
    .column('next_check_at')
    .where(sql.ref('next_check_at'), 'is not', null)
    .execute();

  // Each Pix sent for a transfer through the PSP's send extension: the idEnvio derived from the
  // order (a repeat never pays twice), what the PSP answered, when to ask it next.
  await db.schema
    .createTable('pix_payouts')
    .addColumn('id_envio', 'varchar(35)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().unique().references('orders.id'))
    // 'accepted' (the PSP took it), 'settled' (its outcome is on the order).
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('e2eid', 'varchar(35)')
    .addColumn('psp_status', 'varchar(20)')
    .addColumn('checks', 'integer', (c) => c.notNull())
    .addColumn('next_check_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('pix_payouts_due')
    .on('pix_payouts')
    .column('next_check_at')
    .where(sql.ref('next_check_at'), 'is not', null)
    .execute();

  // A rail's messages about one of its references (a send's webhooks, say).
  await db.schema.createIndex('rail_messages_ref').on('rail_messages').columns(['ref', 'at']).execute();

  // Where a rail's reconciliation has read up to (e.g. the end of the last window of received Pix listed).
  await db.schema
    .createTable('rail_cursors')
    .addColumn('name', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .execute();
}
