import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import SqliteDatabase from 'better-sqlite3';
import { join } from 'node:path';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { runCli } from './support/process.js';

describe(`balances, adjustments, fees and settlement (${databaseLabel})`, () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw.close();
  });

  const balance = async (credentials: { accessKey: string; secretKey: string }, area: 'ken' | 'bra') =>
    signedCall(gw.url, credentials, { method: 'GET', path: `/api/v3/${area}/query/balance` }, gw.clock.now());

  it('answers both balance endpoints with one record per currency, typed as the spec says', async () => {
    const { credentials } = await gw.merchantWithKey({ permissions: ['balance'] });
    for (const [area, currency, zero] of [
      ['ken', 'KES', '0'],
      ['bra', 'BRL', '0.00'],
    ] as const) {
      const response = await balance(credentials, area);
      assert.equal(response.status, 200);
      assert.equal(response.body.code, '200');
      assert.deepEqual(response.body.data, [
        {
          accountBalance: zero,
          accountFreezeAmount: zero,
          accountStatusId: 1,
          accountWaitSettledAmount: zero,
          currencyType: currency,
          accountStatus: 'NORMAL',
        },
      ]);
    }
  });

  it('refuses unsigned calls, keys without the balance permission, and query parameters', async () => {
    const unsigned = await fetch(new URL('/api/v3/bra/query/balance', gw.url));
    assert.equal(unsigned.status, 401);
    const { credentials } = await gw.merchantWithKey({ permissions: ['query'] });
    const refused = await balance(credentials, 'bra');
    assert.equal(refused.body.code, '301');
    const all = await gw.merchantWithKey();
    const extra = await signedCall(
      gw.url,
      all.credentials,
      { method: 'GET', path: '/api/v3/bra/query/balance', query: { currency: 'BRL' } },
      gw.clock.now(),
    );
    assert.equal(extra.body.code, '300');
    assert.match(extra.body.msgEn, /currency/);
  });

  it('credits and debits with adjustments, visible in the balance; an overdraft changes nothing', async () => {
    const { merchantId, credentials } = await gw.merchantWithKey();
    const path = `/admin/v1/merchants/${merchantId}/balance-adjustments`;
    const credit = await gw.admin('POST', path, { currency: 'BRL', amount: '1500.25', reason: 'opening balance' });
    assert.equal(credit.status, 200, JSON.stringify(credit.body));
    assert.match(credit.body.journalId, /^jnl_/);
    assert.deepEqual(credit.body.balance, {
      currency: 'BRL',
      available: '1500.25',
      frozen: '0.00',
      awaitingSettlement: '0.00',
    });
    assert.equal(
      (await gw.admin('POST', path, { currency: 'BRL', amount: -0.25, reason: 'fee correction' })).status,
      200,
    );
    const overdraft = await gw.admin('POST', path, { currency: 'BRL', amount: '-1500.01', reason: 'too much' });
    assert.equal(overdraft.status, 409);
    assert.equal(overdraft.body.error.code, 'insufficient_balance');
    const kes = await gw.admin('POST', path, { currency: 'KES', amount: '2500', reason: 'float' });
    assert.equal(kes.status, 200);
    assert.equal((await balance(credentials, 'bra')).body.data[0].accountBalance, '1500.00');
    assert.equal((await balance(credentials, 'ken')).body.data[0].accountBalance, '2500');
    const listed = await gw.admin('GET', `/admin/v1/merchants/${merchantId}/balances`);
    assert.deepEqual(
      listed.body.balances.map((b: any) => [b.currency, b.available]),
      [
        ['BRL', '1500.00'],
        ['KES', '2500'],
      ],
    );
  });

  for (const [body, field] of [
    [{ currency: 'BRL', amount: '1.001', reason: 'x' }, 'amount'],
    [{ currency: 'KES', amount: '1.5', reason: 'x' }, 'amount'],
    [{ currency: 'BRL', amount: '0', reason: 'x' }, 'amount'],
    [{ currency: 'BRL', amount: '1e3', reason: 'x' }, 'amount'],
    [{ currency: 'USD', amount: '1', reason: 'x' }, 'currency'],
    [{ currency: 'BRL', amount: '1' }, 'reason'],
  ] as const) {
    it(`refuses the adjustment ${JSON.stringify(body)} naming ${field}, and changes nothing`, async () => {
      const { merchantId } = await gw.merchantWithKey();
      const refused = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, body);
      assert.equal(refused.status, 400);
      assert.match(refused.body.error.message, new RegExp(field));
      assert.deepEqual((await gw.admin('GET', `/admin/v1/merchants/${merchantId}/balances`)).body.balances, []);
    });
  }

  it('sets and lists fee schedules per channel, and refuses an unknown channel', async () => {
    const { merchantId } = await gw.merchantWithKey();
    const set = await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/fees/bra.collection.PIX`, {
      reason: 'test fee',
      percentBps: 150,
      fixed: '0.30',
      minimum: '1.00',
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body, {
      channel: 'bra.collection.PIX',
      currency: 'BRL',
      percentBps: 150,
      fixed: '0.30',
      minimum: '1.00',
    });
    await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/fees/ken.transfer.BANK`, {
      reason: 'test fee',
      percentBps: 0,
      fixed: '15',
    });
    const listed = await gw.admin('GET', `/admin/v1/merchants/${merchantId}/fees`);
    assert.deepEqual(
      listed.body.fees.map((f: any) => [f.channel, f.fixed]),
      [
        ['bra.collection.PIX', '0.30'],
        ['ken.transfer.BANK', '15'],
      ],
    );
    const unknown = await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/fees/bra.collection.CARD`, {
      reason: 'test fee',
      percentBps: 1,
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'fee_channel_not_found');
    const fractional = await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/fees/ken.transfer.BANK`, {
      reason: 'test fee',
      percentBps: 0,
      fixed: '1.5',
    });
    assert.equal(fractional.status, 400);
    assert.match(fractional.body.error.message, /fixed/);
  });

  it('settles collected money after the merchant settlement delay', async () => {
    const { merchantId, credentials } = await gw.merchantWithKey();
    const delay = await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/settlement`, { delayMs: 60_000 });
    assert.deepEqual(delay.body, { merchantId, settlementDelayMs: 60_000 });
    const { ledger, store } = gw.gateway;
    await store.transact((tx) =>
      ledger.ledger.creditCollection(tx, {
        merchantId,
        currency: 'BRL',
        orderId: 'ord_settle',
        amount: 10_000n,
        fee: 150n,
        settleAt: gw.clock.now() + 60_000,
      }),
    );
    const before = (await balance(credentials, 'bra')).body.data[0];
    assert.deepEqual([before.accountBalance, before.accountWaitSettledAmount], ['0.00', '98.50']);
    assert.equal(await ledger.settleDue(), 0, 'not yet due');
    gw.clock.advance(60_001);
    assert.equal(await ledger.settleDue(), 1);
    const after = (await balance(credentials, 'bra')).body.data[0];
    assert.deepEqual([after.accountBalance, after.accountWaitSettledAmount], ['98.50', '0.00']);
  });

  it('audits clean, and finds a balance changed behind the ledger', async () => {
    const env: Record<string, string> = {
      CASHGATE_DATA_DIR: gw.dataDir,
      ...(gw.databaseUrl !== undefined && { DATABASE_URL: gw.databaseUrl }),
    };
    const clean = await runCli(['audit', '--format', 'text'], env);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.match(clean.stdout, /the ledger is sound/);
    const { merchantId } = await gw.merchantWithKey();
    await gw.admin('POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '10.00',
      reason: 'x',
    });
    const tamper = `update ledger_accounts set balance = balance + 1 where code = '${merchantId}/BRL/available'`;
    if (gw.databaseUrl === undefined) {
      const db = new SqliteDatabase(join(gw.dataDir, 'cashgate.sqlite'));
      db.exec(tamper);
      db.close();
    } else {
      const client = new pg.Client({ connectionString: gw.databaseUrl });
      await client.connect();
      await client.query(tamper);
      await client.end();
    }
    const broken = await runCli(['audit', '--format', 'text'], env);
    assert.equal(broken.code, 1);
    assert.match(
      broken.stdout,
      new RegExp(
        `BREACH  balances equal their entries\\n\\s+${merchantId}/BRL/available has balance 1001 but its entries sum to 1000`,
      ),
    );
    assert.match(broken.stdout, /^1 breach\(es\)$/m);
  });
});
