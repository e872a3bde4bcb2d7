import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CashgateClient } from '@cashgate/sdk';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { runCli, startServerProcess } from './support/process.js';

describe(`the cashgate command (${databaseLabel})`, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-cli-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    env = {
      CASHGATE_DATA_DIR: dataDir,
      KEY_ACTIVATION_DELAY_MS: '0',
      CASHGATE_ADMIN_TOKEN: 'cli-test-admin-token',
      ...(database !== undefined && { DATABASE_URL: database.url }),
    };
  });
  after(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses to start with bad configuration and names every bad variable', async () => {
    const result = await runCli(['serve'], { ...env, PORT: 'eighty', SIGNATURE_WINDOW_MS: '-1', TRUST_PROXY: '???' });
    assert.equal(result.code, 78);
    assert.match(result.stderr, /Invalid configuration/);
    assert.match(result.stderr, /PORT="eighty": must be a whole number/);
    assert.match(result.stderr, /SIGNATURE_WINDOW_MS="-1"/);
    assert.match(result.stderr, /TRUST_PROXY="\?\?\?"/);
  });

  it('migrates and creates the master key file with mode 0600', async () => {
    const result = await runCli(['migrate'], env);
    assert.equal(result.code, 0, result.stderr);
    const key = join(dataDir, 'master.key');
    assert.ok(existsSync(key));
    assert.equal(statSync(key).mode & 0o777, 0o600);
    if (database === undefined) assert.ok(existsSync(join(dataDir, 'cashgate.sqlite')));
    assert.equal((await runCli(['migrate'], env)).code, 0, 'migrating twice is harmless');
  });

  let merchantId: string;
  let credentials: { accessKey: string; secretKey: string };

  it('creates a merchant and a key for operators without curl', async () => {
    const merchant = await runCli(['merchant', 'create', '--name', 'CLI Shop', '--language', 'es'], env);
    assert.equal(merchant.code, 0, merchant.stderr);
    merchantId = (JSON.parse(merchant.stdout) as { merchantId: string }).merchantId;
    assert.match(merchantId, /^mch_/);
    const key = await runCli(
      ['key', 'create', '--merchant', merchantId, '--permissions', 'query,balance', '--ip-whitelist', '127.0.0.1'],
      env,
    );
    assert.equal(key.code, 0, key.stderr);
    credentials = JSON.parse(key.stdout) as typeof credentials;
    assert.match(credentials.secretKey, /^[0-9a-f]{64}$/);
    const list = await runCli(['key', 'list', '--merchant', merchantId], env);
    const keys = JSON.parse(list.stdout) as { accessKey: string; permissions: string[] }[];
    assert.deepEqual(
      keys.map((k) => [k.accessKey, k.permissions]),
      [[credentials.accessKey, ['query', 'balance']]],
    );
    assert.ok(!list.stdout.includes(credentials.secretKey));

    const bad = await runCli(['key', 'create', '--merchant', merchantId, '--permissions', 'everything'], env);
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /permissions\.0 must be one of exchange/);
    const noName = await runCli(['merchant', 'create', '--name', ''], env);
    assert.equal(noName.code, 64);
    assert.match(noName.stderr, /name must be at least 1 characters long/);
    const usage = await runCli(['key', 'list'], env);
    assert.equal(usage.code, 64);
    assert.match(usage.stderr, /key list needs --merchant/);
    const missing = await runCli(['key', 'create', '--merchant', 'mch_nope'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /merchant mch_nope does not exist/);
  });

  it('serves signed requests, public routes and the OpenAPI document, and stops on SIGTERM', async () => {
    const server = await startServerProcess(env);
    try {
      const ping = await fetch(new URL('/ping', server.url));
      assert.equal(ping.headers.get('content-type'), 'application/json;charset=utf-8');
      const pingBody = (await ping.json()) as { version: string; timestamp: number };
      assert.equal(pingBody.version, '0.1.0');
      assert.ok(Math.abs(pingBody.timestamp - Date.now()) < 5_000);
      assert.match(String(pingBody.timestamp), /^\d{13}$/);
      assert.deepEqual(await (await fetch(new URL('/healthz', server.url))).json(), { status: 'ok' });
      assert.deepEqual(await (await fetch(new URL('/readyz', server.url))).json(), { status: 'ready' });

      const client = new CashgateClient({ baseUrl: server.url, ...credentials });
      const banks = await client.post<{ bankNames: string }[]>('/api/v3/bra/query/bank', { currencyType: 'BRL' });
      assert.equal(banks.code, '200', banks.msgEn);
      const names = banks.data.map((b) => b.bankNames);
      assert.ok(names.includes('Banco do Brasil S.A.'));
      assert.equal(new Set(names).size, names.length, 'bank names are unique');
      const spanish = await client.post('/api/v3/bra/query/bank', { currencyType: 'EUR' });
      assert.equal(spanish.msg, 'currencyType debe ser uno de BRL');

      const doc = (await (await fetch(new URL('/openapi.json', server.url))).json()) as any;
      assert.equal(doc.openapi, '3.1.0');
      assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), [
        'access_key',
        'adminToken',
        'nonce',
        'sign',
        'timestamp',
      ]);
      const banksOp = doc.paths['/api/v3/bra/query/bank'].post;
      assert.deepEqual(banksOp.security, [{ access_key: [], timestamp: [], nonce: [], sign: [] }]);
      assert.equal(banksOp['x-permission'], 'query');
      const requestSchema = banksOp.requestBody.content['application/json;charset=utf-8'].schema;
      assert.deepEqual(Object.keys(requestSchema.properties), ['currencyType']);
      assert.deepEqual(Object.keys(banksOp.responses).sort(), ['200', '400', '401', '403', '429', '500']);
      const ok = banksOp.responses['200'].content['application/json;charset=utf-8'].schema;
      assert.deepEqual(Object.keys(ok.properties), ['code', 'success', 'msg', 'msgEn', 'data']);
      assert.ok(doc.paths['/admin/v1/merchants/{merchantId}/api-keys'].post.requestBody);
      const usersOp = doc.paths['/admin/v1/merchants/{merchantId}/users'];
      assert.deepEqual(
        Object.keys(usersOp.post.requestBody.content['application/json'].schema.properties).sort(),
        ['email', 'language', 'name', 'password'],
        'console users are documented',
      );
      assert.ok(usersOp.get, 'and listed');
      assert.ok(doc.paths['/ping'].get);
      for (const path of [
        '/api/v3/ken/createCollectingOrder',
        '/api/v3/ken/createTransferOrder',
        '/api/v3/bra/createCollectingOrder',
        '/api/v3/bra/pix/createTransferOrder',
        '/api/v3/bra/bank/createTransferOrder',
      ]) {
        assert.ok(doc.paths[path].post.requestBody, `${path} is documented with its request schema`);
      }
      for (const path of ['/api/v3/exchange/fiat/to/wallet', '/api/v3/exchange/wallet/to/fiat']) {
        assert.equal(doc.paths[path].post['x-permission'], 'exchange');
        const data =
          doc.paths[path].post.responses['200'].content['application/json;charset=utf-8'].schema.properties.data;
        assert.equal(data.properties.tokenAmount.type, 'number', `${path}: tokenAmount is a number`);
      }
      const fiatRecord =
        doc.paths['/api/v3/exchange/query/exchange/orderinfo'].post.responses['200'].content[
          'application/json;charset=utf-8'
        ].schema.properties.data;
      const tokenRecord =
        doc.paths['/api/v3/exchange/query/wallet/exchange/orderinfo'].post.responses['200'].content[
          'application/json;charset=utf-8'
        ].schema.properties.data;
      assert.deepEqual(
        fiatRecord.properties.orderFee.anyOf.map((s: { type: string }) => s.type),
        ['number', 'null'],
      );
      assert.deepEqual(
        tokenRecord.properties.orderFee.anyOf.map((s: { type: string }) => s.type),
        ['string', 'null'],
      );
      assert.ok(
        tokenRecord.properties.notifyUrl && !fiatRecord.properties.notifyUrl,
        'notifyUrl only in the token → fiat record',
      );
      assert.ok(doc.paths['/admin/v1/rates/{currency}/{token}'].put.requestBody);
      const braQuery =
        doc.paths['/api/v3/bra/query/collectingOrder'].post.responses['200'].content['application/json;charset=utf-8']
          .schema;
      assert.deepEqual(Object.keys(braQuery.properties), ['code', 'success', 'msg', 'msgEn', 'data', 'desc']);
      assert.ok(
        braQuery.properties.data.items.properties.expansionParam,
        'the Brazil collection record with its extra members',
      );
      const checkoutOp = doc.paths['/api/v3/polymerize/createCollectingOrder'].post;
      assert.equal(checkoutOp['x-permission'], 'polymerize');
      assert.deepEqual(
        Object.keys(checkoutOp.requestBody.content['application/json;charset=utf-8'].schema.properties).sort(),
        ['dynamicAmountNotify', 'externalOrderId', 'notifyUrl', 'remark', 'returnUrl', 'userIdentity'],
      );
      assert.equal(
        checkoutOp.responses['200'].content['application/json;charset=utf-8'].schema.properties.data.type,
        'string',
        'data is the cashier address',
      );
      assert.ok(
        doc.paths['/admin/v1/merchants/{merchantId}/cashier'].put.requestBody.content['application/json'].schema
          .properties.methods,
      );

      const lines = server
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'));
      assert.ok(lines.length >= 4, 'one log line per request');
      assert.ok(!server.output().includes(credentials.secretKey), 'the secret is never logged');
      assert.match(
        server.output(),
        /deposit addresses derive from the published sandbox xpub/,
        'start-up says the sandbox xpub is public',
      );
    } finally {
      assert.equal(await server.stop(), 0, 'graceful shutdown exits 0');
    }
  });

  it('opens the sealed secrets again after a restart (the master key persists)', async () => {
    const server = await startServerProcess(env);
    try {
      const client = new CashgateClient({ baseUrl: server.url, ...credentials });
      assert.equal((await client.post('/api/v3/bra/query/bank', {})).code, '200');
    } finally {
      await server.stop();
    }
  });

  it('in demo mode prints a merchant, a key that works at once and an admin token', async () => {
    const demoDir = mkdtempSync(join(tmpdir(), 'cashgate-demo-'));
    const server = await startServerProcess({
      CASHGATE_DATA_DIR: demoDir,
      CASHGATE_DEMO: '1',
      ...(database !== undefined && { DATABASE_URL: database.url }),
    });
    try {
      // The demo block is printed just after the server starts serving.
      for (let i = 0; i < 100 && !server.output().includes('admin token'); i += 1)
        await new Promise((r) => setTimeout(r, 50));
      const out = server.output();
      const accessKey = /access key\s+(AK[0-9a-f]+)/.exec(out)?.[1];
      const secretKey = /secret key\s+([0-9a-f]{64})/.exec(out)?.[1];
      const adminToken = /admin token\s+(\S+)/.exec(out)?.[1];
      assert.ok(accessKey !== undefined && secretKey !== undefined && adminToken !== undefined, out);
      const client = new CashgateClient({ baseUrl: server.url, accessKey, secretKey });
      const res = await client.post('/api/v3/bra/query/bank', { currencyType: 'BRL' });
      assert.equal(res.code, '200', res.msgEn);
      const merchants = await fetch(new URL('/admin/v1/merchants', server.url), {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      assert.equal(merchants.status, 200);
      // The console login it prints signs in.
      const login = /sign in as (\S+) \/ (\S+)/.exec(out);
      assert.ok(login !== null, `no console login in: ${out}`);
      const form = await fetch(new URL('/console/sign-in', server.url));
      const cookie = (form.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
      const signIn = await fetch(new URL('/console/sign-in', server.url), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email: login[1] ?? '', password: login[2] ?? '' }).toString(),
      });
      assert.equal(signIn.status, 303, 'the demo console login signs in');
      assert.equal(signIn.headers.get('location'), '/console');
    } finally {
      await server.stop();
      rmSync(demoDir, { recursive: true, force: true });
    }
  });

  it('refuses to open the secrets under another master key', async () => {
    const server = await startServerProcess({ ...env, CASHGATE_MASTER_KEY: 'cd'.repeat(32) });
    try {
      const client = new CashgateClient({ baseUrl: server.url, ...credentials });
      const res = await client.post('/api/v3/bra/query/bank', {});
      assert.equal(res.code, '500');
    } finally {
      await server.stop();
    }
  });
});
