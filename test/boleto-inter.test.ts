import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { boletoReference } from '../src/brazil/collection-codes.js';
import { COLLECTION_STATUS } from '../src/orders/state-machine.js';
import { isValidLinhaDigitavel } from '../src/rails/boleto/boleto.js';
import { processMerchant, startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel } from './support/database.js';
import { pdfText } from './support/pdf.js';
import { freePort } from './support/fake-daraja.js';
import { interGatewayEnv, startFakeInter, type FakeInter } from './support/fake-inter.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
const QUERY = '/api/v3/bra/query/collectingOrder';
const VOUCHER = '/api/v3/bra/query/voucher';
const PAYER = { userInfoType: 'CPF', userInfoNo: '529.982.247-25', userInfoName: 'Maria Souza' };
const ADDRESS = 'street=Rua+das+Flores&number=120&district=Centro&city=S%C3%A3o+Paulo&uf=SP&cep=01001-000';

describe(`Boleto at Banco Inter (${databaseLabel})`, () => {
  let inter: FakeInter;
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
      externalOrderId: `inter-${Date.now()}-${++seq}`,
      remark: 'Pedido 42',
      ...PAYER,
      ...overrides,
    };
    const response = await call(COLLECT, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    return {
      body,
      orderId: response.body.data.currencyOrderVo.orderId as string,
      cashierUrl: response.body.data.cashierUrl as string,
      data: response.body.data,
    };
  };
  const order = async (orderId: string) => {
    const found = await gw.gateway.orders.find(orderId);
    assert.ok(found !== undefined);
    return found;
  };
  const chargesOf = (orderId: string) =>
    [...inter.charges.values()].filter((c) => c.cobranca.seuNumero === boletoReference(orderId));
  const chargeIdOf = (orderId: string) => String(chargesOf(orderId)[0]?.cobranca.codigoSolicitacao ?? 'none');
  const boletoRow = (orderId: string) => gw.gateway.boleto?.charge(orderId);
  const story = async (orderId: string) =>
    JSON.stringify((await gw.admin('GET', `/admin/v1/orders/${orderId}/rail-messages`)).body);
  const callbacksFor = (orderId: string) =>
    receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((json) => json.orderId === orderId);
  /** The payer gives the address on the cashier page (Inter registers no boleto without one). */
  const giveAddress = (cashierUrl: string, form = ADDRESS) =>
    fetch(`${cashierUrl}/boleto-payer?lang=en`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      redirect: 'manual',
    });
  /** A collection whose boleto is registered and open at Inter. */
  const registered = async () => {
    const created = await collect();
    assert.equal((await giveAddress(created.cashierUrl)).status, 303);
    await until(
      async () => assert.equal((await boletoRow(created.orderId))?.state, 'open', await story(created.orderId)),
      10_000,
    );
    return created;
  };

  before(async () => {
    inter = await startFakeInter({ allowHttpWebhook: true, issueDelayMs: 100, webhookRetryMs: [200, 300, 600, 1200] });
    const port = await freePort();
    gw = await startTestGateway({
      env: {
        ...interGatewayEnv(inter, port),
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
    await until(() => assert.notEqual(inter.webhookUrl, undefined));
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await inter.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('registers its webhook with Inter under an unguessable path of its public address', () => {
    assert.match(inter.webhookUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/rails\/boleto\/[0-9a-f]{32}\/inter$/);
  });

  it('asks the payer for the address Inter needs, checks it, then registers the boleto (asynchronously) and shows it', async () => {
    const created = await collect();
    assert.equal(created.data.currencyOrderVo.payParam, '', 'nothing to pay before the boleto is registered');
    assert.equal(chargesOf(created.orderId).length, 0);
    const page = await (await fetch(`${created.cashierUrl}?lang=en`)).text();
    assert.match(page, /name="cep"/);
    assert.doesNotMatch(page, /name="document"/, 'the merchant gave the document: it is not asked again');
    const bad = await giveAddress(created.cashierUrl, 'street=Rua+A&city=Recife&uf=XX&cep=123');
    assert.equal(bad.status, 400);
    const text = await bad.text();
    assert.match(text, /Choose the state/);
    assert.match(text, /CEP: 8 digits/);
    assert.equal(chargesOf(created.orderId).length, 0, 'a refused form issues nothing');
    assert.equal((await giveAddress(created.cashierUrl)).status, 303);
    await until(async () => assert.equal((await boletoRow(created.orderId))?.state, 'open'), 10_000);
    const charges = chargesOf(created.orderId);
    assert.equal(charges.length, 1);
    assert.deepEqual(charges[0].cobranca.pagador.cep, '01001000');
    assert.equal(charges[0].cobranca.pagador.uf, 'SP');
    const current = await order(created.orderId);
    const line = (JSON.parse(current.details) as { payParam: string }).payParam;
    assert.ok(isValidLinhaDigitavel(line));
    assert.equal(line, charges[0].boleto.linhaDigitavel);
    // The merchant's query carries the registered linha digitável.
    const queried = await call(QUERY, { orderId: created.orderId, externalOrderId: created.body.externalOrderId });
    assert.equal(queried.body.code, '200', queried.body.msgEn);
    assert.ok(JSON.stringify(queried.body.data).includes(line));
    const shown = await (await fetch(`${created.cashierUrl}?lang=en`)).text();
    assert.match(shown, /id="boleto-pix"/);
    assert.ok(shown.includes(charges[0].pix.pixCopiaECola));
    const pdf = Buffer.from(await (await fetch(`${created.cashierUrl}/boleto.pdf`)).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
  });

  it('a boleto paid through its Pix is confirmed with GET /cobrancas/{id} and records how it was paid', async () => {
    const created = await registered();
    await inter.pay(chargeIdOf(created.orderId), { pagarCom: 'PIX', callback: 'twice' });
    await until(async () => assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.paid), 10_000);
    await until(() => assert.equal(callbacksFor(created.orderId).length, 1));
    const row = await boletoRow(created.orderId);
    assert.equal(row?.paid_method, 'PIX');
    assert.equal(row.disposition, 'credited');
    assert.match((await order(created.orderId)).details, /"boletoPaidBy":"PIX"/);
    // The voucher (endpoint 17) names the bank's nosso número, when and how the boleto was paid.
    const voucher = await call(VOUCHER, { orderId: created.orderId });
    assert.equal(voucher.body.code, '200', voucher.body.msgEn);
    const text = await pdfText(new Uint8Array(await (await fetch(voucher.body.data as string)).arrayBuffer()));
    const nossoNumero = String(chargesOf(created.orderId)[0]?.boleto.nossoNumero);
    assert.ok(text.includes(nossoNumero), `the nosso número ${nossoNumero} is on the voucher`);
    assert.match(text, /Pago com \/ Paid with/);
    assert.match(text, /o Pix do boleto/);
  });

  it('a forged callback (RECEBIDO for an open charge) changes nothing: Inter’s own query says A_RECEBER', async () => {
    const created = await registered();
    const id = chargeIdOf(created.orderId);
    const forged = await fetch(inter.webhookUrl ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        {
          codigoSolicitacao: id,
          seuNumero: boletoReference(created.orderId),
          situacao: 'RECEBIDO',
          dataHoraSituacao: new Date().toISOString(),
          valorTotalRecebido: '125.50',
          origemRecebimento: 'BOLETO',
        },
      ]),
    });
    assert.equal(forged.status, 200);
    assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.pending);
    assert.equal((await boletoRow(created.orderId))?.state, 'open');
  });

  it('a payment whose callback is lost is found by reconciliation, with the amount Inter says it received', async () => {
    const created = await registered();
    await inter.pay(chargeIdOf(created.orderId), { pagarCom: 'BOLETO', valor: '127.30', callback: 'skip' });
    await until(async () => assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.paid), 15_000);
    assert.equal(String((await order(created.orderId)).actual_amount), '12730');
    assert.equal((await boletoRow(created.orderId))?.paid_method, 'BOLETO');
  });

  it('an issue whose answer was lost is looked up by seuNumero before it is sent again: one charge', async () => {
    const created = await collect();
    inter.failNext('issue', 'timeout-after');
    await giveAddress(created.cashierUrl);
    // The claim holds the issue for 30 s; past it, reconciliation asks Inter first.
    gw.clock.advance(31_000);
    await until(
      async () => assert.equal((await boletoRow(created.orderId))?.state, 'open', await story(created.orderId)),
      15_000,
    );
    assert.equal(chargesOf(created.orderId).length, 1, 'exactly one charge');
    assert.equal(
      inter.requests.filter((r) => r.operation === 'issue' && r.body?.seuNumero === boletoReference(created.orderId))
        .length,
      1,
    );
  });

  it('a registration that takes long is followed by reconciliation; one Inter fails cancels the order with its reason', async () => {
    const slow = await collect();
    inter.holdIssue(boletoReference(slow.orderId));
    await giveAddress(slow.cashierUrl);
    assert.equal((await boletoRow(slow.orderId))?.state, 'processing');
    assert.match(await (await fetch(`${slow.cashierUrl}?lang=en`)).text(), /id="boleto-registering"/);
    inter.releaseIssue(boletoReference(slow.orderId));
    await until(async () => assert.equal((await boletoRow(slow.orderId))?.state, 'open'), 10_000);
    const failing = await collect();
    inter.failIssue(boletoReference(failing.orderId));
    await giveAddress(failing.cashierUrl);
    await until(async () => assert.equal((await order(failing.orderId)).status, COLLECTION_STATUS.cancelled), 10_000);
    assert.equal((await boletoRow(failing.orderId))?.state, 'failed');
    await until(() => assert.equal(callbacksFor(failing.orderId)[0]?.orderStatus, 'CANCELLED'));
  });

  it('cancels the boleto at Inter when its order expires; a slip paid afterwards is kept in suspense, never lost', async () => {
    const created = await registered();
    const expiry = (await order(created.orderId)).cashier_expire_at ?? 0;
    gw.clock.advance(expiry - gw.clock.now() + 1000);
    await until(async () => assert.equal((await boletoRow(created.orderId))?.state, 'cancelled'), 15_000);
    assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.expired);
    const charge = inter.charges.get(chargeIdOf(created.orderId));
    assert.equal(charge.cobranca.situacao, 'CANCELADO');
    assert.ok(String(charge.cobranca.motivoCancelamento).length > 0);
    await inter.pay(chargeIdOf(created.orderId), { pagarCom: 'BOLETO' });
    await until(async () => assert.equal((await boletoRow(created.orderId))?.disposition, 'suspense'), 15_000);
    const listed = await gw.admin('GET', '/admin/v1/boleto/suspense');
    assert.ok(listed.body.boletos.some((b: { orderId: string }) => b.orderId === created.orderId));
    const suspense = await gw.gateway.store.read
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('code', '=', 'system/BRL/boleto_suspense')
      .executeTakeFirst();
    assert.ok((suspense?.balance ?? 0) >= 12_550);
    assert.equal((await order(created.orderId)).status, COLLECTION_STATUS.expired);
  });
});

describe(`Boleto at Banco Inter: a node killed between the payer's data and the issue (${databaseLabel})`, () => {
  let inter: FakeInter;
  let receiver: CallbackReceiver;
  let rig: CrashRig;
  before(async () => {
    inter = await startFakeInter({ allowHttpWebhook: true, tokenCallsPerMinute: 100 });
    receiver = await startReceiver();
    rig = await startCrashRig('boleto-inter-crash');
  });
  afterEach(() => rig.killAll());
  after(async () => {
    await inter.close();
    await receiver.close();
    await rig.close();
  });

  it('registers exactly one charge when the node dies while Inter holds its answer: found by seuNumero', async () => {
    const port = await freePort();
    const env = {
      ...interGatewayEnv(inter, port),
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
    const body = { amount: '88.20', channelType: 'BOLETO', externalOrderId: `crash-inter-${Date.now()}`, ...PAYER };
    const created = await signedCall(first.url, credentials, { path: COLLECT, body }, Date.now());
    assert.equal(created.body.code, '200', created.body.msgEn);
    const orderId = created.body.data.currencyOrderVo.orderId as string;
    const cashierUrl = created.body.data.cashierUrl as string;
    // Inter registers the charge and holds its answer: the node dies meanwhile.
    inter.failNext('issue', 'timeout-after');
    const given = fetch(`${cashierUrl}/boleto-payer`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: ADDRESS,
      redirect: 'manual',
    }).catch(() => undefined);
    const chargesOf = () =>
      [...inter.charges.values()].filter((c) => c.cobranca.seuNumero === boletoReference(orderId));
    await until(() => assert.equal(chargesOf().length, 1));
    await rig.crash(first);
    await given;

    const second = await rig.start(env);
    // After the claim's 30 s, reconciliation asks Inter by seuNumero and finds the charge.
    await until(async () => {
      const repeat = await signedCall(second.url, credentials, { path: COLLECT, body }, Date.now());
      assert.notEqual((repeat.body.data?.currencyOrderVo?.payParam as string | undefined) ?? '', '');
    }, 60_000);
    await inter.pay(String(chargesOf()[0]?.cobranca.codigoSolicitacao), { pagarCom: 'BOLETO' });
    await until(() => {
      const outcomes = receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      assert.ok(
        outcomes.some((o) => o.orderId === orderId && o.orderStatus === 'PAYMENT_SUCCESS'),
        'paid',
      );
    }, 20_000);
    assert.equal(chargesOf().length, 1, 'one charge');
    const issued = inter.requests.filter(
      (r) => r.operation === 'issue' && r.body?.seuNumero === boletoReference(orderId),
    );
    assert.equal(issued.length, 1, 'issued once: looked up by seuNumero, never sent blindly again');
  });
});
