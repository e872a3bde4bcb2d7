/**
 * An operator pauses a merchant's payments (money in) or payouts (money out) and resumes them: the
 * merchant API refuses every create of the paused direction with a 300 that says so (and writes
 * nothing), everything else goes on, the pause and its resume are audited with their reason, only
 * roles with merchants.pause may do it, and the merchant console shows the pause on every page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyAuditLog } from '../src/access/audit-log.js';
import { consoleSignIn } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { adminCall } from './support/process.js';

const KEN_COLLECT = '/api/v3/ken/createCollectingOrder';
const KEN_TRANSFER = '/api/v3/ken/createTransferOrder';
const BRA_COLLECT = '/api/v3/bra/createCollectingOrder';
const BRA_PIX_TRANSFERS = ['/api/v3/bra/createTransferOrder', '/api/v3/bra/pix/createTransferOrder'];
const BRA_BANK_TRANSFER = '/api/v3/bra/bank/createTransferOrder';
const CHECKOUT = '/api/v3/polymerize/createCollectingOrder';
const FIAT_TO_TOKEN = '/api/v3/exchange/fiat/to/wallet';
const TOKEN_TO_FIAT = '/api/v3/exchange/wallet/to/fiat';

const REASON = 'chargeback ratio above 2% in February, case 4411';

let seq = 0;
const nextId = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
const kenCollection = () => ({
  amount: '1500',
  channelType: 'CHARGE',
  externalOrderId: nextId('ken-col'),
  phone: '254712345678',
  checkingPhone: '254712345123',
});
const kenTransfer = () => ({
  channelType: 'BANK',
  currencyAmount: '700',
  externalOrderId: nextId('ken-trf'),
  phone: '254110000001',
});
const braCollection = () => ({ amount: '123.45', channelType: 'PIX', externalOrderId: nextId('bra-col') });
const pixTransfer = () => ({
  currencyAmount: '50.00',
  channelType: 'PIX',
  externalOrderId: nextId('bra-pix'),
  personIdType: 'CPF',
  personId: '529.982.247-25',
  personName: 'Maria da Silva',
  accountType: 'EMAIL',
  accountId: 'maria@example.com.br',
});
const bankTransfer = () => ({
  currencyAmount: '80.10',
  channelType: 'BANK',
  externalOrderId: nextId('bra-bank'),
  personIdType: 'CNPJ',
  personId: '11.222.333/0001-81',
  personName: 'Loja Azul Ltda',
  accountType: 'CC',
  accountId: '12345-6',
  bankName: 'Banco do Brasil S.A.',
  agency: '1234',
});

describe(`pausing a merchant's payments and payouts (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const balances = async () =>
    Promise.all(
      ['ken', 'bra'].map(
        async (area) =>
          (
            await signedCall(
              gw.url,
              merchant.credentials,
              { method: 'GET', path: `/api/v3/${area}/query/balance` },
              gw.clock.now(),
            )
          ).body,
      ),
    );
  /** What a create writes for the merchant: orders and aggregate cashiers. */
  const written = async () => {
    const count = async (table: 'orders' | 'checkouts') =>
      Number(
        (
          await gw.gateway.store.read
            .selectFrom(table)
            .where('merchant_id', '=', merchant.merchantId)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return { orders: await count('orders'), checkouts: await count('checkouts') };
  };
  const pause = (what: string, reason = REASON) =>
    gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/pause`, { what, reason });
  const resume = (what: string, reason = 'case closed') =>
    gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/resume`, { what, reason });
  const assertPausedRefusal = (
    response: Awaited<ReturnType<typeof call>>,
    what: 'payments' | 'payouts',
    since: number,
    label: string,
  ) => {
    assert.equal(response.status, 400, `${label}: ${response.text}`);
    assert.equal(response.body.code, '300', label);
    assert.equal(response.body.success, false);
    assert.equal(response.body.data, null);
    assert.match(
      response.body.msgEn,
      new RegExp(
        `^${what} are paused for this merchant by the operator \\(your payment company\\) since ${new Date(since).toISOString().replace(/\./g, '\\.')}: `,
      ),
      label,
    );
    assert.match(response.body.msgEn, /Contact your payment company$/);
    assert.ok(
      !response.body.msgEn.includes('case 4411'),
      `${label}: the operator's reason is not shown to the merchant`,
    );
    assert.match(response.body.msg, /pausados pelo operador/, `${label}: msg in the merchant's language (pt-BR)`);
  };

  before(async () => {
    gw = await startTestGateway({ env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
    merchant = await gw.merchantWithKey({ language: 'pt-BR' });
    for (const [currency, amount] of [
      ['KES', '50000'],
      ['BRL', '1000.00'],
    ] as const) {
      const adjusted = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
        currency,
        amount,
        reason: 'float for the test',
      });
      assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
    }
  });
  after(() => gw.close());

  it('shows no pause on a new merchant', async () => {
    const shown = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`);
    assert.deepEqual(shown.body.paused, { payments: null, payouts: null });
    const listed = await gw.admin('GET', '/admin/v1/merchants');
    assert.deepEqual(listed.body.merchants[0].paused, { payments: null, payouts: null });
  });

  it('pauses payouts: every payout create is refused with 300 and writes nothing; payments go on', async () => {
    const before = Date.now();
    const paused = await pause('payouts');
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.merchantId, merchant.merchantId);
    assert.equal(paused.body.paused.payments, null);
    const { since } = paused.body.paused.payouts;
    assert.deepEqual(paused.body.paused.payouts, { since, reason: REASON, by: 'root-token' });
    assert.ok(since >= before - 60_000 && since <= gw.clock.now(), 'since is the time of the pause');
    // The merchant object shows it, alone and in the list.
    assert.deepEqual(
      (await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.paused,
      paused.body.paused,
    );
    const listed = (await gw.admin('GET', '/admin/v1/merchants')).body.merchants.find(
      (m: { merchantId: string }) => m.merchantId === merchant.merchantId,
    );
    assert.deepEqual(listed.paused, paused.body.paused);

    const writtenBefore = await written();
    const balancesBefore = await balances();
    const creates: [string, unknown][] = [
      [KEN_TRANSFER, kenTransfer()],
      ...BRA_PIX_TRANSFERS.map((path): [string, unknown] => [path, pixTransfer()]),
      [BRA_BANK_TRANSFER, bankTransfer()],
      // Refused before the body is read: an exchange needs no rate to be told it is paused.
      [FIAT_TO_TOKEN, { chainType: 'TRC20', currencyAmount: '100', currencyType: 'BRL', externalOrderId: nextId('x') }],
    ];
    for (const [path, body] of creates) assertPausedRefusal(await call(path, body), 'payouts', since, path);
    assert.deepEqual(await written(), writtenBefore, 'no order was written');
    assert.deepEqual(await balances(), balancesBefore, 'nothing was frozen');
    assert.equal(balancesBefore[0]?.data[0].accountFreezeAmount, '0');

    // Payments, queries and balances go on.
    const collection = kenCollection();
    const collected = await call(KEN_COLLECT, collection);
    assert.equal(collected.body.code, '200', collected.body.msgEn);
    const queried = await call('/api/v3/ken/query/collectingOrder', {
      orderId: collected.body.data.currencyOrderVo.orderId,
      externalOrderId: collection.externalOrderId,
    });
    assert.equal(queried.body.code, '200', queried.body.msgEn);
    assert.equal((await call(BRA_COLLECT, braCollection())).body.code, '200');

    // Pausing again keeps the first pause: its time, reason and operator.
    gw.clock.advance(5_000);
    const again = await pause('payouts', 'another reason');
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.paused.payouts, { since, reason: REASON, by: 'root-token' });
  });

  it('resumes payouts: creates work again; resuming what is not paused is a 409 not_paused', async () => {
    const resumed = await resume('payouts');
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.deepEqual(resumed.body.paused, { payments: null, payouts: null });
    const transfer = await call(KEN_TRANSFER, kenTransfer());
    assert.equal(transfer.body.code, '200', transfer.body.msgEn);
    assert.notEqual((await balances())[0]?.data[0].accountFreezeAmount, '0', 'the transfer froze its amount');
    const pix = await call(BRA_PIX_TRANSFERS[0] ?? '', pixTransfer());
    assert.equal(pix.body.code, '200', pix.body.msgEn);

    const twice = await resume('payouts');
    assert.equal(twice.status, 409);
    assert.equal(twice.body.error.code, 'not_paused');
    assert.equal(
      twice.body.error.message,
      `the payouts of merchant ${merchant.merchantId} are not paused: there is nothing to resume; nothing was changed`,
    );
    const never = await resume('payments');
    assert.equal(never.status, 409);
    assert.equal(never.body.error.code, 'not_paused');
  });

  it('pauses payments: collection, aggregate cashier and token sale creates are refused; payouts go on', async () => {
    const paused = await pause('payments');
    assert.equal(paused.status, 200);
    assert.equal(paused.body.paused.payouts, null);
    const { since } = paused.body.paused.payments;
    const writtenBefore = await written();
    const creates: [string, unknown][] = [
      [KEN_COLLECT, kenCollection()],
      [BRA_COLLECT, braCollection()],
      [CHECKOUT, { externalOrderId: nextId('agg') }],
      [TOKEN_TO_FIAT, { tokenAmount: '10', chainType: 'TRC20', currencyType: 'BRL', externalOrderId: nextId('y') }],
    ];
    for (const [path, body] of creates) assertPausedRefusal(await call(path, body), 'payments', since, path);
    assert.deepEqual(await written(), writtenBefore, 'no order and no aggregate cashier was written');

    const transfer = await call(KEN_TRANSFER, kenTransfer());
    assert.equal(transfer.body.code, '200', `payouts are not paused: ${transfer.body.msgEn}`);

    assert.equal((await resume('payments')).status, 200);
    const collected = await call(KEN_COLLECT, kenCollection());
    assert.equal(collected.body.code, '200', collected.body.msgEn);
    const cashier = await call(CHECKOUT, { externalOrderId: nextId('agg') });
    assert.equal(cashier.body.code, '200', cashier.body.msgEn);
    assert.equal((await written()).checkouts, writtenBefore.checkouts + 1);
  });

  it('lets support and admin pause, refuses a viewer with 403 audited as access.denied', async () => {
    const operator = async (role: 'viewer' | 'support') => {
      const email = `${role}-${Date.now()}@ops.example`;
      await gw.gateway.operators.create({ email, role, password: 'a long operator password' });
      return { email, token: (await gw.gateway.operators.createToken({ email })).token };
    };
    const viewer = await operator('viewer');
    const path = `/admin/v1/merchants/${merchant.merchantId}/pause`;
    const refused = await adminCall(gw, viewer.token, 'POST', path, { what: 'payouts', reason: 'viewer tries' });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'forbidden');
    assert.equal(refused.body.error.permission, 'merchants.pause');
    const denied = await gw.admin('GET', `/admin/v1/audit-log?action=access.denied&actor=${viewer.email}`);
    assert.equal(denied.status, 200);
    assert.deepEqual(
      denied.body.entries.map((e: any) => [e.target.id, e.changes]),
      [[`POST ${path}`, { request: { permission: 'merchants.pause' } }]],
    );
    assert.deepEqual((await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.paused, {
      payments: null,
      payouts: null,
    });

    const support = await operator('support');
    const paused = await adminCall(gw, support.token, 'POST', path, { what: 'payouts', reason: 'support pauses' });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.paused.payouts.by, support.email);
    const resumed = await adminCall(gw, support.token, 'POST', `/admin/v1/merchants/${merchant.merchantId}/resume`, {
      what: 'payouts',
      reason: 'support resumes',
    });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.paused.payouts, null);
  });

  it('keeps every pause and resume in the audit log with its reason and the change', async () => {
    const pauses = await gw.admin('GET', '/admin/v1/audit-log?action=merchant.pause');
    const resumes = await gw.admin('GET', '/admin/v1/audit-log?action=merchant.resume');
    const view = (e: any) => [e.actor.email ?? e.actor.type, e.target?.type, e.target?.id, e.reason];
    const id = merchant.merchantId;
    // Newest first.
    assert.deepEqual(pauses.body.entries.map(view), [
      [pauses.body.entries[0].actor.email, 'merchant', id, 'support pauses'],
      ['root-token', 'merchant', id, REASON],
      ['root-token', 'merchant', id, 'another reason'],
      ['root-token', 'merchant', id, REASON],
    ]);
    assert.deepEqual(resumes.body.entries.map(view), [
      [resumes.body.entries[0].actor.email, 'merchant', id, 'support resumes'],
      ['root-token', 'merchant', id, 'case closed'],
      ['root-token', 'merchant', id, 'case closed'],
    ]);
    // The first pause of payouts: the pause before and after; the repeat changed nothing (its request kept).
    const first = pauses.body.entries[3];
    assert.equal(first.changes.before.payouts, null);
    assert.deepEqual(first.changes.after.payouts.reason, REASON);
    assert.deepEqual(pauses.body.entries[2].changes, { request: { what: 'payouts', reason: 'another reason' } });
    assert.equal(resumes.body.entries[2].changes.before.payouts.reason, REASON);
    assert.equal(resumes.body.entries[2].changes.after.payouts, null);
    // The refused resumes (409) and unknown merchants (404) recorded nothing; the chain holds.
    assert.equal((await verifyAuditLog(gw.gateway.store.read)).ok, true);
  });

  it('refuses a bad body naming the field and the rule, and an unknown merchant, changing nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [{ what: 'everything', reason: 'x' }, /what must be one of payments, payouts/],
      [{ what: 'payouts' }, /reason is required/],
      [{ what: 'payouts', reason: '' }, /reason must be at least 1 character long/],
      [{ what: 'payouts', reason: 'x'.repeat(501) }, /reason must be at most 500 characters long/],
      [{ reason: 'x' }, /what is required/],
      [{ what: 'payouts', reason: 'x', extra: 1 }, /unknown field: extra/],
    ];
    for (const action of ['pause', 'resume']) {
      for (const [body, message] of cases) {
        const res = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/${action}`, body);
        assert.equal(res.status, 400, `${action} ${JSON.stringify(body)}`);
        assert.equal(res.body.error.code, 'invalid_request');
        assert.match(res.body.error.message, message);
      }
      const unknown = await gw.admin('POST', `/admin/v1/merchants/mch_nope/${action}`, {
        what: 'payouts',
        reason: 'x',
      });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'merchant_not_found');
    }
    assert.deepEqual((await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.paused, {
      payments: null,
      payouts: null,
    });
  });

  it("shows the pause on every console page, without the operator's reason, and not once resumed", async () => {
    const client = await consoleSignIn(gw, merchant.merchantId);
    const pages = ['/console', '/console/orders', '/console/keys', '/console/balances', '/console/account'];
    for (const path of pages) {
      const page = await client.get(path);
      assert.equal(page.status, 200, path);
      assert.ok(!page.text.includes('class="paused"'), `${path}: no notice while nothing is paused`);
    }
    assert.equal((await pause('payouts')).status, 200);
    assert.equal((await pause('payments')).status, 200);
    for (const path of pages) {
      const page = await client.get(path);
      assert.equal(page.status, 200, path);
      // The console user speaks the merchant's language (pt-BR).
      assert.match(
        page.text,
        /<section class="paused"[^>]*><h2 id="paused-title">Pausado pela sua empresa de pagamentos<\/h2>/,
        path,
      );
      assert.match(page.text, /Os recebimentos estão pausados desde [^<]*UTC/, path);
      assert.match(page.text, /Os pagamentos \(saídas\) estão pausados desde [^<]*UTC/, path);
      assert.match(page.text, /Fale com a sua empresa de pagamentos/, path);
      assert.ok(!page.text.includes('case 4411'), `${path}: the reason is the operator's`);
    }
    assert.equal((await resume('payments')).status, 200);
    const onlyPayouts = await client.get('/console');
    assert.ok(!onlyPayouts.text.includes('Os recebimentos estão pausados'));
    assert.match(onlyPayouts.text, /Os pagamentos \(saídas\) estão pausados/);
    // In English too.
    const english = await client.post('/console/language', { lang: 'en', back: '/console' });
    assert.equal(english.status, 303);
    const page = await client.get('/console');
    assert.match(page.text, /Paused by your payment company/);
    assert.match(page.text, /Payouts are paused since [^<]*UTC: no order that pays money out/);
    assert.match(page.text, /Contact your payment company to have them resumed/);
    assert.equal((await resume('payouts')).status, 200);
    assert.ok(!(await client.get('/console')).text.includes('class="paused"'));
  });
});
