import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The payment voucher of a successful Brazil order: its token is the capability in the public link.
  await db.schema
    .createTable('vouchers')
    .addColumn('token', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().unique().references('orders.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('vouchers').execute();
}
