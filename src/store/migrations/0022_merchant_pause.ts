import type { Kysely } from 'kysely';

/** The two directions an operator can pause: money in (payments) and money out (payouts). */
const DIRECTIONS = ['payments', 'payouts'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // An operator's pause of a merchant's payments (collection creates) or payouts (transfer creates):
  // since when (null: not paused), why (kept for operators, never shown to the merchant) and who.
  // On the merchant's row, so the authentication of every merchant API request reads it with the key.
  for (const what of DIRECTIONS) {
    await db.schema.alterTable('merchants').addColumn(`paused_${what}_at`, 'bigint').execute();
    await db.schema.alterTable('merchants').addColumn(`paused_${what}_reason`, 'varchar(500)').execute();
    await db.schema.alterTable('merchants').addColumn(`paused_${what}_by`, 'varchar(320)').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const what of [...DIRECTIONS].reverse()) {
    await db.schema.alterTable('merchants').dropColumn(`paused_${what}_by`).execute();
    await db.schema.alterTable('merchants').dropColumn(`paused_${what}_reason`).execute();
    await db.schema.alterTable('merchants').dropColumn(`paused_${what}_at`).execute();
  }
}
