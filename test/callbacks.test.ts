import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { databaseLabel } from './support/database.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import {
  eventually,
  receiverPool,
  sleep,
  startReceiver,
  type CallbackReceiver,
  type ReceivedCallback,
} from './support/receiver.js';

/**
 * The spec's callback verification, written here from the spec's words rather than taken from the
 * SDK: body members plus access_key, timestamp and nonce; null and empty left out; sorted by key;
 * k=v joined with &; HMAC-SHA1 with the key's secret; standard Base64.
 */
function expectedSign(secretKey: string, received: ReceivedCallback): string {
  const map: Record<string, string> = {};
  for (const [key, value] of Object.entries(JSON.parse(received.body) as Record<string, unknown>)) {
    if (value === null || value === '') continue;
    map[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  for (const header of ['access_key', 'timestamp', 'nonce']) map[header] = String(received.headers[header]);
  const text = Object.keys(map)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => `${key}=${map[key]}`)
    .join('&');
  return createHmac('sha1', secretKey).update(text).digest('base64');
}

const FAST = {
  CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
  CALLBACK_RETRY_INTERVAL_MS: '300',
  CALLBACK_RETRY_WINDOW_MS: '60000',
  CALLBACK_TIMEOUT_MS: '1000',
  CALLBACK_POLL_INTERVAL_MS: '50',
};

async function sendTest(gw: TestGateway, merchantId: string, body: Record<string, unknown> = {}) {
  const sent = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/callback/test`, body);
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  return sent.body as {
    orderId: string;
    notifyId: string;
    eventId: string;
    state: string;
    payload: Record<string, unknown>;
  };
}

async function history(gw: TestGateway, orderId: string) {
  const found = await gw.admin('GET', `/admin/v1/orders/${orderId}/callbacks`);
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return found.body as { events: any[]; attempts: any[] };
}

function settled(gw: TestGateway, orderId: string, state: string) {
  return eventually(
    async () => {
      const h = await history(gw, orderId);
      return h.events.every((e) => e.state === state) ? h : undefined;
    },
    15_000,
    `order ${orderId} callbacks to be ${state}`,
  );
}

describe(`callbacks (${databaseLabel})`, () => {
  let gw: TestGateway;
  const receivers = receiverPool();
  const receiver = receivers.start;

  before(async () => {
    gw = await startTestGateway({ env: FAST });
  });
  after(async () => {
    await gw.close();
    await receivers.closeAll();
  });

  it('POSTs the exact payload with verifiable headers to the unified address', async () => {
    const r = await receiver();
    const { merchantId, credentials } = await gw.merchantWithKey();
    assert.equal(
      (await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: `${r.url}/hook` })).status,
      200,
    );
    const event = await sendTest(gw, merchantId);
    const [got] = await r.waitFor(1);
    assert.ok(got);
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hook');
    assert.deepEqual(JSON.parse(got.body), event.payload);
    assert.equal(got.body, JSON.stringify(event.payload), 'the body is exactly the stored payload');
    assert.equal(got.headers['content-type'], 'application/json;charset=utf-8');
    assert.match(String(got.headers['user-agent']), /^Cashgate\/\d+\.\d+\.\d+ /);
    assert.equal(got.headers.access_key, credentials.accessKey);
    assert.match(String(got.headers.timestamp), /^\d{13}$/);
    assert.match(String(got.headers.nonce), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(got.headers.notify_id, event.notifyId);
    assert.equal(got.headers.sign, expectedSign(credentials.secretKey, got));
    assert.notEqual(got.headers.sign, expectedSign('another secret', got));
    const h = await settled(gw, event.orderId, 'delivered');
    assert.equal(h.attempts.length, 1);
    assert.equal(h.attempts[0].httpStatus, 200);
    assert.equal(h.attempts[0].outcome, 'delivered');
    assert.equal(h.attempts[0].responseExcerpt, '{"code":"200","success":true}');
    assert.equal(r.received.length, 1, 'exactly one request for a 200');
  });

  it("sends to the order's own address over the unified one", async () => {
    const unified = await receiver();
    const own = await receiver();
    const { merchantId } = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: unified.url });
    await sendTest(gw, merchantId, { url: `${own.url}/own` });
    await own.waitFor(1);
    await sleep(200);
    assert.equal(unified.received.length, 0);
  });

  it('retries a 500 twice, spaced by the interval, then marks the event failed', async () => {
    const r = await receiver(() => ({ status: 500, body: 'boom' }));
    const { merchantId } = await gw.merchantWithKey();
    const event = await sendTest(gw, merchantId, { url: r.url });
    const got = await r.waitFor(3);
    const h = await settled(gw, event.orderId, 'failed');
    await sleep(900);
    assert.equal(r.received.length, 3, '1 attempt + 2 retries, nothing after');
    for (let i = 1; i < 3; i++) {
      const gap = (got[i]?.at ?? 0) - (got[i - 1]?.at ?? 0);
      assert.ok(gap >= 290, `retry ${i} came ${gap} ms after the previous attempt, not the 300 ms interval`);
    }
    assert.deepEqual(
      new Set(got.map((c) => c.headers.notify_id)),
      new Set([event.notifyId]),
      'notify_id stable across retries',
    );
    assert.equal(new Set(got.map((c) => c.headers.nonce)).size, 3, 'each retry has a fresh nonce');
    assert.equal(new Set(got.map((c) => c.body)).size, 1, 'each retry resends the same payload');
    assert.deepEqual(
      h.attempts.map((a) => [a.attemptNo, a.httpStatus, a.outcome]),
      [
        [1, 500, 'failed'],
        [2, 500, 'failed'],
        [3, 500, 'failed'],
      ],
    );
    assert.equal(h.attempts[0].responseExcerpt, 'boom');
    assert.match(h.attempts[0].error, /HTTP 500/);
  });

  for (const status of [201, 302]) {
    it(`counts HTTP ${status} as a failure and follows no redirect`, async () => {
      const r = await receiver((req) =>
        req.path === '/elsewhere' ? { status: 200 } : { status, headers: { location: '/elsewhere' } },
      );
      const { merchantId } = await gw.merchantWithKey();
      const event = await sendTest(gw, merchantId, { url: `${r.url}/hook` });
      const h = await settled(gw, event.orderId, 'failed');
      assert.deepEqual(
        h.attempts.map((a) => a.httpStatus),
        [status, status, status],
      );
      assert.ok(
        r.received.every((c) => c.path === '/hook'),
        'the Location was never requested',
      );
    });
  }

  it('times out a receiver that hangs while others are delivered meanwhile', async () => {
    const hanging = await receiver(() => 'hang');
    const quick = await receiver();
    const { merchantId } = await gw.merchantWithKey();
    const slow = await sendTest(gw, merchantId, { url: hanging.url });
    await hanging.waitFor(1);
    const fast = await sendTest(gw, merchantId, { url: quick.url });
    await quick.waitFor(1);
    const slowState = await history(gw, slow.orderId);
    assert.equal(slowState.attempts.length, 0, 'the hanging attempt is still in flight while the other was delivered');
    await settled(gw, fast.orderId, 'delivered');
    const h = await eventually(async () => {
      const s = await history(gw, slow.orderId);
      return s.attempts.length > 0 ? s : undefined;
    });
    assert.equal(h.attempts[0].outcome, 'failed');
    assert.match(h.attempts[0].error, /timeout/);
    assert.ok(h.attempts[0].latencyMs >= 900 && h.attempts[0].latencyMs < 5_000, `latency ${h.attempts[0].latencyMs}`);
  });

  it('re-triggers with the current state at once, the same notify_id, recorded as manual', async () => {
    const r = await receiver();
    const { merchantId } = await gw.merchantWithKey();
    const event = await sendTest(gw, merchantId, { url: r.url });
    await settled(gw, event.orderId, 'delivered');
    const again = await gw.admin('POST', `/admin/v1/orders/${event.orderId}/callbacks`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.event.trigger, 'manual');
    assert.equal(again.body.event.notifyId, event.notifyId);
    assert.equal(again.body.event.state, 'delivered');
    assert.equal(again.body.attempt.outcome, 'delivered');
    assert.equal(r.received.length, 2, 'sent before the admin call answered');
    assert.equal(r.received[1]?.headers.notify_id, event.notifyId);
    const h = await history(gw, event.orderId);
    assert.deepEqual(
      h.attempts.map((a) => a.trigger),
      ['automatic', 'manual'],
    );
  });

  it('records "no target" when there is no address, and a re-trigger resolves the address again', async () => {
    const r = await receiver();
    const { merchantId } = await gw.merchantWithKey();
    const event = await sendTest(gw, merchantId);
    assert.equal(event.state, 'no_target');
    assert.equal((await history(gw, event.orderId)).events[0].targetUrl, null);
    await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: r.url });
    const again = await gw.admin('POST', `/admin/v1/orders/${event.orderId}/callbacks`);
    assert.equal(again.body.event.targetUrl, r.url);
    assert.equal(again.body.attempt.outcome, 'delivered');
    assert.equal(r.received[0]?.headers.notify_id, event.notifyId);
  });

  it('a manual re-trigger that fails is recorded and not retried', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const { merchantId } = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: r.url });
    const event = await sendTest(gw, merchantId);
    await settled(gw, event.orderId, 'failed');
    const again = await gw.admin('POST', `/admin/v1/orders/${event.orderId}/callbacks`);
    assert.equal(again.body.event.state, 'failed');
    assert.equal(again.body.attempt.httpStatus, 503);
    await sleep(700);
    assert.equal(r.received.length, 4);
  });

  it("signs a test callback with the key asked for, and refuses a key that is not the merchant's", async () => {
    const r = await receiver();
    const { merchantId } = await gw.merchantWithKey();
    const second = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      permissions: ['query'],
      ipWhitelist: '0.0.0.0',
    });
    await sendTest(gw, merchantId, { url: r.url, accessKey: second.body.accessKey });
    const [got] = await r.waitFor(1);
    assert.ok(got);
    assert.equal(got.headers.access_key, second.body.accessKey);
    assert.equal(got.headers.sign, expectedSign(second.body.secretKey, got));
    const other = await gw.merchantWithKey();
    const refused = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/callback/test`, {
      accessKey: other.credentials.accessKey,
    });
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error.code, 'api_key_not_found');
  });

  it('never shows a password written in a callback address', async () => {
    const r = await receiver();
    const { merchantId } = await gw.merchantWithKey();
    const url = r.url.replace('http://', 'http://shop:s3cret@');
    const event = await sendTest(gw, merchantId, { url });
    await r.waitFor(1);
    assert.equal(r.received[0]?.headers.authorization, `Basic ${Buffer.from('shop:s3cret').toString('base64')}`);
    const h = await settled(gw, event.orderId, 'delivered');
    assert.doesNotMatch(JSON.stringify(h), /s3cret/);
    assert.match(h.attempts[0].url, /shop:\*\*\*@/);
  });

  it('answers 404 for an unknown order and for a merchant without keys, 401 without the token', async () => {
    assert.equal((await gw.admin('GET', '/admin/v1/orders/ord_nope/callbacks')).status, 404);
    assert.equal((await gw.admin('POST', '/admin/v1/orders/ord_nope/callbacks')).status, 404);
    const bare = await gw.admin('POST', '/admin/v1/merchants', { name: 'No Keys' });
    const refused = await gw.admin('POST', `/admin/v1/merchants/${bare.body.merchantId}/callback/test`, {});
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'no_signing_key');
    assert.equal((await gw.admin('POST', '/admin/v1/merchants/mch_nope/callback/test', {})).status, 404);
    const bad = await gw.admin('POST', `/admin/v1/merchants/${bare.body.merchantId}/callback/test`, {
      url: 'ftp://x.example',
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /url/);
    const anonymous = await fetch(new URL('/admin/v1/orders/ord_nope/callbacks', gw.url));
    assert.equal(anonymous.status, 401);
  });

  it('reports attempts, latency and the queue at /metrics', async () => {
    const response = await fetch(new URL('/metrics', gw.url));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    assert.match(text, /^cashgate_callback_attempts_total\{outcome="delivered"\} [1-9]\d*$/m);
    assert.match(text, /^cashgate_callback_attempts_total\{outcome="failed"\} [1-9]\d*$/m);
    assert.match(text, /^cashgate_callback_delivery_seconds_count [1-9]\d*$/m);
    assert.match(text, /^cashgate_callback_queue_depth \d+$/m);
    assert.match(text, /^cashgate_callback_oldest_due_age_seconds [\d.e+-]+$/m);
  });
});

describe(`callback concurrency per host (${databaseLabel})`, () => {
  it('a host with a backlog of hanging callbacks does not hold back another host', async () => {
    const gw = await startTestGateway({
      env: { ...FAST, CALLBACK_CONCURRENCY: '2', CALLBACK_CONCURRENCY_PER_HOST: '1', CALLBACK_TIMEOUT_MS: '3000' },
      workers: false,
    });
    const slow = await startReceiver(() => 'hang');
    const quick = await startReceiver();
    try {
      const { merchantId } = await gw.merchantWithKey();
      for (let i = 0; i < 12; i++) await sendTest(gw, merchantId, { url: slow.url });
      await sendTest(gw, merchantId, { url: quick.url });
      gw.gateway.callbacks.dispatcher.start();
      await quick.waitFor(1, 2_500);
      assert.equal(slow.received.length, 1, 'one at a time to the slow host, and the other host served meanwhile');
    } finally {
      await gw.close();
      await slow.close();
      await quick.close();
    }
  });
});

describe(`callback targets in private networks (${databaseLabel})`, () => {
  let gw: TestGateway;
  let r: CallbackReceiver;
  before(async () => {
    gw = await startTestGateway({ env: { ...FAST, CALLBACK_ALLOW_PRIVATE_NETWORKS: 'false' } });
    r = await startReceiver();
  });
  after(async () => {
    await gw.close();
    await r.close();
  });

  const port = () => new URL(r.url).port;
  for (const [label, url] of [
    ['127.0.0.1', () => `http://127.0.0.1:${port()}/hook`],
    ['a name resolving to loopback (localhost)', () => `http://localhost:${port()}/hook`],
    ['10.0.0.1', () => 'http://10.0.0.1/hook'],
    ['[::1]', () => `http://[::1]:${port()}/hook`],
    ['the IPv4-mapped [::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${port()}/hook`],
  ] as const) {
    it(`refuses ${label} and records why`, async () => {
      const { merchantId } = await gw.merchantWithKey();
      const event = await sendTest(gw, merchantId, { url: url() });
      const h = await settled(gw, event.orderId, 'failed');
      assert.equal(h.attempts[0].outcome, 'refused');
      assert.match(h.attempts[0].error, /target refused: .*(loopback|private)/);
      assert.equal(r.received.length, 0, 'nothing reached the receiver');
    });
  }
});
