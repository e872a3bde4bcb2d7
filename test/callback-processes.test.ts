import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { ADMIN_TOKEN } from './support/gateway.js';
import { adminCall, startServerProcess, type ServerProcess } from './support/process.js';
import { eventually, sleep, startReceiver, type CallbackReceiver } from './support/receiver.js';

/** Tests that run several nodes at once: on SQLite one data directory is one node, so PostgreSQL only. */
const TWO_NODES =
  TEST_DATABASE_URL === undefined &&
  'needs PostgreSQL: on SQLite one data directory is one node (set TEST_DATABASE_URL)';

/**
 * Callbacks across real processes: crashes (SIGKILL) and several workers on one database. The
 * delivery lease keeps its default (CALLBACK_TIMEOUT_MS plus a margin): a restarted node takes up a
 * delivery cut by a crash because its predecessor is found dead (on SQLite, at start).
 */
describe(`callbacks across processes (${databaseLabel})`, () => {
  let env: Record<string, string>;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const running = new Set<ServerProcess>();
  const receivers: CallbackReceiver[] = [];

  const start = async (extra: Record<string, string> = {}, command: 'serve' | 'worker' = 'serve') => {
    const server = await startServerProcess({ ...env, ...extra }, command);
    running.add(server);
    return server;
  };
  const kill = async (server: ServerProcess) => {
    await server.kill();
    running.delete(server);
  };
  const admin = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    adminCall(server, ADMIN_TOKEN, method, path, body);
  const merchantWithCallback = async (server: ServerProcess, url: string) => {
    const merchant = await admin(server, 'POST', '/admin/v1/merchants', { name: 'Crash Test' });
    const key = await admin(server, 'POST', `/admin/v1/merchants/${merchant.body.merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: '0.0.0.0',
    });
    assert.equal(key.status, 200);
    assert.equal(
      (await admin(server, 'PUT', `/admin/v1/merchants/${merchant.body.merchantId}/callback`, { url })).status,
      200,
    );
    return merchant.body.merchantId as string;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-processes-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    env = {
      CASHGATE_DATA_DIR: dataDir,
      CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_ACTIVATION_DELAY_MS: '0',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      CALLBACK_POLL_INTERVAL_MS: '100',
      LOG_LEVEL: 'info',
      ...(database !== undefined && { DATABASE_URL: database.url }),
    };
  });
  afterEach(async () => {
    await Promise.all([...running].map((server) => kill(server)));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  after(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers after a restart a callback committed just before a crash', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const apiOnly = await start({ CASHGATE_WORKERS: 'false' });
    const merchantId = await merchantWithCallback(apiOnly, receiver.url);
    const sent = await admin(apiOnly, 'POST', `/admin/v1/merchants/${merchantId}/callback/test`, {});
    assert.equal(sent.body.state, 'pending', 'committed, not yet delivered');
    await kill(apiOnly);
    assert.equal(receiver.received.length, 0);

    const restarted = await start();
    const [got] = await receiver.waitFor(1);
    assert.equal(got?.headers.notify_id, sent.body.notifyId);
    const h = await eventually(async () => {
      const found = await admin(restarted, 'GET', `/admin/v1/orders/${sent.body.orderId}/callbacks`);
      return found.body.events[0].state === 'delivered' ? found.body : undefined;
    });
    assert.equal(h.attempts.length, 1);
  });

  it('delivers again, after a restart, a callback whose delivery was cut by a crash', async () => {
    let killed: Promise<void> | undefined;
    const crashing: { server?: ServerProcess } = {};
    const receiver = await startReceiver((_request, index) => {
      if (index === 0 && crashing.server !== undefined) {
        killed = kill(crashing.server); // the process dies while the receiver holds the request
        return 'hang';
      }
      return { status: 200 };
    });
    receivers.push(receiver);
    const server = await start();
    crashing.server = server;
    const merchantId = await merchantWithCallback(server, receiver.url);
    const sent = await admin(server, 'POST', `/admin/v1/merchants/${merchantId}/callback/test`, {});
    await receiver.waitFor(1);
    await killed;

    const restarted = await start();
    const got = await receiver.waitFor(2, 20_000);
    // Taken up because the dead node's lease was freed, not because it ran out.
    const metrics = await (await fetch(new URL('/metrics', restarted.url))).text();
    assert.match(metrics, /^cashgate_leases_freed_total\{kind="callback_delivery",reason="dead"\} 1$/m);
    assert.equal(got[1]?.headers.notify_id, sent.body.notifyId, 'the same event, delivered again');
    assert.equal(got[1]?.body, got[0]?.body);
    const h = await eventually(async () => {
      const found = await admin(restarted, 'GET', `/admin/v1/orders/${sent.body.orderId}/callbacks`);
      return found.body.events[0].state === 'delivered' ? found.body : undefined;
    });
    assert.deepEqual(
      h.attempts.map((a: any) => [a.attemptNo, a.outcome]),
      [
        [1, 'interrupted'],
        [2, 'delivered'],
      ],
      'the cut attempt is on record, and the delivery after it',
    );
  });

  it(
    'records a failed attempt, and does not stall, when a worker cannot open the signing secret',
    { skip: TWO_NODES },
    async () => {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const apiOnly = await start({ CASHGATE_WORKERS: 'false' });
      const merchantId = await merchantWithCallback(apiOnly, receiver.url);
      const sent = await admin(apiOnly, 'POST', `/admin/v1/merchants/${merchantId}/callback/test`, {});
      await start({ CASHGATE_MASTER_KEY: 'ab'.repeat(32) }, 'worker');
      const h = await eventually(async () => {
        const found = await admin(apiOnly, 'GET', `/admin/v1/orders/${sent.body.orderId}/callbacks`);
        // The history's two reads (events, then attempts) are not one snapshot: a read between
        // them may show the attempt while the event still looks in delivery, so wait for both.
        return found.body.attempts.length > 0 && found.body.events[0]?.state !== 'delivering' ? found.body : undefined;
      });
      assert.equal(h.attempts[0].outcome, 'failed');
      assert.match(h.attempts[0].error, /could not be opened \(check CASHGATE_MASTER_KEY/);
      assert.equal(h.events[0].state, 'pending', 'waiting for its retry, not stuck in delivery');
      assert.equal(receiver.received.length, 0, 'nothing unsigned was sent');
    },
  );

  it('two worker processes deliver 1,000 callbacks, each exactly once', { skip: TWO_NODES }, async () => {
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 20 }));
    receivers.push(receiver);
    const apiOnly = await start({ CASHGATE_WORKERS: 'false' });
    const merchantId = await merchantWithCallback(apiOnly, receiver.url);
    const total = 1_000;
    const notifyIds = new Set<string>();
    for (let i = 0; i < total; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, total - i) }, () =>
          admin(apiOnly, 'POST', `/admin/v1/merchants/${merchantId}/callback/test`, {}),
        ),
      );
      for (const sent of batch) notifyIds.add(sent.body.notifyId as string);
    }
    assert.equal(notifyIds.size, total);

    const workers = await Promise.all([start({}, 'worker'), start({}, 'worker')]);
    const metrics = await fetch(new URL('/metrics', workers[0].url));
    assert.match(await metrics.text(), /^cashgate_callback_queue_depth \d+$/m, 'a worker node serves /metrics');
    await receiver.waitFor(total, 60_000);
    await sleep(1_000);
    const counts = new Map<string, number>();
    for (const got of receiver.received)
      counts.set(String(got.headers.notify_id), (counts.get(String(got.headers.notify_id)) ?? 0) + 1);
    assert.equal(receiver.received.length, total, 'no callback delivered twice');
    assert.deepEqual(new Set(counts.keys()), notifyIds, 'every callback delivered');
    const delivered = workers.map(
      (w) =>
        w
          .output()
          .split('\n')
          .filter((line) => line.includes('"callback delivered"')).length,
    );
    assert.equal(
      delivered.reduce((sum, n) => sum + n, 0),
      total,
    );
    assert.ok(
      delivered.every((n) => n > 0),
      `both workers delivered some: ${delivered.join(' + ')}`,
    );
  });
});
