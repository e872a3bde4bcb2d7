import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A merchant's aggregate cashiers take reais (Brazil's methods) or pesos (Mexico's); each cashier
  // keeps the currency it was opened in.
  await db.schema
    .alterTable('merchants')
    .addColumn('cashier_currency', 'varchar(3)', (c) => c.notNull().defaultTo('BRL'))
    .execute();
  await db.schema
    .alterTable('checkouts')
    .addColumn('currency', 'varchar(3)', (c) => c.notNull().defaultTo('BRL'))
    .execute();
  // The last sequence issued under each 10-digit CLABE prefix (646 + 180 + the company's 4 digits).
  await db.schema
    .createTable('mx_clabe_sequences')
    .addColumn('prefix', 'varchar(10)', (c) => c.primaryKey())
    .addColumn('last_sequence', 'bigint', (c) => c.notNull())
    .execute();
  // Each CLABE issued for an order: the order it belongs to now, and when it was given to it. A
  // CLABE is given to another order only once the sequence wrapped and a long quiet time passed.
  await db.schema
    .createTable('mx_clabes')
    .addColumn('clabe', 'varchar(18)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('assigned_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mx_clabes_order').on('mx_clabes').column('order_id').execute();
  // Each incoming SPEI transfer (STP's abono) Cashgate decided on: keep it (confirmar: credited to
  // its order) or have it returned (devolver, with the cause), recorded before the answer is sent;
  // and, for one STP settled although Cashgate did not keep it, the return Cashgate sends itself.
  await db.schema
    .createTable('spei_abonos')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    // clave de rastreo | fechaOperacion | institucionOrdenante: unique for one transfer across deliveries.
    .addColumn('rastreo_key', 'varchar(60)', (c) => c.notNull().unique())
    .addColumn('clabe', 'varchar(18)', (c) => c.notNull())
    .addColumn('order_id', 'varchar(40)')
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('fecha_operacion', 'varchar(8)', (c) => c.notNull())
    .addColumn('institucion_ordenante', 'varchar(5)', (c) => c.notNull())
    .addColumn('clave_rastreo', 'varchar(30)', (c) => c.notNull())
    .addColumn('payer_name', 'varchar(120)')
    .addColumn('payer_account', 'varchar(20)')
    // confirmar or devolver, and the devolution cause.
    .addColumn('decision', 'varchar(10)', (c) => c.notNull())
    .addColumn('causa', 'integer')
    // credited (to its order), refused (another amount under dynamicAmountNotify 2), unmatched (no
    // waiting order), late (found by reconciliation once STP had settled it).
    .addColumn('disposition', 'varchar(12)', (c) => c.notNull())
    // webhook or reconcile.
    .addColumn('source', 'varchar(10)', (c) => c.notNull())
    .addColumn('answered_at', 'bigint')
    // What STP's consultation last said of it (LQ, D, R…), and when it was asked.
    .addColumn('stp_estado', 'varchar(4)')
    .addColumn('checked_at', 'bigint')
    // A return Cashgate sends itself (STP settled money Cashgate said to return, or never asked):
    // to_send, sent, settled, failed; its clave de rastreo (derived from the abono) and STP's folio.
    .addColumn('return_state', 'varchar(8)')
    .addColumn('return_rastreo', 'varchar(30)')
    .addColumn('return_folio', 'varchar(20)')
    .addColumn('return_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'varchar(300)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('spei_abonos_order').on('spei_abonos').column('order_id').execute();
  await db.schema.createIndex('spei_abonos_created').on('spei_abonos').column('created_at').execute();
  await db.schema
    .createIndex('spei_abonos_returns')
    .on('spei_abonos')
    .column('return_state')
    .where(sql.ref('return_state'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('spei_abonos').execute();
  await db.schema.dropTable('mx_clabes').execute();
  await db.schema.dropTable('mx_clabe_sequences').execute();
  await db.schema.alterTable('checkouts').dropColumn('currency').execute();
  await db.schema.alterTable('merchants').dropColumn('cashier_currency').execute();
}
