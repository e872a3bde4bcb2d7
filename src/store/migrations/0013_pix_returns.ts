import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Whether an unmatched Pix's arrival was posted to system pix_unmatched: those recorded before
  // this migration were not, so their return moves the money from rail_clearing instead.
  await db.schema
    .alterTable('pix_received')
    .addColumn('unmatched_posted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The Pix that were not credited to an order (unmatched, being returned, returned, or whose
  // return failed), newest first: the operator's list and each merchant's console page. Credited
  // Pix, nearly all of them, stay out of the index.
  await db.schema
    .createIndex('pix_received_uncredited')
    .on('pix_received')
    .column('created_at')
    .where(sql.ref('disposition'), '<>', 'credited')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('pix_received_uncredited').execute();
  await db.schema.alterTable('pix_received').dropColumn('unmatched_posted').execute();
}
