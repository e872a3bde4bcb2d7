import type { Migration, MigrationProvider } from 'kysely';
import * as core from './0001_core.js';

/** Every migration, in order. One set serves SQLite and PostgreSQL. */
const migrations: Record<string, Migration> = {
  '0001_core': core,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
