import type { Kysely } from 'kysely';

/** For merchants that exist before this migration: D+1, as merchants created later (a migration is a frozen snapshot). */
const DEFAULT_SETTLEMENT_DELAY_MS = 86_400_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('merchants')
    .addColumn('settlement_delay_ms', 'bigint', (c) => c.notNull().defaultTo(DEFAULT_SETTLEMENT_DELAY_MS))
    .execute();

  await db.schema
    .createTable('ledger_accounts')
    .addColumn('code', 'varchar(120)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.references('merchants.id'))
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('balance', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_accounts_merchant_idx')
    .on('ledger_accounts')
    .columns(['merchant_id', 'currency'])
    .execute();

  await db.schema
    .createTable('ledger_journals')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(40)', (c) => c.notNull())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.references('merchants.id'))
    .addColumn('order_id', 'varchar(64)')
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('memo', 'varchar(500)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_journals_merchant_idx')
    .on('ledger_journals')
    .columns(['merchant_id', 'created_at'])
    .execute();
  await db.schema.createIndex('ledger_journals_order_idx').on('ledger_journals').column('order_id').execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('journal_id', 'varchar(40)', (c) => c.notNull().references('ledger_journals.id'))
    .addColumn('account_code', 'varchar(120)', (c) => c.notNull().references('ledger_accounts.code'))
    .addColumn('merchant_id', 'varchar(40)')
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ledger_entries_journal_idx').on('ledger_entries').column('journal_id').execute();
  await db.schema
    .createIndex('ledger_entries_account_idx')
    .on('ledger_entries')
    .columns(['account_code', 'created_at'])
    .execute();

  await db.schema
    .createTable('ledger_settlements')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('order_id', 'varchar(64)')
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_settlements_due_idx')
    .on('ledger_settlements')
    .columns(['settled_at', 'due_at'])
    .execute();

  await db.schema
    .createTable('fee_schedules')
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull().references('merchants.id'))
    .addColumn('channel', 'varchar(40)', (c) => c.notNull())
    .addColumn('percent_bps', 'integer', (c) => c.notNull())
    .addColumn('fixed_minor', 'bigint', (c) => c.notNull())
    .addColumn('minimum_minor', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fee_schedules_pk', ['merchant_id', 'channel'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['fee_schedules', 'ledger_settlements', 'ledger_entries', 'ledger_journals', 'ledger_accounts']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('merchants').dropColumn('settlement_delay_ms').execute();
}
