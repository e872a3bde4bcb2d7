import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mexicoCityEndOfDay } from '../src/mexico/collections.js';
import { signStripePayload } from '../src/rails/stripe/client.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/fake-daraja.js';
import { startFakeStripe, STRIPE_TEST, stripeGatewayEnv, type FakeStripe } from './support/fake-stripe.js';
import { mexicanMerchant, openAndChoose } from './support/checkout-form.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

describe(`OXXO through Stripe (${databaseLabel})`, () => {
  let stripe: FakeStripe;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let port: number;
  const webhookUrl = () => `http://127.0.0.1:${port}/rails/stripe/${gw.gateway.mexico.oxxo?.token ?? ''}`;

  before(async () => {
    stripe = await startFakeStripe({ webhookRetryMs: 100, maxWebhookTries: 5 });
    port = await freePort();
    gw = await startTestGateway({
      env: {
        ...stripeGatewayEnv(stripe, port),
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        MEXICO_RECONCILE_INTERVAL_MS: '200',
        STRIPE_TIMEOUT_MS: '1000',
        RAIL_POLL_INTERVAL_MS: '100',
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
        CALLBACK_POLL_INTERVAL_MS: '50',
      },
    });
    stripe.webhookUrl = webhookUrl();
    receiver = await startReceiver();
    merchant = await mexicanMerchant(gw, receiver.url);
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await stripe.idle();
    await gw.close();
    await stripe.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  /** A Mexican aggregate cashier where the payer chose OXXO; resolves once Stripe issued the voucher. */
  const oxxoOrder = async (amount: string, email = 'ana@example.mx') => {
    const form = { amount, method: 'OXXO', name: 'Ana López García', email };
    const { order, cashierPath } = await openAndChoose(gw, merchant.credentials, form);
    const intent = await eventually(
      async () => {
        const found = await gw.gateway.orders.find(order.id);
        return found?.channel_order_id ?? undefined;
      },
      10_000,
      'the PaymentIntent',
    );
    return { id: order.id, intent, cashierPath, createdAt: order.created_at };
  };
  const statusOf = async (orderId: string) => (await gw.gateway.orders.find(orderId))?.status;
  const callbacksOf = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((b) => b.orderId === orderId);

  it('creates one confirmed OXXO PaymentIntent per order (Idempotency-Key from the order, days to the deadline); paid at the store, the order completes after Stripe is asked', async () => {
    const order = await oxxoOrder('1,500.00');
    const creates = stripe.requests.filter((r) => r.operation === 'create' && r.body?.metadata?.order_id === order.id);
    assert.equal(creates.length, 1);
    const sent = creates[0];
    assert.ok(sent !== undefined);
    assert.equal(sent.headers['idempotency-key'], `${order.id}.start`);
    assert.equal(sent.body.amount, '150000');
    assert.equal(sent.body.currency, 'mxn');
    assert.equal(sent.body.payment_method_options.oxxo.expires_after_days, '3');
    const intent = stripe.intents.get(order.intent);
    assert.equal(
      intent?.next_action?.oxxo_display_details?.expires_after,
      Math.floor(mexicoCityEndOfDay(order.createdAt, 3) / 1000),
    );
    const details = JSON.parse((await gw.gateway.orders.find(order.id))?.details ?? '{}') as Record<string, string>;
    assert.equal(details.oxxoNumber, intent?.next_action?.oxxo_display_details?.number);
    const shown = await fetch(new URL(order.cashierPath, gw.url), { headers: { 'accept-language': 'es-MX' } });
    const text = await shown.text();
    assert.ok(text.includes(details.oxxoNumber ?? 'none'), 'the voucher number is on the page');
    assert.equal(details.oxxoVoucherUrl, intent?.next_action?.oxxo_display_details?.hosted_voucher_url);
    // Stripe's hosted voucher is linked only over https (the local Stripe serves plain http).
    assert.ok(!text.includes(String(details.oxxoVoucherUrl)), 'no link to a voucher that is not https');
    stripe.pay(order.intent);
    await eventually(async () => ((await statusOf(order.id)) === 2 ? true : undefined), 10_000, 'paid');
    const retrieved = stripe.requests.filter((r) => r.operation === 'retrieve' && r.path.includes(order.intent));
    assert.ok(retrieved.length >= 1, 'the PaymentIntent was read back before the order changed');
    await until(() => assert.equal(callbacksOf(order.id).length, 1));
    assert.equal(callbacksOf(order.id)[0]?.payType, 110);
    assert.equal(callbacksOf(order.id)[0]?.currencyType, 'MXN');
    assert.equal(callbacksOf(order.id)[0]?.orderActualAmount, '1500.00');
  });

  it('a voucher that expires unpaid ends its order', async () => {
    const order = await oxxoOrder('200.00', 'ana+fill_never@example.mx');
    stripe.expire(order.intent);
    await eventually(async () => ((await statusOf(order.id)) === 3 ? true : undefined), 10_000, 'expired');
    await until(() => assert.equal(callbacksOf(order.id).length, 1));
  });

  it('a forged event and a stale replay are refused (400) and change nothing; a fresh repeat of a real event changes nothing more', async () => {
    const order = await oxxoOrder('300.00');
    const body = JSON.stringify({
      id: 'evt_forged',
      type: 'payment_intent.succeeded',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: order.intent, object: 'payment_intent', status: 'succeeded' } },
    });
    const now = Math.floor(Date.now() / 1000);
    const forged = await fetch(webhookUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signStripePayload(body, 'whsec_wrong', now) },
      body,
    });
    assert.equal(forged.status, 400);
    const stale = await fetch(webhookUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': signStripePayload(body, STRIPE_TEST.webhookSecret, now - 301),
      },
      body,
    });
    assert.equal(stale.status, 400);
    // Signed correctly but the intent is not paid at Stripe: read back, nothing changes.
    const unpaid = await fetch(webhookUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': signStripePayload(body, STRIPE_TEST.webhookSecret, now),
      },
      body,
    });
    assert.equal(unpaid.status, 200);
    assert.equal(await statusOf(order.id), 1);
    stripe.pay(order.intent, { notify: 'twice' });
    await eventually(async () => ((await statusOf(order.id)) === 2 ? true : undefined), 10_000, 'paid');
    await stripe.idle();
    await sleep(300);
    assert.equal(callbacksOf(order.id).length, 1, 'one callback for two deliveries');
    const journals = await gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('kind')
      .where('order_id', '=', order.id)
      .where('kind', '=', 'collection.paid')
      .execute();
    assert.equal(journals.length, 1);
  });

  it('a lost webhook is found by reconciliation, and a failed create is retried with the same Idempotency-Key', async () => {
    stripe.failNext('create', 'timeout-after');
    const order = await oxxoOrder('50.00');
    const creates = stripe.requests.filter((r) => r.operation === 'create' && r.body?.metadata?.order_id === order.id);
    assert.ok(creates.length >= 2, 'sent again after an unknown outcome');
    assert.ok(creates.every((r) => r.headers['idempotency-key'] === `${order.id}.start`));
    assert.equal([...stripe.intents.values()].filter((i) => i.metadata?.order_id === order.id).length, 1);
    stripe.pay(order.intent, { notify: 'skip' });
    await eventually(async () => ((await statusOf(order.id)) === 2 ? true : undefined), 10_000, 'reconciled');
  });
});
