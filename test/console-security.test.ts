import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleSignIn, createConsoleUser, type ConsoleClient } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const PIX_COLLECT = '/api/v3/bra/createCollectingOrder';
const XSS = '<script>alert("x")</script>';

/**
 * Merchant A's console user tries every console route that takes an id with merchant B's ids: each
 * is a 404, and nothing of B's changes. Merchant-supplied text stays text.
 */
describe(`console: one merchant cannot reach another's data (${databaseLabel})`, () => {
  let gw: TestGateway;
  let a: ConsoleClient;
  const b = {
    merchantId: '',
    accessKey: '',
    secretKey: '',
    orderId: '',
    requestId: '',
    memo: 'B-only adjustment 7f3c',
  };

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const merchantA = await gw.merchantWithKey();
    const merchantB = await gw.merchantWithKey({ debug: true });
    Object.assign(b, { merchantId: merchantB.merchantId, ...merchantB.credentials });
    a = await consoleSignIn(gw, merchantA.merchantId);
    const created = await signedCall(
      gw.url,
      merchantB.credentials,
      {
        path: PIX_COLLECT,
        body: {
          amount: '10.00',
          channelType: 'PIX',
          externalOrderId: `sec-${Date.now()}`,
          userInfoType: 'CPF',
          userInfoNo: '52998224725',
          userInfoName: 'Maria',
        },
      },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', created.body.msgEn);
    b.orderId = created.body.data.currencyOrderVo.orderId;
    const failedCall = await signedCall(
      gw.url,
      merchantB.credentials,
      { path: PIX_COLLECT, body: { amount: 'x' } },
      gw.clock.now(),
    );
    b.requestId = failedCall.requestId ?? '';
    assert.ok(b.requestId !== '', 'B has a request log entry');
    const adjusted = await gw.admin('POST', `/admin/v1/merchants/${b.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '5.00',
      reason: b.memo,
    });
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
  });
  after(() => gw.close());

  it('answers 404 on every route that names one of B’s keys, orders or requests', async () => {
    const reads = [`/console/keys/${b.accessKey}`, `/console/orders/${b.orderId}`, `/console/requests/${b.requestId}`];
    for (const path of reads) assert.equal((await a.get(path)).status, 404, `GET ${path}`);
    const writes: [string, Record<string, string | string[]>][] = [
      [`/console/keys/${b.accessKey}`, { label: 'taken over', permissions: ['all'], ipWhitelist: '0.0.0.0' }],
      [`/console/keys/${b.accessKey}/enabled`, { enabled: '0' }],
      [`/console/keys/${b.accessKey}/delete`, {}],
      [`/console/orders/${b.orderId}/callbacks`, {}],
    ];
    for (const [path, fields] of writes) assert.equal((await a.post(path, fields)).status, 404, `POST ${path}`);
    const keys = await gw.admin('GET', `/admin/v1/merchants/${b.merchantId}/api-keys`);
    const key = keys.body.apiKeys.find((k: { accessKey: string }) => k.accessKey === b.accessKey);
    assert.equal(key.status, 'active', 'B’s key is untouched');
    assert.equal(key.label, '', 'B’s key label is untouched');
    const history = await gw.admin('GET', `/admin/v1/orders/${b.orderId}/callbacks`);
    assert.equal(history.body.events.length, 0, 'no callback was re-triggered for B’s order');
  });

  it('does not let A sign with B’s key in the signature tool, or filter its request log by it', async () => {
    const tool = await a.post('/console/signature', {
      method: 'POST',
      params: '{"currencyType":"BRL"}',
      accessKey: b.accessKey,
      timestamp: String(gw.clock.now()),
      nonce: '11111111-2222-4333-8444-555555555555',
      sign: '',
    });
    assert.equal(tool.status, 400, 'refused');
    assert.doesNotMatch(tool.text, /id="computed-sign"/, 'no sign computed');
    const log = await a.get(`/console/requests?key=${b.accessKey}`);
    assert.equal(log.status, 400);
    assert.doesNotMatch(log.text, new RegExp(b.requestId), 'B’s request is not listed');
  });

  it('keeps B out of A’s lists, statement and CSV', async () => {
    const orders = await a.get(`/console/orders?q=${b.orderId}`);
    assert.equal(orders.status, 200);
    assert.doesNotMatch(orders.text, new RegExp(`/console/orders/${b.orderId}`), 'B’s order is not found');
    const callbacks = await a.get(`/console/callbacks?order=${b.orderId}`);
    assert.doesNotMatch(callbacks.text, new RegExp(`href="/console/orders/${b.orderId}"`), 'nor in the callback log');
    const today = new Date(gw.clock.now()).toISOString().slice(0, 10);
    const csv = await a.get(`/console/balances/statement.csv?currency=BRL&from=${today}&to=${today}`);
    assert.equal(csv.status, 200);
    assert.doesNotMatch(csv.text, new RegExp(b.memo), 'B’s ledger entries are not in A’s statement');
    const page = await a.get(`/console/balances?currency=BRL&from=${today}&to=${today}`);
    assert.doesNotMatch(page.text, new RegExp(b.memo));
  });

  it('logs a debug key’s body refused before authentication, and caps entries whose signature did not verify', async () => {
    const response = await fetch(new URL(PIX_COLLECT, gw.url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        access_key: b.accessKey,
        timestamp: String(gw.clock.now()),
        nonce: '11111111-2222-4333-8444-555555555555',
        sign: 'A'.repeat(27) + '=',
      },
      body: '{"amount": ',
    });
    const envelope = (await response.json()) as { code: string; msgEn: string };
    const requestId = response.headers.get('x-request-id') ?? '';
    assert.equal(envelope.code, '300');
    assert.match(
      envelope.msgEn,
      new RegExp(`log: http://[^;]+/console/requests/${requestId}`),
      'the error links to its log entry',
    );
    const logged = () =>
      gw.gateway.store.read
        .selectFrom('request_log')
        .select(['request_id', 'code'])
        .where('access_key', '=', b.accessKey)
        .execute();
    assert.ok(
      (await logged()).some((r) => r.request_id === requestId && r.code === '300'),
      'the refused body is in the log',
    );

    // Start at the top of a minute, so the whole burst falls in one minute of the cap.
    gw.clock.advance(60_000 - (gw.clock.now() % 60_000) + 100);
    const before = (await logged()).length;
    const forged = (i: number) =>
      fetch(new URL('/api/v3/bra/query/bank', gw.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          access_key: b.accessKey,
          timestamp: String(gw.clock.now()),
          nonce: `11111111-2222-4333-8444-${String(i).padStart(12, '0')}`,
          sign: 'B'.repeat(27) + '=',
        },
        body: '{"currencyType":"BRL"}',
      }).then((r) => r.arrayBuffer());
    for (let i = 0; i < 80; i += 8) await Promise.all(Array.from({ length: 8 }, (_, j) => forged(i + j)));
    const added = (await logged()).length - before;
    assert.ok(added <= 60, `at most 60 unverified entries a minute per key (got ${added})`);
    assert.ok(added >= 50, `but they are recorded (got ${added})`);
  });

  it('shows merchant and user names as text', async () => {
    const merchant = await gw.admin('POST', '/admin/v1/merchants', { name: `Shop ${XSS}` });
    const user = await createConsoleUser(gw, merchant.body.merchantId, { name: `Ana ${XSS}` });
    const client = await consoleSignIn(gw, merchant.body.merchantId, user);
    const page = await client.get('/console');
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /<script>alert/, 'no script element from merchant text');
    assert.match(page.text, /Shop &lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
    assert.match(page.text, /Ana &lt;script&gt;/);
  });
});
