/**
 * A payout in doubt settled by hand: an admin marks a live Daraja payout whose result never came
 * (or whose hand-over keeps failing) paid or failed, through the rail's own state change (ledger,
 * callback once), its hand-over ended, flagged for the admin API and the merchant console; a late
 * rail result changes nothing; a wrong confirmation, a collection and other roles are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleSignIn } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { darajaGatewayEnv, freePort, startFakeDaraja, type FakeDaraja } from './support/fake-daraja.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall } from './support/process.js';
import { sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const TRANSFER = '/api/v3/ken/createTransferOrder';
const COLLECT = '/api/v3/ken/createCollectingOrder';
const PASSWORD = 'a long operator password';

/** A balance as the admin API shows it ("99300" shillings, "12.50" reais) in the currency's minor units, exactly. */
const minor = (text: string): bigint => BigInt(text.replace('.', ''));

let phoneSeq = 500;
const nextPhone = () => `2547${String(20_000_000 + ++phoneSeq).slice(-8)}`;

describe(`payouts in doubt settled by hand (${databaseLabel})`, () => {
  let daraja: FakeDaraja;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let seq = 0;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((json) => json.orderId === orderId);
  const order = async (orderId: string) => {
    const row = await gw.gateway.orders.find(orderId);
    assert.ok(row !== undefined, `order ${orderId}`);
    return row;
  };
  const balance = async () => {
    const res = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/balances`);
    const kes = (res.body.balances as { currency: string; available: string; frozen: string }[]).find(
      (b) => b.currency === 'KES',
    );
    assert.ok(kes !== undefined, 'a KES balance');
    return { available: minor(kes.available), frozen: minor(kes.frozen) };
  };
  const settle = (orderId: string, body: Record<string, unknown>, token?: string) =>
    token === undefined
      ? gw.admin('POST', `/admin/v1/orders/${orderId}/settle-by-hand`, body)
      : adminCall(gw, token, 'POST', `/admin/v1/orders/${orderId}/settle-by-hand`, body);
  const auditOf = (action: string) =>
    gw.gateway.store.read.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('seq').execute();

  /** A payout Daraja accepted whose result never comes: in processing (2), in doubt. */
  const payoutInDoubt = async () => {
    const phone = nextPhone();
    daraja.scriptB2c(phone, { resultCode: 0, delayMs: 20, send: 'silent' });
    const response = await call(TRANSFER, {
      channelType: 'BANK',
      currencyAmount: '700',
      externalOrderId: `sbh-${Date.now()}-${++seq}`,
      phone,
    });
    assert.equal(response.body.code, '200', response.body.msgEn);
    const orderId = response.body.data.orderId as string;
    await until(async () => assert.equal((await order(orderId)).status, 2), 10_000);
    await until(() => assert.equal(daraja.payouts.find((p) => p.body.PartyB === phone)?.state, 'done'));
    return { orderId, phone };
  };
  /** The late Result of a silent payout, and what the gateway's status query then learns, recorded. */
  const lateResult = async (orderId: string) => {
    assert.ok((await daraja.resendB2cResult(`${orderId}.b2c`)) > 0, 'the late result was answered');
    await until(async () => {
      const row = await gw.gateway.store.read
        .selectFrom('daraja_requests')
        .selectAll()
        .where('id', '=', `${orderId}.b2c`)
        .executeTakeFirst();
      assert.equal(row?.state, 'settled', 'the status query answered');
    }, 10_000);
  };

  before(async () => {
    daraja = await startFakeDaraja();
    const port = await freePort();
    gw = await startTestGateway({
      env: {
        ...darajaGatewayEnv(daraja, port),
        DARAJA_TIMEOUT_MS: '1000',
        // The reconciliation does not ask about a payout within the test: it stays in doubt.
        DARAJA_RESULT_TIMEOUT_MS: '3600000',
        DARAJA_RECONCILE_INTERVAL_MS: '100',
        RAIL_POLL_INTERVAL_MS: '100',
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
        CALLBACK_POLL_INTERVAL_MS: '50',
      },
    });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/settlement`, { delayMs: 0 });
    const adjusted = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '100000',
      reason: 'float for payouts',
    });
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await daraja.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('settles a payout in doubt as paid: final, the frozen money taken, one callback, flagged; a late result changes nothing', async () => {
    const { orderId } = await payoutInDoubt();
    const row = await order(orderId);
    const total = BigInt(row.amount) + BigInt(row.fee);
    const before = await balance();

    // A wrong typed confirmation, and a finance and a support operator, change nothing.
    const wrong = await settle(orderId, { outcome: 'paid', reason: 'M-Pesa portal shows it paid', confirm: 'yes' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, 'confirmation_mismatch');
    assert.match(wrong.body.error.message, /^confirm: must repeat the order id/);
    const missing = await settle(orderId, { outcome: 'maybe', reason: 'x', confirm: orderId });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /outcome/);
    for (const role of ['finance', 'support'] as const) {
      const email = `${role}-${Math.random()}@ops.example`;
      await gw.gateway.operators.create({ email, role, password: PASSWORD });
      const { token } = await gw.gateway.operators.createToken({ email });
      const refused = await settle(orderId, { outcome: 'paid', reason: 'checked', confirm: orderId }, token);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'forbidden');
      assert.equal(refused.body.error.permission, 'orders.settle_by_hand');
      const denied = (await auditOf('access.denied')).filter((r) => r.actor_email === email);
      assert.equal(denied.length, 1, `${role}: recorded as access.denied`);
      assert.equal(denied[0]?.target_id, `POST /admin/v1/orders/${orderId}/settle-by-hand`);
    }
    assert.equal((await order(orderId)).status, 2, 'nothing changed');
    assert.deepEqual(await balance(), before);
    assert.equal(await gw.gateway.orders.settledByHand(orderId), undefined);

    const settled = await settle(orderId, {
      outcome: 'paid',
      reason: 'Safaricom support confirmed receipt QK12345678',
      confirm: orderId,
    });
    assert.equal(settled.status, 200, JSON.stringify(settled.body));
    assert.equal(settled.body.orderStatus, 8);
    assert.equal(settled.body.orderStatusText, 'SUCCESS');
    assert.equal(settled.body.kind, 'ken.transfer');
    assert.equal(settled.body.settledByHand.outcome, 'paid');
    assert.equal(settled.body.settledByHand.settledBy, 'root-token');
    assert.equal(settled.body.settledByHand.reason, 'Safaricom support confirmed receipt QK12345678');
    assert.equal(settled.body.settledByHand.fromStatus, 2);
    // The ledger as for a paid payout: the frozen amount + fee are taken, nothing comes back.
    const afterPaid = await balance();
    assert.equal(afterPaid.available, before.available);
    assert.equal(afterPaid.frozen, before.frozen - total);
    await until(() => assert.equal(callbacksFor(orderId).length, 1));
    assert.equal(callbacksFor(orderId)[0]?.orderStatus, 'SUCCESS');
    const audit = (await auditOf('order.settle_by_hand')).filter((r) => r.target_id === orderId);
    assert.equal(audit.length, 1);
    assert.equal(audit[0]?.reason, 'Safaricom support confirmed receipt QK12345678');

    // The flag in the admin API's order read and in the merchant console's order page.
    const read = await gw.admin('GET', `/admin/v1/orders/${orderId}/personal-data`);
    assert.equal(read.body.settledByHand.outcome, 'paid');
    const consoleClient = await consoleSignIn(gw, merchant.merchantId);
    const page = await consoleClient.get(`/console/orders/${orderId}`);
    assert.match(page.text, /Settled by hand by the payment company on /);
    assert.doesNotMatch(page.text, /QK12345678/, 'the operator’s reason is not shown to the merchant');

    // Settling it again is refused: it is final.
    const again = await settle(orderId, { outcome: 'failed', reason: 'oops', confirm: orderId });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'payout_final');

    // The rail's late result is recorded and changes nothing.
    const updated = (await order(orderId)).updated_at;
    await lateResult(orderId);
    await sleep(300);
    const late = await order(orderId);
    assert.equal(late.status, 8);
    assert.equal(late.updated_at, updated);
    assert.deepEqual(await balance(), afterPaid);
    assert.equal(callbacksFor(orderId).length, 1, 'the callback was sent once');
    const messages = await gw.admin('GET', `/admin/v1/orders/${orderId}/rail-messages`);
    const endpoints = (messages.body.messages as { endpoint: string }[]).map((m) => m.endpoint);
    assert.ok(endpoints.includes('b2c-result'), `the late result is recorded: ${endpoints.join(', ')}`);
  });

  it('settles a payout in doubt as failed: the money back to the merchant, a FAILED callback; a late success changes nothing', async () => {
    const before = await balance();
    const { orderId } = await payoutInDoubt();
    const row = await order(orderId);
    const total = BigInt(row.amount) + BigInt(row.fee);
    assert.deepEqual(await balance(), { available: before.available - total, frozen: before.frozen + total });

    const settled = await settle(orderId, { outcome: 'failed', reason: 'M-Pesa has no such payout', confirm: orderId });
    assert.equal(settled.status, 200, JSON.stringify(settled.body));
    assert.equal(settled.body.orderStatus, 16);
    assert.equal(settled.body.settledByHand.outcome, 'failed');
    assert.deepEqual(await balance(), before, 'the frozen amount and fee are back in the available balance');
    await until(() => assert.equal(callbacksFor(orderId).length, 1));
    assert.equal(callbacksFor(orderId)[0]?.orderStatus, 'FAILED');

    // M-Pesa later reports it completed: recorded, the order stays failed, the money stays back.
    await lateResult(orderId);
    await sleep(300);
    assert.equal((await order(orderId)).status, 16);
    assert.deepEqual(await balance(), before);
    assert.equal(callbacksFor(orderId).length, 1);
  });

  it('refuses an order that is not a payout, and changes nothing', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 60_000 });
    const response = await call(COLLECT, {
      amount: '1500',
      channelType: 'CHARGE',
      externalOrderId: `sbh-col-${Date.now()}-${++seq}`,
      phone,
      checkingPhone: phone,
    });
    assert.equal(response.body.code, '200', response.body.msgEn);
    const orderId = response.body.data.currencyOrderVo.orderId as string;
    const refused = await settle(orderId, { outcome: 'paid', reason: 'checked', confirm: orderId });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'not_a_payout');
    assert.match(refused.body.error.message, /ken\.collection/);
    assert.equal((await order(orderId)).status, 1);
    assert.equal(await gw.gateway.orders.settledByHand(orderId), undefined);
    const unknown = await settle('KT000000000000000000000000', {
      outcome: 'paid',
      reason: 'checked',
      confirm: 'KT000000000000000000000000',
    });
    assert.equal(unknown.status, 404);
  });

  it('ends the hand-over of a payout whose sends keep failing: it is never sent after being settled by hand', async () => {
    const before = await balance();
    const phone = nextPhone();
    daraja.scriptB2c(phone, { resultCode: 0, delayMs: 20 });
    daraja.failNext('b2c', 'spike-arrest', 1);
    const response = await call(TRANSFER, {
      channelType: 'BANK',
      currencyAmount: '300',
      externalOrderId: `sbh-retry-${Date.now()}-${++seq}`,
      phone,
    });
    assert.equal(response.body.code, '200', response.body.msgEn);
    const orderId = response.body.data.orderId as string;
    const tasks = () =>
      gw.gateway.store.read.selectFrom('rail_tasks').selectAll().where('order_id', '=', orderId).execute();
    await until(async () => assert.equal((await tasks())[0]?.state, 'pending', 'waiting to retry'), 10_000);
    const settled = await settle(orderId, { outcome: 'failed', reason: 'merchant asked to stop it', confirm: orderId });
    assert.equal(settled.status, 200, JSON.stringify(settled.body));
    assert.equal(settled.body.orderStatus, 16);
    assert.equal(settled.body.settledByHand.fromStatus, 1);
    const [task] = await tasks();
    assert.equal(task?.state, 'failed');
    assert.equal(task.next_attempt_at, null);
    // Well past the retry: nothing is sent.
    gw.clock.advance(600_000);
    await sleep(800);
    assert.equal(daraja.payouts.filter((p) => p.body.PartyB === phone).length, 0, 'never sent');
    assert.equal((await order(orderId)).status, 16);
    assert.deepEqual(await balance(), before);
  });
});
