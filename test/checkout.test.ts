import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isValidCpf } from '../src/brazil/documents.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';
import { isTronAddress } from '../src/rails/chain/addresses.js';

let seq = 0;
const nextId = () => `agg-${Date.now()}-${++seq}`;

/** The aggregate cashier (endpoint 19) over real HTTP: the signed create, then the payer's form posts and the sandbox. */
describe(`aggregate cashier (${databaseLabel})`, () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url });
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  const open = async (body: Record<string, unknown> = {}, credentials = merchant.credentials) =>
    signedCall(
      gw.url,
      credentials,
      { path: '/api/v3/polymerize/createCollectingOrder', body: { externalOrderId: nextId(), ...body } },
      gw.clock.now(),
    );

  /** The cashier's path (the test gateway's PUBLIC_BASE_URL has no real port). */
  const pathOf = (address: string) => new URL(address).pathname;

  const page = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(new URL(path, gw.url), { headers, redirect: 'manual' });
    return {
      status: response.status,
      text: await response.text(),
      location: response.headers.get('location'),
      csp: response.headers.get('content-security-policy'),
    };
  };

  const submit = async (path: string, form: Record<string, string>) => {
    const response = await fetch(new URL(path, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
    return { status: response.status, text: await response.text(), location: response.headers.get('location') };
  };

  /** Opens a cashier and chooses; returns the order made. */
  const pay = async (create: Record<string, unknown>, form: Record<string, string>) => {
    const created = await open(create);
    assert.equal(created.body.code, '200', created.body.msgEn);
    const chosen = await submit(pathOf(created.body.data as string), form);
    assert.equal(chosen.status, 303, chosen.text.slice(0, 500));
    const cashierId = /^\/cashier\/([^?]+)/.exec(chosen.location ?? '')?.[1];
    assert.ok(cashierId !== undefined, `redirected to a cashier page: ${chosen.location}`);
    const order = await gw.gateway.orders.findByCashier(cashierId);
    assert.ok(order !== undefined);
    return { order, cashierPath: `/cashier/${cashierId}`, checkoutPath: pathOf(created.body.data as string) };
  };

  const callbackOf = (orderId: string) =>
    eventually(
      async () =>
        receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>).find((b) => b.orderId === orderId),
      10_000,
      `the callback of ${orderId}`,
    );

  it('returns an aggregate cashier address; an identical repeat returns the same one, a different body is a 300', async () => {
    const externalOrderId = nextId();
    const first = await open({ externalOrderId, remark: 'pedido 1' });
    assert.equal(first.body.code, '200', first.body.msgEn);
    assert.match(first.body.data as string, /^http:\/\/.+\/checkout\/chk_[0-9a-f]{32}$/);
    const again = await open({ externalOrderId, remark: 'pedido 1' });
    assert.equal(again.body.data, first.body.data);
    const different = await open({ externalOrderId, remark: 'pedido 2' });
    assert.equal(different.body.code, '300');
    assert.match(different.body.msgEn, /externalOrderId/);
  });

  it('refuses bad members with a 300 that names them, and a key without the polymerize permission with a 301', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ dynamicAmountNotify: 3 }, /dynamicAmountNotify/],
      [{ dynamicAmountNotify: '1' }, /dynamicAmountNotify/],
      [{ returnUrl: 'ftp://shop.example/back' }, /returnUrl/],
      [{ userIdentity: '' }, /userIdentity/],
      [{ userIdentity: 'u'.repeat(129) }, /userIdentity/],
      [{ amount: '10.00' }, /amount/],
    ];
    for (const [body, field] of cases) {
      const response = await open(body);
      assert.equal(response.body.code, '300', JSON.stringify(body));
      assert.match(response.body.msgEn, field);
    }
    const missing = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/polymerize/createCollectingOrder', body: {} },
      gw.clock.now(),
    );
    assert.match(missing.body.msgEn, /externalOrderId/);
    const other = await gw.merchantWithKey({ permissions: ['bra.collection'] });
    assert.equal((await open({}, other.credentials)).body.code, '301');
  });

  it('shows the form; a bad amount, no method and a bad document are each named and change nothing', async () => {
    const created = await open({ userIdentity: `payer-${nextId()}` });
    const path = pathOf(created.body.data as string);
    const shown = await page(path, { 'accept-language': 'en' });
    assert.equal(shown.status, 200);
    assert.match(shown.csp ?? '', /default-src 'none'/);
    for (const label of ['Amount (R$)', 'Pix', 'Boleto', 'USDT on TRON (TRC-20)', 'CPF or CNPJ'])
      assert.ok(shown.text.includes(label), label);
    const refused = await submit(`${path}?lang=en`, { amount: '1,2,3', document: '123' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /Enter an amount from R\$\s?1\.00 to/);
    assert.match(refused.text, /Choose a payment method/);
    assert.match(refused.text, /Enter a valid CPF/);
    assert.match(refused.text, /aria-invalid="true"/);
    const again = await page(path);
    assert.equal(again.status, 200, 'still open: nothing was made');
    // A language chosen in the address stays through the form and its redirect.
    const swahili = await page(`${path}?lang=sw`);
    assert.ok(
      swahili.text.includes('<html lang="sw">') && swahili.text.includes(`action="${path}?lang=sw"`),
      'the form keeps ?lang',
    );
    const chosen = await submit(`${path}?lang=sw`, { amount: '5', method: 'PIX', document: '52998224725' });
    assert.match(chosen.location ?? '', /^\/cashier\/csh_\w+\?lang=sw$/);
    assert.match((await page(chosen.location ?? '')).text, /Lipa kwa Pix/);
    assert.equal(
      (await submit(`${path}?lang=xx%22`, { amount: '5', method: 'PIX' })).location?.includes('lang'),
      false,
      'an unknown language is not carried',
    );
  });

  it('PIX: the payer enters amount and CPF; the order pays through the sandbox with a payment callback and its ledger entries', async () => {
    const identity = `payer-${nextId()}`;
    const { order, cashierPath } = await pay(
      { userIdentity: identity, returnUrl: 'https://shop.example/back' },
      { amount: '42,50', method: 'PIX', document: '529.982.247-25' },
    );
    assert.equal(order.area, 'cashier');
    assert.equal(order.channel_type, 'PIX');
    assert.equal(order.pay_type, 101);
    assert.equal(order.amount, 4250);
    const details = JSON.parse(order.details) as Record<string, unknown>;
    assert.equal(details.userInfoNo, '52998224725');
    assert.equal(details.documentSource, 'entered');
    assert.match(String(details.payParam), /^000201.*br\.gov\.bcb\.pix/);
    const shown = await page(cashierPath, { 'accept-language': 'pt-BR' });
    assert.equal(shown.status, 200);
    assert.ok(shown.text.includes('R$ 42,50'));
    assert.ok(shown.text.includes('<svg'), 'the QR code is inline');
    assert.equal((await gw.sandbox(order.id, 'paid')).status, 200);
    const callback = await callbackOf(order.id);
    assert.equal(callback.orderStatusCode, 2);
    assert.equal(callback.payType, 101);
    assert.equal(callback.payTypeName, 'PIX');
    assert.equal(callback.orderActualAmount, '42.50');
    assert.equal(callback.markStatus, 0);
    const queried = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: '/api/v3/bra/query/collectingOrder',
        body: { externalOrderId: order.external_order_id, orderId: order.id },
      },
      gw.clock.now(),
    );
    assert.equal(queried.body.code, '200', queried.body.msgEn);
    assert.equal(queried.body.data[0].orderStatus, 2);
    assert.equal(queried.body.data[0].accountNo, '52998224725');
    const paid = await page(cashierPath, { 'accept-language': 'en' });
    assert.match(paid.text, /Payment received/);
    assert.doesNotMatch(paid.text, /http-equiv="refresh"/, 'no meta refresh on the paid page');
    assert.match(
      paid.text,
      /<a class="button" id="return-link" href="https:\/\/shop\.example\/back">Return to the shop<\/a>/,
    );
    assert.match(paid.text, /data-return="https:\/\/shop\.example\/back" data-return-in="5"/);
    assert.deepEqual(await gw.auditBreaches(), []);
  });

  it('a document saved under the userIdentity is reused: the second visit has no input step', async () => {
    const identity = `payer-${nextId()}`;
    await pay({ userIdentity: identity }, { amount: '10', method: 'BOLETO', document: '11.222.333/0001-81' });
    const created = await open({ userIdentity: identity });
    const path = pathOf(created.body.data as string);
    const shown = await page(path, { 'accept-language': 'en' });
    assert.ok(!shown.text.includes('name="document"'), 'no document input');
    assert.match(shown.text, /Paying as CNPJ 11\.222\.333\/0001-81 \(saved\)/);
    const chosen = await submit(path, { amount: '15.00', method: 'PIX_DYNAMIC' });
    assert.equal(chosen.status, 303);
    const state = await gw.gateway.store.read
      .selectFrom('checkouts')
      .select('order_id')
      .where('id', '=', path.split('/').pop() ?? '')
      .executeTakeFirstOrThrow();
    const order = await gw.gateway.orders.find(state.order_id ?? '');
    const details = JSON.parse(order?.details ?? '{}') as Record<string, unknown>;
    assert.equal(details.userInfoNo, '11222333000181');
    assert.equal(details.documentSource, 'saved');
  });

  it('without a userIdentity the system generates a valid CPF, flagged as generated, and asks for nothing', async () => {
    const created = await open({});
    const path = pathOf(created.body.data as string);
    const shown = await page(path);
    assert.ok(!shown.text.includes('name="document"'));
    const { order } = await (async () => {
      const chosen = await submit(path, { amount: '5.00', method: 'PIX' });
      assert.equal(chosen.status, 303);
      const cashierId = (chosen.location ?? '').split('/').pop() ?? '';
      return { order: await gw.gateway.orders.findByCashier(cashierId) };
    })();
    const details = JSON.parse(order?.details ?? '{}') as Record<string, unknown>;
    assert.equal(details.documentSource, 'generated');
    assert.ok(isValidCpf(String(details.userInfoNo)), `a valid CPF: ${String(details.userInfoNo)}`);
  });

  it('a second submission gets the order the first one made; the cashier then redirects to its page', async () => {
    const created = await open({});
    const path = pathOf(created.body.data as string);
    const [a, b] = await Promise.all([
      submit(path, { amount: '7.00', method: 'PIX' }),
      submit(path, { amount: '8.00', method: 'BOLETO' }),
    ]);
    assert.equal(a.status, 303);
    assert.equal(b.status, 303);
    assert.equal(a.location, b.location);
    assert.equal((await page(path)).location, a.location);
  });

  it('dynamicAmountNotify 1: another amount pays the order with it, marked (markStatus 1)', async () => {
    const { order } = await pay({}, { amount: '20.00', method: 'PIX' });
    assert.equal((await gw.sandbox(order.id, 'paid', { amount: '19.00' })).status, 200);
    const callback = await callbackOf(order.id);
    assert.equal(callback.orderActualAmount, '19.00');
    assert.equal(callback.orderAmount, '20.00');
    assert.equal(callback.markStatus, 1);
  });

  it('dynamicAmountNotify 2: another amount is refused and recorded, nothing is credited; the exact amount then pays', async () => {
    const { order, cashierPath } = await pay({ dynamicAmountNotify: 2 }, { amount: '20.00', method: 'PIX' });
    const refused = await gw.sandbox(order.id, 'paid', { amount: '19.00' });
    assert.equal(refused.status, 200);
    const after = await gw.gateway.orders.find(order.id);
    assert.equal(after?.status, 1);
    assert.deepEqual(
      (await gw.gateway.orders.history(order.id)).map((e) => e.event),
      ['created', 'payment_refused'],
    );
    const journals = await gw.gateway.store.read
      .selectFrom('ledger_journals')
      .select('id')
      .where('order_id', '=', order.id)
      .execute();
    assert.equal(journals.length, 0);
    assert.match(
      (await page(cashierPath, { 'accept-language': 'en' })).text,
      /Your payment of R\$\s?19\.00 was returned/,
    );
    await gw.sandbox(order.id, 'paid');
    const callback = await callbackOf(order.id);
    assert.equal(callback.orderActualAmount, '20.00');
    assert.equal(callback.markStatus, 0);
    assert.deepEqual(await gw.auditBreaches(), []);
  });

  it('USDT is unavailable without a BRL/USDT rate; with one, the payer gets a derived TRON address and the crypto payment callback', async () => {
    const created = await open({});
    const path = pathOf(created.body.data as string);
    assert.match((await page(path, { 'accept-language': 'en' })).text, /unavailable right now/);
    const refused = await submit(`${path}?lang=en`, { amount: '100.00', method: 'USDT_TRC20' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /This method is unavailable right now/);
    assert.equal(
      (await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.5', sell: '5.6', spreadBps: 0 })).status,
      200,
    );
    const chosen = await submit(path, { amount: '100.00', method: 'USDT_TRC20' });
    assert.equal(chosen.status, 303, chosen.text.slice(0, 300));
    const order = await gw.gateway.orders.findByCashier((chosen.location ?? '').split('/').pop() ?? '');
    assert.ok(order !== undefined);
    const details = JSON.parse(order.details) as Record<string, string>;
    assert.ok(isTronAddress(details.addressTo ?? ''), details.addressTo);
    // 100.00 / 5.5 = 18.181818…: the payer sends the fewest units worth at least the price.
    assert.equal(details.tokenUnits, '18181819');
    assert.equal(order.pay_type, 112);
    const shown = await page(`/cashier/${order.cashier_id ?? ''}`, { 'accept-language': 'en' });
    assert.ok(shown.text.includes('18.181819'));
    assert.ok(shown.text.includes(details.addressTo ?? ''));
    assert.equal((await gw.sandbox(order.id, 'paid')).status, 200);
    const callback = await callbackOf(order.id);
    assert.equal(callback.payType, 112);
    assert.equal(callback.payParam, details.addressTo);
    assert.equal(callback.orderActualAmount, '100.00');
    const entries = await gw.gateway.store.read
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_journals as j', 'j.id', 'e.journal_id')
      .select(['e.account_code'])
      .where('j.order_id', '=', order.id)
      .execute();
    assert.ok(
      entries.some((e) => e.account_code.endsWith('token_clearing')),
      JSON.stringify(entries),
    );
    assert.deepEqual(await gw.auditBreaches(), []);
  });

  it('USDT amounts are compared in token units: a unit over is refused under 2 and marked under 1; dust is refused, never a 500', async () => {
    assert.equal(
      (await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.5', sell: '5.6', spreadBps: 0 })).status,
      200,
    );
    const strict = await pay({ dynamicAmountNotify: 2 }, { amount: '100.00', method: 'USDT_TRC20' });
    // 18.181820 instead of 18.181819: worth the same R$ 100.00 once rounded down, but not what was asked.
    assert.equal((await gw.sandbox(strict.order.id, 'paid', { amount: '18.18182' })).status, 200);
    assert.equal((await gw.gateway.orders.find(strict.order.id))?.status, 1, 'refused: still pending');
    const dust = await pay({}, { amount: '100.00', method: 'USDT_TRC20' });
    assert.equal((await gw.sandbox(dust.order.id, 'paid', { amount: '0.000001' })).status, 200);
    assert.deepEqual(
      (await gw.gateway.orders.history(dust.order.id)).map((e) => e.event),
      ['created', 'payment_refused'],
    );
    const loose = await pay({}, { amount: '100.00', method: 'USDT_TRC20' });
    await gw.sandbox(loose.order.id, 'paid', { amount: '18.18182' });
    const callback = await callbackOf(loose.order.id);
    assert.equal(callback.orderActualAmount, '100.00');
    assert.equal(callback.markStatus, 1, 'marked: the units differ');
    assert.deepEqual(await gw.auditBreaches(), []);
  });

  it('a paid Pix made on an aggregate cashier has a voucher, and the query says where the document came from', async () => {
    const { order } = await pay(
      { userIdentity: `payer-${nextId()}` },
      { amount: '12.34', method: 'PIX', document: '52998224725' },
    );
    await gw.sandbox(order.id, 'paid');
    const voucher = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/bra/query/voucher', body: { orderId: order.id } },
      gw.clock.now(),
    );
    assert.equal(voucher.body.code, '200', voucher.body.msgEn);
    const queried = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: '/api/v3/bra/query/collectingOrder',
        body: { externalOrderId: order.external_order_id, orderId: order.id },
      },
      gw.clock.now(),
    );
    assert.equal(queried.body.data[0].payerDocumentSource, 'entered');
  });

  it('the pages take forms only: JSON is refused without a 500, and an expired boleto is not handed out', async () => {
    const created = await open({});
    const path = pathOf(created.body.data as string);
    const json = await fetch(new URL(path, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount":5,"method":["PIX"]}',
    });
    assert.ok(json.status >= 400 && json.status < 500, `status ${json.status}`);
    const { order, cashierPath } = await pay({}, { amount: '30.00', method: 'BOLETO' });
    const pdf = await fetch(new URL(`${cashierPath}/boleto.pdf`, gw.url), { redirect: 'manual' });
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get('content-type'), 'application/pdf');
    await gw.sandbox(order.id, 'cancelled');
    assert.equal((await fetch(new URL(`${cashierPath}/boleto.pdf`, gw.url), { redirect: 'manual' })).status, 303);
  });

  it('the methods follow the merchant settings', async () => {
    const other = await gw.merchantWithKey();
    const set = await gw.admin('PUT', `/admin/v1/merchants/${other.merchantId}/cashier`, { methods: ['BOLETO'] });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.cashierMethods, ['BOLETO']);
    assert.equal((await gw.admin('PUT', `/admin/v1/merchants/${other.merchantId}/cashier`, {})).status, 400);
    const created = await open({}, other.credentials);
    const path = pathOf(created.body.data as string);
    const shown = await page(path, { 'accept-language': 'en' });
    assert.ok(shown.text.includes('value="BOLETO"'));
    assert.ok(!shown.text.includes('value="PIX"'));
    assert.equal((await submit(path, { amount: '5', method: 'PIX' })).status, 400);
  });

  it('an unknown cashier is a 404 page; an expired one a 410 page', async () => {
    assert.equal((await page('/checkout/chk_00000000000000000000000000000000')).status, 404);
    const created = await open({});
    const path = pathOf(created.body.data as string);
    gw.clock.advance(31 * 60_000);
    const expired = await page(path, { 'accept-language': 'en' });
    assert.equal(expired.status, 410);
    assert.match(expired.text, /This payment has expired/);
    assert.equal((await submit(path, { amount: '5', method: 'PIX' })).status, 410);
  });
});
