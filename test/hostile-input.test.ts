import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { ADMIN_TOKEN, signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

/** What came back on a raw connection: the status line, the headers and the body, or the error that ended it. */
interface RawAnswer {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  error: string | undefined;
}

/** Writes bytes to the server as they are (no client library fixing them up) and reads until it closes. */
function rawRequest(baseUrl: string, data: string | Buffer, options: { endAfterMs?: number } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = (split === -1 ? text : text.slice(0, split)).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ statusLine, headers, body: split === -1 ? '' : text.slice(split + 4), error });
    });
    socket.write(data);
    setTimeout(() => socket.end(), options.endAfterMs ?? 300);
  });
}

/** The merchant API's envelope, with nothing else in it. */
function assertEnvelope(text: string, where: string): { code: string; msgEn: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`${where}: the answer is not JSON: ${text.slice(0, 200)}`);
  }
  assert.ok(body !== null && typeof body === 'object', where);
  const envelope = body as Record<string, unknown>;
  assert.deepEqual(Object.keys(envelope).sort(), ['code', 'data', 'msg', 'msgEn', 'success'].sort(), where);
  assert.equal(typeof envelope.msgEn, 'string', where);
  return { code: String(envelope.code), msgEn: String(envelope.msgEn) };
}

/** The admin API's error format. */
function assertAdminError(text: string, where: string): { code: string; message: string } {
  const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
  assert.equal(typeof body.error?.code, 'string', `${where}: ${text.slice(0, 200)}`);
  assert.equal(typeof body.error?.message, 'string', where);
  return { code: String(body.error?.code), message: String(body.error?.message) };
}

const nested = (depth: number, leaf: string = '1') => '['.repeat(depth) + leaf + ']'.repeat(depth);

describe('hostile input', () => {
  let gw: TestGateway;
  let credentials: Credentials;
  const logLines: string[] = [];

  before(async () => {
    gw = await startTestGateway({ logDestination: { write: (line) => logLines.push(line) } });
    ({ credentials } = await gw.merchantWithKey());
  });
  after(async () => gw.close());

  const call = (path: string, body: unknown, extra: { rawBody?: string; headers?: Record<string, string> } = {}) =>
    signedCall(gw.url, credentials, { path, body, ...extra }, gw.clock.now());

  /** A PIX collection create whose members `overrides` replaces. */
  const pixBody = (overrides: Record<string, unknown> = {}) => ({
    externalOrderId: `hostile-${Math.random().toString(36).slice(2)}`,
    amount: '10.00',
    channelType: 'PIX',
    ...overrides,
  });

  describe('deep nesting', () => {
    it('refuses a member nested 5,000 levels deep with a 300 naming it, before the signature, and stays up', async () => {
      const rawBody = `{"externalOrderId":"deep-1","remark":${nested(5000)}}`;
      const answer = await call('/api/v3/bra/createCollectingOrder', {}, { rawBody });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.code, '300');
      assert.match(answer.body.msgEn, /^remark nests deeper than 8 levels/);
      const ping = await fetch(new URL('/ping', gw.url));
      assert.equal(ping.status, 200);
    });

    it('refuses a value 30,000 levels deep the same way, on the admin API in its own format', async () => {
      const response = await fetch(new URL('/admin/v1/merchants', gw.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: `{"name":${nested(30_000)}}`,
      });
      assert.equal(response.status, 400);
      const error = assertAdminError(await response.text(), 'admin deep body');
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /^name nests deeper than 8 levels/);
    });

    it('reads a shallow nested member as usual: a type error naming it', async () => {
      const answer = await call('/api/v3/bra/createCollectingOrder', pixBody({ remark: [[['x']]] }));
      assert.equal(answer.body.code, '300');
      assert.match(answer.body.msgEn, /remark/);
      assert.doesNotMatch(answer.body.msgEn, /nests deeper/);
    });
  });

  describe('text is kept as sent or refused', () => {
    it('refuses a lone surrogate in remark and in externalOrderId, naming the member', async () => {
      for (const member of ['remark', 'externalOrderId']) {
        const rest = Object.fromEntries(Object.entries(pixBody()).filter(([name]) => name !== member));
        const body = JSON.stringify(rest).replace(/^\{/, `{"${member}":"ab\\ud800cd",`);
        const answer = await call('/api/v3/bra/createCollectingOrder', {}, { rawBody: body });
        assert.equal(answer.body.code, '300', member);
        assert.match(answer.body.msgEn, new RegExp(`^${member} holds a lone UTF-16 surrogate`), member);
      }
    });

    it('refuses a NUL anywhere: in a body member, a path parameter, a query value, a form field', async () => {
      const remark = await call('/api/v3/bra/createCollectingOrder', pixBody({ remark: 'a\u0000b' }));
      assert.equal(remark.body.code, '300');
      assert.match(remark.body.msgEn, /^remark holds a NUL character/);
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const param = await fetch(new URL('/admin/v1/merchants/a%00b/api-keys/m_unknown/disable', gw.url), {
        method: 'POST',
        headers,
      });
      assert.equal(param.status, 400);
      assert.match(assertAdminError(await param.text(), 'NUL in a parameter').message, /control character/);
      const query = await fetch(new URL('/api/v3/bra/query/balance?currency=%00', gw.url));
      assert.equal(query.status, 400);
      assert.match(assertEnvelope(await query.text(), 'NUL in a query').msgEn, /NUL character/);
      const form = await fetch(new URL('/console/sign-in', gw.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a%00b&password=x',
      });
      assert.equal(form.status, 400);
      assert.match(assertEnvelope(await form.text(), 'NUL in a form').msgEn, /NUL character/);
    });

    it('refuses control and bidirectional characters and blank ends in externalOrderId', async () => {
      for (const id of ['a\r\nb', 'a\tb', ' ', ' lead', 'trail ', '\u202eevil', 'a\u0085b']) {
        const answer = await call('/api/v3/bra/createCollectingOrder', pixBody({ externalOrderId: id }));
        assert.equal(answer.body.code, '300', JSON.stringify(id));
        assert.match(answer.body.msgEn, /^externalOrderId must be an identifier of printable characters/);
      }
    });

    it('keeps text exactly: accents, emoji and a pair of surrogates come back as sent', async () => {
      const externalOrderId = `Pedido nº 1 — ação 😀 ${Date.now()}`;
      const remark = 'Olá, “mundo” 😀 \u00e9\u0301 tab\there';
      const created = await call('/api/v3/bra/createCollectingOrder', pixBody({ externalOrderId, remark }));
      assert.equal(created.body.code, '200', created.body.msgEn);
      const orderId = created.body.data.currencyOrderVo.orderId as string;
      const query = await call('/api/v3/bra/query/collectingOrder', { externalOrderId, orderId });
      assert.equal(query.body.code, '200', query.body.msgEn);
      assert.equal(query.body.data[0].externalOrderId, externalOrderId);
      assert.equal(query.body.data[0].tradeNote, remark);
    });

    it('refuses amounts with leading zeros instead of reading them as another number', async () => {
      for (const amount of ['00010', '0010.50', '010', 10.5]) {
        const answer = await call('/api/v3/bra/createCollectingOrder', pixBody({ amount }));
        if (typeof amount === 'number') {
          assert.equal(answer.body.code, '200', 'a canonical number still passes');
          continue;
        }
        assert.equal(answer.body.code, '300', amount);
        assert.match(answer.body.msgEn, /^amount must be .*no leading zeros/, amount);
      }
      const zeroPoint = await call('/api/v3/bra/createCollectingOrder', pixBody({ amount: '0.50' }));
      assert.notEqual(zeroPoint.body.code, '300', zeroPoint.body.msgEn);
    });

    it('refuses a body declared in another charset, or bytes that are not UTF-8', async () => {
      for (const charset of ['latin1', 'ISO-8859-1', 'utf-16', '"windows-1252"']) {
        const answer = await call(
          '/api/v3/bra/query/bank',
          {},
          { headers: { 'content-type': `application/json; charset=${charset}` } },
        );
        assert.equal(answer.body.code, '300', charset);
        assert.match(answer.body.msgEn, /must be UTF-8: charset=/, charset);
      }
      const utf8 = await call(
        '/api/v3/bra/query/bank',
        {},
        { headers: { 'content-type': 'application/json; charset="UTF-8"' } },
      );
      assert.equal(utf8.body.code, '200', utf8.body.msgEn);
      const latin1Bytes = Buffer.concat([Buffer.from('{"remark":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
      const answer = await rawRequest(
        gw.url,
        Buffer.concat([
          Buffer.from(
            `POST /api/v3/bra/query/bank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${latin1Bytes.length}\r\nConnection: close\r\n\r\n`,
          ),
          latin1Bytes,
        ]),
      );
      assert.equal(
        assertEnvelope(answer.body, 'latin1 bytes').msgEn,
        'body is not valid JSON: the body is not UTF-8 text',
      );
    });
  });

  describe('every answer in its documented format', () => {
    it('answers malformed paths and over-long path segments in the envelope or the admin format', async () => {
      const bank = await fetch(new URL('/api/v3/bra/query/bank%zz', gw.url));
      assert.equal(bank.status, 400);
      assert.match(assertEnvelope(await bank.text(), 'bad url').msgEn, /path is not valid/);
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const admin = await fetch(new URL('/admin/v1/merchants/%zz/api-keys', gw.url), { headers });
      assert.equal(admin.status, 400);
      assert.equal(assertAdminError(await admin.text(), 'admin bad url').code, 'invalid_request');
      const long = await fetch(new URL(`/admin/v1/merchants/${'m'.repeat(150)}/api-keys`, gw.url), { headers });
      assert.equal(long.status, 400);
      assert.match(assertAdminError(await long.text(), 'admin long param').message, /longer than 100 characters/);
    });

    it('answers what Node cannot parse with a minimal envelope on the connection', async () => {
      const cases: [string, string, RegExp][] = [
        ['unknown method', 'BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n', /method is not one this server knows/],
        [
          'Content-Length with Transfer-Encoding',
          'POST /api/v3/bra/query/bank HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
          /not well-formed HTTP/,
        ],
        [
          'control character in a header',
          'GET /ping HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n',
          /not well-formed HTTP/,
        ],
        ['folded header', 'GET /ping HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n', /not well-formed HTTP/],
        [
          'headers over 16 KB',
          `GET /ping HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`,
          /larger than 16 KB/,
        ],
        [
          'bad chunk size',
          'POST /api/v3/bra/query/bank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n',
          /not well-formed HTTP/,
        ],
      ];
      for (const [name, request, message] of cases) {
        const answer = await rawRequest(gw.url, request);
        assert.match(answer.statusLine, /^HTTP\/1\.1 400 /, name);
        assert.match(assertEnvelope(answer.body, name).msgEn, message, name);
      }
    });

    it('answers a request without Host, and an unknown Expect, in the path’s format', async () => {
      const merchant = await rawRequest(gw.url, 'GET /api/v3/bra/query/balance HTTP/1.1\r\nConnection: close\r\n\r\n');
      assert.match(merchant.statusLine, /^HTTP\/1\.1 400 /);
      assert.match(assertEnvelope(merchant.body, 'no host').msgEn, /Host header is missing/);
      const http10 = await rawRequest(gw.url, 'GET /healthz HTTP/1.0\r\n\r\n');
      assert.match(http10.statusLine, /^HTTP\/1\.1 200 /, 'an HTTP/1.0 health check without Host still passes');
      const admin = await rawRequest(
        gw.url,
        `GET /admin/v1/rates HTTP/1.1\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`,
      );
      assert.match(admin.statusLine, /^HTTP\/1\.1 400 /);
      assert.match(assertAdminError(admin.body, 'admin no host').message, /Host header is missing/);
      const expect = await rawRequest(
        gw.url,
        'POST /api/v3/bra/query/bank HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      );
      assert.match(expect.statusLine, /^HTTP\/1\.1 400 /);
      assert.match(assertEnvelope(expect.body, 'expect').msgEn, /Expect header is not supported/);
    });

    it('logs a body that breaks off below error level, without a stack', async () => {
      const before = logLines.length;
      await rawRequest(
        gw.url,
        'POST /api/v3/bra/query/bank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nzz\r\n',
      );
      await rawRequest(
        gw.url,
        'POST /api/v3/bra/query/bank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
        { endAfterMs: 50 },
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const lines = logLines
        .slice(before)
        .map((line) => JSON.parse(line) as { level: number; err?: { stack?: string } });
      assert.ok(lines.length > 0, 'the refusals are logged');
      for (const line of lines) {
        assert.ok(line.level < 50, `logged at level ${line.level}: ${JSON.stringify(line)}`);
        assert.equal(line.err?.stack, undefined);
      }
    });

    it('answers a 1 MB body with the envelope, even while the client is still sending', async () => {
      const body = Buffer.alloc(1024 * 1024, 'a');
      for (let i = 0; i < 12; i += 1) {
        const chunked = i % 2 === 1;
        const head = `POST /api/v3/exchange/fiat/to/wallet HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${
          chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`
        }\r\n\r\n`;
        const payload = chunked
          ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
          : body;
        const answer = await rawRequest(gw.url, Buffer.concat([Buffer.from(head), payload]), { endAfterMs: 500 });
        assert.match(
          answer.statusLine,
          /^HTTP\/1\.1 400 /,
          `attempt ${i} (${chunked ? 'chunked' : 'length'}): ${answer.error}`,
        );
        assert.equal(assertEnvelope(answer.body, 'too large').msgEn, 'body is larger than 65536 bytes');
      }
    });
  });

  describe('seeded fuzz', () => {
    it('sends a few thousand malformed requests to every route: no 5xx, the documented formats, the audit clean', async () => {
      const random = seeded(Number(process.env.FUZZ_SEED ?? 20261124));
      const document = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
      );
      const merchantRoutes = routes.filter((r) => r.path.startsWith('/api/'));
      const adminRoutes = routes.filter((r) => r.path.startsWith('/admin/'));
      assert.ok(merchantRoutes.length >= 19 && adminRoutes.length >= 20, 'the catalog lists the routes');
      const failures: string[] = [];
      const check = (where: string, status: number, text: string, admin: boolean) => {
        if (status >= 500) failures.push(`${where}: HTTP ${status} ${text.slice(0, 200)}`);
        try {
          if (admin) {
            if (status >= 400) assertAdminError(text, where);
          } else assertEnvelope(text, where);
        } catch (error) {
          failures.push(`${where}: ${(error as Error).message.slice(0, 300)}`);
        }
      };
      for (let i = 0; i < 2400; i += 1) {
        const family = i % 4;
        if (family <= 1) {
          // Signed requests with malformed members, to every merchant endpoint.
          const route = pick(random, merchantRoutes);
          const body = family === 0 ? fuzzObject(random) : undefined;
          const rawBody = family === 1 ? fuzzText(random) : undefined;
          const answer = await signedCall(
            gw.url,
            credentials,
            {
              method: route.method as 'GET' | 'POST',
              path: route.path,
              ...(body !== undefined && { body }),
              ...(rawBody !== undefined && { rawBody }),
              ...(route.method === 'GET' && { query: { [fuzzKey(random)]: fuzzString(random) } }),
            },
            gw.clock.now(),
          ).catch((error: unknown) => ({ status: 0, text: String(error), body: undefined }));
          check(`#${i} ${route.method} ${route.path}`, answer.status, answer.text, false);
        } else if (family === 2) {
          // Header variants and path garbage on merchant paths.
          const route = pick(random, merchantRoutes);
          const path = random() < 0.5 ? route.path : mangle(random, route.path);
          const signed: Record<string, string> = {
            ...signedHeaders(credentials, {}, gw.clock.now()),
            'content-type': pick(random, ['application/json', 'text/plain', 'application/json; charset=latin1', '']),
          };
          const headers = new Headers();
          for (const [name, value] of Object.entries(signed)) {
            const roll = random();
            if (value === '' || roll < 0.2) continue;
            headers.set(name, roll < 0.4 && name !== 'content-type' ? fuzzHeader(random) : value);
          }
          const response = await fetch(`${gw.url}${path}`, {
            method: route.method,
            headers,
            ...(route.method === 'POST' && { body: fuzzText(random) }),
          }).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
          if (response instanceof Error) failures.push(`#${i} ${path}: ${response.message}`);
          else check(`#${i} ${route.method} ${path}`, response.status, await response.text(), false);
        } else {
          // The admin API: bodies of every shape, ids of every kind.
          const route = pick(random, adminRoutes);
          const path = route.path.replace(/\{[^}]+\}/g, () =>
            encodeURIComponent(pick(random, ['m_unknown', fuzzString(random), 'x'.repeat(120)])),
          );
          const target = random() < 0.2 ? mangle(random, path) : path;
          const response = await fetch(`${gw.url}${target}`, {
            method: route.method,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            ...(route.method !== 'GET' && route.method !== 'DELETE' && { body: fuzzText(random) }),
          }).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
          if (response instanceof Error) failures.push(`#${i} ${target}: ${response.message}`);
          else check(`#${i} ${route.method} ${target}`, response.status, await response.text(), true);
        }
      }
      assert.deepEqual(failures.slice(0, 20), []);
      assert.equal((await fetch(new URL('/readyz', gw.url))).status, 200, 'the server is alive');
      assert.deepEqual(await gw.auditBreaches(), []);
      const errors = logLines
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((l) => l.level >= 50);
      assert.deepEqual(errors, [], 'nothing a client sent was logged as a server error');
    });
  });
});

describe('HSTS', () => {
  const consolePage = async (env: Record<string, string>, headers: Record<string, string> = {}) => {
    const gw = await startTestGateway({ env, workers: false });
    try {
      const response = await fetch(new URL('/console/sign-in', gw.url), { headers });
      await response.arrayBuffer();
      return response.headers.get('strict-transport-security');
    } finally {
      await gw.close();
    }
  };

  it('is sent when the public address is https, with a configurable max-age, and not over plain HTTP', async () => {
    assert.equal(await consolePage({ PUBLIC_BASE_URL: 'https://pay.example.com' }), 'max-age=31536000');
    assert.equal(
      await consolePage({ PUBLIC_BASE_URL: 'https://pay.example.com', HSTS_MAX_AGE_SECONDS: '600' }),
      'max-age=600',
    );
    assert.equal(await consolePage({ PUBLIC_BASE_URL: 'https://pay.example.com', HSTS_MAX_AGE_SECONDS: '0' }), null);
    assert.equal(await consolePage({}), null);
  });

  it('is sent behind a trusted proxy that says the request came over https', async () => {
    assert.equal(await consolePage({ TRUST_PROXY: 'true' }, { 'x-forwarded-proto': 'https' }), 'max-age=31536000');
    assert.equal(await consolePage({}, { 'x-forwarded-proto': 'https' }), null, 'an untrusted hop is not believed');
  });
});

/** mulberry32: a small seeded generator, so a failing run can be repeated with FUZZ_SEED. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

const MEMBERS = [
  'externalOrderId',
  'orderId',
  'amount',
  'currencyAmount',
  'tokenAmount',
  'payType',
  'remark',
  'notifyUrl',
  'returnUrl',
  'phone',
  'checkingPhone',
  'userInfoType',
  'userInfoNo',
  'userInfoName',
  'accountType',
  'accountId',
  'bankName',
  'addressTo',
  'addressFrom',
  'chainType',
  'tokenType',
  'currencyType',
  'dynamicAmountNotify',
  'userIdentity',
  'name',
  'permissions',
  'ipWhitelist',
];

function fuzzKey(random: () => number): string {
  return random() < 0.85 ? pick(random, MEMBERS) : fuzzString(random);
}

function fuzzString(random: () => number): string {
  return pick(random, [
    '',
    ' ',
    '0',
    '-1',
    '1e3',
    '00010',
    '10.001',
    '9'.repeat(40),
    'a\u0000b',
    'line\r\nbreak',
    '\u202eevil',
    '😀',
    'x'.repeat(300),
    '<script>',
    "' or 1=1 --",
    '../../etc/passwd',
    'http://127.0.0.1/',
    'TKx',
    '0x0000000000000000000000000000000000000000',
    '52998224725',
    '+254712345678',
    'PIX',
    'null',
  ]);
}

function fuzzValue(random: () => number, depth: number): unknown {
  const roll = random();
  if (roll < 0.35) return fuzzString(random);
  if (roll < 0.5) return pick(random, [0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER, 101, 2]);
  if (roll < 0.6) return pick(random, [true, false, null]);
  if (depth > 3) return 'deep';
  if (roll < 0.8) return Array.from({ length: Math.floor(random() * 4) }, () => fuzzValue(random, depth + 1));
  return fuzzObject(random, depth + 1);
}

function fuzzObject(random: () => number, depth = 0): Record<string, unknown> {
  const members: Record<string, unknown> = {};
  const count = Math.floor(random() * 7);
  for (let i = 0; i < count; i += 1) members[fuzzKey(random)] = fuzzValue(random, depth);
  return members;
}

/** Body text that is often not JSON, or JSON the signing client would not produce. */
function fuzzText(random: () => number): string {
  return pick(random, [
    '',
    '{',
    '[]',
    'null',
    '"text"',
    '{"a":1,"a":2}',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    `{"remark":${nested(20)}}`,
    `{"remark":${nested(6000)}}`,
    '{"remark":"\\ud800"}',
    '{"externalOrderId":"\\udc00x"}',
    '{"amount":1e400}',
    '{"amount":"١٠"}',
    `{"remark":"${'x'.repeat(70_000)}"}`,
    JSON.stringify(fuzzObject(random)),
  ]);
}

function fuzzHeader(random: () => number): string {
  return pick(random, [
    '',
    'x',
    '0',
    '9'.repeat(13),
    '1'.repeat(40),
    'not-a-uuid',
    '00000000-0000-0000-0000-000000000000',
    '=',
  ]);
}

/** Path garbage: bad escapes, long segments, dots, doubled slashes. */
function mangle(random: () => number, path: string): string {
  return pick(random, [
    `${path}%zz`,
    `${path}%`,
    `${path}/${'a'.repeat(150)}`,
    `${path}/..%2f..%2f`,
    path.replace('/', '//'),
    `${path}?${'q'.repeat(3000)}=1`,
    `${path}%00`,
    `${path}%c0%ae`,
    `${path};x=1`,
  ]);
}
