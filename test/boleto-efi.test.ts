import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { UNSTATED_GRACE_MS } from '../src/brazil/boleto-live.js';
import { COLLECTION_STATUS } from '../src/orders/state-machine.js';
import { formatLinhaDigitavel, isValidLinhaDigitavel } from '../src/rails/boleto/boleto.js';
import { processMerchant, startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/fake-daraja.js';
import { efiGatewayEnv, startFakeEfi, type FakeEfi } from './support/fake-efi.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { sleep, startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
const PAYER = { userInfoType: 'CPF', userInfoNo: '529.982.247-25', userInfoName: 'Maria Souza' };

describe('Boleto at Efí: configuration', () => {
  it('refuses BRAZIL_BOLETO_RAIL=efi at start-up naming each missing variable; the sandbox stays the default', () => {
    assert.throws(
      () => loadConfig({ BRAZIL_BOLETO_RAIL: 'efi', EFI_CLIENT_ID: 'id' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.ok(
          error.problems.some((p) => p.startsWith('EFI_CLIENT_SECRET:')),
          error.message,
        );
        assert.ok(!error.problems.some((p) => p.startsWith('EFI_CLIENT_ID:')), error.message);
        return true;
      },
    );
    assert.throws(
      () => loadConfig({ BRAZIL_BOLETO_RAIL: 'inter' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        ['INTER_CLIENT_ID', 'INTER_CLIENT_SECRET', 'INTER_CERT', 'INTER_KEY'].every((name) =>
          error.problems.some((p) => p.startsWith(`${name}:`)),
        ),
    );
    const config = loadConfig({});
    assert.equal(config.boleto.rail, 'sandbox');
    assert.equal(config.boleto.dueDays, 3);
    assert.equal(config.boleto.issueWaitMs, 5000);
  });
});

describe(`Boleto at Efí (${databaseLabel})`, () => {
  let efi: FakeEfi;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let seq = 0;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const collect = async (overrides: Record<string, unknown> = {}) => {
    const body = {
      amount: '125.50',
      channelType: 'BOLETO',
      externalOrderId: `bol-${Date.now()}-${++seq}`,
      remark: 'Pedido 42',
      ...PAYER,
      ...overrides,
    };
    const response = await call(COLLECT, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    return { orderId: response.body.data.currencyOrderVo.orderId as string, data: response.body.data };
  };
  const order = async (orderId: string) => {
    const found = await gw.gateway.orders.find(orderId);
    assert.ok(found !== undefined);
    return found;
  };
  const chargeOf = (orderId: string) => [...efi.charges.values()].filter((c) => c.custom_id === orderId);
  const chargeIdOf = (orderId: string) => String(chargeOf(orderId)[0]?.charge_id ?? 'none');
  const boletoRow = (orderId: string) => gw.gateway.boleto?.charge(orderId);
  /** The order's rail messages, to say what happened when an assertion fails. */
  const story = async (orderId: string) =>
    JSON.stringify((await gw.admin('GET', `/admin/v1/orders/${orderId}/rail-messages`)).body);
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((json) => json.orderId === orderId);

  before(async () => {
    efi = await startFakeEfi({ notificationRetryMs: 100 });
    const port = await freePort();
    gw = await startTestGateway({
      env: {
        ...efiGatewayEnv(efi, port),
        BOLETO_RECONCILE_INTERVAL_MS: '200',
        BOLETO_ISSUE_WAIT_MS: '1500',
        BOLETO_ISSUER_TIMEOUT_MS: '1000',
        RAIL_POLL_INTERVAL_MS: '100',
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
        CALLBACK_POLL_INTERVAL_MS: '50',
      },
    });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await efi.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('registers the boleto at Efí after the commit and answers with the issuer’s linha digitável; the cashier shows it, its Pix and the issuer’s PDF', async () => {
    const created = await collect();
    const charges = chargeOf(created.orderId);
    assert.equal(charges.length, 1, 'one charge at Efí');
    const line = created.data.currencyOrderVo.payParam as string;
    assert.ok(isValidLinhaDigitavel(line), `a valid linha digitável: ${line}`);
    assert.equal(line, String(charges[0].payment.banking_billet.barcode).replace(/\D/g, ''));
    assert.equal((await order(created.orderId)).channel_order_id?.length, 15);
    const page = await fetch(created.data.cashierUrl as string);
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.match(html, /id="boleto-pix"/);
    assert.match(html, /id="boleto-confirm-wait"/);
    assert.doesNotMatch(html, /class="sandbox"/, 'no sandbox controls on a live boleto');
    const pdf = await fetch(`${created.data.cashierUrl as string}/boleto.pdf`);
    assert.equal(pdf.status, 200);
    const bytes = Buffer.from(await pdf.arrayBuffer());
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    assert.ok(
      bytes.toString('latin1').includes(formatLinhaDigitavel(line)),
      'the issuer’s own PDF, served by Cashgate',
    );
  });

  it('refuses an amount under Efí’s minimum with code 300 naming the limit, and changes nothing', async () => {
    const before = efi.charges.size;
    const response = await call(COLLECT, {
      amount: '4.99',
      channelType: 'BOLETO',
      externalOrderId: `bol-min-${++seq}`,
      ...PAYER,
    });
    assert.equal(response.body.code, '300');
    assert.match(response.body.msgEn, /amount/);
    assert.match(response.body.msgEn, /5\.00/);
    assert.equal(efi.charges.size, before);
  });

  it('a payment notified by token is confirmed with Efí’s own query, then pays the order once', async () => {
    const created = await collect();
    await efi.pay(chargeIdOf(created.orderId), { method: 'BOLETO', notify: 'twice' });
    await until(async () => assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.paid));
    await until(() => assert.equal(callbacksFor(created.orderId).length, 1));
    const row = await boletoRow(created.orderId);
    assert.equal(row?.disposition, 'credited');
    // Efí does not say whether a Bolix was paid at a bank or by its Pix (docs/boleto-efi.md).
    assert.equal(row.paid_method, 'UNKNOWN');
    assert.equal(callbacksFor(created.orderId)[0]?.orderStatus, 'PAYMENT_SUCCESS');
  });

  it('a forged notification changes nothing', async () => {
    const created = await collect();
    const url = String(chargeOf(created.orderId)[0]?.notification_url ?? '');
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/rails\/boleto\/[0-9a-f]{32}\/efi$/);
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'notification=forged-token-0000',
    });
    assert.equal(forged.status, 200);
    assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.pending);
    assert.equal((await boletoRow(created.orderId))?.state, 'open');
    const metrics = await (await fetch(new URL('/metrics', gw.url))).text();
    assert.match(metrics, /cashgate_boleto_notifications_total\{issuer="efi",disposition="refused"\} [1-9]/);
    assert.match(metrics, /cashgate_boleto_issuer_requests_total\{issuer="efi",operation="issue",outcome="ok"\} [1-9]/);
  });

  it('a payment whose notification is lost is found by reconciliation', async () => {
    const created = await collect();
    await efi.pay(chargeIdOf(created.orderId), { method: 'PIX', notify: 'skip' });
    // Efí's list states no amount received: reconciliation first waits for the notification that does.
    await until(async () => assert.notEqual((await boletoRow(created.orderId))?.paid_seen_at ?? null, null), 15_000);
    await sleep(500);
    assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.pending, 'not credited within the grace');
    gw.clock.advance(UNSTATED_GRACE_MS + 1000);
    await until(async () => assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.paid), 15_000);
    // Efí's list states no paid value (docs/boleto-efi.md): the charge's total is taken.
    assert.equal(String((await order(created.orderId)).actual_amount), '12550');
    assert.equal((await boletoRow(created.orderId))?.disposition, 'credited');
  });

  it('a different amount received (fine, interest) is what Efí’s notification states: the order’s actual amount', async () => {
    const created = await collect();
    await efi.pay(chargeIdOf(created.orderId), { method: 'BOLETO', value: 12_600 });
    await until(async () => assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.paid), 15_000);
    assert.equal(String((await order(created.orderId)).actual_amount), '12600');
    await until(() => assert.equal(callbacksFor(created.orderId)[0]?.orderActualAmount, '126.00'));
  });

  it('asks the payer on the cashier page for what Efí needs, checks it, then issues the boleto', async () => {
    const created = await collect({ userInfoType: undefined, userInfoNo: undefined, userInfoName: undefined });
    assert.equal(created.data.currencyOrderVo.payParam, '');
    assert.equal(chargeOf(created.orderId).length, 0, 'nothing issued without a payer');
    const url = created.data.cashierUrl as string;
    assert.match(await (await fetch(url)).text(), /name="document"/);
    const bad = await fetch(`${url}/boleto-payer?lang=en`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Maria&document=123',
      redirect: 'manual',
    });
    assert.equal(bad.status, 400);
    const text = await bad.text();
    assert.match(text, /CPF \(11 digits\) or CNPJ/);
    assert.match(text, /first name and a surname/);
    assert.equal(chargeOf(created.orderId).length, 0);
    const good = await fetch(`${url}/boleto-payer`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Maria+Souza&document=529.982.247-25',
      redirect: 'manual',
    });
    assert.equal(good.status, 303);
    await until(() => assert.equal(chargeOf(created.orderId).length, 1));
    await until(async () =>
      assert.ok(isValidLinhaDigitavel((await order(created.orderId)).details.match(/"payParam":"(\d+)"/)?.[1] ?? '')),
    );
  });

  it('an issue whose answer was lost is asked about before it is sent again: one charge', async () => {
    efi.failNext('issue', 'timeout-after');
    const created = await collect();
    await until(
      async () => assert.equal((await boletoRow(created.orderId))?.state, 'open', await story(created.orderId)),
      15_000,
    );
    assert.equal(chargeOf(created.orderId).length, 1, 'exactly one charge');
  });

  it('the aggregate cashier takes Efí’s minimum, asks the name Efí needs, and keeps an amount its rules refuse in suspense', async () => {
    const form = (path: string, fields: Record<string, string>) =>
      fetch(new URL(path, gw.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    const opened = await call('/api/v3/polymerize/createCollectingOrder', {
      externalOrderId: `agg-${Date.now()}-${++seq}`,
      dynamicAmountNotify: 2,
    });
    assert.equal(opened.body.code, '200', opened.body.msgEn);
    const checkout = new URL(opened.body.data as string).pathname;
    const tooSmall = await form(`${checkout}?lang=en`, { amount: '4.00', method: 'BOLETO' });
    assert.equal(tooSmall.status, 400, 'under Efí’s R$ 5.00 the form refuses the amount');
    const chosen = await form(`${checkout}?lang=en`, { amount: '20.00', method: 'BOLETO' });
    assert.equal(chosen.status, 303, (await chosen.text()).replace(/<style>.*<\/style>/s, '').slice(0, 3000));
    const cashier = new URL(chosen.headers.get('location') ?? '', gw.url).pathname.replace(/\?.*$/, '');
    const order = await gw.gateway.orders.findByCashier(cashier.split('/').pop() ?? '');
    assert.ok(order !== undefined);
    assert.equal(chargeOf(order.id).length, 0, 'no boleto without the payer’s name');
    // Without a userIdentity the cashier's CPF is one Cashgate generated: never sent as the payer's.
    const asked = await (await fetch(new URL(`${cashier}?lang=en`, gw.url))).text();
    assert.match(asked, /name="name"/);
    assert.match(asked, /name="document"/);
    const named = await form(`${cashier}/boleto-payer?lang=en`, { name: 'Ana Pagadora', document: '111.444.777-35' });
    assert.equal(named.status, 303, (await named.text()).replace(/^[\s\S]*<main>/, '').slice(0, 1500));
    await until(() => assert.equal(chargeOf(order.id).length, 1));
    assert.deepEqual(chargeOf(order.id)[0]?.customer, { name: 'Ana Pagadora', cpf: '11144477735' });
    await efi.pay(chargeIdOf(order.id), { method: 'BOLETO', value: 1_900 });
    await until(async () => assert.equal((await boletoRow(order.id))?.disposition, 'suspense'), 15_000);
    assert.equal((await gw.gateway.orders.find(order.id))?.status, COLLECTION_STATUS.pending, 'the order still waits');
  });

  it('writes the boleto off at Efí when its order expires; a payment after that is kept in suspense', async () => {
    const created = await collect();
    const expiry = (await order(created.orderId)).cashier_expire_at ?? 0;
    gw.clock.advance(expiry - gw.clock.now() + 1000);
    await until(
      async () =>
        assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.expired, await story(created.orderId)),
      15_000,
    );
    await until(async () => assert.equal((await boletoRow(created.orderId))?.state, 'cancelled'), 15_000);
    assert.equal(chargeOf(created.orderId)[0]?.status, 'canceled');
    await efi.pay(chargeIdOf(created.orderId), { method: 'BOLETO' });
    await until(async () => assert.equal((await boletoRow(created.orderId))?.disposition, 'suspense'), 15_000);
    const listed = await gw.admin('GET', '/admin/v1/boleto/suspense');
    assert.equal(listed.status, 200);
    assert.ok(listed.body.boletos.some((b: { orderId: string }) => b.orderId === created.orderId));
    assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.expired, 'the order stays as it ended');
  });
});

describe(`Boleto at Efí: a node killed between the commit and the issue (${databaseLabel})`, () => {
  let efi: FakeEfi;
  let receiver: CallbackReceiver;
  let rig: CrashRig;
  before(async () => {
    efi = await startFakeEfi({ notificationRetryMs: 100 });
    receiver = await startReceiver();
    rig = await startCrashRig('boleto-crash');
  });
  afterEach(() => rig.killAll());
  after(async () => {
    await efi.close();
    await receiver.close();
    await rig.close();
  });

  it('registers exactly one charge when the node dies while Efí holds its answer, and the order is paid', async () => {
    const port = await freePort();
    const env = {
      ...efiGatewayEnv(efi, port),
      BOLETO_ISSUER_TIMEOUT_MS: '20000',
      BOLETO_ISSUE_WAIT_MS: '300',
      BOLETO_RECONCILE_INTERVAL_MS: '200',
      RAIL_POLL_INTERVAL_MS: '100',
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      CALLBACK_POLL_INTERVAL_MS: '50',
      ...rig.env,
    };
    const first = await rig.start(env);
    const { credentials } = await processMerchant(first, {
      callbackUrl: `${receiver.url}/cb`,
      currency: 'BRL',
      amount: '1',
    });
    // Efí registers the charge and holds its answer: the node dies meanwhile.
    efi.failNext('issue', 'timeout-after');
    const body = { amount: '77.40', channelType: 'BOLETO', externalOrderId: `crash-bol-${Date.now()}`, ...PAYER };
    const sign = (server: { url: string }) => signedCall(server.url, credentials, { path: COLLECT, body }, Date.now());
    const created = await sign(first);
    assert.equal(created.body.code, '200', created.body.msgEn);
    assert.equal(created.body.data.currencyOrderVo.payParam, '', 'answered without waiting for the held issue');
    const orderId = created.body.data.currencyOrderVo.orderId as string;
    const chargesOf = () => [...efi.charges.values()].filter((c) => c.custom_id === orderId);
    await until(() => assert.equal(chargesOf().length, 1));
    await rig.crash(first);

    const second = await rig.start(env);
    // The charge is looked up at Efí (by custom_id) before any new issue; its linha is answered.
    let payParam = '';
    await until(async () => {
      const repeat = await sign(second);
      payParam = (repeat.body.data?.currencyOrderVo?.payParam as string | undefined) ?? '';
      assert.notEqual(payParam, '');
    }, 45_000);
    assert.equal(payParam, String(chargesOf()[0]?.payment.banking_billet.barcode).replace(/\D/g, ''));
    efi.pay(String(chargesOf()[0]?.charge_id));
    await until(() => {
      const outcomes = receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      assert.ok(
        outcomes.some((o) => o.orderId === orderId && o.orderStatus === 'PAYMENT_SUCCESS'),
        'paid',
      );
    }, 20_000);
    await sleep(300);
    assert.equal(chargesOf().length, 1, 'one charge');
    const issued = efi.requests.filter((r) => r.operation === 'issue' && r.body?.metadata?.custom_id === orderId);
    assert.equal(issued.length, 1, 'issued once: asked about, never sent blindly again');
  });
});
