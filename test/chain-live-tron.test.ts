import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TronWeb } from 'tronweb';
import { consoleSignIn } from './support/console.js';
import { LIVE_CHAIN_ENV, liveChainMerchant } from './support/chain-live.js';
import { databaseLabel } from './support/database.js';
import { QUERY_TO_FIAT, QUERY_TO_WALLET, TO_FIAT, TO_WALLET } from './support/exchange.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';
import { startTronApi, type TronApiFake } from './support/tron-api-fake.js';

const CONFIRMATIONS = 3;
const TRX = 1_000_000n;
let seq = 0;
const ext = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

/** A fresh TRON account (key and Base58 address), made with tronweb. */
function account(): { key: string; address: string } {
  const key = randomBytes(32).toString('hex');
  return { key, address: TronWeb.address.fromPrivateKey(key) as string };
}

/**
 * USDT on TRON with CHAIN_RAIL=live, against the local TronGrid-compatible API (it checks every
 * broadcast transaction's id and signature, keeps balances and energy, and fails, drops and
 * reorganises on demand): deposits to derived addresses credited once final and never when a
 * reorganisation takes them; sends from the hot wallet built, signed and followed to the end.
 */
describe(`USDT live on TRON: deposits and sends through the TronGrid API (${databaseLabel})`, () => {
  let tron: TronApiFake;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const hot = account();
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>).filter((b) => b.orderId === orderId);
  let balance: Awaited<ReturnType<typeof liveChainMerchant>>['balance'];
  let chainView: Awaited<ReturnType<typeof liveChainMerchant>>['chainView'];
  const sell = async (tokenAmount: string, payer: string) => {
    const externalOrderId = ext('xt');
    const response = await call(TO_FIAT, {
      tokenAmount,
      chainType: 'TRON',
      addressFrom: payer,
      currencyType: 'BRL',
      tokenType: 'USDT',
      externalOrderId,
    });
    assert.equal(response.body.code, '200', JSON.stringify(response.body));
    const orderId = response.body.data.orderId as string;
    const address = response.body.data.addressTo as string;
    const status = async () =>
      (await call(QUERY_TO_FIAT, { orderId, externalOrderId })).body.data as Record<string, unknown>;
    return { orderId, address, status };
  };
  const buy = async (currencyAmount: number, to: string) => {
    const externalOrderId = ext('xf');
    const response = await call(TO_WALLET, {
      addressTo: to,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount,
      currencyType: 'BRL',
      externalOrderId,
    });
    assert.equal(response.body.code, '200', JSON.stringify(response.body));
    const orderId = response.body.data.orderId as string;
    const status = async () =>
      (await call(QUERY_TO_WALLET, { orderId, externalOrderId })).body.data as Record<string, unknown>;
    return { orderId, status };
  };

  before(async () => {
    tron = await startTronApi();
    tron.fund(hot.address, 1_000n * TRX);
    tron.mint(hot.address, 1_000_000_000n);
    gw = await startTestGateway({
      env: {
        ...LIVE_CHAIN_ENV,
        TRON_API_URL: tron.url,
        TRON_CONFIRMATIONS: String(CONFIRMATIONS),
        TRON_HOT_WALLET_KEY: hot.key,
        TRON_FEE_LIMIT_SUN: String(30n * TRX),
      },
    });
    receiver = await startReceiver();
    ({ merchant, balance, chainView } = await liveChainMerchant(gw, receiver, '10000.00'));
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await receiver.close();
    await tron.close();
    assert.deepEqual(breaches, [], 'the ledger audit finds nothing');
  });

  it('credits a deposit to its derived address once it is final, and only then', async () => {
    const payer = account().address;
    tron.mint(payer, 100_000_000n);
    const before = await balance();
    const order = await sell('20', payer);
    const txID = tron.deposit(payer, order.address, 20_000_000n);
    tron.mine(1);
    await until(async () => assert.equal((await chainView(order.orderId)).deposits.length, 1, 'seen'));
    assert.equal((await chainView(order.orderId)).deposits[0].state, 'seen', 'not final yet');
    assert.equal((await order.status()).orderStatus, 4, 'still waiting');
    tron.mine(CONFIRMATIONS - 1);
    await until(async () => assert.equal((await order.status()).orderStatus, 8, 'complete'));
    const data = await order.status();
    assert.equal(data.tradeHash, txID, 'the deposit’s transaction');
    assert.equal(
      BigInt((await balance()).available.replace('.', '')) - BigInt(before.available.replace('.', '')),
      10_000n,
      '20 USDT at 5.00 credited',
    );
    await until(() => assert.equal(callbacksFor(order.orderId).at(-1)?.orderStatus, 8, 'callback'));
    const [deposit] = (await chainView(order.orderId)).deposits;
    assert.equal(deposit?.state, 'reported', 'the transfer is recorded as reported');
    assert.equal(callbacksFor(order.orderId).length, 1, 'one callback');
  });

  it('never credits a deposit a reorganisation took before it was final', async () => {
    const payer = account().address;
    tron.mint(payer, 100_000_000n);
    const order = await sell('7', payer);
    tron.deposit(payer, order.address, 7_000_000n);
    tron.mine(1);
    await until(async () => assert.equal((await chainView(order.orderId)).deposits.length, 1, 'seen'));
    tron.reorg(1, { drop: true });
    tron.mine(CONFIRMATIONS + 2);
    await until(async () => assert.equal((await chainView(order.orderId)).deposits.length, 0, 'forgotten'));
    assert.equal((await order.status()).orderStatus, 4, 'still waiting for its deposit');
    // The payer sends again: that deposit counts.
    const again = tron.deposit(payer, order.address, 7_000_000n);
    tron.mine(CONFIRMATIONS);
    await until(async () => assert.equal((await order.status()).orderStatus, 8, 'complete'));
    assert.equal((await order.status()).tradeHash, again);
  });

  it('sends tokens from the hot wallet: built and signed by Cashgate, followed until final', async () => {
    const to = account().address;
    const order = await buy(50, to);
    await until(() => assert.equal(tron.pool().length, 1, 'broadcast'));
    const [txID] = tron.pool();
    tron.mine(1);
    await until(async () => assert.equal((await order.status()).orderStatus, 4, 'token sent'));
    tron.mine(CONFIRMATIONS);
    await until(async () => assert.equal((await order.status()).orderStatus, 8, 'complete'));
    assert.equal((await order.status()).tradeHash, txID);
    assert.equal(tron.balances(to).units, 10_000_000n, '50 BRL at 5.00: 10 USDT');
    const view = await chainView(order.orderId);
    assert.equal(view.send.from, hot.address);
    assert.equal(view.send.state, 'confirmed');
    assert.ok(view.send.confirmations >= CONFIRMATIONS, 'final');
  });

  it('asks before sending again: a broadcast answered by nobody, then one the API failed, are each sent once', async () => {
    for (const fault of ['drop', 'fail'] as const) {
      const to = account().address;
      if (fault === 'drop') tron.dropNext('wallet/broadcasttransaction');
      else tron.failNext('wallet/broadcasttransaction', { status: 503 });
      const order = await buy(25, to);
      await until(() => assert.equal(tron.pool().length, 1, `in the pool after the ${fault}`));
      const [txID] = tron.pool();
      const broadcasts = tron.calls('wallet/broadcasttransaction').filter((c) => c.body.txID === txID);
      if (fault === 'drop') {
        // The API took it and the answer was lost: the next run finds it pending and does not send it again.
        await until(() =>
          assert.ok(
            tron
              .calls('wallet/gettransactionbyid')
              .some((c) => c.body.value === txID && c.at > (broadcasts[0]?.at ?? 0)),
            'asked about',
          ),
        );
        assert.equal(broadcasts.length, 1, 'broadcast once');
      } else {
        // The API failed it unacted: asked about first, then broadcast again.
        assert.equal(broadcasts.length, 2, 'broadcast twice');
        const [first, second] = broadcasts;
        assert.ok(
          tron
            .calls('wallet/gettransactionbyid')
            .some((c) => c.body.value === txID && c.at >= (first?.at ?? 0) && c.at <= (second?.at ?? 0)),
          'asked about before broadcasting again',
        );
      }
      tron.mine(1 + CONFIRMATIONS);
      await until(async () => assert.equal((await order.status()).orderStatus, 8, 'complete'));
      assert.equal(tron.balances(to).units, 5_000_000n, `paid once after the ${fault}`);
      assert.equal((await chainView(order.orderId)).send.attempts.length, 1, 'one transaction');
    }
  });

  it('builds a new transaction only once the first expired unbroadcast', async () => {
    const to = account().address;
    tron.failNext('wallet/broadcasttransaction', { status: 503, times: 1_000 });
    const order = await buy(25, to);
    await until(async () => assert.equal((await chainView(order.orderId)).send?.state, 'signed', 'signed'));
    const attempts = (await chainView(order.orderId)).send.attempts as { txHash: string; expiresAt: number }[];
    const first = attempts[0];
    assert.ok(first !== undefined, 'one transaction signed');
    // Nothing is rebuilt while the first could still be mined: the sender keeps offering that one.
    tron.mine(1);
    const offered = tron.calls('wallet/broadcasttransaction').length;
    await until(() =>
      assert.ok(tron.calls('wallet/broadcasttransaction').length >= offered + 2, 'offered again, twice'),
    );
    assert.equal((await chainView(order.orderId)).send.attempts.length, 1, 'not rebuilt before its expiration');
    // Past its expiration (2 min after its reference block): it can never be mined.
    while (tron.head().timestamp <= first.expiresAt) tron.mine(1);
    // Past it too, but not by the confirmations' time: a lagging node could still show it mined.
    const offeredAfter = tron.calls('wallet/broadcasttransaction').length;
    await until(() => assert.ok(tron.calls('wallet/broadcasttransaction').length >= offeredAfter + 1, 'asked again'));
    assert.equal((await chainView(order.orderId)).send.attempts.length, 1, 'not rebuilt before it is sure');
    while (tron.head().timestamp <= first.expiresAt + CONFIRMATIONS * 3_000) tron.mine(1);
    await until(async () => assert.equal((await chainView(order.orderId)).send.attempts.length, 2, 'a new one'));
    tron.clearFaults('wallet/broadcasttransaction');
    await until(() => assert.equal(tron.pool().length, 1, 'the new one is broadcast'));
    tron.mine(1 + CONFIRMATIONS);
    await until(async () => assert.equal((await order.status()).orderStatus, 8, 'complete'));
    const view = await chainView(order.orderId);
    assert.notEqual(view.send.txHash, first.txHash);
    assert.equal(view.send.attempts[0].outcome, 'replaced');
    assert.equal(tron.balances(to).units, 5_000_000n, 'paid once');
  });

  it('surfaces an energy shortfall: the order fails with the reason, its fiat returns', async () => {
    const before = await balance();
    const to = account().address;
    // The wallet holds its fee limit, but this transfer's energy costs more than that limit at this price.
    tron.setEnergyPrice(1_000n);
    try {
      const order = await buy(25, to);
      await until(() => assert.equal(tron.pool().length, 1, 'broadcast'));
      tron.mine(1 + CONFIRMATIONS);
      await until(async () => assert.equal((await order.status()).orderStatus, 32, 'failed'));
      assert.match((await order.status()).errorMsgEn as string, /OUT_OF_ENERGY/);
      assert.deepEqual(await balance(), before, 'the fiat returned');
    } finally {
      tron.setEnergyPrice(100n);
    }
  });

  it('shows the send and the deposits on the console order page, and documents the chain route', async () => {
    const db = gw.gateway.store.read;
    const sent = await db
      .selectFrom('chain_sends')
      .select('order_id')
      .where('state', '=', 'confirmed')
      .orderBy('created_at')
      .executeTakeFirst();
    assert.ok(sent !== undefined, 'an earlier test completed a send');
    const reported = await db
      .selectFrom('chain_transfers')
      .select('to_address')
      .where('state', '=', 'reported')
      .orderBy('seen_at')
      .executeTakeFirst();
    assert.ok(reported !== undefined, 'an earlier test credited a deposit');
    const deposited = await db
      .selectFrom('orders')
      .select('id')
      .where('rail_ref', '=', reported.to_address)
      .executeTakeFirst();
    assert.ok(deposited !== undefined, 'the deposit’s order');
    const usdt = (units: string) => {
      assert.equal(BigInt(units) % 1_000_000n, 0n, `whole USDT: ${units}`);
      return `${BigInt(units) / 1_000_000n} USDT`;
    };
    const panelOf = (page: string) => {
      const start = page.indexOf('<div class="panel"><h2>On chain</h2>');
      assert.ok(start >= 0, 'the page has an "On chain" panel');
      return page.slice(start, page.indexOf('</div></div>', start));
    };
    const client = await consoleSignIn(gw, merchant.merchantId);

    const send = (await chainView(sent.order_id)).send;
    const sendPage = await client.get(`/console/orders/${sent.order_id}`);
    assert.equal(sendPage.status, 200, 'the send’s order page');
    const sendPanel = panelOf(sendPage.text);
    for (const [what, shown] of [
      ['its state in words', '<span class="badge ok">Confirmed: final</span>'],
      ['the hot wallet', `<code>${hot.address}</code>`],
      ['the destination', `<code>${send.to}</code>`],
      ['the amount in USDT', `<dd>${usdt(send.units)}</dd>`],
      ['the deciding transaction', `<dd><code>${send.txHash}</code></dd>`],
      ['its block', `<dd>${send.blockNumber}</dd>`],
      ['its confirmations', `<dd>${send.confirmations}</dd>`],
      ['the transaction signed, mined', `<td class="mono">${send.txHash}</td>`],
      ['its outcome', '<span class="badge ok">Mined</span>'],
    ] as const)
      assert.ok(sendPanel.includes(shown), `the send panel shows ${what}: ${shown}`);

    const deposits = (await chainView(deposited.id)).deposits;
    assert.ok(deposits.length > 0, 'the order saw its deposit');
    const depositPanel = panelOf((await client.get(`/console/orders/${deposited.id}`)).text);
    assert.ok(!depositPanel.includes('Token send'), 'a deposit order has no send');
    for (const deposit of deposits) {
      const row = new RegExp(`<td class="mono">${deposit.txHash}</td>(.*?)</tr>`).exec(depositPanel)?.[1];
      assert.ok(row !== undefined, `the deposit ${deposit.txHash} is listed`);
      assert.ok(row.includes(`<td class="mono">${deposit.from}</td>`), 'its sender');
      assert.ok(row.includes(`>${usdt(deposit.units)}<`), 'its amount in USDT');
      assert.ok(row.includes(`>${deposit.blockNumber}<`), 'its block');
      assert.ok(row.includes('<span class="badge ok">Final</span>'), 'final');
    }

    const document = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as any;
    const named =
      document.paths['/admin/v1/orders/{orderId}/chain'].get.responses['200'].content['application/json'].schema;
    const schema = document.components.schemas[named.$ref.replace('#/components/schemas/', '')];
    assert.deepEqual(Object.keys(schema.properties ?? {}), ['send', 'deposits'], 'the chain route names its members');
  });
});
