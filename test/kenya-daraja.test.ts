import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { MPESA_RESEND_COOLDOWN_MS } from '../src/cashier/views.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { DarajaError } from '../src/rails/daraja/client.js';
import { consoleSignIn } from './support/console.js';
import { processMerchant, startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel } from './support/database.js';
import {
  DARAJA_TEST,
  darajaGatewayEnv,
  freePort,
  startFakeDaraja,
  stkPassword,
  type FakeDaraja,
} from './support/fake-daraja.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

/** Retries `check` until it stops throwing (or rethrows its last failure after `timeoutMs`). */
/** The merchant callbacks received for an order, parsed. */
const callbacksFor = (receiver: CallbackReceiver, orderId: string) =>
  receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((json) => json.orderId === orderId);

/** The one merchant callback of an order, once it came. */
async function callbackOf(receiver: CallbackReceiver, orderId: string): Promise<Record<string, any>> {
  await until(() => assert.equal(callbacksFor(receiver, orderId).length, 1));
  return callbacksFor(receiver, orderId)[0] ?? {};
}

const COLLECT = '/api/v3/ken/createCollectingOrder';
const TRANSFER = '/api/v3/ken/createTransferOrder';
const QUERY_COLLECTION = '/api/v3/ken/query/collectingOrder';
const QUERY_TRANSFER = '/api/v3/ken/query/transferOrder';

/** The environment of a gateway on Daraja (the local fake), its callbacks reaching it on `port`. */
function darajaEnv(daraja: FakeDaraja, port: number): Record<string, string> {
  return {
    ...darajaGatewayEnv(daraja, port),
    DARAJA_TIMEOUT_MS: '1000',
    DARAJA_STK_QUERY_AFTER_MS: '400',
    DARAJA_RESULT_TIMEOUT_MS: '400',
    DARAJA_RECONCILE_INTERVAL_MS: '100',
    RAIL_POLL_INTERVAL_MS: '100',
    CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    CALLBACK_POLL_INTERVAL_MS: '50',
  };
}

let phoneSeq = 100;
/** A phone of its own for each order: the fake's scripts and its subscriber lock are per phone. */
const nextPhone = () => `2547${String(10_000_000 + ++phoneSeq).slice(-8)}`;

describe('Daraja configuration', () => {
  it('refuses KENYA_RAIL=daraja at start-up, naming each missing variable', () => {
    assert.throws(
      () => loadConfig({ KENYA_RAIL: 'daraja', DARAJA_CONSUMER_KEY: 'k' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        for (const name of [
          'DARAJA_CONSUMER_SECRET',
          'DARAJA_STK_SHORTCODE',
          'DARAJA_STK_PASSKEY',
          'DARAJA_B2C_SHORTCODE',
          'DARAJA_INITIATOR_NAME',
          'DARAJA_INITIATOR_PASSWORD',
          'DARAJA_CERTIFICATE',
        ])
          assert.ok(
            error.problems.some((p) => p.startsWith(`${name}:`)),
            `${name} is named: ${error.message}`,
          );
        assert.ok(!error.problems.some((p) => p.startsWith('DARAJA_CONSUMER_KEY:')));
        return true;
      },
    );
    assert.equal(loadConfig({}).kenya.rail, 'sandbox', 'the sandbox stays the default');
  });

  it('refuses a certificate that is not a readable RSA PEM, and never echoes a secret', () => {
    assert.throws(
      () =>
        loadConfig({
          KENYA_RAIL: 'daraja',
          DARAJA_CONSUMER_KEY: 'k',
          DARAJA_CONSUMER_SECRET: 'very-secret-value',
          DARAJA_STK_SHORTCODE: '174379',
          DARAJA_STK_PASSKEY: 'passkey-secret',
          DARAJA_B2C_SHORTCODE: '600997',
          DARAJA_INITIATOR_NAME: 'api',
          DARAJA_INITIATOR_PASSWORD: 'initiator-secret',
          DARAJA_CERTIFICATE: '/nonexistent/cert.pem',
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /DARAJA_CERTIFICATE="\/nonexistent\/cert.pem": must be the path of a readable PEM/);
        assert.doesNotMatch(error.message, /very-secret-value|passkey-secret|initiator-secret/);
        return true;
      },
    );
  });

  it('keeps the request as sent out of a logged Daraja error', () => {
    const error = new DarajaError('stk', 'busy', '500.003.02', 'Spike Arrest Violation', {
      endpoint: 'stk',
      request: { Password: 'c2VjcmV0', PhoneNumber: '254712345678' },
      httpStatus: 500,
      response: {},
      code: '500.003.02',
      durationMs: 1,
    });
    assert.doesNotMatch(JSON.stringify(Object.fromEntries(Object.entries(error))), /c2VjcmV0|254712345678/);
    assert.equal(error.exchange.request.Password, 'c2VjcmV0');
  });

  it('builds the STK password of the published test vector', () => {
    assert.equal(
      stkPassword(DARAJA_TEST.stkShortcode, DARAJA_TEST.stkPasskey, '20210628092408'),
      'MTc0Mzc5YmZiMjc5ZjlhYTliZGJjZjE1OGU5N2RkNzFhNDY3Y2QyZTBjODkzMDU5YjEwZjc4ZTZiNzJhZGExZWQyYzkxOTIwMjEwNjI4MDkyNDA4',
    );
  });
});

describe(`Kenya on Daraja (${databaseLabel})`, () => {
  let daraja: FakeDaraja;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let port: number;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  let seq = 0;
  const collect = async (phone: string, overrides: Record<string, unknown> = {}) => {
    const body = {
      amount: '1500',
      channelType: 'CHARGE',
      externalOrderId: `dj-col-${Date.now()}-${++seq}`,
      phone,
      checkingPhone: phone,
      remark: 'Order 42',
      ...overrides,
    };
    const response = await call(COLLECT, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    return { body, orderId: response.body.data.currencyOrderVo.orderId as string, data: response.body.data };
  };
  const queryCollection = async (created: { body: { externalOrderId: string }; orderId: string }) => {
    const response = await call(QUERY_COLLECTION, {
      externalOrderId: created.body.externalOrderId,
      orderId: created.orderId,
    });
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data[0];
  };
  const statusOf = async (orderId: string) => (await gw.gateway.orders.find(orderId))?.status;
  const promptsTo = (phone: string) => daraja.prompts.filter((p) => p.body.PhoneNumber === phone);

  before(async () => {
    daraja = await startFakeDaraja();
    port = await freePort();
    gw = await startTestGateway({ env: darajaEnv(daraja, port) });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/settlement`, { delayMs: 0 });
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '100000',
      reason: 'float for payouts',
    });
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await daraja.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('prompts the checking phone with the order, confirms the callback with STK Push Query, and keeps the receipt', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 100, receipt: 'NLJ7RT61SV' });
    const created = await collect(phone, {
      externalOrderId: `merchant-order-${Date.now()}-long`,
      remark: 'Shoes and a hat',
    });
    const [prompt] = promptsTo(phone);
    assert.ok(prompt !== undefined, 'one STK prompt was sent');
    assert.equal(prompt.body.Amount, 1500);
    assert.equal(prompt.body.PartyA, phone);
    assert.equal(prompt.body.BusinessShortCode, DARAJA_TEST.stkShortcode);
    assert.equal(prompt.body.TransactionType, 'CustomerPayBillOnline');
    assert.ok(prompt.body.AccountReference.length <= 12 && prompt.body.AccountReference.length > 0);
    assert.ok(prompt.body.TransactionDesc.length <= 13);
    assert.match(prompt.body.CallBackURL, new RegExp(`^http://127\\.0\\.0\\.1:${port}/rails/daraja/[0-9a-f]{32}/stk$`));

    await until(async () => assert.equal(await statusOf(created.orderId), 2));
    const record = await queryCollection(created);
    assert.equal(record.orderStatus, 2);
    assert.equal(record.channelOrderId, 'NLJ7RT61SV', 'the receipt is the channel order id once paid');
    assert.equal(record.orderActualAmount, '1500');
    const callback = await callbackOf(receiver, created.orderId);
    assert.equal(callback.payParam, 'NLJ7RT61SV');
    assert.equal(callback.orderStatusCode, 2);
    const queries = daraja.requests.filter(
      (r) => r.endpoint === 'stk-query' && r.body.CheckoutRequestID === prompt.checkoutRequestId,
    );
    assert.ok(queries.length >= 1, 'the callback was confirmed with STK Push Query');

    const messages = await gw.admin('GET', `/admin/v1/orders/${created.orderId}/rail-messages`);
    assert.equal(messages.status, 200);
    const text = JSON.stringify(messages.body);
    assert.deepEqual(messages.body.messages.map((m: { endpoint: string }) => m.endpoint).slice(0, 3), [
      'stk',
      'stk-callback',
      'stk-query',
    ]);
    assert.doesNotMatch(text, new RegExp(phone), 'phone numbers are masked');
    assert.match(text, /2547•••••\d{3}/);
    assert.doesNotMatch(text, new RegExp(DARAJA_TEST.stkPasskey));
    assert.doesNotMatch(text, /"Password":"[^[]/, 'the STK password is redacted');
    // The merchant's console shows the receipt, the paying phone masked, and the rail messages redacted.
    const merchantConsole = await consoleSignIn(gw, merchant.merchantId);
    const page = await merchantConsole.get(`/console/orders/${created.orderId}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /NLJ7RT61SV/);
    assert.match(page.text, /Rail messages/);
    assert.match(page.text, /stk-callback/);
    assert.doesNotMatch(page.text, new RegExp(phone), 'no full phone number on the page');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /cashgate_daraja_requests_total\{endpoint="stk",code="0"\} \d+/);
    assert.match(metrics, /cashgate_daraja_request_duration_seconds_count\{endpoint="stk-query"\} \d+/);
  });

  for (const [code, reason] of [
    [1032, 'cancelled by the payer'],
    [1037, 'the phone could not be reached'],
    [2001, 'wrong M-Pesa PIN'],
    [1, 'insufficient funds'],
  ] as const) {
    it(`keeps the order payable after result ${code} (${reason}) and lets the payer ask again after the cooldown`, async () => {
      const phone = nextPhone();
      daraja.scriptStk(phone, { resultCode: code, delayMs: 50 });
      const created = await collect(phone);
      await until(async () => {
        const order = await gw.gateway.orders.find(created.orderId);
        assert.equal(JSON.parse(order?.details ?? '{}').mpesaLastResult?.code, String(code));
      });
      assert.equal(await statusOf(created.orderId), 1, 'still waiting for payment');
      const page = await (await fetch(created.data.cashierUrl)).text();
      assert.match(page, /resend/, 'the cashier offers the prompt again');
      // At once: refused by the cooldown; after it: a new prompt, which the payer pays.
      const cashierPath = new URL(created.data.cashierUrl).pathname;
      const resend = () => fetch(`${gw.url}${cashierPath}/resend`, { method: 'POST', redirect: 'manual' });
      await resend();
      assert.equal(promptsTo(phone).length, 1, 'no second prompt within the cooldown');
      gw.clock.advance(MPESA_RESEND_COOLDOWN_MS + 1);
      daraja.scriptStk(phone, { resultCode: 0, delayMs: 50 });
      const again = await resend();
      assert.match(again.headers.get('location') ?? '', /resent=1/);
      assert.equal(promptsTo(phone).length, 2);
      await until(async () => assert.equal(await statusOf(created.orderId), 2));
    });
  }

  it('sends one prompt for resends posted at once, and every answer leads to the same single note', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 1032, delayMs: 50 });
    const created = await collect(phone);
    await until(async () => {
      const order = await gw.gateway.orders.find(created.orderId);
      assert.equal(JSON.parse(order?.details ?? '{}').mpesaLastResult?.code, '1032');
    });
    const cashierPath = new URL(created.data.cashierUrl).pathname;
    gw.clock.advance(MPESA_RESEND_COOLDOWN_MS + 1);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${gw.url}${cashierPath}/resend`, { method: 'POST', redirect: 'manual' })),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      [303, 303, 303, 303, 303],
    );
    assert.equal(promptsTo(phone).length, 2, 'one new prompt for five posts at once');
    for (const answer of answers) {
      const page = await (await fetch(new URL(answer.headers.get('location') ?? '', gw.url))).text();
      assert.equal(page.match(/id="resend-note"/g)?.length, 1, 'one note on resending');
      assert.match(page, /A new request was sent\. Check your phone\. You can ask for another in 60 s\./);
    }
  });

  it('expires the order on result 1019 (the prompt lapsed)', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 1019, delayMs: 50 });
    const created = await collect(phone);
    await until(async () => assert.equal(await statusOf(created.orderId), 3));
    const callback = await callbackOf(receiver, created.orderId);
    assert.equal(callback.orderStatus, 'EXPIRED');
  });

  it('credits another amount the payer paid, as reported by the confirmed callback', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 50, paidAmount: 1200 });
    const created = await collect(phone);
    await until(async () => assert.equal(await statusOf(created.orderId), 2));
    assert.equal((await queryCollection(created)).orderActualAmount, '1200');
  });

  it('moves an order once for a repeated callback, and answers Daraja 200 each time', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 50, callbacks: 3 });
    const created = await collect(phone);
    await until(async () => assert.equal(await statusOf(created.orderId), 2));
    await daraja.idle();
    const [prompt] = promptsTo(phone);
    assert.equal(await daraja.resendStkCallback(prompt?.checkoutRequestId ?? ''), 200);
    await sleep(200);
    const history = await gw.gateway.orders.history(created.orderId);
    assert.equal(history.filter((e) => e.event === 'paid').length, 1);
    assert.equal(callbacksFor(receiver, created.orderId).length, 1);
  });

  it('refuses a forged callback: the query decides, and an unknown id or a wrong token changes nothing', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 1032, delayMs: 1_500 });
    const created = await collect(phone);
    const [prompt] = promptsTo(phone);
    const callbackUrl = prompt?.body.CallBackURL as string;
    const forged = (checkoutRequestId: string) => ({
      Body: {
        stkCallback: {
          MerchantRequestID: prompt?.merchantRequestId,
          CheckoutRequestID: checkoutRequestId,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: 1500 },
              { Name: 'MpesaReceiptNumber', Value: 'FORGED0001' },
              { Name: 'PhoneNumber', Value: Number(phone) },
            ],
          },
        },
      },
    });
    const post = (url: string, body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post(callbackUrl, forged(prompt?.checkoutRequestId ?? ''))).status, 200);
    assert.equal(await statusOf(created.orderId), 1, 'a payment the query does not confirm moves nothing');
    const unknown = await post(callbackUrl, forged('ws_CO_000000000000000000'));
    assert.equal(unknown.status, 200);
    const wrongToken = await post(callbackUrl.replace(/[0-9a-f]{32}/, '0'.repeat(32)), forged('x'));
    assert.equal(wrongToken.status, 404);
    await until(async () => {
      const order = await gw.gateway.orders.find(created.orderId);
      assert.equal(JSON.parse(order?.details ?? '{}').mpesaLastResult?.code, '1032');
    });
    assert.equal(await statusOf(created.orderId), 1);
    const unmatched = await gw.admin('GET', '/admin/v1/rail-messages/unmatched');
    assert.ok(
      unmatched.body.messages.some((m: { ref: string }) => m.ref === 'ws_CO_000000000000000000'),
      'the unknown id is recorded for the operator',
    );
    const messages = await gw.admin('GET', `/admin/v1/orders/${created.orderId}/rail-messages`);
    assert.ok(messages.body.messages.some((m: { disposition: string }) => m.disposition === 'refused'));
  });

  it('finds the outcome of a prompt whose callback never came (reconciliation)', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 50, callbacks: 0 });
    const created = await collect(phone);
    await until(async () => assert.equal(await statusOf(created.orderId), 2), 10_000);
  });

  it('matches the callback of a prompt whose answer was lost, and never prompts twice', async () => {
    const phone = nextPhone();
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 1_500 });
    daraja.failNext('stk', 'timeout');
    const created = await collect(phone);
    assert.equal(promptsTo(phone).length, 1);
    await until(async () => assert.equal(await statusOf(created.orderId), 2), 10_000);
    await sleep(1_500);
    assert.equal(promptsTo(phone).length, 1, 'the lost answer did not lead to a second prompt');
  });

  it('tries again when Daraja arrests a spike, and fetches one token for many calls', async () => {
    const phone = nextPhone();
    daraja.failNext('stk', 'spike-arrest');
    const created = await collect(phone);
    await until(async () => assert.equal(promptsTo(phone).length, 1), 10_000);
    await until(async () => assert.equal(await statusOf(created.orderId), 2), 10_000);
    const tokens = daraja.tokensIssued;
    await Promise.all([nextPhone(), nextPhone(), nextPhone(), nextPhone()].map((p) => collect(p)));
    assert.equal(daraja.tokensIssued, tokens, 'the cached token served every call');
    daraja.expireTokens();
    const renewed = nextPhone();
    await Promise.all([collect(renewed), collect(nextPhone())]);
    assert.equal(daraja.tokensIssued, tokens + 1, 'a refused token is fetched again once');
    assert.equal(promptsTo(renewed).length, 1);
  });

  const transfer = async (phone: string, amount = '700') => {
    const body = {
      channelType: 'BANK',
      currencyAmount: amount,
      externalOrderId: `dj-trf-${Date.now()}-${++seq}`,
      phone,
    };
    const response = await call(TRANSFER, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    return { body, orderId: response.body.data.orderId as string };
  };
  const queryTransfer = async (created: { body: { externalOrderId: string }; orderId: string }) =>
    (await call(QUERY_TRANSFER, { externalOrderId: created.body.externalOrderId, orderId: created.orderId })).body
      .data[0];

  it('pays out with B2C, confirms the result with Transaction Status, and keeps receipt and receiver', async () => {
    const phone = nextPhone();
    daraja.scriptB2c(phone, { resultCode: 0, delayMs: 50, receiverName: 'JANE WANJIKU' });
    const created = await transfer(phone);
    // The create does not wait for Daraja: the payout is asked for right after the answer.
    await until(() => assert.equal(daraja.payouts.filter((p) => p.body.PartyB === phone).length, 1, 'one payout'));
    const [payout] = daraja.payouts.filter((p) => p.body.PartyB === phone);
    assert.ok(payout !== undefined, 'the payout');
    assert.equal(payout.originatorConversationId, `${created.orderId}.b2c`);
    assert.equal(payout.body.CommandID, 'BusinessPayment');
    assert.equal(payout.body.Amount, 700);
    await until(async () => assert.equal(await statusOf(created.orderId), 8), 10_000);
    const record = await queryTransfer(created);
    assert.equal(record.channelOrderId, payout.transactionId);
    assert.equal(record.accountName, 'JANE WANJIKU');
    const callback = await callbackOf(receiver, created.orderId);
    assert.equal(callback.orderStatus, 'SUCCESS');
    assert.equal(callback.accountName, 'JANE WANJIKU');
    const text = JSON.stringify((await gw.admin('GET', `/admin/v1/orders/${created.orderId}/rail-messages`)).body);
    assert.doesNotMatch(text, /"SecurityCredential":"[^[]/);
    assert.doesNotMatch(text, new RegExp(DARAJA_TEST.initiatorPassword.replace(/[!*]/g, '\\$&')));
  });

  it('fails a payout M-Pesa refused with its description, releasing amount and fee', async () => {
    const phone = nextPhone();
    daraja.scriptB2c(phone, { resultCode: 2040, delayMs: 50 });
    const before = await call('/api/v3/ken/query/balance', {});
    const created = await transfer(phone);
    await until(async () => assert.equal(await statusOf(created.orderId), 16), 10_000);
    const record = await queryTransfer(created);
    assert.match(record.errorMsgEn, /Credit Party customer type/);
    const afterBalance = await call('/api/v3/ken/query/balance', {});
    assert.deepEqual(afterBalance.body.data, before.body.data, 'the frozen amount and fee are released');
  });

  it('asks Transaction Status when the result times out in the queue or never comes', async () => {
    for (const send of ['queue-timeout', 'silent'] as const) {
      const phone = nextPhone();
      daraja.scriptB2c(phone, { resultCode: 0, delayMs: 50, send });
      const created = await transfer(phone);
      await until(async () => assert.equal(await statusOf(created.orderId), 8), 10_000);
      assert.equal(daraja.payouts.filter((p) => p.body.PartyB === phone).length, 1, `${send}: paid once`);
    }
  });

  it('never pays twice when the answer to a payout was lost', async () => {
    const phone = nextPhone();
    daraja.scriptB2c(phone, { resultCode: 0, delayMs: 50 });
    daraja.failNext('b2c', 'timeout');
    const created = await transfer(phone);
    await until(async () => assert.equal(await statusOf(created.orderId), 8), 10_000);
    assert.equal(daraja.payouts.filter((p) => p.body.PartyB === phone).length, 1);
  });

  it('keeps sandbox events away from orders a live rail carries', async () => {
    const created = await collect(nextPhone());
    const refused = await gw.sandbox(created.orderId, 'paid');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'sandbox_live_rail');
    assert.equal(await statusOf(created.orderId), 1);
  });
});

describe(`Daraja across a crash (${databaseLabel})`, () => {
  let daraja: FakeDaraja;
  let receiver: CallbackReceiver;
  let rig: CrashRig;

  before(async () => {
    daraja = await startFakeDaraja();
    receiver = await startReceiver();
    rig = await startCrashRig('daraja-crash');
  });
  afterEach(() => rig.killAll());
  after(async () => {
    await daraja.close();
    await receiver.close();
    await rig.close();
  });

  it('sends the prompt and the payout exactly once when the node dies during the hand-over', async () => {
    const port = await freePort();
    const env = { ...darajaEnv(daraja, port), DARAJA_TIMEOUT_MS: '20000', ...rig.env };
    const first = await rig.start(env);
    const { credentials } = await processMerchant(first, {
      callbackUrl: `${receiver.url}/cb`,
      currency: 'KES',
      amount: '10000',
    });
    const phone = nextPhone();
    const payee = nextPhone();
    // The payer confirms after the node was replaced (a loaded machine takes seconds to start one):
    // Daraja posts no STK callback twice, so one sent while no node listens would be lost.
    daraja.scriptStk(phone, { resultCode: 0, delayMs: 8_000 });
    daraja.scriptB2c(payee, { resultCode: 0, delayMs: 2_000 });
    // Daraja takes both requests and holds its answers: the node dies while they are in flight.
    daraja.failNext('stk', 'timeout');
    daraja.failNext('b2c', 'timeout');
    const externalCollect = `crash-col-${Date.now()}`;
    const externalTransfer = `crash-trf-${Date.now()}`;
    const inFlight = [
      signedCall(
        first.url,
        credentials,
        {
          path: COLLECT,
          body: { amount: '900', channelType: 'CHARGE', externalOrderId: externalCollect, phone, checkingPhone: phone },
        },
        Date.now(),
      ).catch(() => undefined),
      signedCall(
        first.url,
        credentials,
        {
          path: TRANSFER,
          body: { channelType: 'BANK', currencyAmount: '500', externalOrderId: externalTransfer, phone: payee },
        },
        Date.now(),
      ).catch(() => undefined),
    ];
    await until(() => {
      assert.equal(daraja.prompts.filter((p) => p.body.PhoneNumber === phone).length, 1);
      assert.equal(daraja.payouts.filter((p) => p.body.PartyB === payee).length, 1);
    });
    await rig.crash(first);
    await Promise.all(inFlight);

    await rig.start(env);
    // Both orders reach their end from what Daraja did (the lost answers found by the callback and
    // by Transaction Status), each told to the merchant once.
    await until(() => {
      const outcomes = receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      assert.ok(
        outcomes.some((o) => o.externalOrderId === externalCollect && o.orderStatus === 'PAYMENT_SUCCESS'),
        'the collection was paid',
      );
      assert.ok(
        outcomes.some((o) => o.externalOrderId === externalTransfer && o.orderStatus === 'SUCCESS'),
        'the payout was made',
      );
    }, 20_000);
    await sleep(1_000);
    assert.equal(daraja.prompts.filter((p) => p.body.PhoneNumber === phone).length, 1, 'one prompt');
    assert.equal(daraja.payouts.filter((p) => p.body.PartyB === payee).length, 1, 'one payout');
    // The payout asked again after the crash carried the same OriginatorConversationID: Daraja
    // answered it as a duplicate and paid nothing more.
    const asked = daraja.requests.filter((r) => r.endpoint === 'b2c' && r.body.PartyB === payee);
    assert.equal(new Set(asked.map((r) => r.body.OriginatorConversationID)).size, 1);
    assert.ok(
      asked.slice(1).every((r) => r.status === 500),
      'every repeat was answered as a duplicate',
    );
  });
});
