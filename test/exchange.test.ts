import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyCallback } from '@cashgate/sdk';
import { SANDBOX_XPUBS } from '../src/rails/chain/derivation.js';
import { databaseLabel } from './support/database.js';
import {
  QUERY_TO_FIAT,
  QUERY_TO_WALLET,
  TO_FIAT,
  TO_WALLET,
  TRON_FROM,
  TRON_TO,
  tronAddressAt,
  units,
} from './support/exchange.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';

const EVM_TO = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

let seq = 0;
const ext = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

function decimal(value: bigint, places: number): string {
  const digits = value.toString().padStart(places + 1, '0');
  const fraction = digits.slice(digits.length - places).replace(/0+$/, '');
  const whole = digits.slice(0, digits.length - places);
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

describe(`Exchange: fiat ↔ USDT (${databaseLabel})`, () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const call = (path: string, body: unknown) =>
    signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
  const balance = async (currency: string) => {
    const response = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/balances`);
    return (
      response.body.balances.find((b: { currency: string }) => b.currency === currency) ?? {
        available: '0.00',
        frozen: '0.00',
      }
    );
  };
  const callbacksFor = (orderId: string) =>
    receiver.received
      .map((r) => ({ ...r, json: JSON.parse(r.body) as Record<string, unknown> }))
      .filter((r) => r.json.orderId === orderId);

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url });
    assert.equal((await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.40', sell: '5.4321' })).status, 200);
    assert.equal(
      (await gw.admin('PUT', '/admin/v1/rates/MXN/USDT', { buy: '18', sell: '18.20', spreadBps: 100 })).status,
      200,
    );
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/exchange.fiat_to_token.BRL`, {
      reason: 'test fee',
      percentBps: 100,
    });
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/exchange.token_to_fiat.BRL`, {
      reason: 'test fee',
      percentBps: 50,
    });
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '1000.00',
      reason: 'test funds',
    });
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'MXN',
      amount: '500.00',
      reason: 'test funds',
    });
  });
  after(async () => {
    const breaches = await gw.auditBreaches();
    await gw.close();
    await receiver.close();
    assert.deepEqual(breaches, [], 'cashgate audit is clean after the suite');
  });

  it('the operator sets prices and reads back the rates orders get, spread included', async () => {
    const listed = await gw.admin('GET', '/admin/v1/rates');
    const mxn = listed.body.rates.find((r: { currency: string }) => r.currency === 'MXN');
    assert.deepEqual(
      [mxn.buy, mxn.sell, mxn.spreadBps, mxn.fiatToTokenRate, mxn.tokenToFiatRate],
      ['18', '18.2', 100, '18.382', '17.82'],
    );
    assert.equal(
      (await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '6', sell: '5' })).status,
      400,
      'buy above sell is refused',
    );
    assert.equal((await gw.admin('PUT', '/admin/v1/rates/KES/USDT', { buy: '1', sell: '2' })).status, 404);
    assert.equal(
      (await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.123456789', sell: '6' })).status,
      400,
      'nine decimals are refused',
    );
  });

  it('fiat → token on TRON: quote, freeze, then 1 → 2 → 4 → 8 with its ledger entries and callback', async () => {
    const before = await balance('BRL');
    const externalOrderId = ext('f2t');
    const created = await call(TO_WALLET, {
      addressTo: TRON_TO,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount: '100',
      currencyType: 'BRL',
      externalOrderId,
      remark: 'buy 1',
    });
    assert.equal(created.body.code, '200', created.body.msgEn);
    const data = created.body.data;
    assert.deepEqual(Object.keys(data).sort(), [
      'chainType',
      'currencyAmount',
      'currencyType',
      'externalOrderId',
      'orderId',
      'symbolType',
      'tokenAmount',
      'tokenType',
    ]);
    // (100.00 − 1 % fee) ÷ 5.4321, rounded down to 6 decimals.
    const expected = (units('99.00', 2) * 10n ** 6n * 10n ** 8n) / (units('5.4321', 8) * 100n);
    assert.equal(decimal(expected, 6), '18.224995');
    assert.match(created.text, /"tokenAmount":18\.224995[,}]/, 'tokenAmount is a JSON number with six decimals');
    assert.deepEqual(
      [data.symbolType, data.currencyType, data.tokenType, data.chainType, data.currencyAmount],
      ['FIAT_TO_TOKEN', 'BRL', 'USDT', 'TRON', 100],
    );
    assert.equal(typeof data.currencyAmount, 'number');
    const orderId = data.orderId as string;

    const afterCreate = await balance('BRL');
    assert.equal(units(afterCreate.available, 2), units(before.available, 2) - 10000n, 'currencyAmount is frozen');
    assert.equal(units(afterCreate.frozen, 2), units(before.frozen, 2) + 10000n);

    const query = async () => (await call(QUERY_TO_WALLET, { externalOrderId, orderId })).body;
    let record = (await query()).data;
    assert.deepEqual(Object.keys(record).sort(), [
      'addressTo',
      'chainType',
      'currencyAmount',
      'currencyType',
      'errorMsg',
      'errorMsgEn',
      'exSymbolType',
      'exchangeRate',
      'externalOrderId',
      'orderActualAmount',
      'orderAmount',
      'orderCompleteTime',
      'orderFee',
      'orderId',
      'orderPayTime',
      'orderStatus',
      'remark',
      'tokenAmount',
      'tokenType',
      'tradeHash',
    ]);
    assert.deepEqual(
      [
        record.orderStatus,
        record.tokenAmount,
        record.currencyAmount,
        record.orderAmount,
        record.orderActualAmount,
        record.orderFee,
        record.exchangeRate,
        record.tradeHash,
        record.addressTo,
      ],
      [1, '18.224995', '100.00', '100.00', null, 1, '5.4321', '', TRON_TO],
    );
    assert.deepEqual(
      [record.orderPayTime, record.orderCompleteTime, record.errorMsg, record.errorMsgEn, record.remark],
      [null, null, null, null, 'buy 1'],
    );

    assert.equal((await gw.sandbox(orderId, 'paid')).body.orderStatus, 2);
    const taken = await balance('BRL');
    assert.equal(units(taken.frozen, 2), units(before.frozen, 2), 'the fiat left frozen');
    record = (await query()).data;
    assert.deepEqual([record.orderStatus, record.orderActualAmount], [2, 100]);
    assert.ok(Number.isSafeInteger(record.orderPayTime));

    const tradeHash = 'ab'.repeat(32);
    assert.equal(
      (await gw.sandbox(orderId, 'token_sent', { tradeHash: `0x${tradeHash}` })).status,
      400,
      'a TRON txid has no 0x',
    );
    assert.equal((await gw.sandbox(orderId, 'token_sent', { tradeHash })).body.orderStatus, 4);
    assert.equal((await query()).data.tradeHash, tradeHash);
    assert.equal(callbacksFor(orderId).length, 0, 'no callback before the order is final');

    const done = await gw.sandbox(orderId, 'token_received');
    assert.deepEqual([done.body.orderStatus, done.body.allowedEvents], [8, []]);
    record = (await query()).data;
    assert.equal(record.orderStatus, 8);
    assert.ok(record.orderCompleteTime >= record.orderPayTime);
    const [callback] = await eventually(
      async () => (callbacksFor(orderId).length > 0 ? callbacksFor(orderId) : undefined),
      10_000,
      'the exchange callback',
    );
    assert.deepEqual(callback?.json, record, 'the callback carries the order record, as the query shows it');
    assert.ok(
      verifyCallback(merchant.credentials.secretKey, callback?.json ?? {}, callback?.headers as never),
      'the callback is signed',
    );
    assert.equal((await gw.sandbox(orderId, 'failed')).status, 409, 'a final order takes no more events');
  });

  it('fiat → token on BSC gives 18 decimals exactly, and on MXN the spread raises the rate', async () => {
    const bsc = await call(TO_WALLET, {
      addressTo: EVM_TO.toLowerCase(),
      chainType: 'BSC',
      tokenType: 'USDT',
      currencyAmount: 100,
      currencyType: 'BRL',
      externalOrderId: ext('bsc'),
    });
    assert.equal(bsc.body.code, '200', bsc.body.msgEn);
    const expected = decimal((units('99.00', 2) * 10n ** 18n * 10n ** 8n) / (units('5.4321', 8) * 100n), 18);
    assert.equal(expected.split('.')[1]?.length, 18);
    assert.ok(bsc.text.includes(`"tokenAmount":${expected}`), `${bsc.text} carries ${expected} digit for digit`);
    const record = (
      await call(QUERY_TO_WALLET, { externalOrderId: bsc.body.data.externalOrderId, orderId: bsc.body.data.orderId })
    ).body.data;
    assert.equal(record.tokenAmount, expected);

    // MXN: sell 18.20 + 1 % spread = 18.382; no MXN fee is set.
    const mxn = await call(TO_WALLET, {
      addressTo: EVM_TO,
      chainType: 'ETH',
      tokenType: 'USDT',
      currencyAmount: '37',
      currencyType: 'MXN',
      externalOrderId: ext('mxn'),
    });
    assert.equal(mxn.body.code, '200', mxn.body.msgEn);
    assert.equal(
      mxn.body.data.tokenAmount,
      Number(decimal((3700n * 10n ** 6n * 10n ** 8n) / (units('18.382', 8) * 100n), 6)),
    );
    assert.equal(mxn.body.data.tokenAmount, 2.012838);
    const repeat = await call(TO_WALLET, {
      addressTo: EVM_TO,
      chainType: 'ETH',
      tokenType: 'USDT',
      currencyAmount: '37',
      currencyType: 'MXN',
      externalOrderId: mxn.body.data.externalOrderId,
    });
    assert.deepEqual(repeat.body.data, mxn.body.data, 'an identical repeat returns the first result');
    assert.equal((await balance('MXN')).frozen, '37.00', 'and freezes nothing more');

    // A repeat of a create whose answer was lost is answered as the first one was, even once the
    // rate it was made at is gone (a new create would be refused): the merchant is not told "300"
    // about an order that exists.
    const prices = await gw.gateway.store.read
      .selectFrom('exchange_rates')
      .selectAll()
      .where('currency', '=', 'MXN')
      .execute();
    await gw.gateway.store.transact((tx) => tx.deleteFrom('exchange_rates').where('currency', '=', 'MXN').execute());
    try {
      const later = await call(TO_WALLET, {
        addressTo: EVM_TO,
        chainType: 'ETH',
        tokenType: 'USDT',
        currencyAmount: '37',
        currencyType: 'MXN',
        externalOrderId: mxn.body.data.externalOrderId,
      });
      assert.equal(later.body.code, '200', later.body.msgEn);
      assert.deepEqual(later.body.data, mxn.body.data, 'the first result, though the rate is gone');
      const fresh = await call(TO_WALLET, {
        addressTo: EVM_TO,
        chainType: 'ETH',
        tokenType: 'USDT',
        currencyAmount: '37',
        currencyType: 'MXN',
        externalOrderId: ext('mxn-no-rate'),
      });
      assert.equal(fresh.body.code, '300', 'a new create without a rate is refused');
    } finally {
      await gw.gateway.store.transact((tx) => tx.insertInto('exchange_rates').values(prices).execute());
    }
  });

  it('fiat → token failures release the fiat: from 1 (frozen) and from 4 (taken), fee included', async () => {
    const start = await balance('BRL');
    const first = await call(TO_WALLET, {
      addressTo: TRON_TO,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount: '10',
      currencyType: 'BRL',
      externalOrderId: ext('fail1'),
    });
    const second = await call(TO_WALLET, {
      addressTo: TRON_TO,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount: '20',
      currencyType: 'BRL',
      externalOrderId: ext('fail4'),
    });
    assert.equal(second.body.code, '200', second.body.msgEn);
    assert.equal((await gw.sandbox(first.body.data.orderId, 'failed')).body.orderStatus, 32);
    await gw.sandbox(second.body.data.orderId, 'currency_received');
    await gw.sandbox(second.body.data.orderId, 'token_sent');
    assert.equal((await gw.sandbox(second.body.data.orderId, 'failed')).body.orderStatus, 32);
    const end = await balance('BRL');
    assert.deepEqual([end.available, end.frozen], [start.available, start.frozen], 'every cent is back');
    const record = (
      await call(QUERY_TO_WALLET, {
        externalOrderId: second.body.data.externalOrderId,
        orderId: second.body.data.orderId,
      })
    ).body.data;
    assert.equal(record.orderStatus, 32);
    assert.match(record.errorMsgEn, /token transfer failed/);
    const early = (
      await call(QUERY_TO_WALLET, {
        externalOrderId: first.body.data.externalOrderId,
        orderId: first.body.data.orderId,
      })
    ).body.data;
    assert.match(early.errorMsgEn, /failed before any token was sent/);
    assert.match(record.tradeHash, /^[0-9a-f]{64}$/, 'the sandbox made up a TRON txid');
    assert.deepEqual([record.orderFee, record.orderActualAmount], [0, null]);
    await eventually(
      async () => (callbacksFor(second.body.data.orderId).length > 0 ? true : undefined),
      10_000,
      'the failure callback',
    );
    assert.equal(callbacksFor(second.body.data.orderId)[0]?.json.orderStatus, 32);
  });

  it('fiat → token beyond the available balance is a 300 that writes nothing', async () => {
    const start = await balance('BRL');
    const response = await call(TO_WALLET, {
      addressTo: TRON_TO,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount: '100000',
      currencyType: 'BRL',
      externalOrderId: ext('short'),
    });
    assert.deepEqual([response.status, response.body.code], [400, '300']);
    assert.match(response.body.msgEn, /insufficient balance: the exchange needs 100000.00 BRL/);
    assert.deepEqual(await balance('BRL'), start);
  });

  it('token → fiat: a fresh derived deposit address, then a confirmed deposit credits the fiat net of fee', async () => {
    const start = await balance('BRL');
    const created = await call(TO_FIAT, {
      tokenAmount: '100',
      chainType: 'TRON',
      addressFrom: TRON_FROM,
      currencyType: 'BRL',
      tokenType: 'USDT',
      notifyUrl: receiver.url,
      remark: 'sell',
    });
    assert.equal(created.body.code, '200', created.body.msgEn);
    const data = created.body.data;
    assert.deepEqual(Object.keys(data).sort(), [
      'addressTo',
      'chainType',
      'currencyAmount',
      'currencyType',
      'externalOrderId',
      'orderId',
      'symbolType',
      'tokenAmount',
      'tokenType',
    ]);
    // 100 × 5.40 = 540.00; fee 0.5 % = 2.70; credit 537.30, shown whole in the create result.
    assert.deepEqual(
      [data.symbolType, data.currencyAmount, data.tokenAmount, data.externalOrderId],
      ['TOKEN_TO_FIAT', 537, 100, data.orderId],
    );
    const derived = Array.from({ length: 20 }, (_, i) => tronAddressAt(SANDBOX_XPUBS.tron, i));
    assert.ok(derived.includes(data.addressTo), `${data.addressTo} is an address of the sandbox xpub`);

    const ids = { externalOrderId: data.externalOrderId, orderId: data.orderId };
    let record = (await call(QUERY_TO_FIAT, ids)).body.data;
    assert.ok('notifyUrl' in record);
    assert.deepEqual(
      [
        record.orderStatus,
        record.tokenAmount,
        record.currencyAmount,
        record.orderAmount,
        record.orderFee,
        record.orderActualAmount,
        record.exchangeRate,
        record.addressTo,
        record.notifyUrl,
      ],
      [4, '100', '537.30', '540.00', null, null, '5.4', data.addressTo, receiver.url],
    );
    const tradeHash = 'cd'.repeat(32);
    const done = await gw.sandbox(data.orderId, 'token_received', { tradeHash });
    assert.equal(done.body.orderStatus, 8);
    record = (await call(QUERY_TO_FIAT, ids)).body.data;
    assert.deepEqual(
      [record.orderStatus, record.orderFee, record.orderActualAmount, record.tradeHash],
      [8, '2.70', 537.3, tradeHash],
    );
    const end = await balance('BRL');
    assert.equal(units(end.available, 2) - units(start.available, 2), 53730n, 'credited to available, net of fee');
    const [callback] = await eventually(
      async () => (callbacksFor(data.orderId).length > 0 ? callbacksFor(data.orderId) : undefined),
      10_000,
      'the token → fiat callback',
    );
    assert.deepEqual(callback?.json, record);
  });

  it('token → fiat refuses an under-payment, a deposit from another address and a late one; nothing is credited', async () => {
    const start = await balance('BRL');
    const create = async () =>
      (
        await call(TO_FIAT, {
          tokenAmount: '10.5',
          chainType: 'TRON',
          addressFrom: TRON_FROM,
          currencyType: 'BRL',
          tokenType: 'USDT',
          externalOrderId: ext('t2f'),
        })
      ).body.data;
    const short = await create();
    assert.equal((await gw.sandbox(short.orderId, 'token_received', { amount: '10.499999' })).body.orderStatus, 32);
    const shortRecord = (await call(QUERY_TO_FIAT, { externalOrderId: short.externalOrderId, orderId: short.orderId }))
      .body.data;
    assert.match(
      shortRecord.errorMsgEn,
      /under-payment: the deposit carried 10.499999 USDT, the order expected 10.5 USDT/,
    );
    assert.match(shortRecord.tradeHash, /^[0-9a-f]{64}$/);

    const stranger = await create();
    assert.equal((await gw.sandbox(stranger.orderId, 'token_received', { from: TRON_TO })).body.orderStatus, 32);
    const strangerRecord = (
      await call(QUERY_TO_FIAT, { externalOrderId: stranger.externalOrderId, orderId: stranger.orderId })
    ).body.data;
    assert.match(strangerRecord.errorMsgEn, new RegExp(`came from ${TRON_TO}, not from addressFrom ${TRON_FROM}`));

    const late = await create();
    const expiring = await create();
    gw.clock.advance(30 * 60_000 + 1);
    assert.equal((await gw.sandbox(late.orderId, 'token_received')).body.orderStatus, 32);
    assert.match(
      (await call(QUERY_TO_FIAT, { externalOrderId: late.externalOrderId, orderId: late.orderId })).body.data
        .errorMsgEn,
      /after the quote expired/,
    );
    const expired = await eventually(
      async () => {
        const r = (await call(QUERY_TO_FIAT, { externalOrderId: expiring.externalOrderId, orderId: expiring.orderId }))
          .body.data;
        return r.orderStatus === 32 ? r : undefined;
      },
      15_000,
      'the expiry worker',
    );
    assert.match(expired.errorMsgEn, /no deposit arrived before the quote expired/);
    // Fiat → token quotes of earlier tests lapse in the same half hour: frozen returns to available.
    const end = await balance('BRL');
    assert.equal(
      units(end.available, 2) + units(end.frozen, 2),
      units(start.available, 2) + units(start.frozen, 2),
      'nothing was credited',
    );
    assert.deepEqual((await gw.sandbox(expiring.orderId, 'token_received')).status, 409);
  });

  it('a fiat → token quote lapses when its fiat is not taken in time: the fiat is released', async () => {
    const start = await balance('BRL');
    const created = await call(TO_WALLET, {
      addressTo: TRON_TO,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount: '7',
      currencyType: 'BRL',
      externalOrderId: ext('lapse'),
    });
    assert.equal(created.body.code, '200', created.body.msgEn);
    assert.equal(units((await balance('BRL')).frozen, 2), units(start.frozen, 2) + 700n);
    gw.clock.advance(30 * 60_000 + 1);
    const ids = { externalOrderId: created.body.data.externalOrderId, orderId: created.body.data.orderId };
    const record = await eventually(
      async () => {
        const r = (await call(QUERY_TO_WALLET, ids)).body.data;
        return r.orderStatus === 32 ? r : undefined;
      },
      15_000,
      'the expiry worker',
    );
    assert.match(record.errorMsgEn, /quote expired before the fiat was taken/);
    const end = await balance('BRL');
    assert.deepEqual([end.available, end.frozen], [start.available, start.frozen]);
    assert.equal((await gw.sandbox(ids.orderId, 'paid')).status, 409, 'a lapsed quote cannot be paid');
  });

  it('every deposit address is distinct, and a token → fiat without externalOrderId is never deduplicated', async () => {
    const body = { tokenAmount: 1, chainType: 'TRON', addressFrom: TRON_FROM, currencyType: 'BRL', tokenType: 'USDT' };
    const results = await Promise.all(Array.from({ length: 20 }, () => call(TO_FIAT, body)));
    assert.ok(
      results.every((r) => r.body.code === '200'),
      JSON.stringify(results.find((r) => r.body.code !== '200')?.body),
    );
    const addresses = new Set(results.map((r) => r.body.data.addressTo));
    const orders = new Set(results.map((r) => r.body.data.orderId));
    assert.equal(addresses.size, 20);
    assert.equal(orders.size, 20);
  });

  it('complete walks an order through its remaining steps', async () => {
    const created = await call(TO_WALLET, {
      addressTo: TRON_TO,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount: '5',
      currencyType: 'BRL',
      externalOrderId: ext('walk'),
    });
    const walked = await gw.sandbox(created.body.data.orderId, 'complete');
    assert.equal(walked.body.orderStatus, 8);
    const history = await gw.admin('GET', `/admin/v1/orders/${created.body.data.orderId}/callbacks`);
    assert.equal(history.status, 200);
    const t2f = await call(TO_FIAT, {
      tokenAmount: '2',
      chainType: 'TRON',
      addressFrom: TRON_FROM,
      currencyType: 'BRL',
      tokenType: 'USDT',
    });
    assert.equal((await gw.sandbox(t2f.body.data.orderId, 'complete')).body.orderStatus, 8);
    const refused = await gw.sandbox(t2f.body.data.orderId, 'complete');
    assert.equal(refused.status, 409);
    const internal = await call(TO_FIAT, {
      tokenAmount: '2',
      chainType: 'TRON',
      addressFrom: TRON_FROM,
      currencyType: 'BRL',
      tokenType: 'USDT',
    });
    const offered = await gw.sandbox(internal.body.data.orderId, 'deposit_refused');
    assert.equal(offered.status, 409);
    assert.deepEqual(offered.body.error.allowedEvents, ['token_received', 'expired', 'failed', 'complete']);
  });
});
