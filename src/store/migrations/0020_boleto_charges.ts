import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each boleto Cashgate registers at an issuer (BRAZIL_BOLETO_RAIL=efi|inter) for a collection:
  // the reference derived from the order (Inter's seuNumero), the issuer's id once it answered,
  // where registration stands, what the payer is shown, and what the issuer says was paid.
  await db.schema
    .createTable('boleto_charges')
    .addColumn('order_id', 'varchar(40)', (c) => c.primaryKey().references('orders.id'))
    .addColumn('issuer', 'varchar(8)', (c) => c.notNull())
    .addColumn('reference', 'varchar(15)', (c) => c.notNull().unique())
    .addColumn('charge_id', 'varchar(64)')
    // awaiting_payer, to_issue, processing, open, paid, settled, cancelled, expired, failed.
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('issuer_status', 'varchar(24)')
    .addColumn('due_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    // Issue requests sent: above zero, one may have been registered with no answer (ask before sending again).
    .addColumn('issue_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_check_at', 'bigint')
    .addColumn('linha_digitavel', 'varchar(47)')
    .addColumn('barcode', 'varchar(44)')
    .addColumn('pix_code', 'text')
    .addColumn('nosso_numero', 'varchar(24)')
    .addColumn('pdf_url', 'varchar(500)')
    .addColumn('paid_amount', 'bigint')
    .addColumn('paid_at', 'varchar(40)')
    .addColumn('paid_method', 'varchar(8)')
    // When reconciliation first saw it paid with no amount stated (Efí): it waits for the notification that states it.
    .addColumn('paid_seen_at', 'bigint')
    // null until paid; credited (to its order) or suspense (paid when its order no longer took it).
    .addColumn('disposition', 'varchar(16)')
    .addColumn('last_error', 'varchar(300)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('boleto_charges_charge').on('boleto_charges').columns(['issuer', 'charge_id']).execute();
  await db.schema
    .createIndex('boleto_charges_due')
    .on('boleto_charges')
    .column('next_check_at')
    .where(sql.ref('next_check_at'), 'is not', null)
    .execute();
  // Charges still registered at the issuer (open or on their way), for the write-off of those whose order ended.
  await db.schema.createIndex('boleto_charges_state').on('boleto_charges').columns(['state', 'created_at']).execute();
  await db.schema
    .createIndex('boleto_charges_suspense')
    .on('boleto_charges')
    .column('updated_at')
    .where(sql.ref('disposition'), '=', 'suspense')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('boleto_charges').execute();
}
