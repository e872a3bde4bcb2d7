import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '../src/logger.js';
import { noncePruner } from '../src/workers/nonce-pruner.js';
import { startWorkers } from '../src/workers/worker.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type SignedCall, type TestGateway } from './support/gateway.js';

const BANKS = '/api/v3/bra/query/bank';
const BRA_COLLECT = '/api/v3/bra/createCollectingOrder';
const KEN_COLLECT = '/api/v3/ken/createCollectingOrder';
const KEN_TRANSFER = '/api/v3/ken/createTransferOrder';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Reads the Prometheus text exposition format: one sample per line that is not a comment. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `a sample line: ${line}`);
    const [, name = '', labelText = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const label of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name, labels, value: Number(value) });
  }
  return samples;
}

/** The samples of a metric whose labels include every one given. */
function series(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The value of the one sample of a metric with exactly these labels (undefined when there is none). */
function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(found.length <= 1, `at most one ${name} series with ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

describe(`operator metrics at /metrics (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  // The rate limit is five requests a minute per key: each call first lets a token's worth of time pass.
  const call = (c: SignedCall, credentials = merchant.credentials) => {
    gw.clock.advance(12_001);
    return signedCall(gw.url, credentials, c, gw.clock.now());
  };
  const scrape = async (): Promise<Sample[]> => {
    const response = await fetch(new URL('/metrics', gw.url));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    return parseExposition(await response.text());
  };

  before(async () => {
    // No background workers: the test runs expiry, settlement and pruning itself, and counts them exactly.
    gw = await startTestGateway({ workers: false, env: { RATE_LIMIT_PER_KEY_PER_MINUTE: '5' } });
    merchant = await gw.merchantWithKey();
    const fee = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/bra.collection.PIX`, {
      reason: 'test fee',
      percentBps: 0,
      fixed: '0.00',
    });
    assert.equal(fee.status, 200, JSON.stringify(fee.body));
    const delay = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/settlement`, { delayMs: 60_000 });
    assert.equal(delay.status, 200, JSON.stringify(delay.body));
  });
  after(async () => {
    await gw.close();
  });

  it('keeps the metrics dashboards already rely on', async () => {
    const names = new Set((await scrape()).map((s) => s.name));
    for (const name of [
      'cashgate_callback_queue_depth',
      'cashgate_callback_oldest_due_age_seconds',
      'cashgate_store_commits_total',
      'cashgate_store_units_total',
      'cashgate_process_cpu_seconds_total',
    ])
      assert.ok(names.has(name), `${name} is still served`);
  });

  it('counts HTTP requests by route pattern, method and status, with their latency', async () => {
    const before = await scrape();
    const banks = { method: 'POST', route: BANKS, status: '200' };
    const was = valueOf(before, 'cashgate_http_requests_total', banks) ?? 0;
    for (let n = 0; n < 3; n += 1) assert.equal((await call({ path: BANKS, body: {} })).body.code, '200');
    const missing = await fetch(new URL('/no/such/path?x=1', gw.url));
    assert.equal(missing.status, 400, 'route_not_found is a 300 in the envelope');
    const admin = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/balances`);
    assert.equal(admin.status, 200);

    const after = await scrape();
    assert.equal(valueOf(after, 'cashgate_http_requests_total', banks), was + 3, 'three bank lists');
    assert.equal(
      valueOf(after, 'cashgate_http_requests_total', { method: 'GET', route: 'unmatched', status: '400' }),
      (valueOf(before, 'cashgate_http_requests_total', { method: 'GET', route: 'unmatched', status: '400' }) ?? 0) + 1,
      'a path no route serves is counted as unmatched',
    );
    assert.equal(
      valueOf(after, 'cashgate_http_requests_total', {
        method: 'GET',
        route: '/admin/v1/merchants/:merchantId/balances',
        status: '200',
      }),
      1,
      'the route pattern, not the URL with its id',
    );
    const routes = new Set(series(after, 'cashgate_http_requests_total').map((s) => s.labels.route ?? ''));
    assert.ok(
      [...routes].every((route) => !route.includes(merchant.merchantId) && !route.includes('?')),
      `no raw URL among the routes: ${[...routes].join(', ')}`,
    );
    const bankCount = valueOf(after, 'cashgate_http_request_duration_seconds_count', {
      method: 'POST',
      route: BANKS,
    });
    assert.ok(bankCount !== undefined && bankCount >= 3, 'the latency histogram counts the bank lists');
    const inf = valueOf(after, 'cashgate_http_request_duration_seconds_bucket', {
      method: 'POST',
      route: BANKS,
      le: '+Inf',
    });
    assert.equal(inf, bankCount, 'every observation is in the +Inf bucket');
  });

  it('counts authentication refusals by code and reason, a replay included', async () => {
    const other = await gw.merchantWithKey({ permissions: ['balance'] });
    const limited = await gw.merchantWithKey();
    const now = gw.clock.now();
    const expect = (response: { body: { code: string } }, code: string) =>
      assert.equal(response.body.code, code, JSON.stringify(response.body));

    expect(
      await call({ path: BANKS, body: {} }, { accessKey: merchant.credentials.accessKey, secretKey: 'x'.repeat(32) }),
      '307',
    );
    expect(await call({ path: BANKS, body: {}, timestamp: now - 3_600_000 }), '307');
    expect(await call({ path: BANKS, body: {} }, { accessKey: 'AKnosuchkey000', secretKey: 'x'.repeat(32) }), '307');
    expect(await call({ path: BANKS, body: {}, headers: { sign: undefined } }), '307');
    expect(await call({ path: BANKS, body: {} }, other.credentials), '301');
    // A replay of an accepted request: found when the route records the nonce.
    const nonce = randomUUID();
    expect(await call({ path: BANKS, body: {}, nonce }), '200');
    expect(await call({ path: BANKS, body: {}, nonce }), '307');
    // A replay of a refused request: found by the authentication step itself.
    const refusedNonce = randomUUID();
    expect(await call({ path: BANKS, body: {}, nonce: refusedNonce }, other.credentials), '301');
    expect(await call({ path: BANKS, body: {}, nonce: refusedNonce }, other.credentials), '307');
    // The rate limit is five a minute per key.
    const codes: string[] = [];
    for (let n = 0; n < 7; n += 1)
      codes.push((await signedCall(gw.url, limited.credentials, { path: BANKS, body: {} }, gw.clock.now())).body.code);
    assert.deepEqual(codes, ['200', '200', '200', '200', '200', '429', '429']);
    // A parameter error found while authenticating is no refusal of authentication.
    expect(await call({ path: BANKS, rawBody: '[1]' }), '300');

    const samples = await scrape();
    const refusals = Object.fromEntries(
      series(samples, 'cashgate_auth_refusals_total').map((s) => [`${s.labels.code}/${s.labels.reason}`, s.value]),
    );
    assert.deepEqual(refusals, {
      '307/signature_mismatch': 1,
      '307/timestamp_outside_window': 1,
      '307/unknown_access_key': 1,
      '307/header_missing': 1,
      '301/permission_denied': 2,
      '307/nonce_reused': 2,
      '429/rate_limited': 2,
    });
  });

  it('counts orders created and statuses reached once committed, never a rolled back create', async () => {
    const created = await call({
      path: BRA_COLLECT,
      body: { amount: '123.45', channelType: 'PIX', externalOrderId: `m-pix-${Date.now()}` },
    });
    expect200(created);
    const orderId = created.body.data.currencyOrderVo.orderId as string;
    // The same request again is answered from the first: no second order.
    const repeat = await call({
      path: BRA_COLLECT,
      body: {
        amount: '123.45',
        channelType: 'PIX',
        externalOrderId: created.body.data.currencyOrderVo.externalOrderId,
      },
    });
    assert.equal(repeat.body.data?.currencyOrderVo?.orderId, orderId, JSON.stringify(repeat.body));
    assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
    const ken = await call({
      path: KEN_COLLECT,
      body: {
        amount: '1500',
        channelType: 'CHARGE',
        externalOrderId: `m-ken-${Date.now()}`,
        phone: '254712345678',
        checkingPhone: '254712345123',
      },
    });
    expect200(ken);
    // Beyond the balance: the order and its event are written, then the freeze fails and the unit rolls back.
    const refused = await call({
      path: KEN_TRANSFER,
      body: {
        channelType: 'BANK',
        currencyAmount: '700',
        externalOrderId: `m-trf-${Date.now()}`,
        phone: '254110000001',
      },
    });
    assert.equal(refused.body.code, '300');
    assert.match(refused.body.msgEn, /insufficient balance/);

    const samples = await scrape();
    const pix = { area: 'bra', kind: 'collection', channel: 'PIX' };
    assert.equal(
      valueOf(samples, 'cashgate_orders_created_total', pix),
      1,
      'one PIX collection, the repeat not counted',
    );
    assert.equal(
      valueOf(samples, 'cashgate_orders_created_total', { area: 'ken', kind: 'collection', channel: 'CHARGE' }),
      1,
    );
    assert.deepEqual(
      series(samples, 'cashgate_orders_created_total', { area: 'ken', kind: 'transfer' }),
      [],
      'the rolled back transfer counts nothing',
    );
    assert.equal(valueOf(samples, 'cashgate_orders_status_reached_total', { ...pix, status: '2' }), 1, 'paid');
    assert.equal(
      valueOf(samples, 'cashgate_ledger_balance', { currency: 'BRL', kind: 'awaiting_settlement' }),
      123.45,
      'the paid amount awaits settlement, in reais',
    );
    assert.equal(
      valueOf(samples, 'cashgate_ledger_balance', { currency: 'BRL', kind: 'available' }) ?? 0,
      0,
      'nothing available yet (no account, or an empty one)',
    );
    assert.equal(valueOf(samples, 'cashgate_settlement_oldest_due_age_seconds'), 0, 'nothing due yet');
    for (const s of series(samples, 'cashgate_ledger_negative_accounts'))
      assert.equal(s.value, 0, `no negative account ${JSON.stringify(s.labels)}`);
  });

  it('counts expiries, settlements and their runs, and the settlement backlog', async () => {
    gw.clock.advance(7_200_000);
    let samples = await scrape();
    const age = valueOf(samples, 'cashgate_settlement_oldest_due_age_seconds');
    assert.ok(age !== undefined && age > 7_000, `the due settlement has waited about two hours (${String(age)})`);
    assert.equal(valueOf(samples, 'cashgate_settlement_runs_total'), 0);

    assert.equal(await gw.gateway.orders.expireDue(), 1, 'the Kenya collection expires');
    assert.equal(await gw.gateway.ledger.settleDue(), 1, 'the PIX collection settles');
    assert.equal(await gw.gateway.ledger.settleDue(), 0, 'a run with nothing due');

    samples = await scrape();
    const ken = { area: 'ken', kind: 'collection' };
    assert.equal(valueOf(samples, 'cashgate_orders_expired_total', ken), 1);
    assert.equal(
      valueOf(samples, 'cashgate_orders_status_reached_total', { ...ken, channel: 'CHARGE', status: '3' }),
      1,
    );
    assert.equal(valueOf(samples, 'cashgate_settlement_runs_total'), 2);
    assert.equal(valueOf(samples, 'cashgate_settlements_settled_total', { currency: 'BRL' }), 1);
    assert.equal(valueOf(samples, 'cashgate_settlement_oldest_due_age_seconds'), 0, 'the backlog is gone');
    assert.equal(valueOf(samples, 'cashgate_ledger_balance', { currency: 'BRL', kind: 'available' }), 123.45);
    assert.equal(valueOf(samples, 'cashgate_ledger_balance', { currency: 'BRL', kind: 'awaiting_settlement' }), 0);
  });

  it('counts the nonces the pruner deletes', async () => {
    const stored = Number(
      (
        await gw.gateway.store.read
          .selectFrom('request_nonces')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    assert.ok(stored > 10, `the signed requests above left their nonces (${stored})`);
    gw.clock.advance(600_000); // past every nonce's signature window
    const pruner = noncePruner({
      store: gw.gateway.store,
      clock: gw.clock,
      logger: createLogger('silent', process.stderr),
      registry: gw.gateway.metrics,
    });
    await pruner.run();
    await pruner.run();
    assert.equal(valueOf(await scrape(), 'cashgate_nonces_pruned_total'), stored, 'each stored nonce, once');
  });

  it('counts worker runs by outcome', async () => {
    const registry = new Registry();
    let ran = 0;
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const workers = startWorkers(
      [
        {
          name: 'good',
          intervalMs: 60_000,
          run: async () => {
            if (++ran === 2) done();
          },
        },
        {
          name: 'bad',
          intervalMs: 60_000,
          run: async () => {
            if (++ran === 2) done();
            throw new Error('this run fails');
          },
        },
      ],
      createLogger('silent', process.stderr),
      registry,
    );
    await finished;
    await workers.stop();
    const samples = parseExposition(await registry.metrics());
    assert.equal(valueOf(samples, 'cashgate_worker_runs_total', { worker: 'good', outcome: 'ok' }), 1);
    assert.equal(valueOf(samples, 'cashgate_worker_runs_total', { worker: 'bad', outcome: 'failed' }), 1);
  });
});

function expect200(response: { body: { code: string } }): void {
  assert.equal(response.body.code, '200', JSON.stringify(response.body));
}
