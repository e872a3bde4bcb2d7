import { describe, it } from 'node:test';
import { TEST_DATABASE_URL } from './support/database.js';

// Every HTTP suite runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set. Say so when it is not.
describe('PostgreSQL', () => {
  if (TEST_DATABASE_URL === undefined) {
    it.skip('suites on PostgreSQL skipped: TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)');
  } else {
    it(`suites ran on PostgreSQL at ${new URL(TEST_DATABASE_URL).host}`, () => undefined);
  }
});
