import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { CashgateClient } from '@cashgate/sdk';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { signedCall } from './support/gateway.js';
import { adminCall, runCli, startServerProcess, type CliResult } from './support/process.js';

const ADMIN = 'cli-test-admin-token';

/** The error a failed command printed: one JSON document on standard error, nothing on standard output. */
function cliError(result: CliResult, exitCode: number): { code: string; message: string } {
  assert.equal(result.code, exitCode, `exit code: ${result.stdout}${result.stderr}`);
  assert.equal(result.stdout, '', 'a failed command prints nothing on standard output');
  return (JSON.parse(result.stderr) as { error: { code: string; message: string } }).error;
}

/** The document with every local `$ref` replaced by what it names, so a named schema reads like an inline one. */
function resolveRefs(doc: unknown): unknown {
  const resolve = (node: unknown, seen: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => resolve(item, seen));
    if (typeof node !== 'object' || node === null) return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/') && !seen.includes(ref)) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce<unknown>(
          (at, part) => (at as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')],
          doc,
        );
      return resolve(target, [...seen, ref]);
    }
    const resolved = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v, seen)]));
    return Array.isArray(resolved.allOf) ? mergeAllOf(resolved) : resolved;
  };
  return resolve(doc, []);
}

/** An `allOf` of object schemas read as the one object schema it describes (members in order). */
function mergeAllOf(schema: Record<string, unknown>): Record<string, unknown> {
  const { allOf, ...rest } = schema as { allOf: Record<string, any>[] };
  if (!allOf.every((part) => part.type === 'object' || part.properties !== undefined)) return schema;
  return {
    ...rest,
    type: 'object',
    properties: Object.assign({}, ...allOf.map((part) => part.properties ?? {})),
    required: [...new Set(allOf.flatMap((part) => (part.required ?? []) as string[]))],
  };
}

/** Signs in at the console with an e-mail address and password; the sign-in answer's status (303 when signed in). */
async function consoleSignIn(baseUrl: string, email: string, password: string): Promise<number> {
  const form = await fetch(new URL('/console/sign-in', baseUrl));
  const cookie = (form.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const signIn = await fetch(new URL('/console/sign-in', baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  return signIn.status;
}

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
      CASHGATE_ADMIN_TOKEN: ADMIN,
      ...(database !== undefined && { DATABASE_URL: database.url }),
    };
  });
  after(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses to start with bad configuration and names every bad variable, as JSON on standard error', async () => {
    const result = await runCli(['serve'], { ...env, PORT: 'eighty', SIGNATURE_WINDOW_MS: '-1', TRUST_PROXY: '???' });
    const error = cliError(result, 78);
    assert.equal(error.code, 'invalid_configuration');
    assert.match(error.message, /Invalid configuration/);
    assert.match(error.message, /PORT="eighty": must be a whole number/);
    assert.match(error.message, /SIGNATURE_WINDOW_MS="-1"/);
    assert.match(error.message, /TRUST_PROXY="\?\?\?"/);
  });

  it('migrates, says which migrations it applied, and creates the master key file with mode 0600', async () => {
    const result = await runCli(['migrate'], env);
    assert.equal(result.code, 0, result.stderr);
    const { applied } = JSON.parse(result.stdout) as { applied: string[] };
    assert.equal(applied[0], '0001_core', 'a fresh database gets every migration, from the first');
    assert.deepEqual(applied, [...applied].sort(), 'in order');
    assert.ok(
      applied.length > 10 && new Set(applied).size === applied.length,
      `every migration once: ${applied.join(', ')}`,
    );
    const key = join(dataDir, 'master.key');
    assert.ok(existsSync(key), 'the master key file exists');
    assert.equal(statSync(key).mode & 0o777, 0o600);
    if (database === undefined) assert.ok(existsSync(join(dataDir, 'cashgate.sqlite')), 'the SQLite file exists');
    const again = await runCli(['migrate'], env);
    assert.equal(again.code, 0, 'migrating twice is harmless');
    assert.deepEqual(JSON.parse(again.stdout), { applied: [] }, 'and applies nothing the second time');
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

    const bad = cliError(
      await runCli(['key', 'create', '--merchant', merchantId, '--permissions', 'everything'], env),
      64,
    );
    assert.equal(bad.code, 'invalid_request');
    assert.match(bad.message, /^permissions\.0 must be one of exchange/);
    const noName = cliError(await runCli(['merchant', 'create', '--name', ''], env), 64);
    assert.deepEqual(noName, { code: 'invalid_request', message: 'name must be at least 1 character long' });
    const usage = cliError(await runCli(['key', 'list'], env), 64);
    assert.deepEqual(usage, { code: 'usage', message: 'key list needs --merchant' });
    const missing = cliError(await runCli(['key', 'create', '--merchant', 'mch_nope'], env), 1);
    assert.deepEqual(missing, { code: 'merchant_not_found', message: 'merchant mch_nope does not exist' });
    const unknown = cliError(await runCli(['key', 'rotate'], env), 64);
    assert.match(unknown.message, /unknown command "key rotate"/);
    const option = cliError(await runCli(['key', 'list', '--merchant', merchantId, '--colour'], env), 64);
    assert.match(option.message, /Unknown option '--colour'/);
    const format = cliError(await runCli(['merchant', 'create', '--name', 'X', '--format', 'text'], env), 64);
    assert.match(format.message, /merchant create prints JSON only/);
    assert.equal(
      (JSON.parse((await runCli(['merchant', 'list'], env)).stdout) as unknown[]).length,
      1,
      'a refused command created nothing',
    );
  });

  it('operates keys, the callback address, fees, rates and console users from the shell, as the running server sees them', async () => {
    const server = await startServerProcess(env);
    const cli = async (args: string[], extra: Record<string, string> = {}): Promise<any> => {
      const result = await runCli(args, { ...env, ...extra });
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    };
    const admin = (method: string, path: string, body?: unknown) => adminCall(server, ADMIN, method, path, body);
    const bank = async (keys: { accessKey: string; secretKey: string } = credentials) =>
      (await signedCall(server.url, keys, { path: '/api/v3/bra/query/bank', body: {} }, Date.now())).body.code;
    const m = ['--merchant', merchantId];
    const keyPath = `/admin/v1/merchants/${merchantId}/api-keys`;
    try {
      // Keys: disable, enable, edit, and the admin API and the signed API see each change.
      const key = ['--key', credentials.accessKey];
      assert.equal(await bank(), '200');
      const disabled = await cli(['key', 'disable', ...m, ...key]);
      assert.equal(disabled.status, 'disabled');
      assert.equal(await bank(), '301', 'a key disabled by the CLI is refused');
      assert.equal((await admin('GET', keyPath)).body.apiKeys[0].status, 'disabled');
      const text = await runCli(['key', 'list', ...m, '--format', 'text'], env);
      assert.match(text.stdout, /^ACCESS KEY\s+STATUS\s+ACTIVE AT/);
      assert.match(text.stdout, new RegExp(`^${credentials.accessKey}\\s+disabled\\s+\\d{4}-\\d\\d-\\d\\dT`, 'm'));
      assert.equal((await cli(['key', 'enable', ...m, ...key])).status, 'active', 'no activation delay here');
      assert.equal(await bank(), '200');

      const edited = await cli(['key', 'edit', ...m, ...key, '--permissions', 'balance', '--label', 'ops', '--debug']);
      assert.deepEqual([edited.permissions, edited.label, edited.debug], [['balance'], 'ops', true]);
      assert.deepEqual(
        Object.keys(edited),
        Object.keys((await admin('GET', keyPath)).body.apiKeys[0]),
        'the key object',
      );
      assert.equal(await bank(), '301', 'the edit took away the query permission');
      const restored = await cli(['key', 'edit', ...m, ...key, '--permissions', 'query,balance', '--no-debug']);
      assert.deepEqual([restored.permissions, restored.label, restored.debug], [['query', 'balance'], 'ops', false]);
      assert.equal(await bank(), '200');
      assert.deepEqual((await admin('GET', keyPath)).body.apiKeys[0], restored, 'the admin API shows the same key');

      const badWhitelist = cliError(
        await runCli(['key', 'edit', ...m, ...key, '--ip-whitelist', '300.1.1.1'], env),
        64,
      );
      const adminBadWhitelist = await admin('PATCH', `${keyPath}/${credentials.accessKey}`, {
        ipWhitelist: '300.1.1.1',
      });
      assert.deepEqual(badWhitelist, adminBadWhitelist.body.error, 'the same error as the admin API');
      const noKey = cliError(await runCli(['key', 'disable', ...m, '--key', 'AKnope'], env), 1);
      assert.deepEqual(noKey, (await admin('POST', `${keyPath}/AKnope/disable`)).body.error);
      assert.equal(noKey.code, 'api_key_not_found');
      assert.equal(cliError(await runCli(['key', 'edit', ...m, ...key], env), 64).code, 'usage', 'an edit of nothing');
      assert.equal(await bank(), '200', 'refused commands changed nothing');

      // A key waiting for its activation is pending, in the CLI and at the admin API; then deleted.
      const waiting = await cli(['key', 'create', ...m, '--label', 'later'], { KEY_ACTIVATION_DELAY_MS: '600000' });
      const listed = (await cli(['key', 'list', ...m])).find(
        (k: { accessKey: string }) => k.accessKey === waiting.accessKey,
      );
      assert.deepEqual([listed.status, listed.activeAt], ['pending', waiting.activeAt], 'pending, with activeAt');
      const shown = (await admin('GET', keyPath)).body.apiKeys.find(
        (k: { accessKey: string }) => k.accessKey === waiting.accessKey,
      );
      assert.deepEqual(shown, listed, 'the admin API lists it the same');
      assert.equal(await bank(waiting), '301', 'a pending key is refused');
      assert.equal((await cli(['key', 'delete', ...m, '--key', waiting.accessKey])).status, 'deleted');
      assert.deepEqual(
        (await admin('GET', keyPath)).body.apiKeys.map((k: { accessKey: string }) => k.accessKey),
        [credentials.accessKey],
        'a deleted key is no longer listed',
      );
      const gone = cliError(await runCli(['key', 'enable', ...m, '--key', waiting.accessKey], env), 1);
      assert.deepEqual(gone, (await admin('POST', `${keyPath}/${waiting.accessKey}/enable`)).body.error);
      assert.equal(gone.code, 'api_key_deleted');

      // The unified callback address.
      assert.deepEqual(await cli(['callback', 'show', ...m]), { merchantId, callbackUrl: null });
      const url = 'https://merchant.example/cashgate/callback';
      assert.equal((await cli(['callback', 'set', ...m, '--url', url])).callbackUrl, url);
      assert.equal((await admin('GET', `/admin/v1/merchants/${merchantId}`)).body.callbackUrl, url);
      assert.deepEqual(await cli(['callback', 'show', ...m]), { merchantId, callbackUrl: url });
      const badUrl = cliError(await runCli(['callback', 'set', ...m, '--url', 'ftp://x'], env), 64);
      assert.deepEqual(
        badUrl,
        (await admin('PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: 'ftp://x' })).body.error,
      );
      assert.deepEqual(
        await cli(['merchant', 'show', ...m]),
        (await admin('GET', `/admin/v1/merchants/${merchantId}`)).body,
      );
      assert.equal((await cli(['callback', 'clear', ...m])).callbackUrl, null);
      assert.equal((await admin('GET', `/admin/v1/merchants/${merchantId}`)).body.callbackUrl, null);

      // Fees.
      const fee = await cli([
        'fee',
        'set',
        ...m,
        '--channel',
        'bra.collection.PIX',
        '--percent-bps',
        '150',
        '--fixed',
        '0.10',
        '--reason',
        'contract 2026-11',
      ]);
      assert.deepEqual(fee, {
        channel: 'bra.collection.PIX',
        currency: 'BRL',
        percentBps: 150,
        fixed: '0.10',
        minimum: '0.00',
      });
      assert.deepEqual(
        await cli(['fee', 'list', ...m]),
        (await admin('GET', `/admin/v1/merchants/${merchantId}/fees`)).body.fees,
      );
      assert.match(
        (await runCli(['fee', 'list', ...m, '--format', 'text'], env)).stdout,
        /^bra\.collection\.PIX\s+BRL\s+150\s+0\.10\s+0\.00$/m,
      );
      const noChannel = cliError(
        await runCli(['fee', 'set', ...m, '--channel', 'bra.card', '--percent-bps', '1', '--reason', 'test'], env),
        1,
      );
      assert.deepEqual(
        noChannel,
        (await admin('PUT', `/admin/v1/merchants/${merchantId}/fees/bra.card`, { reason: 'test fee', percentBps: 1 }))
          .body.error,
      );
      const fraction = cliError(
        await runCli(
          ['fee', 'set', ...m, '--channel', 'bra.collection.PIX', '--percent-bps', '1.5', '--reason', 'test'],
          env,
        ),
        64,
      );
      assert.deepEqual(
        fraction,
        (
          await admin('PUT', `/admin/v1/merchants/${merchantId}/fees/bra.collection.PIX`, {
            reason: 'test fee',
            percentBps: 1.5,
          })
        ).body.error,
      );
      const tooMuch = cliError(
        await runCli(
          ['fee', 'set', ...m, '--channel', 'bra.collection.PIX', '--percent-bps', '10001', '--reason', 'test'],
          env,
        ),
        64,
      );
      assert.match(tooMuch.message, /^percentBps /);

      // Exchange rates.
      const rate = await cli([
        'rate',
        'set',
        '--currency',
        'BRL',
        '--token',
        'USDT',
        '--buy',
        '5.10',
        '--sell',
        '5.20',
        '--spread-bps',
        '50',
      ]);
      assert.deepEqual([rate.buy, rate.sell, rate.spreadBps], ['5.1', '5.2', 50]);
      assert.deepEqual(await cli(['rate', 'list']), (await admin('GET', '/admin/v1/rates')).body.rates);
      assert.match(
        (await runCli(['rate', 'list', '--format', 'text'], env)).stdout,
        /^BRL\/USDT\s+5\.1\s+5\.2\s+50\s/m,
      );
      const pair = cliError(
        await runCli(['rate', 'set', '--currency', 'EUR', '--token', 'USDT', '--buy', '1', '--sell', '2'], env),
        1,
      );
      assert.deepEqual(pair, (await admin('PUT', '/admin/v1/rates/EUR/USDT', { buy: '1', sell: '2' })).body.error);
      const inverted = cliError(
        await runCli(['rate', 'set', '--currency', 'BRL', '--token', 'USDT', '--buy', '6', '--sell', '5'], env),
        64,
      );
      assert.deepEqual(inverted, (await admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '6', sell: '5' })).body.error);
      assert.equal(inverted.code, 'invalid_rate');
      assert.equal((await admin('GET', '/admin/v1/rates')).body.rates[0].buy, '5.1', 'a refused rate changed nothing');

      // Console users; the password from the environment keeps it out of the process list.
      const password = 'first-password-1';
      const user = await cli(['user', 'create', ...m, '--email', 'Ops@Merchant.example', '--name', 'Ops'], {
        CASHGATE_USER_PASSWORD: password,
      });
      assert.deepEqual([user.email, user.name, user.merchantId], ['ops@merchant.example', 'Ops', merchantId]);
      assert.deepEqual(
        await cli(['user', 'list', ...m]),
        (await admin('GET', `/admin/v1/merchants/${merchantId}/users`)).body.users,
      );
      assert.match(
        (await runCli(['user', 'list', ...m, '--format', 'text'], env)).stdout,
        new RegExp(`^${user.userId}\\s+ops@merchant\\.example\\s+Ops\\s+es\\s+off`, 'm'),
      );
      assert.equal(await consoleSignIn(server.url, 'ops@merchant.example', password), 303, 'the user signs in');
      const taken = cliError(
        await runCli(
          ['user', 'create', ...m, '--email', 'ops@merchant.example', '--password', 'another-password'],
          env,
        ),
        1,
      );
      assert.deepEqual(
        taken,
        (
          await admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
            email: 'ops@merchant.example',
            password: 'another-password',
          })
        ).body.error,
      );
      assert.equal(taken.code, 'console_user_exists');
      const short = cliError(
        await runCli(['user', 'create', ...m, '--email', 'x@merchant.example', '--password', 'short'], env),
        64,
      );
      assert.deepEqual(
        short,
        (
          await admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
            email: 'x@merchant.example',
            password: 'short',
          })
        ).body.error,
      );
      assert.equal(
        cliError(await runCli(['user', 'create', ...m, '--email', 'y@merchant.example'], env), 64).code,
        'usage',
        'no password',
      );
      const userArgs = [...m, '--user', user.userId];
      assert.equal(
        (await cli(['user', 'password', ...userArgs, '--password', 'second-password-2'])).userId,
        user.userId,
      );
      assert.notEqual(
        await consoleSignIn(server.url, 'ops@merchant.example', password),
        303,
        'the old password is refused',
      );
      assert.equal(
        await consoleSignIn(server.url, 'ops@merchant.example', 'second-password-2'),
        303,
        'the new one signs in',
      );
      assert.equal((await cli(['user', 'delete', ...userArgs])).email, 'ops@merchant.example');
      assert.deepEqual((await admin('GET', `/admin/v1/merchants/${merchantId}/users`)).body.users, []);
      const noUser = cliError(await runCli(['user', 'delete', ...userArgs], env), 1);
      assert.deepEqual(
        noUser,
        (await admin('DELETE', `/admin/v1/merchants/${merchantId}/users/${user.userId}`)).body.error,
      );
      assert.equal(noUser.code, 'console_user_not_found');

      // Money for the audit below.
      const credit = await admin('POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
        currency: 'BRL',
        amount: '10.00',
        reason: 'audit',
      });
      assert.equal(credit.status, 200);
    } finally {
      await server.stop();
    }
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

      const doc = resolveRefs(await (await fetch(new URL('/openapi.json', server.url))).json()) as any;
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
      assert.equal(
        await consoleSignIn(server.url, login[1] ?? '', login[2] ?? ''),
        303,
        'the demo console login signs in',
      );
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

  it('audits as JSON by default and as lines with --format text, exit 1 on a breach', async () => {
    const sound = await runCli(['audit'], env);
    assert.equal(sound.code, 0, sound.stdout + sound.stderr);
    const report = JSON.parse(sound.stdout) as {
      sound: boolean;
      breaches: number;
      checks: { check: string; ok: boolean; breaches: string[] }[];
    };
    assert.deepEqual([report.sound, report.breaches], [true, 0]);
    assert.ok(report.checks.length >= 6 && report.checks.every((c) => c.ok && c.breaches.length === 0), sound.stdout);
    assert.ok(
      report.checks.some((c) => c.check === 'balances equal their entries'),
      'the checks are named',
    );
    const text = await runCli(['audit', '--format', 'text'], env);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^ok\s+balances equal their entries$/m);
    assert.match(text.stdout, /^the ledger is sound$/m);

    const tamper = `update ledger_accounts set balance = balance + 1 where code = '${merchantId}/BRL/available'`;
    if (database === undefined) {
      const db = new SqliteDatabase(join(dataDir, 'cashgate.sqlite'));
      db.exec(tamper);
      db.close();
    } else {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await client.query(tamper);
      await client.end();
    }
    const broken = await runCli(['audit'], env);
    assert.equal(broken.code, 1, broken.stderr);
    const found = JSON.parse(broken.stdout) as typeof report;
    assert.deepEqual([found.sound, found.breaches], [false, 1]);
    assert.deepEqual(found.checks.find((c) => c.check === 'balances equal their entries')?.breaches, [
      `${merchantId}/BRL/available has balance 1001 but its entries sum to 1000`,
    ]);
    const brokenText = await runCli(['audit', '--format', 'text'], env);
    assert.equal(brokenText.code, 1);
    assert.match(brokenText.stdout, /^BREACH\s+balances equal their entries$/m);
    assert.match(brokenText.stdout, /^1 breach\(es\)$/m);
  });
});
