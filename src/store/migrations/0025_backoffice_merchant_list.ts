import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The back office's merchant list: newest first, a page at a time (keyset by created_at, id), so
  // a page reads its rows from the index instead of sorting every merchant.
  await db.schema.createIndex('merchants_created').on('merchants').columns(['created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('merchants_created').execute();
}
