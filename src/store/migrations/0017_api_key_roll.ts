import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // When a request last named the key, written at most once per key per few minutes (never once
  // per request): see MerchantService's use recorder.
  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
  // A key roll: the old key stops at this moment (authentication checks it, no worker needed) ...
  await db.schema.alterTable('api_keys').addColumn('disable_at', 'bigint').execute();
  // ... and names the key that replaced it.
  await db.schema.alterTable('api_keys').addColumn('replaced_by', 'varchar(64)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('replaced_by').execute();
  await db.schema.alterTable('api_keys').dropColumn('disable_at').execute();
  await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute();
}
