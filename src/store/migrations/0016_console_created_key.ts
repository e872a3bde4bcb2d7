import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The secret of an API key just created in the console, sealed, until the page after the form's
  // redirect shows it once: on the session row, so whichever node serves that page finds it.
  await db.schema.alterTable('console_sessions').addColumn('created_key_sealed', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_sessions').dropColumn('created_key_sealed').execute();
}
