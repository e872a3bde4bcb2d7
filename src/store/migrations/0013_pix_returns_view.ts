import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
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
}
