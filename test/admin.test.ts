import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseLabel } from './support/database.js';
import { ADMIN_TOKEN, signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

describe(`admin API (${databaseLabel})`, () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  it('requires the bearer token on every route', async () => {
    const routes: [string, string][] = [
      ['POST', '/admin/v1/merchants'],
      ['GET', '/admin/v1/merchants'],
      ['GET', '/admin/v1/merchants/mch_x'],
      ['PUT', '/admin/v1/merchants/mch_x/callback'],
      ['POST', '/admin/v1/merchants/mch_x/api-keys'],
      ['GET', '/admin/v1/merchants/mch_x/api-keys'],
      ['PATCH', '/admin/v1/merchants/mch_x/api-keys/AK1'],
      ['POST', '/admin/v1/merchants/mch_x/api-keys/AK1/disable'],
      ['POST', '/admin/v1/merchants/mch_x/api-keys/AK1/enable'],
      ['DELETE', '/admin/v1/merchants/mch_x/api-keys/AK1'],
    ];
    for (const [method, path] of routes) {
      for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${ADMIN_TOKEN}`, ADMIN_TOKEN]) {
        const res = await fetch(new URL(path, gw.url), {
          method,
          headers: { 'content-type': 'application/json', ...(authorization !== undefined && { authorization }) },
          ...(method !== 'GET' && method !== 'DELETE' && { body: '{"name":"x"}' }),
        });
        assert.equal(res.status, 401, `${method} ${path} with ${authorization ?? 'no token'}`);
        const body = (await res.json()) as { error: { code: string } };
        assert.equal(body.error.code, 'unauthorized');
      }
    }
    const list = await gw.admin('GET', '/admin/v1/merchants');
    assert.deepEqual(list.body.merchants, [], 'nothing was created by the refused calls');
  });

  it('creates a merchant and shows it', async () => {
    const created = await gw.admin('POST', '/admin/v1/merchants', { name: '  Loja Azul  ', language: 'pt-BR' });
    assert.equal(created.status, 200);
    assert.match(created.body.merchantId, /^mch_[0-9a-f]{24}$/);
    const shown = await gw.admin('GET', `/admin/v1/merchants/${created.body.merchantId}`);
    assert.equal(shown.status, 200);
    assert.deepEqual(
      { name: shown.body.name, language: shown.body.language, callbackUrl: shown.body.callbackUrl },
      { name: 'Loja Azul', language: 'pt-BR', callbackUrl: null },
    );
    const list = await gw.admin('GET', '/admin/v1/merchants');
    assert.ok(list.body.merchants.some((m: { merchantId: string }) => m.merchantId === created.body.merchantId));
  });

  it('refuses bad merchant input with the field and rule, and creates nothing', async () => {
    const before = (await gw.admin('GET', '/admin/v1/merchants')).body.merchants.length;
    const cases: [unknown, RegExp][] = [
      [{}, /name is required/],
      [{ name: '' }, /name must be at least 1 character long/],
      [{ name: 'x', language: 'fr' }, /language must be one of en, pt-BR, es/],
      [{ name: 'x', extra: true }, /unknown field: extra/],
      [{ name: 5 }, /name must be a string/],
    ];
    for (const [body, message] of cases) {
      const res = await gw.admin('POST', '/admin/v1/merchants', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, 'invalid_request');
      assert.match(res.body.error.message, message);
    }
    const raw = await fetch(new URL('/admin/v1/merchants', gw.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{nope',
    });
    assert.equal(raw.status, 400);
    assert.equal((await gw.admin('GET', '/admin/v1/merchants')).body.merchants.length, before);
  });

  it('creates a key whose secret is shown once and never listed', async () => {
    const { body: merchant } = await gw.admin('POST', '/admin/v1/merchants', { name: 'Keys' });
    const created = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/api-keys`, {
      permissions: ['query', 'balance'],
      ipWhitelist: '127.0.0.1, 10.0.0.0/8,::1',
      debug: true,
      label: 'backend',
    });
    assert.equal(created.status, 200);
    assert.match(created.body.accessKey, /^AK[0-9a-f]{32}$/);
    assert.match(created.body.secretKey, /^[0-9a-f]{64}$/, '32 random bytes');
    assert.equal(typeof created.body.activeAt, 'number');
    const list = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/api-keys`);
    assert.equal(list.status, 200);
    assert.equal(list.body.apiKeys.length, 1);
    const [view] = list.body.apiKeys;
    assert.deepEqual(
      { ...view, createdAt: 0, updatedAt: 0 },
      {
        accessKey: created.body.accessKey,
        label: 'backend',
        permissions: ['query', 'balance'],
        ipWhitelist: ['127.0.0.1', '10.0.0.0/8', '::1'],
        debug: true,
        status: 'pending',
        activeAt: created.body.activeAt,
        createdAt: 0,
        updatedAt: 0,
      },
      'a key waiting for its activation is listed as pending, with activeAt',
    );
    assert.ok(!JSON.stringify(list.body).includes(created.body.secretKey));
    const stored = await gw.gateway.store.read
      .selectFrom('api_keys')
      .select('status')
      .where('access_key', '=', created.body.accessKey)
      .executeTakeFirstOrThrow();
    assert.equal(stored.status, 'active', 'pending is derived for the view; the stored status stays active');
    gw.clock.advance(created.body.activeAt - gw.clock.now());
    const due = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/api-keys`);
    assert.equal(due.body.apiKeys[0].status, 'active', 'from activeAt on, the key is active');
  });

  it('stores the secret sealed, not in clear', async () => {
    const { body: merchant } = await gw.admin('POST', '/admin/v1/merchants', { name: 'Sealed' });
    const created = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: ['0.0.0.0'],
    });
    const row = await gw.gateway.store.read
      .selectFrom('api_keys')
      .selectAll()
      .where('access_key', '=', created.body.accessKey)
      .executeTakeFirstOrThrow();
    assert.ok(!row.secret_sealed.includes(created.body.secretKey));
    assert.ok(!Buffer.from(row.secret_sealed, 'base64').toString('latin1').includes(created.body.secretKey));
  });

  it('refuses bad key settings and names the rule', async () => {
    const { body: merchant } = await gw.admin('POST', '/admin/v1/merchants', { name: 'Bad keys' });
    const path = `/admin/v1/merchants/${merchant.merchantId}/api-keys`;
    const cases: [unknown, RegExp][] = [
      [{ ipWhitelist: ['0.0.0.0'] }, /permissions is required/],
      [{ permissions: ['query'] }, /ipWhitelist is required/],
      [{ permissions: ['payouts'], ipWhitelist: ['0.0.0.0'] }, /permissions.0 must be one of exchange, .*all/],
      [{ permissions: [], ipWhitelist: ['0.0.0.0'] }, /permissions/],
      [
        { permissions: ['all'], ipWhitelist: ['300.1.1.1'] },
        /ipWhitelist.0 must be an IPv4 or IPv6 address or CIDR range/,
      ],
      [
        { permissions: ['all'], ipWhitelist: '10.0.0.0/33' },
        /ipWhitelist must be an IPv4 or IPv6 address or CIDR range/,
      ],
      [{ permissions: ['all'], ipWhitelist: ['0.0.0.0'], debug: 'yes' }, /debug must be true or false/],
    ];
    for (const [body, message] of cases) {
      const res = await gw.admin('POST', path, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.message, message);
    }
    assert.deepEqual((await gw.admin('GET', path)).body.apiKeys, []);
    const missing = await gw.admin('POST', '/admin/v1/merchants/mch_missing/api-keys', {
      permissions: ['all'],
      ipWhitelist: ['0.0.0.0'],
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'merchant_not_found');
  });

  it('edits, disables, enables and deletes a key, each visible in the list and at the API', async () => {
    const k = await gw.merchantWithKey({ permissions: ['balance'] });
    const base = `/admin/v1/merchants/${k.merchantId}/api-keys/${k.credentials.accessKey}`;
    const call = () => signedCall(gw.url, k.credentials, { path: '/api/v3/bra/query/bank', body: {} }, gw.clock.now());
    assert.equal((await call()).body.code, '301', 'no query permission yet');

    const edited = await gw.admin('PATCH', base, { permissions: ['query'], ipWhitelist: ['127.0.0.1'], label: 'ops' });
    assert.equal(edited.status, 200);
    assert.deepEqual(edited.body.permissions, ['query']);
    assert.deepEqual(edited.body.ipWhitelist, ['127.0.0.1']);
    assert.equal(edited.body.label, 'ops');
    assert.ok(edited.body.activeAt > gw.clock.now(), 'the edit restarts the activation delay');
    assert.equal(edited.body.status, 'pending', 'an edited key is pending until its new activeAt');
    gw.clock.advance(edited.body.activeAt - gw.clock.now() + 1);
    assert.equal((await call()).body.code, '200');
    const listed = await gw.admin('GET', `/admin/v1/merchants/${k.merchantId}/api-keys`);
    assert.equal(listed.body.apiKeys[0].status, 'active');

    const disabled = await gw.admin('POST', `${base}/disable`);
    assert.equal(disabled.body.status, 'disabled');
    assert.equal((await call()).body.code, '301');
    const enabled = await gw.admin('POST', `${base}/enable`);
    assert.equal(enabled.body.status, 'pending', 'enabled again, the key waits the activation delay');
    assert.equal((await call()).body.code, '301', 'enabling waits the activation delay');
    gw.clock.advance(enabled.body.activeAt - gw.clock.now() + 1);
    assert.equal((await call()).body.code, '200');

    const deleted = await gw.admin('DELETE', base);
    assert.equal(deleted.body.status, 'deleted');
    assert.equal((await call()).body.code, '301');
    assert.deepEqual((await gw.admin('GET', `/admin/v1/merchants/${k.merchantId}/api-keys`)).body.apiKeys, []);
    const again = await gw.admin('PATCH', base, { debug: true });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'api_key_deleted');
    const unknown = await gw.admin('PATCH', `/admin/v1/merchants/${k.merchantId}/api-keys/AKnope`, { debug: true });
    assert.equal(unknown.status, 404);
  });

  it('sets and clears the unified callback address', async () => {
    const { body: merchant } = await gw.admin('POST', '/admin/v1/merchants', { name: 'Callbacks' });
    const path = `/admin/v1/merchants/${merchant.merchantId}/callback`;
    const set = await gw.admin('PUT', path, { url: 'https://merchant.example/cashgate/callback' });
    assert.equal(set.status, 200);
    assert.equal(set.body.callbackUrl, 'https://merchant.example/cashgate/callback');
    assert.equal(
      (await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.callbackUrl,
      set.body.callbackUrl,
    );
    for (const url of ['ftp://merchant.example/cb', 'not a url', 'javascript:alert(1)']) {
      const bad = await gw.admin('PUT', path, { url });
      assert.equal(bad.status, 400, url);
      assert.match(bad.body.error.message, /url must be an http or https URL/);
    }
    assert.equal(
      (await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.callbackUrl,
      set.body.callbackUrl,
    );
    const cleared = await gw.admin('PUT', path, { url: null });
    assert.equal(cleared.body.callbackUrl, null);
    const missing = await gw.admin('PUT', '/admin/v1/merchants/mch_missing/callback', { url: null });
    assert.equal(missing.status, 404);
  });

  it('answers unknown admin routes with a JSON 404', async () => {
    const res = await gw.admin('GET', '/admin/v1/nothing');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });
});

describe(`admin API without a token (${databaseLabel})`, () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ env: { CASHGATE_ADMIN_TOKEN: '' } });
  });
  after(() => gw.close());

  it('takes no root token: a request without a token is told how to authenticate, a stranger token is refused', async () => {
    const bare = await fetch(new URL('/admin/v1/merchants', gw.url));
    assert.equal(bare.status, 403);
    assert.equal(((await bare.json()) as any).error.code, 'admin_api_disabled');
    // Personal tokens still work without a root token: an unknown one is simply not a token.
    const res = await gw.admin('GET', '/admin/v1/merchants');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
  });
});
