import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyCallback } from '@cashgate/sdk';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import type { RailOrder } from '../src/rails/rails.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/ken/createCollectingOrder';
const TRANSFER = '/api/v3/ken/createTransferOrder';

let seq = 0;
const collection = (overrides: Record<string, unknown> = {}) => ({
  amount: '1500',
  channelType: 'CHARGE',
  externalOrderId: `ken-col-${Date.now()}-${++seq}`,
  phone: '254712345678',
  checkingPhone: '254712345123',
  remark: 'Order <b>42</b>',
  ...overrides,
});
const transfer = (overrides: Record<string, unknown> = {}) => ({
  channelType: 'BANK',
  currencyAmount: '700',
  externalOrderId: `ken-trf-${Date.now()}-${++seq}`,
  phone: '254110000001',
  ...overrides,
});

/** Checks each member's JSON type against the spec's table ('string?' = string or null). */
function assertTypes(record: Record<string, unknown>, types: Record<string, string>): void {
  assert.deepEqual(Object.keys(record).sort(), Object.keys(types).sort(), 'exactly the spec members');
  for (const [field, type] of Object.entries(types)) {
    const value = record[field];
    const nullable = type.endsWith('?');
    const base = type.replace('?', '');
    if (nullable && value === null) continue;
    if (base === 'int64')
      assert.ok(Number.isSafeInteger(value), `${field} is an integer, got ${JSON.stringify(value)}`);
    else assert.equal(typeof value, base, `${field} is a ${base}, got ${JSON.stringify(value)}`);
  }
}

const RECORD_TYPES = {
  orderId: 'string',
  cashierId: 'string',
  orderType: 'int64',
  orderResourceType: 'int64',
  userId: 'string',
  orderStatus: 'int64',
  orderTime: 'int64',
  channelOrderId: 'string',
  externalOrderId: 'string',
  orderAmount: 'string',
  orderActualAmount: 'string?',
  orderEntryAmount: 'string',
  orderFee: 'string',
  orderPayTime: 'int64?',
  orderCompleteTime: 'int64?',
  currencyType: 'string',
  payType: 'int64',
  tradeNote: 'string',
  notifyUrl: 'string',
  markStatus: 'int64',
  errorMsg: 'string?',
  errorMsgEn: 'string?',
  accountType: 'string',
  accountName: 'string',
  accountNo: 'string',
  orderTypeCode: 'string',
  orderResourceTypeCode: 'string',
  orderStatusCode: 'string',
  payTypeCode: 'string',
};

describe(`Kenya collections and transfers (${databaseLabel})`, () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown, credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body }, gw.clock.now());
  const sandbox = (orderId: string, event: string, extra: Record<string, unknown> = {}) =>
    gw.sandbox(orderId, event, extra);
  const orderCount = async () =>
    Number(
      (
        await gw.gateway.store.read
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  before(async () => {
    gw = await startTestGateway({
      env: {
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
        CALLBACK_POLL_INTERVAL_MS: '50',
        PUBLIC_BASE_URL: 'https://pay.example.com',
      },
    });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/ken.collection.CHARGE`, {
      reason: 'test fee',
      percentBps: 200,
    });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/ken.transfer.BANK`, {
      reason: 'test fee',
      percentBps: 0,
      fixed: '30',
    });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/settlement`, { delayMs: 0 });
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'the ledger audits clean after the suite');
  });

  it('creates a collection with the spec result, a cashier link and its expiry', async () => {
    const body = collection();
    const before = gw.clock.now();
    const response = await call(COLLECT, body);
    assert.equal(response.body.code, '200', response.body.msgEn);
    const data = response.body.data;
    assertTypes(data, {
      cashierUrl: 'string',
      cashierExpireTime: 'int64',
      currency: 'string',
      cashierCurrencyAmount: 'string',
      returnUrl: 'string',
      currencyOrderVo: 'object',
    });
    assertTypes(data.currencyOrderVo, { externalOrderId: 'string', tradeNote: 'string', orderId: 'string' });
    assert.match(data.cashierUrl, /^https:\/\/pay\.example\.com\/cashier\/csh_[0-9a-f]{32}$/);
    assert.equal(data.currency, 'KES');
    assert.equal(data.cashierCurrencyAmount, '1500');
    assert.ok(data.cashierExpireTime >= before + 1_800_000 && data.cashierExpireTime <= gw.clock.now() + 1_800_000);
    assert.equal(data.currencyOrderVo.externalOrderId, body.externalOrderId);
    assert.equal(data.currencyOrderVo.tradeNote, 'Order <b>42</b>');
  });

  for (const [field, value, rule] of [
    ['amount', '10.5', /whole number/],
    ['amount', '9007199254740992', /to 9007199254740991/],
    ['amount', '0', /from 1 to/],
    ['amount', 1e21, /amount/],
    ['amount', true, /amount/],
    ['phone', '0712345678', /Kenyan mobile/],
    ['phone', '+254712345678', /Kenyan mobile/],
    ['checkingPhone', '254812345678', /Kenyan mobile/],
    ['channelType', 'CARD', /BANK, CHARGE/],
    ['externalOrderId', 'x'.repeat(65), /64/],
    ['remark', 'r'.repeat(256), /255/],
    ['notifyUrl', 'ftp://x', /URL/],
  ] as const) {
    it(`refuses a collection whose ${field} is ${JSON.stringify(value).slice(0, 20)}, writing nothing`, async () => {
      const count = await orderCount();
      const response = await call(COLLECT, collection({ [field]: value }));
      assert.equal(response.status, 400);
      assert.equal(response.body.code, '300');
      assert.match(response.body.msgEn, new RegExp(field));
      assert.match(response.body.msgEn, rule);
      assert.equal(await orderCount(), count);
    });
  }

  it('refuses a missing field and an unknown one by name', async () => {
    const noPhone: Record<string, unknown> = collection();
    delete noPhone.phone;
    assert.match((await call(COLLECT, noPhone)).body.msgEn, /phone/);
    assert.match((await call(COLLECT, collection({ amout: '1' }))).body.msgEn, /amout/);
  });

  it('returns the first result to an identical repeat and refuses a changed one', async () => {
    const body = collection();
    const first = await call(COLLECT, body);
    const again = await call(COLLECT, body);
    assert.deepEqual(again.body.data, first.body.data);
    const changed = await call(COLLECT, { ...body, amount: '1501' });
    assert.equal(changed.body.code, '300');
    assert.match(changed.body.msgEn, /externalOrderId .* already used with a different request/);
  });

  it('makes one order of 20 identical creates sent at once', async () => {
    const body = collection();
    const count = await orderCount();
    const results = await Promise.all(Array.from({ length: 20 }, () => call(COLLECT, body)));
    assert.ok(
      results.every((r) => r.body.code === '200'),
      JSON.stringify(results.map((r) => r.body.msgEn)),
    );
    assert.equal(new Set(results.map((r) => r.body.data.currencyOrderVo.orderId)).size, 1);
    assert.equal(await orderCount(), count + 1);
  });

  it('keeps an order its rail did not take, and hands it over again from its durable hand-over, without a repeat', async () => {
    const rail = gw.gateway.rails.mpesaStk;
    const start = rail.start;
    const seen: RailOrder[] = [];
    rail.start = (order) => {
      seen.push(order);
      return Promise.reject(new Error('Daraja unreachable'));
    };
    const body = collection();
    let orderId: string;
    const query = async () =>
      (await call('/api/v3/ken/query/collectingOrder', { externalOrderId: body.externalOrderId, orderId })).body
        .data[0];
    try {
      const created = await call(COLLECT, body);
      assert.equal(created.body.code, '200', 'the order exists: the merchant is not told to create it again');
      orderId = created.body.data.currencyOrderVo.orderId as string;
      assert.equal((await query()).channelOrderId, '', 'no rail reference yet');
      assert.equal((await call(COLLECT, body)).body.code, '200');
      assert.equal(seen.length, 1, 'a repeat does not hand the order over: its durable hand-over does');
    } finally {
      rail.start = (order) => {
        seen.push(order);
        return start(order);
      };
    }
    try {
      gw.clock.advance(1_001); // the first retry is due a second after the failure
      const taken = await eventually(async () => {
        const record = await query();
        return record.channelOrderId === '' ? undefined : record;
      });
      assert.match(taken.channelOrderId, /^ws_CO_/, 'the worker handed it to the rail');
      assert.equal(seen.length, 2);
      assert.deepEqual(
        seen.map((o) => [o.idempotencyKey, o.earlierAttempts]),
        [
          [`${orderId}.start`, 0],
          [`${orderId}.start`, 1],
        ],
        'both attempts carry the key derived from the order; the second knows an earlier one may have reached the rail',
      );
    } finally {
      rail.start = start;
    }
  });

  it('never starts a payout twice when a repeat arrives while the rail is still answering', async () => {
    const rail = gw.gateway.rails.mpesaB2c;
    const start = rail.start;
    let starts = 0;
    // A provider that is slow to answer: called after the commit, never inside the create's unit.
    rail.local = false;
    rail.start = async (order) => {
      starts += 1;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return start(order);
    };
    try {
      const payer = await gw.merchantWithKey();
      await gw.admin('POST', `/admin/v1/merchants/${payer.merchantId}/balance-adjustments`, {
        currency: 'KES',
        amount: '200',
        reason: 'slow rail',
      });
      const body = transfer({ currencyAmount: '100' });
      const first = call(TRANSFER, body, payer.credentials);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [a, b] = await Promise.all([first, call(TRANSFER, body, payer.credentials)]);
      assert.equal(a.body.data.orderId, b.body.data.orderId);
      assert.equal(starts, 1, 'one payout on the rail');
    } finally {
      rail.start = start;
      rail.local = true;
    }
  });

  it('makes one order of identical creates racing on two nodes of one database', async () => {
    const second = await startTestGateway({ sameDatabaseAs: gw, env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
    const racer = await gw.merchantWithKey();
    second.clock.advance(gw.clock.now() - second.clock.now()); // both nodes past the key's activation
    try {
      const body = transfer({ currencyAmount: '100' });
      await gw.admin('POST', `/admin/v1/merchants/${racer.merchantId}/balance-adjustments`, {
        currency: 'KES',
        amount: '200',
        reason: 'race',
      });
      const before = await orderCount();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          signedCall(i % 2 === 0 ? gw.url : second.url, racer.credentials, { path: TRANSFER, body }, gw.clock.now()),
        ),
      );
      assert.ok(
        results.every((r) => r.body.code === '200'),
        JSON.stringify(results.map((r) => r.body.msgEn)),
      );
      assert.equal(new Set(results.map((r) => r.body.data.orderId)).size, 1, 'one order, whichever node answered');
      assert.equal(await orderCount(), before + 1);
      const balance = await signedCall(
        gw.url,
        racer.credentials,
        { method: 'GET', path: '/api/v3/ken/query/balance' },
        gw.clock.now(),
      );
      assert.deepEqual(
        [balance.body.data[0].accountBalance, balance.body.data[0].accountFreezeAmount],
        ['100', '100'],
        'frozen once',
      );
    } finally {
      await second.close();
    }
  });

  it('pays a collection: status 2, the payment callback, fee and balance from the ledger', async () => {
    const body = collection({ amount: 1000, notifyUrl: `${receiver.url}/own` });
    const created = await call(COLLECT, body);
    const orderId = created.body.data.currencyOrderVo.orderId as string;
    const waiting = receiver.received.length;
    const paid = await sandbox(orderId, 'paid', { amount: '990' });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    assert.deepEqual(paid.body, { orderId, orderStatus: 2, orderStatusText: 'PAYMENT_SUCCESS', allowedEvents: [] });

    const [got] = (await receiver.waitFor(waiting + 1)).slice(waiting);
    assert.ok(got);
    assert.equal(got.path, '/own', "the order's notifyUrl wins");
    const payload = JSON.parse(got.body);
    assertTypes(payload, {
      currencyType: 'string',
      orderActualAmount: 'string',
      orderId: 'string',
      orderFee: 'string',
      orderStatus: 'string',
      payParam: 'string',
      externalOrderId: 'string',
      tradeNote: 'string',
      payTypeName: 'string',
      orderAmount: 'string',
      orderTime: 'int64',
      payType: 'int64',
      orderStatusCode: 'int64',
      markStatus: 'int64',
      orderPayTime: 'int64',
      errorMsg: 'string?',
      errorMsgEn: 'string?',
    });
    assert.equal(payload.orderActualAmount, '990');
    assert.equal(payload.orderAmount, '1000');
    assert.equal(payload.orderFee, '20', '2 % of 990 rounded half up');
    assert.equal(payload.orderStatusCode, 2);
    assert.equal(payload.payType, 107);
    assert.equal(payload.payTypeName, 'CHARGE');
    assert.ok(verifyCallback(merchant.credentials.secretKey, payload, got.headers as never));

    const query = await call('/api/v3/ken/query/collectingOrder', { externalOrderId: body.externalOrderId, orderId });
    assert.equal(query.body.code, '200');
    const [record] = query.body.data;
    assertTypes(record, RECORD_TYPES);
    assert.deepEqual(
      [
        record.orderStatus,
        record.orderStatusCode,
        record.orderActualAmount,
        record.orderFee,
        record.orderEntryAmount,
        record.accountNo,
        record.userId,
      ],
      [2, 'PAYMENT_SUCCESS', '990', '20', '970', '254712345678', merchant.merchantId],
    );
    assert.match(record.channelOrderId, /^ws_CO_\d{14}[0-9a-f]{12}$/, "the M-Pesa rail's CheckoutRequestID");
    const late = await sandbox(orderId, 'paid');
    assert.equal(late.status, 409);
    assert.deepEqual(late.body.error.allowedEvents, [], 'a repeated rail report never moves a final order');
    await gw.gateway.ledger.settleDue();
    const balance = await signedCall(
      gw.url,
      merchant.credentials,
      { method: 'GET', path: '/api/v3/ken/query/balance' },
      gw.clock.now(),
    );
    assert.deepEqual(
      [balance.body.data[0].accountBalance, balance.body.data[0].accountWaitSettledAmount],
      ['970', '0'],
      'net of fee, settled',
    );
  });

  it('charges a collection the fee in force when it was created', async () => {
    const body = collection({ amount: '1000' });
    const orderId = (await call(COLLECT, body)).body.data.currencyOrderVo.orderId as string;
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/ken.collection.CHARGE`, {
      reason: 'test fee',
      percentBps: 900,
    });
    try {
      await sandbox(orderId, 'paid');
      const [record] = (
        await call('/api/v3/ken/query/collectingOrder', { externalOrderId: body.externalOrderId, orderId })
      ).body.data;
      assert.equal(record.orderFee, '20', '2 % (the schedule at creation), not 9 %');
    } finally {
      await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/ken.collection.CHARGE`, {
        reason: 'test fee',
        percentBps: 200,
      });
    }
  });

  it('expires an unpaid collection: status 3, its reason, and a callback', async () => {
    const body = collection();
    const orderId = (await call(COLLECT, body)).body.data.currencyOrderVo.orderId as string;
    gw.clock.advance(1_800_001);
    assert.ok((await gw.gateway.orders.expireDue()) >= 1);
    const [record] = (
      await call('/api/v3/ken/query/collectingOrder', { externalOrderId: body.externalOrderId, orderId })
    ).body.data;
    assert.equal(record.orderStatus, 3);
    assert.equal(record.orderStatusCode, 'EXPIRED');
    assert.match(record.errorMsgEn, /did not pay/);
    const h = await eventually(async () => {
      const found = await gw.admin('GET', `/admin/v1/orders/${orderId}/callbacks`);
      return found.body.events.length > 0 ? found.body : undefined;
    });
    assert.equal(h.events[0].payload.orderStatusCode, 3);
    assert.equal((await sandbox(orderId, 'paid')).status, 409, 'a payment after expiry is refused');
    const late = (await call(COLLECT, collection())).body.data.currencyOrderVo.orderId as string;
    gw.clock.advance(1_800_001);
    const refused = await sandbox(late, 'paid');
    assert.equal(
      refused.status,
      409,
      "a payment once the cashier's time is up is refused, before the expiry worker runs",
    );
    assert.deepEqual(refused.body.error.allowedEvents, ['expired']);
    await gw.gateway.orders.expireDue();
  });

  it('finds an order only by both ids, and only for its own merchant', async () => {
    const body = collection();
    const orderId = (await call(COLLECT, body)).body.data.currencyOrderVo.orderId as string;
    for (const ids of [
      { externalOrderId: body.externalOrderId, orderId: 'KC000' },
      { externalOrderId: 'other', orderId },
    ]) {
      const response = await call('/api/v3/ken/query/collectingOrder', ids);
      assert.equal(response.body.code, '300');
      assert.match(response.body.msgEn, /order not found/);
    }
    const stranger = await gw.merchantWithKey();
    const foreign = await call(
      '/api/v3/ken/query/collectingOrder',
      { externalOrderId: body.externalOrderId, orderId },
      stranger.credentials,
    );
    assert.match(foreign.body.msgEn, /order not found/);
    const wrongKind = await call('/api/v3/ken/query/transferOrder', { externalOrderId: body.externalOrderId, orderId });
    assert.match(wrongKind.body.msgEn, /order not found/);
  });

  it('refuses a transfer beyond the balance with a 300 that says so, and writes nothing', async () => {
    const poor = await gw.merchantWithKey();
    const count = await orderCount();
    const response = await call(TRANSFER, transfer(), poor.credentials);
    assert.equal(response.body.code, '300');
    assert.match(
      response.body.msgEn,
      /insufficient balance: the transfer needs 700 KES \(amount \+ fee\) and 0 KES is available/,
    );
    assert.equal(await orderCount(), count);
  });

  it('runs a transfer 1 → 2 → 8 with frozen money, then the Kenya transfer callback', async () => {
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '5000',
      reason: 'float',
    });
    const body = transfer();
    const created = await call(TRANSFER, body);
    assert.equal(created.body.code, '200', created.body.msgEn);
    assertTypes(created.body.data, {
      orderId: 'string',
      orderStatus: 'string',
      externalOrderId: 'string',
      currencyType: 'string',
    });
    assert.equal(created.body.data.orderStatus, 'ACCEPTED');
    const orderId = created.body.data.orderId as string;
    const balance = async () =>
      (
        await signedCall(
          gw.url,
          merchant.credentials,
          { method: 'GET', path: '/api/v3/ken/query/balance' },
          gw.clock.now(),
        )
      ).body.data[0];
    assert.equal((await balance()).accountFreezeAmount, '730', 'amount + the 30 KES fee');

    assert.equal((await sandbox(orderId, 'succeeded')).status, 409, 'success only after bank processing');
    assert.equal((await sandbox(orderId, 'processing')).body.orderStatus, 2);
    const waiting = receiver.received.length;
    assert.equal((await sandbox(orderId, 'succeeded')).body.orderStatus, 8);
    assert.equal((await balance()).accountFreezeAmount, '0');

    const [got] = (await receiver.waitFor(waiting + 1)).slice(waiting);
    assert.ok(got);
    const payload = JSON.parse(got.body);
    assertTypes(payload, {
      currencyType: 'string',
      accountCode: 'string',
      accountName: 'string',
      orderId: 'string',
      accountType: 'string',
      orderFee: 'string',
      orderStatus: 'string',
      externalOrderId: 'string',
      payTypeName: 'string',
      orderAmount: 'string',
      orderPayTime: 'int64',
      orderTime: 'int64',
      payType: 'int64',
      userInfoName: 'string',
      accountNo: 'string',
      orderStatusCode: 'int64',
      markStatus: 'string',
    });
    assert.deepEqual(
      [payload.orderStatusCode, payload.orderStatus, payload.orderFee, payload.accountNo],
      [8, 'SUCCESS', '30', '254110000001'],
    );

    const [record] = (await call('/api/v3/ken/query/transferOrder', { externalOrderId: body.externalOrderId, orderId }))
      .body.data;
    assertTypes(record, { ...RECORD_TYPES, orderFee: 'int64' });
    assert.equal(record.orderFee, 30);
    assert.match(record.channelOrderId, /^AG_[0-9A-F]{20}$/, "the payout rail's reference");
    assert.equal(record.orderEntryAmount, '730');
  });

  it('releases the frozen money when a transfer fails or the bank rejects it', async () => {
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '2000',
      reason: 'float',
    });
    const balance = async () =>
      (
        await signedCall(
          gw.url,
          merchant.credentials,
          { method: 'GET', path: '/api/v3/ken/query/balance' },
          gw.clock.now(),
        )
      ).body.data[0];
    const start = Number((await balance()).accountBalance);
    for (const event of ['failed', 'bank_rejected']) {
      const orderId = (await call(TRANSFER, transfer())).body.data.orderId as string;
      assert.equal(Number((await balance()).accountBalance), start - 730);
      const done = await sandbox(orderId, event);
      assert.equal(done.body.orderStatus, event === 'failed' ? 16 : 4);
      assert.equal(Number((await balance()).accountBalance), start);
    }
  });

  it('never overdraws with concurrent transfers racing for the same balance', async () => {
    const racer = await gw.merchantWithKey();
    await gw.admin('POST', `/admin/v1/merchants/${racer.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '3500',
      reason: 'float',
    });
    const results = await Promise.all(Array.from({ length: 10 }, () => call(TRANSFER, transfer(), racer.credentials)));
    assert.equal(results.filter((r) => r.body.code === '200').length, 5, '5 × 700 fit in 3500');
    assert.ok(results.filter((r) => r.body.code !== '200').every((r) => /insufficient balance/.test(r.body.msgEn)));
  });

  it('the audit finds an order whose state has no entries behind it', async () => {
    const orderId = (await call(COLLECT, collection())).body.data.currencyOrderVo.orderId as string;
    const setStatus = (status: number) =>
      gw.gateway.store.transact((tx) => tx.updateTable('orders').set({ status }).where('id', '=', orderId).execute());
    await setStatus(2); // "paid" behind the ledger's back
    try {
      assert.deepEqual(await gw.auditBreaches(), [
        `collection ${orderId} in status 2 has journals: none; expected 1 collection.paid`,
      ]);
    } finally {
      await setStatus(1);
    }
  });

  it('serves the cashier page with the masked phone, and its sandbox buttons pay', async () => {
    const created = (await call(COLLECT, collection({ remark: '<script>alert(1)</script>' }))).body.data;
    const path = new URL(created.cashierUrl).pathname;
    const page = await fetch(new URL(path, gw.url));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await page.text();
    assert.match(html, /2547•••••123/);
    assert.match(html, /KES 1,500/);
    assert.ok(
      !html.includes('<script>alert(1)</script>') && html.includes('&lt;script&gt;'),
      'merchant text stays text',
    );
    const empty = await fetch(new URL(`${path}/sandbox`, gw.url), { method: 'POST', redirect: 'manual' });
    assert.equal(empty.status, 303, 'a post without a body changes nothing and is no error');
    const pay = await fetch(new URL(`${path}/sandbox`, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=paid',
      redirect: 'manual',
    });
    assert.equal(pay.status, 303);
    const after = await fetch(new URL(path, gw.url));
    assert.equal(after.status, 200);
    assert.match(await after.text(), /Payment received/);
    assert.equal((await fetch(new URL('/cashier/csh_unknown', gw.url))).status, 404);
  });
});
