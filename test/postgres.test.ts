import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { TEST_DATABASE_URL } from './support/database.js';
import { signedCall, startTestGateway } from './support/gateway.js';

// Every HTTP suite runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set. Say so when it is not.
describe('PostgreSQL', () => {
  if (TEST_DATABASE_URL === undefined) {
    it.skip(
      'suites on PostgreSQL skipped: TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)',
    );
    return;
  }

  it('survives the database dropping its idle connections', async () => {
    const gw = await startTestGateway();
    try {
      const k = await gw.merchantWithKey();
      const call = () =>
        signedCall(gw.url, k.credentials, { path: '/api/v3/bra/query/bank', body: {} }, gw.clock.now());
      assert.equal((await call()).body.code, '200');
      const database = new URL(gw.databaseUrl ?? '').pathname.slice(1);
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        const killed = await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [database],
        );
        assert.ok((killed.rowCount ?? 0) > 0, 'the gateway had connections to drop');
      } finally {
        await admin.end();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal((await call()).body.code, '200', 'new connections replace the dropped ones');
    } finally {
      await gw.close();
    }
  });
});
