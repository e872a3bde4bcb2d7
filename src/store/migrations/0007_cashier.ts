import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Aggregate cashiers (endpoint 19): one hosted page per merchant request, where the payer enters
  // the amount and chooses the method; the order it leads to is bound to it once made.
  await db.schema
    .createTable('checkouts')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('access_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('external_order_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('notify_url', 'text')
    .addColumn('return_url', 'text')
    .addColumn('remark', 'text')
    .addColumn('user_identity', 'varchar(128)')
    // Omitted userIdentity: the document Cashgate generated for this cashier (flagged as such).
    .addColumn('generated_document', 'varchar(18)')
    .addColumn('dynamic_amount_notify', 'integer', (c) => c.notNull())
    .addColumn('order_id', 'varchar(40)', (c) => c.unique().references('orders.id'))
    .addColumn('expire_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('checkouts_external_id_unique', ['merchant_id', 'external_order_id'])
    .execute();

  // A payer's document, saved per merchant under the merchant's userIdentity, reused on later visits.
  await db.schema
    .createTable('payer_documents')
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('user_identity', 'varchar(128)', (c) => c.notNull())
    .addColumn('document_type', 'varchar(8)', (c) => c.notNull())
    .addColumn('document_number', 'varchar(18)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('payer_documents_pk', ['merchant_id', 'user_identity'])
    .execute();

  // The payment methods a merchant offers on its aggregate cashiers (JSON array; null: every one).
  await db.schema.alterTable('merchants').addColumn('cashier_methods', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('merchants').dropColumn('cashier_methods').execute();
  await db.schema.dropTable('payer_documents').execute();
  await db.schema.dropTable('checkouts').execute();
}
