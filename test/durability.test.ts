import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import type { RailOrder } from '../src/rails/rails.js';
import { Store } from '../src/store/store.js';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { ADMIN_TOKEN, signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall, runCli, startServerProcess, type ServerProcess } from './support/process.js';
import { eventually, sleep } from './support/receiver.js';

const PIX_CREATE = '/api/v3/bra/createCollectingOrder';
const PIX_QUERY = '/api/v3/bra/query/collectingOrder';
const KEN_TRANSFER = '/api/v3/ken/createTransferOrder';
const KEN_TRANSFER_QUERY = '/api/v3/ken/query/transferOrder';

describe(`one commit per request (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: { merchantId: string; credentials: Credentials };
  const call = (path: string, body: unknown, nonce?: string, credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body, ...(nonce !== undefined && { nonce }) }, gw.clock.now());

  before(async () => {
    // No workers on this node: its units of work are the requests' own.
    gw = await startTestGateway({ workers: false, env: { RAIL_LEASE_MS: '1000', RAIL_POLL_INTERVAL_MS: '50' } });
    merchant = await gw.merchantWithKey();
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '100000',
      reason: 'durability tests',
    });
  });
  after(async () => {
    await gw.close();
  });

  it('refuses a replayed nonce on every signed route, whatever the first request got', async () => {
    const document = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as {
      paths: Record<string, Record<string, { 'x-permission'?: string }>>;
    };
    const signed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        // Admin operations carry an x-permission too (an operator's); merchant endpoints are under /api.
        .filter(([, op]) => op['x-permission'] !== undefined && !path.startsWith('/admin/'))
        .map(([method]) => ({ path, method: method.toUpperCase() as 'GET' | 'POST' })),
    );
    assert.ok(signed.length >= 19, `every merchant endpoint is listed (${signed.length})`);
    for (const route of signed) {
      const nonce = randomUUID();
      const request = { method: route.method, path: route.path, body: {}, query: {}, nonce };
      const first = await signedCall(gw.url, merchant.credentials, request, gw.clock.now());
      assert.notEqual(first.body.code, '307', `${route.method} ${route.path}: the first request is not a replay`);
      const replay = await signedCall(gw.url, merchant.credentials, request, gw.clock.now());
      assert.equal(replay.body.code, '307', `${route.method} ${route.path}: ${replay.body.msgEn}`);
      assert.match(replay.body.msgEn, /nonce was already used/);
    }
  });

  it('answers a create with the nonce, the order and its hand-over in one unit of work', async () => {
    const body = { amount: '10.00', channelType: 'PIX', externalOrderId: `one-${randomUUID()}` };
    const before = { ...gw.gateway.store.commitStats };
    const created = await call(PIX_CREATE, body);
    assert.equal(created.body.code, '200');
    const units = gw.gateway.store.commitStats.units - before.units;
    // One unit: the sandbox rail is a simulator (Rail.local), so its answer is recorded in the
    // create's own unit too; a provider's rail adds a second unit, after the commit, for its answer.
    assert.equal(units, 1, "the nonce is not a unit of its own, nor the simulator's answer");
    const replay = await call(PIX_CREATE, body);
    assert.equal(replay.body.code, '200', 'an identical repeat with a new nonce is answered');
    assert.equal(replay.body.data.currencyOrderVo.orderId, created.body.data.currencyOrderVo.orderId);
  });

  it('refuses a replayed create as a replay, and the replay writes nothing', async () => {
    const nonce = randomUUID();
    const body = { amount: '10.00', channelType: 'PIX', externalOrderId: `replay-${randomUUID()}` };
    assert.equal((await call(PIX_CREATE, body, nonce)).body.code, '200');
    const other = { ...body, externalOrderId: `replay-other-${randomUUID()}` };
    const headers = signedHeaders(merchant.credentials, other, gw.clock.now(), nonce);
    const replay = await fetch(new URL(PIX_CREATE, gw.url), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(other),
    });
    assert.equal(((await replay.json()) as { code: string }).code, '307');
    const lookup = await call(PIX_QUERY, { externalOrderId: other.externalOrderId, orderId: 'BC0' });
    assert.equal(lookup.body.code, '300', 'no order was made for the replayed nonce');
  });

  it('hands over an order whose node stalled, from another node once the lease ran out, with the same key', async () => {
    const stalled = gw.gateway.rails.mpesaB2c;
    const start = stalled.start;
    const seen: RailOrder[] = [];
    let release: (() => void) | undefined;
    // It stands for a provider's rail now: called after the commit, never inside the create's unit.
    stalled.local = false;
    stalled.start = (order) => {
      seen.push(order);
      // The first node never hears back (as if it had died mid-call); its late answer comes after the lease.
      return new Promise((resolve) => {
        release = () => void start(order).then(resolve);
      });
    };
    const second = await startTestGateway({
      sameDatabaseAs: gw,
      env: { RAIL_LEASE_MS: '1000', RAIL_POLL_INTERVAL_MS: '50' },
    });
    try {
      second.clock.advance(gw.clock.now() - second.clock.now());
      const takenOver: RailOrder[] = [];
      second.gateway.rails.mpesaB2c.local = false;
      const secondStart = second.gateway.rails.mpesaB2c.start;
      second.gateway.rails.mpesaB2c.start = (order) => {
        takenOver.push(order);
        return secondStart(order);
      };
      const body = {
        channelType: 'BANK',
        currencyAmount: '100',
        externalOrderId: `stall-${randomUUID()}`,
        phone: '254110000001',
      };
      const answer = call(KEN_TRANSFER, body);
      await eventually(async () => (seen.length > 0 ? true : undefined));
      second.clock.advance(1_001);
      const query = async () => {
        const orderId = seen[0]?.orderId ?? '';
        const record = await signedCall(
          second.url,
          merchant.credentials,
          { path: KEN_TRANSFER_QUERY, body: { externalOrderId: body.externalOrderId, orderId } },
          second.clock.now(),
        );
        return record.body.data?.[0] as { channelOrderId: string } | undefined;
      };
      const handed = await eventually(async () => {
        const record = await query();
        return record !== undefined && record.channelOrderId !== '' ? record : undefined;
      });
      assert.match(handed.channelOrderId, /^AG_/);
      assert.deepEqual(
        takenOver.map((o) => [o.idempotencyKey, o.earlierAttempts]),
        [[`${seen[0]?.orderId}.start`, 1]],
        'the other node asks with the same key, knowing an attempt came before',
      );
      release?.();
      assert.equal((await answer).body.code, '200', 'the merchant is answered once the stalled attempt ends');
      assert.equal((await query())?.channelOrderId, handed.channelOrderId, 'the late answer changed nothing');
    } finally {
      stalled.start = start;
      stalled.local = true;
      await second.close();
    }
  });
});

/** A node killed (SIGKILL) while creates are in flight, restarted on the same data. */
describe(`creates across a crash (${databaseLabel})`, () => {
  let env: Record<string, string>;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const running = new Set<ServerProcess>();

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-crash-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    env = {
      CASHGATE_DATA_DIR: dataDir,
      CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_ACTIVATION_DELAY_MS: '0',
      RATE_LIMIT_PER_KEY_PER_MINUTE: '1000000',
      RAIL_POLL_INTERVAL_MS: '100',
      LOG_LEVEL: 'info',
      ...(database !== undefined && { DATABASE_URL: database.url }),
    };
  });
  afterEach(async () => {
    await Promise.all([...running].map((server) => server.kill()));
    running.clear();
  });
  after(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const waitingForRail = async (store: Store) =>
    Number(
      (
        await store.read
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('channel_order_id', 'is', null)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('loses no order answered 200, and hands every committed order to its rail after the restart', async (t) => {
    const first = await startServerProcess(env);
    running.add(first);
    const merchant = await adminCall(first, ADMIN_TOKEN, 'POST', '/admin/v1/merchants', { name: 'Crash' });
    const merchantId = merchant.body.merchantId as string;
    const key = await adminCall(first, ADMIN_TOKEN, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: '0.0.0.0',
    });
    const credentials: Credentials = { accessKey: key.body.accessKey, secretKey: key.body.secretKey };
    await adminCall(first, ADMIN_TOKEN, 'POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '1000000',
      reason: 'crash test',
    });

    // Creates in flight on 16 connections, PIX collections and Kenya transfers, until the kill.
    const answered: { path: string; externalOrderId: string; orderId: string }[] = [];
    let killed = false;
    let seq = 0;
    const loop = async (lane: number) => {
      while (!killed) {
        const transfer = (seq += 1) % 2 === 0;
        const externalOrderId = `crash-${lane}-${seq}`;
        const path = transfer ? KEN_TRANSFER : PIX_CREATE;
        const body = transfer
          ? { channelType: 'BANK', currencyAmount: '10', externalOrderId, phone: '254110000001' }
          : { amount: '10.00', channelType: 'PIX', externalOrderId };
        try {
          const response = await signedCall(first.url, credentials, { path, body }, Date.now());
          const data = response.body.data as { orderId?: string; currencyOrderVo?: { orderId: string } };
          const orderId = data.currencyOrderVo?.orderId ?? data.orderId;
          if (response.body.code === '200' && orderId !== undefined) answered.push({ path, externalOrderId, orderId });
        } catch {
          // the connection died with the process
        }
      }
    };
    const lanes = Array.from({ length: 16 }, (_, lane) => loop(lane));
    await sleep(1_500);
    await first.kill();
    running.delete(first);
    killed = true;
    await Promise.all(lanes);
    assert.ok(answered.length > 20, `creates were answered before the kill (${answered.length})`);
    const store = Store.open({ databaseUrl: database?.url, dataDir });
    t.diagnostic(
      `${answered.length} creates answered before the kill; ${await waitingForRail(store)} committed orders not yet handed to their rail`,
    );

    const restarted = await startServerProcess(env);
    running.add(restarted);
    for (const { path, externalOrderId, orderId } of answered) {
      const queryPath = path === KEN_TRANSFER ? KEN_TRANSFER_QUERY : PIX_QUERY;
      const found = await signedCall(
        restarted.url,
        credentials,
        { path: queryPath, body: { externalOrderId, orderId } },
        Date.now(),
      );
      assert.equal(found.body.code, '200', `order ${orderId} answered 200 before the kill is still there`);
    }
    // Every order that committed (answered or not) reaches its rail, with no repeat from the merchant.
    try {
      await eventually(
        async () => ((await waitingForRail(store)) === 0 ? true : undefined),
        15_000,
        'every committed order to have its rail reference',
      );
      const open = await store.read
        .selectFrom('rail_tasks')
        .select(['id', 'state'])
        .where('next_attempt_at', 'is not', null)
        .execute();
      assert.deepEqual(open, [], 'every hand-over is settled');
      const started = await store.read
        .selectFrom('rail_tasks')
        .select('order_id')
        .where('action', '=', 'start')
        .execute();
      const orders = await store.read.selectFrom('orders').select('id').execute();
      assert.equal(started.length, orders.length, 'one hand-over per order: none started twice');
    } finally {
      await store.close();
    }
    const audit = await runCli(['audit'], env);
    assert.equal(audit.code, 0, `the audit passes after the crash:\n${audit.stdout}${audit.stderr}`);
  });
});
