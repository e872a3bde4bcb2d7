/**
 * Asking an order's live rail again (support's POST /admin/v1/orders/{orderId}/rail-query): a payout
 * whose result Daraja never sends is queried at once instead of after DARAJA_RESULT_TIMEOUT_MS, never
 * sent twice; the call is audited; an order no live rail waits on has nothing to ask.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseLabel } from './support/database.js';
import { darajaGatewayEnv, freePort, startFakeDaraja, type FakeDaraja } from './support/fake-daraja.js';
import { ADMIN_TOKEN, signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall } from './support/process.js';
import { until } from './support/receiver.js';

async function tokenOf(gw: TestGateway, role: 'support' | 'viewer'): Promise<string> {
  const email = `${role}-${Date.now()}@ops.example`;
  await gw.gateway.operators.create({ email, role, password: 'a long operator password' });
  return (await gw.gateway.operators.createToken({ email })).token;
}

describe(`asking a live rail again (${databaseLabel})`, () => {
  let daraja: FakeDaraja;
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  before(async () => {
    daraja = await startFakeDaraja();
    const port = await freePort();
    gw = await startTestGateway({
      env: {
        ...darajaGatewayEnv(daraja, port),
        DARAJA_TIMEOUT_MS: '1000',
        // Left alone, the reconciliation would not ask about a missing result for ten minutes.
        DARAJA_RESULT_TIMEOUT_MS: '600000',
        DARAJA_RECONCILE_INTERVAL_MS: '100',
        RAIL_POLL_INTERVAL_MS: '100',
      },
    });
    merchant = await gw.merchantWithKey();
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '10000',
      reason: 'float for payouts',
    });
  });
  after(async () => {
    await gw.close();
    await daraja.close();
  });

  it('queries a payout whose result never came at once, pays it once, and records who asked', async () => {
    const phone = '254711000321';
    daraja.scriptB2c(phone, { resultCode: 0, delayMs: 50, send: 'silent', receiverName: 'JANE WANJIKU' });
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: '/api/v3/ken/createTransferOrder',
        body: { channelType: 'BANK', currencyAmount: '700', externalOrderId: `rq-${Date.now()}`, phone },
      },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', created.body.msgEn);
    const orderId = created.body.data.orderId as string;
    await until(() => assert.equal(daraja.payouts.filter((p) => p.body.PartyB === phone).length, 1));
    await until(async () => assert.equal((await gw.gateway.orders.find(orderId))?.status, 2));
    assert.equal(daraja.requests.filter((r) => r.endpoint === 'status').length, 0, 'not asked yet');

    const viewer = await tokenOf(gw, 'viewer');
    assert.equal((await adminCall(gw, viewer, 'POST', `/admin/v1/orders/${orderId}/rail-query`)).status, 403);
    const support = await tokenOf(gw, 'support');
    const asked = await adminCall(gw, support, 'POST', `/admin/v1/orders/${orderId}/rail-query`);
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    assert.deepEqual(asked.body, { orderId, asked: [{ rail: 'daraja', waiting: 1 }] });
    assert.equal(daraja.requests.filter((r) => r.endpoint === 'status').length, 1, 'Transaction Status asked');
    await until(async () => assert.equal((await gw.gateway.orders.find(orderId))?.status, 8), 10_000);
    assert.equal(daraja.payouts.filter((p) => p.body.PartyB === phone).length, 1, 'paid once');

    const record = (await gw.gateway.store.read.selectFrom('audit_log').selectAll().execute()).find(
      (r) => r.action === 'order.rail.query',
    );
    assert.ok(record !== undefined, 'the ask is in the audit log');
    assert.equal(record.target_id, orderId);
    assert.equal(record.actor_type, 'operator');

    const again = await adminCall(gw, support, 'POST', `/admin/v1/orders/${orderId}/rail-query`);
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'nothing_to_ask');
  });

  it('answers 404 for an unknown order and 409 for an order no live rail waits on', async () => {
    const unknown = await adminCall(gw, ADMIN_TOKEN, 'POST', '/admin/v1/orders/KT_nope/rail-query');
    assert.equal(unknown.status, 404);
    const sandbox = await startTestGateway({ workers: false });
    try {
      const m = await sandbox.merchantWithKey();
      const created = await signedCall(
        sandbox.url,
        m.credentials,
        {
          path: '/api/v3/bra/createCollectingOrder',
          body: { amount: '10.00', channelType: 'PIX', externalOrderId: 'rq-sb' },
        },
        sandbox.clock.now(),
      );
      assert.equal(created.body.code, '200', created.body.msgEn);
      const orderId = created.body.data.currencyOrderVo.orderId as string;
      const res = await adminCall(sandbox, ADMIN_TOKEN, 'POST', `/admin/v1/orders/${orderId}/rail-query`);
      assert.equal(res.status, 409);
      assert.match(res.body.error.message, /no live rail is waiting on order/);
    } finally {
      await sandbox.close();
    }
  });
});
