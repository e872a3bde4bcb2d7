import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_XPUBS } from '../src/rails/chain/derivation.js';
import { tronAddressAt } from './support/exchange.js';
import { createTestDatabase, databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { ADMIN_TOKEN, signedCall } from './support/gateway.js';
import { adminCall, runCli, startServerProcess, type ServerProcess } from './support/process.js';

const CREATES = 50;

/** Two nodes at once: on SQLite one data directory is one node, so PostgreSQL only. */
const TWO_NODES =
  TEST_DATABASE_URL === undefined &&
  'needs PostgreSQL: on SQLite one data directory is one node (set TEST_DATABASE_URL)';

/** Deposit addresses handed out by two gateway processes on one database at once. */
describe(`exchange deposit addresses across processes (${databaseLabel})`, { skip: TWO_NODES }, () => {
  let env: Record<string, string>;
  let dataDir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  const servers: ServerProcess[] = [];

  const admin = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    adminCall(server, ADMIN_TOKEN, method, path, body);

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cashgate-exchange-'));
    database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
    env = {
      CASHGATE_DATA_DIR: dataDir,
      CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_ACTIVATION_DELAY_MS: '0',
      LOG_LEVEL: 'info',
      // Every address derived inline from the counter (test/deposit-address-pool.test.ts covers the pool's).
      DEPOSIT_ADDRESS_POOL_SIZE: '0',
      ...(database !== undefined && { DATABASE_URL: database.url }),
    };
    // One process migrates first; the second then opens a database that is already current.
    servers.push(await startServerProcess(env));
    servers.push(await startServerProcess(env));
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${CREATES} concurrent token → fiat creates on two processes get ${CREATES} distinct addresses of the xpub, and the audit is clean`, async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const merchant = await admin(a, 'POST', '/admin/v1/merchants', { name: 'Two Nodes' });
    const key = await admin(a, 'POST', `/admin/v1/merchants/${merchant.body.merchantId}/api-keys`, {
      permissions: ['exchange', 'query'],
      ipWhitelist: '0.0.0.0',
    });
    assert.equal(key.status, 200);
    assert.equal((await admin(b, 'PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.40', sell: '5.50' })).status, 200);
    const credentials = { accessKey: key.body.accessKey as string, secretKey: key.body.secretKey as string };
    const body = {
      tokenAmount: '25',
      chainType: 'TRON',
      addressFrom: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb',
      currencyType: 'BRL',
      tokenType: 'USDT',
    };
    const results = await Promise.all(
      Array.from({ length: CREATES }, (_, i) =>
        signedCall(
          (i % 2 === 0 ? a : b).url,
          credentials,
          { path: '/api/v3/exchange/wallet/to/fiat', body: { ...body, externalOrderId: `two-nodes-${i}` } },
          Date.now(),
        ),
      ),
    );
    const failed = results.find((r) => r.body.code !== '200');
    assert.equal(failed, undefined, JSON.stringify(failed?.body));
    const addresses = results.map((r) => r.body.data.addressTo as string);
    assert.equal(new Set(addresses).size, CREATES, 'no address was handed out twice');

    // Exactly the first CREATES indexes of the sandbox xpub, derived independently with ethers.
    const expected = Array.from({ length: CREATES }, (_, i) => tronAddressAt(SANDBOX_XPUBS.tron, i));
    assert.deepEqual([...addresses].sort(), [...expected].sort());

    const audit = await runCli(['audit'], { ...env });
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
  });
});
