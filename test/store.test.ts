import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pruneExpiredNonces, recordNonce } from '../src/auth/nonces.js';
import { CallbackOutbox } from '../src/callbacks/service.js';
import { systemClock } from '../src/clock.js';
import { prepared } from '../src/store/prepared.js';
import { isUniqueViolation, Store } from '../src/store/store.js';
import { WalSync } from '../src/store/wal-sync.js';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';

describe(`store (${databaseLabel})`, () => {
  let store: Store;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-store-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    store = Store.open({ databaseUrl: database?.url, dataDir });
    await store.migrate();
  });
  after(async () => {
    await store.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes a callback with its unit of work and wakes delivery only after the commit', async () => {
    const now = systemClock.now();
    await store.transact((tx) =>
      tx
        .insertInto('merchants')
        .values({
          id: 'mch_outbox',
          name: 'Outbox',
          language: 'en',
          callback_url: 'https://m.example/cb',
          created_at: now,
          updated_at: now,
        })
        .execute(),
    );
    let wakes = 0;
    const outbox = new CallbackOutbox(store, systemClock, () => (wakes += 1));
    const callback = {
      orderKind: 'test',
      merchantId: 'mch_outbox',
      accessKey: 'AKx',
      notifyUrl: null,
      payload: { a: '1' },
    };
    const events = (orderId: string) =>
      store.read.selectFrom('callback_events').selectAll().where('order_id', '=', orderId).execute();

    await assert.rejects(
      store.transact(async (tx) => {
        await outbox.enqueue(tx, { ...callback, orderId: 'ord_rolled_back' });
        throw new Error('the state change failed');
      }),
      /the state change failed/,
    );
    assert.deepEqual(await events('ord_rolled_back'), [], 'no callback is invented for a change that did not commit');
    assert.equal(wakes, 0);

    await store.transact((tx) => outbox.enqueue(tx, { ...callback, orderId: 'ord_committed' }));
    const [row, ...others] = await events('ord_committed');
    assert.ok(row !== undefined && others.length === 0);
    assert.equal(row.state, 'pending');
    assert.equal(row.target_url, 'https://m.example/cb', "the merchant's unified address, resolved at creation");
    assert.equal(row.payload, '{"a":"1"}');
    assert.equal(wakes, 1);
  });

  it('migrates idempotently', async () => {
    assert.deepEqual(await store.migrate(), []);
  });

  it('commits all of a unit of work or none of it', async () => {
    const merchant = { name: 'Atomic', language: 'en', callback_url: null, created_at: 1, updated_at: 1 };
    await assert.rejects(
      store.transact(async (tx) => {
        await tx
          .insertInto('merchants')
          .values({ ...merchant, id: 'mch_atomic_1' })
          .execute();
        await tx
          .insertInto('merchants')
          .values({ ...merchant, id: 'mch_atomic_1' })
          .execute();
      }),
      (error: unknown) => isUniqueViolation(error),
    );
    const rows = await store.read.selectFrom('merchants').select('id').where('id', '=', 'mch_atomic_1').execute();
    assert.deepEqual(rows, [], 'the first insert was rolled back with the failed second one');
  });

  it('keeps bigint milliseconds exact', async () => {
    const when = 1_795_412_351_492;
    await store.transact((tx) =>
      tx
        .insertInto('merchants')
        .values({ id: 'mch_time', name: 't', language: 'en', callback_url: null, created_at: when, updated_at: when })
        .execute(),
    );
    const row = await store.read
      .selectFrom('merchants')
      .select('created_at')
      .where('id', '=', 'mch_time')
      .executeTakeFirstOrThrow();
    assert.equal(row.created_at, when);
    assert.equal(typeof row.created_at, 'number');
  });

  it('records a nonce once per key and prunes only expired ones', async () => {
    assert.equal(
      await store.transact((tx) => recordNonce(tx, 'AK1', 'a0000000-0000-4000-8000-000000000001', 1_000)),
      true,
    );
    assert.equal(
      await store.transact((tx) => recordNonce(tx, 'AK1', 'A0000000-0000-4000-8000-000000000001', 9_000)),
      false,
    );
    assert.equal(
      await store.transact((tx) => recordNonce(tx, 'AK2', 'a0000000-0000-4000-8000-000000000001', 1_000)),
      true,
    );
    assert.equal(
      await store.transact((tx) => recordNonce(tx, 'AK1', 'a0000000-0000-4000-8000-000000000002', 5_000)),
      true,
    );
    assert.equal(await store.transact((tx) => pruneExpiredNonces(tx, 2_000, 1)), 1, 'batch limit respected');
    assert.equal(await store.transact((tx) => pruneExpiredNonces(tx, 2_000, 100)), 1);
    assert.equal(await store.transact((tx) => pruneExpiredNonces(tx, 2_000, 100)), 0);
    const left = await store.read.selectFrom('request_nonces').select(['access_key', 'expires_at']).execute();
    assert.deepEqual(left, [{ access_key: 'AK1', expires_at: 5_000 }]);
  });

  it('answers a readiness ping', async () => {
    await store.ping();
  });

  it('commits concurrent units together, a failing one alone rolled back and answered with its own error', async () => {
    const merchant = (id: string) => ({
      id,
      name: id,
      language: 'en',
      callback_url: null,
      created_at: 1,
      updated_at: 1,
    });
    const hooks: string[] = [];
    // The row the failing units collide with is there before they start: which of two concurrent
    // units inserts a key first is not this test's business.
    await store.transact((tx) => tx.insertInto('merchants').values(merchant('mch_taken_before')).execute());
    const commitsBefore = store.commitStats.commits;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        store.transact(async (tx) => {
          await tx
            .insertInto('merchants')
            .values(merchant(`mch_group_${i}`))
            .execute();
          store.afterCommit(tx, () => hooks.push(`mch_group_${i}`));
          // Every seventh unit fails after its write, and a duplicate key fails inside the database.
          if (i % 7 === 3) throw new Error(`unit ${i} refuses`);
          if (i % 7 === 5) await tx.insertInto('merchants').values(merchant('mch_taken_before')).execute();
          return i;
        }),
      ),
    );
    const stored = await store.read
      .selectFrom('merchants')
      .select('id')
      .where('id', 'like', 'mch_group_%')
      .orderBy('id')
      .execute();
    const expected = Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 7 !== 3 && i % 7 !== 5);
    assert.deepEqual(stored.map((row) => row.id).sort(), expected.map((i) => `mch_group_${i}`).sort());
    outcomes.forEach((outcome, i) => {
      if (i % 7 === 3) {
        assert.equal(outcome.status, 'rejected');
        assert.match(String(outcome.reason), new RegExp(`unit ${i} refuses`));
      } else if (i % 7 === 5) {
        assert.equal(outcome.status, 'rejected');
        assert.equal(isUniqueViolation(outcome.reason), true, `unit ${i}: its own error`);
      } else assert.deepEqual(outcome, { status: 'fulfilled', value: i });
    });
    assert.deepEqual(hooks.sort(), expected.map((i) => `mch_group_${i}`).sort(), 'hooks run for committed units only');
    if (store.dialect === 'sqlite') {
      const commits = store.commitStats.commits - commitsBefore;
      assert.ok(commits < 10, `40 concurrent units shared ${commits} commits`);
    }
  });

  it('builds a prepared query once and binds each call its own values, constants kept', async () => {
    let builds = 0;
    const insert = prepared((db, p: { accessKey: string; nonce: string; expiresAt: number }) => {
      builds += 1;
      return db
        .insertInto('request_nonces')
        .values({ access_key: p.accessKey, nonce: p.nonce, expires_at: p.expiresAt });
    });
    const expireAll = prepared((db, p: { accessKey: string }) =>
      db.updateTable('request_nonces').set({ expires_at: 0 }).where('access_key', '=', p.accessKey),
    );
    await store.transact(async (tx) => {
      await insert(tx, { accessKey: 'AKprepared', nonce: 'n-1', expiresAt: 111 });
      await insert(tx, { nonce: 'n-2', expiresAt: 222, accessKey: 'AKprepared' });
    });
    const rows = await store.read
      .selectFrom('request_nonces')
      .select(['nonce', 'expires_at'])
      .where('access_key', '=', 'AKprepared')
      .orderBy('nonce')
      .execute();
    assert.deepEqual(rows, [
      { nonce: 'n-1', expires_at: 111 },
      { nonce: 'n-2', expires_at: 222 },
    ]);
    assert.equal(builds, 1, 'the second call bound its values to the text the first one built');
    const updated = await store.transact((tx) => expireAll(tx, { accessKey: 'AKprepared' }));
    assert.equal(updated.numAffectedRows, 2n);
    const expired = await store.read
      .selectFrom('request_nonces')
      .select('expires_at')
      .where('access_key', '=', 'AKprepared')
      .execute();
    assert.deepEqual(
      expired.map((r) => r.expires_at),
      [0, 0],
      'the constant the query wrote itself',
    );
  });

  it('holds a read made while the log is flushed until the flush is done, and runs it before anything later', async (t) => {
    if (TEST_DATABASE_URL !== undefined) return t.skip('SQLite only: PostgreSQL makes its commits durable itself');
    const wal = join(dataDir, 'flush-test-wal');
    writeFileSync(wal, 'frames');
    const walSync = new WalSync(wal);
    try {
      const order: string[] = [];
      const read = (name: string) => () => {
        order.push(name);
        return Promise.resolve(name);
      };
      assert.equal(await walSync.whenSynced(read('idle')), 'idle', 'no flush in progress: the read runs at once');
      const flushed = walSync.sync().then(() => order.push('flushed'));
      const held = walSync.whenSynced(read('held'));
      await Promise.resolve();
      assert.deepEqual(order, ['idle'], 'the read waits while the flush runs');
      await flushed;
      assert.deepEqual(order, ['idle', 'held', 'flushed'], 'it runs as the flush ends, before what follows it');
      assert.equal(await held, 'held');
      assert.equal(walSync.flushes, 1);
    } finally {
      walSync.close();
    }
  });

  it('checkpoints the WAL on a thread of its own while writes go on, and keeps it from growing without end', async (t) => {
    if (TEST_DATABASE_URL !== undefined) return t.skip('SQLite only: PostgreSQL checkpoints by itself');
    const before = store.checkpointStats.checkpoints;
    const rounds = 400;
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          store.transact((tx) => recordNonce(tx, `AKcheckpoint${n}`, `${round}-${'x'.repeat(400)}`, Date.now())),
        ),
      );
    }
    assert.ok(store.checkpointStats.checkpoints > before, 'checkpoints ran while the units committed');
    const { n } = await store.read
      .selectFrom('request_nonces')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('access_key', 'like', 'AKcheckpoint%')
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), rounds * 20, 'every unit is there');
    // About 27 pages a round, 10,000 in all: past 4,000 frames the WAL is copied with no writer
    // beside it and starts over, so the file never holds much more than that.
    assert.ok(store.checkpointStats.waited >= 1, 'a group waited once for the WAL to be copied');
    const wal = statSync(join(dataDir, 'cashgate.sqlite-wal')).size;
    assert.ok(wal < 20 * 1024 * 1024, `the WAL started over (${wal} bytes)`);
  });

  it('prepares the writes of prepared queries once per PostgreSQL connection, by name', async (t) => {
    if (TEST_DATABASE_URL === undefined) return t.skip('PostgreSQL only: SQLite keeps every statement prepared');
    const named = await store.transact(async (tx) => {
      await recordNonce(tx, 'AKnamed', 'first', Date.now());
      await recordNonce(tx, 'AKnamed', 'second', Date.now());
      const { rows } = await sql<{ name: string; statement: string }>`
        select name, statement from pg_prepared_statements where name like 'cashgate_%'`.execute(tx);
      return rows;
    });
    assert.ok(
      named.some((row) => row.statement.startsWith('insert into "request_nonces"')),
      `the nonce insert is prepared by name: ${JSON.stringify(named)}`,
    );
    assert.ok(
      named.every((row) => !/^\s*select/i.test(row.statement)),
      'reads are not: their result columns may change under them',
    );
  });
});
