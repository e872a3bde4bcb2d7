/**
 * A merchant program written against the SDK (test/fixtures/sdk-program/merchant.ts) type-checks
 * on its own with the project's TypeScript, and runs end to end against a real Cashgate: create,
 * query, balance, and a signed callback verified. The callbacks the server sends are compared
 * with the SDK's callback types, member by member.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  CALLBACK_MEMBERS,
  CallbackVerificationError,
  CashgateAdmin,
  CashgateClient,
  verifyCallback,
  type KenyaTransferCallback,
  type PaymentCallback,
} from '@cashgate/sdk';
import { lookUpUnknown, onPaymentCallback, sellByPix, type Shop } from './fixtures/sdk-program/merchant.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.js';
import { startReceiver, type CallbackReceiver, type ReceivedCallback } from './support/receiver.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/sdk-program/tsconfig.json', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function tsc(...args: string[]): { status: number | null; output: string } {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [bin, ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const members = (payload: object) => Object.keys(payload).sort();

describe('a merchant program on the SDK', () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let shop: Shop;
  let merchantId: string;
  let admin: CashgateAdmin;

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    const merchant = await gw.merchantWithKey();
    merchantId = merchant.merchantId;
    shop = { baseUrl: gw.url, ...merchant.credentials, notifyUrl: `${receiver.url}/shop/callback` };
    admin = new CashgateAdmin({ baseUrl: gw.url, token: ADMIN_TOKEN });
  });
  after(async () => {
    await receiver.close();
    await gw.close();
  });

  it('type-checks on its own with the project TypeScript (the SDK is built first)', () => {
    const build = tsc('-b', 'packages/sdk');
    assert.equal(build.status, 0, `the SDK builds: ${build.output}`);
    const check = tsc('-p', FIXTURE);
    assert.equal(check.status, 0, `the merchant program type-checks: ${check.output}`);
    assert.equal(check.output, '', 'no diagnostics: every @ts-expect-error in it meets an error');
  });

  it('creates, queries, reads a balance and verifies the signed payment callback', async () => {
    const externalOrderId = `sdk-pix-${Date.now()}`;
    const sale = await sellByPix(shop, externalOrderId, '59.90');
    assert.match(sale.orderId, /^B/, 'a Brazil order id');
    assert.ok(sale.payParam.includes('br.gov.bcb.pix'), 'a BR Code to pay');
    assert.equal(sale.status, 1, 'waiting for payment');
    assert.equal(sale.statusText, 'WAITING_PAYMENT');
    assert.equal(sale.balance, '0.00');

    const paid = await admin.sandbox.event(sale.orderId, { event: 'paid' });
    assert.equal(paid.orderStatus, 2);
    const [callback] = await receiver.waitFor(1);
    assert.ok(callback !== undefined, 'a callback came');
    assert.equal(callback.path, '/shop/callback');

    const payment = onPaymentCallback(shop.secretKey, callback.body, callback.headers, gw.clock.now());
    assert.equal(payment.orderId, sale.orderId);
    assert.equal(payment.externalOrderId, externalOrderId);
    assert.equal(payment.orderStatusCode, 2);
    assert.equal(payment.orderActualAmount, '59.90');
    assert.deepEqual(members(payment), [...CALLBACK_MEMBERS.payment].sort(), 'the payment callback has the SDK type');

    assert.throws(
      () => onPaymentCallback(shop.secretKey, callback.body, callback.headers, gw.clock.now()),
      (error) => error instanceof CallbackVerificationError && error.reason === 'replayed',
      'the same callback again is a replay',
    );
  });

  it('refuses a tampered, stale or unsigned callback, and reads headers in any case or as a Headers object', async () => {
    const externalOrderId = `sdk-pix-2-${Date.now()}`;
    const sale = await sellByPix(shop, externalOrderId, '10.00');
    const before = receiver.received.length;
    await admin.sandbox.event(sale.orderId, { event: 'paid' });
    const callback = (await receiver.waitFor(before + 1)).at(-1) as ReceivedCallback;
    const now = gw.clock.now();
    const refusal = (body: string, headers: Record<string, string | undefined> | Headers, at = now) => {
      try {
        verifyCallback(body, headers, { secretKey: shop.secretKey, now: at });
        return 'accepted';
      } catch (error) {
        assert.ok(error instanceof CallbackVerificationError, `a CallbackVerificationError, got ${String(error)}`);
        return error.reason;
      }
    };
    const upper = Object.fromEntries(
      Object.entries(callback.headers).map(([k, v]) => [k.toUpperCase(), Array.isArray(v) ? v[0] : v]),
    );
    assert.equal(refusal(callback.body, upper), 'accepted', 'header names in upper case');
    const headers = new Headers();
    for (const name of ['access_key', 'timestamp', 'nonce', 'sign']) headers.set(name, String(callback.headers[name]));
    assert.equal(refusal(callback.body, headers), 'accepted', 'a Headers instance');
    assert.equal(refusal(callback.body.replace('"10.00"', '"1000.00"'), upper), 'bad_signature');
    assert.equal(refusal(callback.body, upper, Number(callback.headers.timestamp) + 300_001), 'stale');
    assert.equal(refusal(callback.body, upper, Number(callback.headers.timestamp) - 300_001), 'stale');
    assert.equal(refusal(callback.body, { ...upper, SIGN: undefined }), 'missing_header');
    const typed = new CashgateClient(shop).verifyCallback<PaymentCallback>(callback.body, callback.headers, { now });
    assert.equal(typed.orderId, sale.orderId, "the client verifies with its own key's secret");
  });

  it('throws the API failure with its code and HTTP status', async () => {
    assert.deepEqual(await lookUpUnknown(shop), { code: '300', status: 400 });
  });

  it('pays out in Kenya and Brazil: the transfer callbacks and records have the SDK types', async () => {
    const client = new CashgateClient(shop);
    await admin.balances.adjust(merchantId, { currency: 'KES', amount: '5000', reason: 'SDK test float' });
    await admin.balances.adjust(merchantId, { currency: 'BRL', amount: '500.00', reason: 'SDK test float' });
    const kes = await client.kenya.balance();
    assert.equal(kes[0]?.accountBalance, '5000');

    const ken = await client.kenya.createTransfer({
      channelType: 'BANK',
      currencyAmount: '700',
      externalOrderId: `sdk-ken-${Date.now()}`,
      phone: '254110000001',
      notifyUrl: shop.notifyUrl,
    });
    const again = await client.kenya.createTransfer({
      channelType: 'BANK',
      currencyAmount: '700',
      externalOrderId: ken.externalOrderId,
      phone: '254110000001',
      notifyUrl: shop.notifyUrl,
    });
    assert.equal(again.orderId, ken.orderId, 'a repeated create answers the first order: what makes retrying it safe');
    const kenRecord = await client.kenya.queryTransfer({ externalOrderId: ken.externalOrderId, orderId: ken.orderId });
    assert.equal(typeof kenRecord.orderFee, 'number', 'the Kenya transfer record has an integer fee');

    const bra = await client.brazil.createPixTransfer({
      currencyAmount: '25.50',
      channelType: 'PIX',
      externalOrderId: `sdk-bra-${Date.now()}`,
      personIdType: 'CPF',
      personId: '529.982.247-25',
      personName: 'Maria Silva',
      accountType: 'EVP',
      accountId: '123e4567-e89b-42d3-a456-426614174000',
      notifyUrl: shop.notifyUrl,
    });
    const braRecord = await client.brazil.queryTransfer({ externalOrderId: bra.externalOrderId, orderId: bra.orderId });
    assert.equal(typeof braRecord.orderFee, 'string', 'the Brazil transfer record has a decimal string fee');

    const before = receiver.received.length;
    for (const orderId of [ken.orderId, bra.orderId]) {
      await admin.sandbox.event(orderId, { event: 'processing' });
      await admin.sandbox.event(orderId, { event: 'succeeded' });
    }
    const got = (await receiver.waitFor(before + 2)).slice(before);
    const payloads = got.map((c) =>
      verifyCallback(c.body, c.headers, { secretKey: shop.secretKey, now: gw.clock.now() }),
    );
    const kenya = payloads.find((p) => p.orderId === ken.orderId) as KenyaTransferCallback | undefined;
    const brazil = payloads.find((p) => p.orderId === bra.orderId);
    assert.ok(kenya !== undefined && brazil !== undefined, 'both transfer callbacks came');
    assert.deepEqual(members(kenya), [...CALLBACK_MEMBERS.kenyaTransfer].sort(), 'the Kenya transfer callback');
    assert.equal(typeof kenya.markStatus, 'string', "the Kenya transfer callback's markStatus is a string");
    assert.deepEqual(members(brazil), [...CALLBACK_MEMBERS.brazilTransfer].sort(), 'the Brazil transfer callback');

    const history = await admin.callbacks.list(ken.orderId);
    assert.ok(
      history.attempts.some((a) => a.outcome === 'delivered'),
      'the admin client reads the delivery log',
    );
  });
});
