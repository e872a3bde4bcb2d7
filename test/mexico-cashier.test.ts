import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mexicoCityEndOfDay, OXXO_CONFIRMATION_WINDOW_MS } from '../src/mexico/collections.js';
import { isValidClabe } from '../src/rails/stp/clabe.js';
import { databaseLabel } from './support/database.js';
import { mexicanMerchant, openAndChoose, submitForm } from './support/checkout-form.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';

let seq = 0;
const nextId = () => `mx-${Date.now()}-${++seq}`;

/** Mexico's aggregate cashier in the sandbox (the default rails), over real HTTP. */
describe(`Mexican aggregate cashier, sandbox (${databaseLabel})`, () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    merchant = await mexicanMerchant(gw, receiver.url);
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  const open = async (body: Record<string, unknown> = {}, credentials = merchant.credentials) =>
    signedCall(
      gw.url,
      credentials,
      { path: '/api/v3/polymerize/createCollectingOrder', body: { externalOrderId: nextId(), ...body } },
      gw.clock.now(),
    );
  const pathOf = (address: string) => new URL(address).pathname;
  const page = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(new URL(path, gw.url), { headers, redirect: 'manual' });
    return { status: response.status, text: await response.text(), location: response.headers.get('location') };
  };
  const submit = (path: string, form: Record<string, string>) => submitForm(gw, path, form);
  const pay = (create: Record<string, unknown>, form: Record<string, string>) =>
    openAndChoose(gw, merchant.credentials, form, create);
  const callbackOf = (orderId: string) =>
    eventually(
      async () =>
        receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>).find((b) => b.orderId === orderId),
      10_000,
      `the callback of ${orderId}`,
    );
  const details = (order: { details: string }) => JSON.parse(order.details) as Record<string, any>;

  it('a merchant chooses MXN for its cashiers; methods of another currency are refused naming them; others stay BRL', async () => {
    const shown = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`);
    assert.equal(shown.body.cashierCurrency, 'MXN');
    assert.deepEqual(shown.body.cashierMethods, ['SPEI', 'OXXO', 'USDT_TRC20']);
    const wrong = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/cashier`, { methods: ['PIX'] });
    assert.equal(wrong.status, 400);
    assert.match(JSON.stringify(wrong.body), /PIX.*MXN/);
    const other = await gw.merchantWithKey();
    const plain = await gw.admin('GET', `/admin/v1/merchants/${other.merchantId}`);
    assert.equal(plain.body.cashierCurrency, 'BRL');
    assert.deepEqual(plain.body.cashierMethods, ['PIX', 'PIX_DYNAMIC', 'BOLETO', 'USDT_TRC20']);
    const bad = await gw.admin('PUT', `/admin/v1/merchants/${other.merchantId}/cashier`, { currency: 'USD' });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /currency/);
  });

  it('the form is in Mexican Spanish, asks pesos and no CPF, and offers SPEI and OXXO', async () => {
    const created = await open();
    const form = await page(pathOf(created.body.data as string));
    assert.equal(form.status, 200);
    assert.match(form.text, /<html lang="es-MX">/);
    assert.ok(form.text.includes('value="SPEI"') && form.text.includes('value="OXXO"'));
    assert.ok(!form.text.includes('name="document"'), 'no document asked');
    const refused = await submit(pathOf(created.body.data as string), { amount: '0.50', method: 'SPEI' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /\$1\.00 MXN/);
  });

  it('SPEI: a CLABE of its own; paid through the sandbox, credited in pesos with the SPEI fee; callback MXN, payType 102; balance 16 shows MXN', async () => {
    const fee = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/cashier.collection.SPEI`, {
      percentBps: 100,
      fixed: '2.00',
      minimum: '0',
      reason: 'SPEI pricing',
    });
    assert.equal(fee.status, 200, JSON.stringify(fee.body));
    const { order, cashierPath } = await pay({}, { amount: '1,234.50', method: 'SPEI' });
    const other = await pay({}, { amount: '10', method: 'SPEI' });
    assert.equal(order.currency, 'MXN');
    assert.equal(order.channel_type, 'SPEI');
    assert.equal(order.pay_type, 102);
    assert.equal(order.amount, 123450);
    const clabe = String(details(order).clabe);
    assert.ok(isValidClabe(clabe) && clabe.startsWith('6461800000'), clabe);
    assert.notEqual(details(other.order).clabe, clabe, 'each order has its own CLABE');
    const shown = await page(cashierPath);
    assert.equal(shown.status, 200);
    assert.ok(shown.text.includes(clabe), 'the CLABE is shown');
    assert.ok(shown.text.includes('$1,234.50 MXN'));
    assert.equal((await gw.sandbox(order.id, 'paid')).status, 200);
    const callback = await callbackOf(order.id);
    assert.equal(callback.currencyType, 'MXN');
    assert.equal(callback.payType, 102);
    assert.equal(callback.orderActualAmount, '1234.50');
    // 1% of 1,234.50 (12.35 rounded) + 2.00.
    assert.equal(callback.orderFee, '14.35');
    const paid = await gw.gateway.orders.find(order.id);
    assert.equal(details(paid ?? { details: '{}' }).payerBank, 'BBVA MEXICO');
    const balance = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/bra/query/balance', method: 'GET' },
      gw.clock.now(),
    );
    assert.equal(balance.body.code, '200', balance.body.msgEn);
    const mxn = (balance.body.data as Record<string, string>[]).find((b) => b.currencyType === 'MXN');
    assert.ok(mxn !== undefined, JSON.stringify(balance.body.data));
    assert.equal(mxn.accountWaitSettledAmount, '1220.15');
    // A Brazilian merchant's answer is as before: BRL only.
    const plain = await gw.merchantWithKey();
    const brl = await signedCall(
      gw.url,
      plain.credentials,
      { path: '/api/v3/bra/query/balance', method: 'GET' },
      gw.clock.now(),
    );
    assert.deepEqual(
      (brl.body.data as Record<string, string>[]).map((b) => b.currencyType),
      ['BRL'],
    );
  });

  it('SPEI under dynamicAmountNotify 2: another amount is refused and nothing is credited; 1 takes any amount, marked', async () => {
    const strict = await pay({ dynamicAmountNotify: 2 }, { amount: '500', method: 'SPEI' });
    assert.equal((await gw.sandbox(strict.order.id, 'paid', { amount: '499.99' })).status, 200);
    const still = await gw.gateway.orders.find(strict.order.id);
    assert.ok(still !== undefined);
    assert.equal(still.status, 1, 'still waiting');
    assert.equal(details(still).refusedPayment?.unit, 'MXN');
    const loose = await pay({}, { amount: '500', method: 'SPEI' });
    assert.equal((await gw.sandbox(loose.order.id, 'paid', { amount: '650.00' })).status, 200);
    const callback = await callbackOf(loose.order.id);
    assert.equal(callback.orderActualAmount, '650.00');
    assert.equal(callback.markStatus, 1);
  });

  it('OXXO: MXN 10.00 to 10,000.00 with name and email; the voucher expires at 23:59:59 in Mexico City; paid in the sandbox, payType 110', async () => {
    const created = await open();
    const path = pathOf(created.body.data as string);
    for (const amount of ['9.99', '10,000.01']) {
      const refused = await submit(`${path}?lang=en`, {
        amount,
        method: 'OXXO',
        name: 'Ana López',
        email: 'ana@example.mx',
      });
      assert.equal(refused.status, 400, amount);
      assert.match(refused.text, /\$10\.00.*\$10,000\.00|MX\$10\.00|10\.00/);
    }
    const noContact = await submit(path, { amount: '100', method: 'OXXO' });
    assert.equal(noContact.status, 400);
    assert.match(noContact.text, /aria-invalid="true"/);
    const before = gw.clock.now();
    const { order, cashierPath } = await pay(
      {},
      { amount: '10,000.00', method: 'OXXO', name: 'Ana López', email: 'ana@example.mx' },
    );
    assert.equal(order.pay_type, 110);
    assert.equal(order.amount, 1_000_000);
    const d = details(order);
    assert.equal(d.oxxoName, 'Ana López');
    assert.equal(d.oxxoExpiresAt, mexicoCityEndOfDay(before, 3));
    assert.equal(order.cashier_expire_at, d.oxxoExpiresAt + OXXO_CONFIRMATION_WINDOW_MS);
    const issued = await eventually(async () => {
      const found = await gw.gateway.orders.find(order.id);
      return details(found ?? { details: '{}' }).oxxoNumber as string | undefined;
    }, 5000);
    assert.match(issued, /^\d{20}$/);
    const shown = await page(cashierPath, { 'accept-language': 'es-MX' });
    assert.ok(shown.text.includes(issued), 'the voucher number is shown');
    assert.equal((await gw.sandbox(order.id, 'paid')).status, 200);
    const callback = await callbackOf(order.id);
    assert.equal(callback.payType, 110);
    assert.equal(callback.currencyType, 'MXN');
    assert.equal(callback.orderActualAmount, '10000.00');
  });

  it('pesos collected settle after the merchant’s delay and fund an MXN → USDT exchange order', async () => {
    const funded = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${funded.merchantId}/cashier`, { currency: 'MXN' });
    await gw.admin('PUT', `/admin/v1/merchants/${funded.merchantId}/settlement`, { delayMs: 60_000 });
    const rate = await gw.admin('PUT', '/admin/v1/rates/MXN/USDT', { buy: '18.50', sell: '19.00', spreadBps: 0 });
    assert.equal(rate.status, 200, JSON.stringify(rate.body));
    const created = await open({}, funded.credentials);
    const chosen = await submit(pathOf(created.body.data as string), { amount: '950.00', method: 'SPEI' });
    const order = await gw.gateway.orders.findByCashier(/^\/cashier\/([^?]+)/.exec(chosen.location ?? '')?.[1] ?? '');
    assert.ok(order !== undefined);
    assert.equal((await gw.sandbox(order.id, 'paid')).status, 200);
    gw.clock.advance(60_001);
    assert.ok((await gw.gateway.ledger.settleDue()) >= 1);
    const exchange = await signedCall(
      gw.url,
      funded.credentials,
      {
        path: '/api/v3/exchange/fiat/to/wallet',
        body: {
          addressTo: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
          chainType: 'TRON',
          tokenType: 'USDT',
          currencyAmount: '900',
          currencyType: 'MXN',
          externalOrderId: nextId(),
        },
      },
      gw.clock.now(),
    );
    assert.equal(exchange.body.code, '200', exchange.body.msgEn);
    const balance = await signedCall(
      gw.url,
      funded.credentials,
      { path: '/api/v3/bra/query/balance', method: 'GET' },
      gw.clock.now(),
    );
    const mxn = (balance.body.data as Record<string, string>[]).find((b) => b.currencyType === 'MXN');
    assert.deepEqual([mxn?.accountBalance, mxn?.accountFreezeAmount], ['50.00', '900.00']);
  });

  it('an expired SPEI order ends with its callback, and the Brazilian cashier of another merchant is unchanged', async () => {
    const { order } = await pay({}, { amount: '75', method: 'SPEI' });
    assert.equal((await gw.sandbox(order.id, 'expired')).status, 200);
    const callback = await callbackOf(order.id);
    assert.equal(callback.currencyType, 'MXN');
    const brazilian = await gw.merchantWithKey();
    const created = await open({}, brazilian.credentials);
    const form = await page(pathOf(created.body.data as string), { 'accept-language': 'pt-BR' });
    assert.ok(form.text.includes('value="PIX"') && !form.text.includes('value="SPEI"'));
  });
});
