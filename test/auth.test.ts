import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { signedRoute } from '../src/auth/signed-route.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type SignedCall, type TestGateway } from './support/gateway.js';

const BANKS = '/api/v3/bra/query/bank';
const JSON_UTF8 = 'application/json;charset=utf-8';

/** A GET route with query parameters, to prove GET signing; the spec's GET endpoints need the ledger. */
const echoRoute = signedRoute({
  method: 'GET',
  path: '/api/v3/test/echo',
  permission: 'query',
  tag: 'Test',
  summary: 'echo',
  query: Type.Object({ a: Type.Optional(Type.String()), b: Type.Optional(Type.String()) }),
  data: Type.Object({ a: Type.Optional(Type.String()), b: Type.Optional(Type.String()) }),
  handle: ({ query }) => Promise.resolve(query),
});
const failingRoute = signedRoute({
  method: 'POST',
  path: '/api/v3/test/fail',
  permission: 'query',
  tag: 'Test',
  summary: 'throws',
  data: Type.Null(),
  handle: () => Promise.reject(new Error('database exploded with secret details')),
});

describe(`merchant API authentication (${databaseLabel})`, () => {
  let gw: TestGateway;
  let key: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const logLines: string[] = [];
  const call = (c: SignedCall, credentials = key.credentials) => signedCall(gw.url, credentials, c, gw.clock.now());

  before(async () => {
    gw = await startTestGateway({
      extraSignedRoutes: [echoRoute, failingRoute],
      env: { SIGNATURE_WINDOW_MS: '300000', KEY_ACTIVATION_DELAY_MS: '90000' },
      logDestination: { write: (line) => logLines.push(line) },
    });
    key = await gw.merchantWithKey();
  });
  after(() => gw.close());

  function assertFailure(res: Awaited<ReturnType<typeof call>>, code: string, status: number, msgEn: RegExp): void {
    assert.equal(res.body.code, code, JSON.stringify(res.body));
    assert.equal(res.status, status);
    assert.equal(res.body.success, false);
    assert.equal(res.body.data, null);
    assert.match(res.body.msgEn, msgEn);
    assert.equal(res.contentType, JSON_UTF8);
  }

  it('accepts a correctly signed POST and answers the envelope', async () => {
    const res = await call({ path: BANKS, body: { currencyType: 'BRL' } });
    assert.equal(res.status, 200);
    assert.equal(res.contentType, JSON_UTF8);
    assert.deepEqual(
      { code: res.body.code, success: res.body.success, msg: res.body.msg, msgEn: res.body.msgEn },
      { code: '200', success: true, msg: 'success', msgEn: 'success' },
    );
    assert.ok(Array.isArray(res.body.data) && res.body.data.length > 100);
  });

  it('accepts a correctly signed GET whose query parameters are signed', async () => {
    const res = await call({ method: 'GET', path: '/api/v3/test/echo', query: { a: 'x y', b: 'é' } });
    assert.equal(res.body.code, '200', res.body.msgEn);
    assert.deepEqual(res.body.data, { a: 'x y', b: 'é' });
  });

  describe('307 signature errors', () => {
    for (const header of ['access_key', 'timestamp', 'nonce', 'sign']) {
      it(`refuses a request without ${header}`, async () => {
        const res = await call({ path: BANKS, body: {}, headers: { [header]: undefined } });
        assertFailure(res, '307', 401, new RegExp(`header ${header} is missing`));
      });
    }

    const malformed: [string, string, RegExp][] = [
      ['timestamp', '176380000000', /13-digit/],
      ['timestamp', '17638000000000', /13-digit/],
      ['timestamp', '17638000000a0', /13-digit/],
      ['nonce', '3f2a8c4e1b6d4e9f8a7b2c5d9e0f1a3b', /36-character UUID/],
      ['nonce', '3f2a8c4e-1b6d-4e9f-8a7b-2c5d9e0f1a3', /36-character UUID/],
      ['nonce', 'zzzzzzzz-1b6d-4e9f-8a7b-2c5d9e0f1a3b', /36-character UUID/],
      ['sign', 'not base64!', /Base64/],
      ['access_key', 'AK-with-dash', /access key/],
    ];
    for (const [header, value, rule] of malformed) {
      it(`refuses ${header}=${JSON.stringify(value)}`, async () => {
        const res = await call({ path: BANKS, body: {}, headers: { [header]: value } });
        assertFailure(res, '307', 401, rule);
      });
    }

    it('refuses an unknown access key', async () => {
      const res = await call({ path: BANKS, body: {} }, { accessKey: 'AKunknown', secretKey: 'x' });
      assertFailure(res, '307', 401, /not a known API key/);
    });

    it('refuses a sign made with another secret', async () => {
      const res = await call({ path: BANKS, body: {} }, { ...key.credentials, secretKey: 'wrong' });
      assertFailure(res, '307', 401, /sign does not match/);
      assert.doesNotMatch(res.body.msgEn, /string to sign:/, 'non-debug keys do not see the signed string');
    });

    it('refuses a body changed after signing', async () => {
      const res = await call({ path: BANKS, body: { currencyType: 'BRL' }, rawBody: '{"currencyType":"BRL","x":"1"}' });
      assertFailure(res, '307', 401, /sign does not match/);
    });

    it('refuses a GET whose query was changed after signing', async () => {
      const { signedHeaders } = await import('@cashgate/sdk');
      const headers = signedHeaders(key.credentials, { a: '1' }, gw.clock.now());
      const res = await fetch(new URL('/api/v3/test/echo?a=2', gw.url), { headers: { ...headers } });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { code: string }).code, '307');
    });

    it('refuses timestamps outside ±SIGNATURE_WINDOW_MS and accepts those inside', async () => {
      const now = gw.clock.now();
      assertFailure(await call({ path: BANKS, body: {}, timestamp: now - 301_000 }), '307', 401, /more than 300 s/);
      assertFailure(await call({ path: BANKS, body: {}, timestamp: now + 301_000 }), '307', 401, /more than 300 s/);
      assert.equal((await call({ path: BANKS, body: {}, timestamp: now - 290_000 })).body.code, '200');
      assert.equal((await call({ path: BANKS, body: {}, timestamp: now + 290_000 })).body.code, '200');
    });

    it('refuses a replayed nonce for the same key, even with a fresh timestamp', async () => {
      const nonce = crypto.randomUUID();
      assert.equal((await call({ path: BANKS, body: {}, nonce })).body.code, '200');
      const replay = await call({ path: BANKS, body: {}, nonce, timestamp: gw.clock.now() + 1 });
      assertFailure(replay, '307', 401, /nonce was already used/);
      const upper = await call({ path: BANKS, body: {}, nonce: nonce.toUpperCase() });
      assertFailure(upper, '307', 401, /nonce was already used/);
    });

    it('refuses a nonce replayed to another node on the same database', async () => {
      const second = await startTestGateway({ sameDatabaseAs: gw });
      try {
        second.clock.advance(gw.clock.now() - second.clock.now());
        const nonce = crypto.randomUUID();
        assert.equal((await call({ path: BANKS, body: {}, nonce })).body.code, '200');
        const replay = await signedCall(second.url, key.credentials, { path: BANKS, body: {}, nonce }, gw.clock.now());
        assert.equal(replay.body.code, '307');
        assert.match(replay.body.msgEn, /nonce was already used/);
      } finally {
        await second.close();
      }
    });

    it('keeps nonces per key: another key may use the same nonce', async () => {
      const other = await gw.merchantWithKey();
      const nonce = crypto.randomUUID();
      assert.equal((await call({ path: BANKS, body: {}, nonce })).body.code, '200');
      assert.equal((await call({ path: BANKS, body: {}, nonce }, other.credentials)).body.code, '200');
    });

    it('does not burn a nonce on a request with a bad sign', async () => {
      const nonce = crypto.randomUUID();
      const bad = await call({ path: BANKS, body: {}, nonce }, { ...key.credentials, secretKey: 'wrong' });
      assert.equal(bad.body.code, '307');
      assert.equal((await call({ path: BANKS, body: {}, nonce })).body.code, '200');
    });

    it('shows the string the server signed to a debug key, never the secret', async () => {
      const debugKey = await gw.merchantWithKey({ debug: true });
      const res = await call(
        { path: BANKS, body: { currencyType: 'BRL' }, nonce: '11111111-2222-4333-8444-555555555555' },
        {
          ...debugKey.credentials,
          secretKey: 'wrong',
        },
      );
      assertFailure(res, '307', 401, /sign does not match/);
      assert.match(
        res.body.msgEn,
        new RegExp(
          `server string to sign: access_key=${debugKey.credentials.accessKey}&currencyType=BRL&nonce=11111111-2222-4333-8444-555555555555&timestamp=\\d{13}`,
        ),
      );
      assert.ok(!res.body.msgEn.includes(debugKey.credentials.secretKey));
      assert.ok(!res.body.msg.includes(debugKey.credentials.secretKey));
    });
  });

  describe('301 no authority', () => {
    it('refuses a key before its activation time and accepts it after', async () => {
      const merchant = await gw.admin('POST', '/admin/v1/merchants', { name: 'Late' });
      const created = await gw.admin('POST', `/admin/v1/merchants/${merchant.body.merchantId}/api-keys`, {
        permissions: ['query'],
        ipWhitelist: '0.0.0.0',
      });
      assert.equal(created.body.activeAt - gw.clock.now() > 89_000, true);
      const credentials = { accessKey: created.body.accessKey, secretKey: created.body.secretKey };
      assertFailure(await call({ path: BANKS, body: {} }, credentials), '301', 403, /not active yet/);
      gw.clock.advance(89_000);
      assertFailure(await call({ path: BANKS, body: {} }, credentials), '301', 403, /not active yet/);
      gw.clock.advance(1_500);
      assert.equal((await call({ path: BANKS, body: {} }, credentials)).body.code, '200');
    });

    it('restarts the activation delay when a key is edited', async () => {
      const k = await gw.merchantWithKey({ permissions: ['query'] });
      const edit = await gw.admin('PATCH', `/admin/v1/merchants/${k.merchantId}/api-keys/${k.credentials.accessKey}`, {
        debug: true,
      });
      assert.equal(edit.status, 200);
      assertFailure(await call({ path: BANKS, body: {} }, k.credentials), '301', 403, /not active yet/);
      gw.clock.advance(90_001);
      assert.equal((await call({ path: BANKS, body: {} }, k.credentials)).body.code, '200');
    });

    it('refuses a disabled key and a deleted key', async () => {
      const k = await gw.merchantWithKey();
      const base = `/admin/v1/merchants/${k.merchantId}/api-keys/${k.credentials.accessKey}`;
      assert.equal((await gw.admin('POST', `${base}/disable`)).status, 200);
      assertFailure(await call({ path: BANKS, body: {} }, k.credentials), '301', 403, /disabled/);
      assert.equal((await gw.admin('DELETE', base)).status, 200);
      assertFailure(await call({ path: BANKS, body: {} }, k.credentials), '301', 403, /deleted/);
    });

    it('accepts an exact IP and a CIDR range, refuses others', async () => {
      const exact = await gw.merchantWithKey({ ipWhitelist: ['127.0.0.1'] });
      assert.equal((await call({ path: BANKS, body: {} }, exact.credentials)).body.code, '200');
      const cidr = await gw.merchantWithKey({ ipWhitelist: '10.0.0.0/8, 127.0.0.0/30' });
      assert.equal((await call({ path: BANKS, body: {} }, cidr.credentials)).body.code, '200');
      const other = await gw.merchantWithKey({ ipWhitelist: ['10.1.2.3', '2001:db8::/32', '127.0.0.2'] });
      assertFailure(await call({ path: BANKS, body: {} }, other.credentials), '301', 403, /IP 127\.0\.0\.1 is not in/);
      const narrow = await gw.merchantWithKey({ ipWhitelist: ['127.0.0.128/25'] });
      assertFailure(
        await call({ path: BANKS, body: {} }, narrow.credentials),
        '301',
        403,
        /not in the API key's whitelist/,
      );
    });

    it('ignores X-Forwarded-For when TRUST_PROXY is off', async () => {
      const k = await gw.merchantWithKey({ ipWhitelist: ['203.0.113.7'] });
      const res = await call({ path: BANKS, body: {}, headers: { 'x-forwarded-for': '203.0.113.7' } }, k.credentials);
      assertFailure(res, '301', 403, /IP 127\.0\.0\.1/);
    });

    it('refuses a key without the endpoint permission', async () => {
      const k = await gw.merchantWithKey({ permissions: ['balance', 'exchange'] });
      assertFailure(await call({ path: BANKS, body: {} }, k.credentials), '301', 403, /lacks the permission query/);
      const q = await gw.merchantWithKey({ permissions: ['query'] });
      assert.equal((await call({ path: BANKS, body: {} }, q.credentials)).body.code, '200');
    });

    it('checks the signature before key state, and key state before the body', async () => {
      const k = await gw.merchantWithKey({ permissions: ['balance'] });
      // Wrong sign and missing permission: 307 wins.
      const wrong = await call({ path: BANKS, body: { bogus: 1 } }, { ...k.credentials, secretKey: 'nope' });
      assert.equal(wrong.body.code, '307');
      // Right sign, missing permission, bad body: 301 wins.
      assert.equal((await call({ path: BANKS, body: { bogus: 1 } }, k.credentials)).body.code, '301');
    });
  });

  describe('300 parameter exceptions', () => {
    it('names unknown members', async () => {
      const res = await call({ path: BANKS, body: { currencyType: 'BRL', curencyType: 'BRL', zzz: 1 } });
      assertFailure(res, '300', 400, /^unknown fields: curencyType, zzz$/);
    });

    it('names the field and the rule for a wrong enum value and a wrong type', async () => {
      assertFailure(
        await call({ path: BANKS, body: { currencyType: 'USD' } }),
        '300',
        400,
        /^currencyType must be one of BRL$/,
      );
      assertFailure(
        await call({ path: BANKS, body: { currencyType: 7 } }),
        '300',
        400,
        /^currencyType must be one of BRL$/,
      );
    });

    it('refuses a body that is not JSON', async () => {
      const res = await call({ path: BANKS, body: {}, rawBody: '{"currencyType":' });
      assertFailure(res, '300', 400, /not valid JSON/);
    });

    it('refuses an empty body sent as JSON', async () => {
      const res = await call({ path: BANKS, body: {}, rawBody: '' });
      assertFailure(res, '300', 400, /not valid JSON: the body is empty/);
    });

    for (const raw of ['[1,2]', '"text"', '42', 'null']) {
      it(`refuses the JSON body ${raw}, which is not an object`, async () => {
        const res = await call({ path: BANKS, body: {}, rawBody: raw });
        assertFailure(res, '300', 400, /body must be a JSON object/);
      });
    }

    it('refuses a prototype-poisoning body', async () => {
      const res = await call({ path: BANKS, body: {}, rawBody: '{"__proto__":{"admin":true}}' });
      assertFailure(res, '300', 400, /not valid JSON/);
    });

    it('refuses bodies over 64 KB', async () => {
      const big = { remark: 'x'.repeat(70 * 1024) };
      const res = await call({ path: BANKS, body: big });
      assertFailure(res, '300', 400, /larger than 65536 bytes/);
    });

    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      it(`refuses Content-Type ${contentType}`, async () => {
        const res = await call({ path: BANKS, body: {}, headers: { 'content-type': contentType } });
        assertFailure(res, '300', 400, new RegExp(`Content-Type ${contentType.replace('/', '\\/')} is not accepted`));
      });
    }

    it('answers unknown routes and wrong methods with a 300 envelope, signed or not', async () => {
      assertFailure(
        await call({ path: '/api/v3/bra/query/nothing', body: {} }),
        '300',
        400,
        /no endpoint POST \/api\/v3\/bra\/query\/nothing/,
      );
      assertFailure(
        await call({ method: 'GET', path: BANKS }),
        '300',
        400,
        /no endpoint GET \/api\/v3\/bra\/query\/bank/,
      );
      const unsigned = await fetch(new URL('/api/v3/nothing?x=1', gw.url));
      assert.equal(unsigned.status, 400);
      assert.equal(unsigned.headers.get('content-type'), JSON_UTF8);
      const body = (await unsigned.json()) as { code: string; msgEn: string };
      assert.equal(body.code, '300');
      assert.equal(body.msgEn, 'no endpoint GET /api/v3/nothing');
    });

    it('refuses unknown query parameters on GET', async () => {
      const res = await call({ method: 'GET', path: '/api/v3/test/echo', query: { a: '1', c: '2' } });
      assertFailure(res, '300', 400, /unknown field: c/);
    });

    it('speaks the merchant language in msg and English in msgEn', async () => {
      const pt = await gw.merchantWithKey({ language: 'pt-BR' });
      const res = await call({ path: BANKS, body: { currencyType: 'USD' } }, pt.credentials);
      assert.equal(res.body.msg, 'currencyType deve ser um de BRL');
      assert.equal(res.body.msgEn, 'currencyType must be one of BRL');
    });

    it('uses Accept-Language before the key is known', async () => {
      const res = await call({
        path: BANKS,
        body: {},
        headers: { sign: undefined, 'accept-language': 'es-MX,es;q=0.9,en;q=0.5' },
      });
      assert.equal(res.body.msg, 'falta el encabezado sign');
      assert.equal(res.body.msgEn, 'header sign is missing');
    });
  });

  describe('429 and 500', () => {
    it('answers an unexpected error with 500 and a request id that is in the log', async () => {
      const res = await call({ path: '/api/v3/test/fail', body: {} });
      assertFailure(res, '500', 500, /internal error; quote request id req_[0-9a-f]{16}/);
      assert.ok(res.requestId !== null && res.body.msgEn.includes(res.requestId));
      assert.doesNotMatch(res.body.msgEn, /exploded/);
      const logged = logLines.map((l) => JSON.parse(l) as { reqId?: string; level: number; err?: { message: string } });
      const entry = logged.find((l) => l.reqId === res.requestId && l.level >= 50);
      assert.ok(entry !== undefined, 'the error is logged with the request id');
      assert.match(entry.err?.message ?? '', /exploded/);
    });

    it('logs one line per request with merchant, key, route, code and latency, never the sign', async () => {
      const res = await call({ path: BANKS, body: {} });
      const line = logLines.find((l) => l.includes(String(res.requestId)) && l.includes('"msg":"request"'));
      assert.ok(line !== undefined);
      const entry = JSON.parse(line) as Record<string, unknown>;
      assert.equal(entry.merchantId, key.merchantId);
      assert.equal(entry.accessKey, key.credentials.accessKey);
      assert.equal(entry.route, BANKS);
      assert.equal(entry.code, '200');
      assert.equal(typeof entry.ms, 'number');
      const all = logLines.join('\n');
      assert.ok(!all.includes(key.credentials.secretKey), 'secrets never reach the log');
    });
  });
});

describe(`rate limit and proxies (${databaseLabel})`, () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ env: { RATE_LIMIT_PER_KEY_PER_MINUTE: '3', TRUST_PROXY: 'true' } });
  });
  after(() => gw.close());

  it('answers 429 once a key exceeds its per-minute limit, per key', async () => {
    const k = await gw.merchantWithKey();
    const send = (credentials = k.credentials) =>
      signedCall(gw.url, credentials, { path: BANKS, body: {} }, gw.clock.now());
    for (let i = 0; i < 3; i += 1) assert.equal((await send()).body.code, '200');
    const limited = await send();
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, '429');
    assert.match(limited.body.msgEn, /at most 3 per minute/);
    const other = await gw.merchantWithKey();
    assert.equal((await send(other.credentials)).body.code, '200', 'another key has its own budget');
    gw.clock.advance(20_001);
    assert.equal((await send()).body.code, '200', 'a token is back after 20 s');
  });

  it('takes the client address from X-Forwarded-For when TRUST_PROXY says so', async () => {
    const k = await gw.merchantWithKey({ ipWhitelist: ['203.0.113.0/24'] });
    const ok = await signedCall(
      gw.url,
      k.credentials,
      { path: BANKS, body: {}, headers: { 'x-forwarded-for': '203.0.113.7' } },
      gw.clock.now(),
    );
    assert.equal(ok.body.code, '200');
    const refused = await signedCall(
      gw.url,
      k.credentials,
      { path: BANKS, body: {}, headers: { 'x-forwarded-for': '198.51.100.1' } },
      gw.clock.now(),
    );
    assert.equal(refused.body.code, '301');
    assert.match(refused.body.msgEn, /IP 198\.51\.100\.1/);
  });
});
