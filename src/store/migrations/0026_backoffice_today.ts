import { sql, type Kysely } from 'kysely';

// The back office's Today counts only small sets (waiting or failed states, recent windows), each
// from an index, so that the page is as fast at a million orders as at ten thousand.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Callbacks failing: the retrying ones (pending or delivering after an attempt) and those that
  // failed for good in the last day, by state and time instead of every event of the state ever.
  await db.schema
    .createIndex('callback_events_state_updated')
    .on('callback_events')
    .columns(['state', 'updated_at'])
    .execute();
  // Token sends not confirmed: the open states, oldest first, of every chain at once.
  await db.schema.createIndex('chain_sends_state_created').on('chain_sends').columns(['state', 'created_at']).execute();
  // SPEI transfers no waiting order took, recent ones: not the credited ones of the same day.
  await db.schema
    .createIndex('spei_abonos_uncredited')
    .on('spei_abonos')
    .column('created_at')
    .where(sql.ref('disposition'), '<>', 'credited')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('spei_abonos_uncredited').execute();
  await db.schema.dropIndex('chain_sends_state_created').execute();
  await db.schema.dropIndex('callback_events_state_updated').execute();
}
