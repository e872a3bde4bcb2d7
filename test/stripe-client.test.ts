import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { mexicoCityEndOfDay } from '../src/mexico/collections.js';
import {
  formEncode,
  intentOf,
  signStripePayload,
  StripeClient,
  StripeError,
  verifyStripeSignature,
} from '../src/rails/stripe/client.js';
import { startFakeStripe, STRIPE_TEST, type FakeStripe } from './support/fake-stripe.js';

const ORDER = { name: 'Ana López García', email: 'ana@example.mx', orderId: 'AC0123456789ABCDEF01234567' };

async function rejects(promise: Promise<unknown>): Promise<StripeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StripeError, `expected a StripeError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('Stripe: webhook signatures', () => {
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'payment_intent.succeeded',
    created: 1,
    data: { object: { id: 'pi_1' } },
  });
  const now = 1_800_000_000;

  it('accepts a v1 HMAC-SHA256 of "t.body" within 5 minutes, among several v1 values', () => {
    const header = signStripePayload(body, STRIPE_TEST.webhookSecret, now - 299);
    const ok = verifyStripeSignature(body, header, STRIPE_TEST.webhookSecret, now);
    assert.ok(ok.ok);
    assert.equal(ok.event.type, 'payment_intent.succeeded');
    const rolled = `${header},v1=${'0'.repeat(64)},v0=abc`;
    assert.equal(verifyStripeSignature(body, rolled, STRIPE_TEST.webhookSecret, now).ok, true);
    const other = signStripePayload(body, 'whsec_old', now).split(',')[1] ?? '';
    assert.equal(verifyStripeSignature(body, `${header},${other}`, STRIPE_TEST.webhookSecret, now).ok, true);
  });

  it('refuses a missing, malformed, stale, forged or tampered one, saying why', () => {
    const reason = (header: string | undefined, text = body, at = now) => {
      const result = verifyStripeSignature(text, header, STRIPE_TEST.webhookSecret, at);
      return result.ok ? 'ok' : result.reason;
    };
    assert.equal(reason(undefined), 'missing');
    assert.equal(reason('t=abc,v1=zz'), 'malformed');
    assert.equal(reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now - 301)), 'timestamp');
    assert.equal(reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now + 301)), 'timestamp');
    assert.equal(reason(signStripePayload(body, 'whsec_wrong', now)), 'signature');
    assert.equal(
      reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now), body.replace('pi_1', 'pi_2')),
      'signature',
    );
    assert.equal(reason(signStripePayload('not json', STRIPE_TEST.webhookSecret, now), 'not json'), 'body');
  });

  it('encodes forms in bracket notation and reads PaymentIntents into Cashgate states', () => {
    assert.equal(
      decodeURIComponent(formEncode({ a: '1', b: { c: { d: 'x y' } }, e: ['oxxo'], f: undefined })),
      'a=1&b[c][d]=x+y&e[]=oxxo',
    );
    const base = {
      id: 'pi_1',
      object: 'payment_intent',
      amount: 1500,
      amount_received: 0,
      metadata: { order_id: 'AC1' },
    };
    assert.equal(
      intentOf({
        ...base,
        status: 'requires_action',
        next_action: { oxxo_display_details: { number: '123', expires_after: 9, hosted_voucher_url: 'https://x' } },
      })?.state,
      'awaiting',
    );
    assert.equal(intentOf({ ...base, status: 'succeeded', amount_received: 1500 })?.amountReceived, 1500n);
    assert.equal(
      intentOf({ ...base, status: 'requires_payment_method', last_payment_error: { message: 'expired' } })?.state,
      'expired',
    );
    assert.equal(intentOf({ ...base, status: 'requires_payment_method' })?.state, 'other');
    assert.equal(intentOf({ ...base, status: 'canceled' })?.state, 'canceled');
    assert.equal(intentOf({ ...base, status: 'succeeded' })?.orderId, 'AC1');
    assert.equal(intentOf({ id: 'ch_1', object: 'charge' }), undefined);
  });
});

describe('Stripe: the client against the local Stripe', () => {
  let stripe: FakeStripe;
  let client: StripeClient;
  before(async () => {
    stripe = await startFakeStripe();
    client = new StripeClient({ baseUrl: stripe.url, secretKey: STRIPE_TEST.secretKey, timeoutMs: 500 });
  });
  after(async () => {
    await client.close();
    await stripe.close();
  });

  it('creates a confirmed OXXO PaymentIntent: the exact form, the voucher, its expiry at 23:59:59 in Mexico City', async () => {
    const created = await client.createOxxoIntent({
      ...ORDER,
      amount: 123_450n,
      idempotencyKey: 'k-create',
      expiresAfterDays: 2,
    });
    const sent = stripe.requests[stripe.requests.length - 1];
    assert.ok(sent !== undefined);
    assert.equal(sent.headers.authorization, `Bearer ${STRIPE_TEST.secretKey}`);
    assert.equal(sent.headers['idempotency-key'], 'k-create');
    assert.ok(sent.headers['stripe-version']);
    assert.deepEqual(sent.body, {
      amount: '123450',
      currency: 'mxn',
      payment_method_types: ['oxxo'],
      confirm: 'true',
      payment_method_data: { type: 'oxxo', billing_details: { name: ORDER.name, email: ORDER.email } },
      payment_method_options: { oxxo: { expires_after_days: '2' } },
      metadata: { order_id: ORDER.orderId },
    });
    const intent = created.value;
    assert.equal(intent.state, 'awaiting');
    assert.equal(intent.amount, 123_450n);
    assert.equal(intent.orderId, ORDER.orderId);
    assert.match(intent.voucher?.number ?? '', /^\d{20}$/);
    assert.equal(intent.voucher?.expiresAfter, Math.floor(mexicoCityEndOfDay(intent.created * 1000, 2) / 1000));
    assert.equal(created.exchanges.length, 1);
    assert.equal(created.exchanges[0]?.code, 'ok');
  });

  it('replays an Idempotency-Key with the same parameters, and refuses it with others', async () => {
    const request = { ...ORDER, amount: 5_000n, idempotencyKey: 'k-replay', expiresAfterDays: 3 };
    const first = await client.createOxxoIntent(request);
    const again = await client.createOxxoIntent(request);
    assert.equal(again.value.id, first.value.id);
    const conflict = await rejects(client.createOxxoIntent({ ...request, amount: 5_001n }));
    assert.equal(conflict.kind, 'invalid');
    assert.equal(conflict.code, 'idempotency_error');
  });

  it('refuses amounts outside MXN 10.00 to 10,000.00 (Stripe’s codes), and takes both bounds', async () => {
    for (const [amount, code] of [
      [999n, 'amount_too_small'],
      [1_000_001n, 'amount_too_large'],
    ] as const) {
      const refused = await rejects(
        client.createOxxoIntent({ ...ORDER, amount, idempotencyKey: `k-${amount}`, expiresAfterDays: 1 }),
      );
      assert.equal(refused.kind, 'invalid');
      assert.equal(refused.code, code);
    }
    for (const amount of [1_000n, 1_000_000n])
      assert.equal(
        (await client.createOxxoIntent({ ...ORDER, amount, idempotencyKey: `ok-${amount}`, expiresAfterDays: 1 })).value
          .state,
        'awaiting',
      );
  });

  it('retrieves, cancels and lists every page of a window', async () => {
    const made = await client.createOxxoIntent({
      ...ORDER,
      amount: 2_000n,
      idempotencyKey: 'k-read',
      expiresAfterDays: 1,
    });
    assert.equal((await client.retrieve(made.value.id)).value.id, made.value.id);
    stripe.pay(made.value.id, { notify: 'skip' });
    assert.equal((await client.retrieve(made.value.id)).value.state, 'paid');
    const other = await client.createOxxoIntent({
      ...ORDER,
      amount: 2_000n,
      idempotencyKey: 'k-cancel',
      expiresAfterDays: 1,
    });
    assert.equal((await client.cancel(other.value.id)).value.state, 'canceled');
    assert.equal((await rejects(client.retrieve('pi_missing'))).kind, 'not-found');
    for (let i = 0; i < 105; i++)
      await client.createOxxoIntent({ ...ORDER, amount: 1_000n, idempotencyKey: `k-many-${i}`, expiresAfterDays: 1 });
    const now = Math.floor(Date.now() / 1000);
    const listed = await client.listCreatedBetween(now - 3600, now + 60);
    assert.equal(listed.value.length, stripe.intents.size);
    assert.equal(new Set(listed.value.map((i) => i.id)).size, listed.value.length);
    assert.ok(listed.exchanges.length >= 2, 'more than one page');
  });

  it('maps failures: 401 and 400 invalid, 429 and 503 busy, 500, a timeout and a reset unknown, a refused connection network', async () => {
    const wrongKey = new StripeClient({ baseUrl: stripe.url, secretKey: 'sk_test_wrong', timeoutMs: 500 });
    assert.equal((await rejects(wrongKey.retrieve('pi_x'))).kind, 'invalid');
    await wrongKey.close();
    const cases = [
      ['rate-limited', 'busy'],
      ['unavailable', 'busy'],
      ['server-error', 'unknown'],
      ['timeout-before', 'unknown'],
      ['reset', 'unknown'],
    ] as const;
    for (const [fault, kind] of cases) {
      stripe.failNext('retrieve', fault);
      assert.equal((await rejects(client.retrieve('pi_x'))).kind, kind, fault);
    }
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nowhere = new StripeClient({
      baseUrl: `http://127.0.0.1:${port}`,
      secretKey: STRIPE_TEST.secretKey,
      timeoutMs: 500,
    });
    assert.equal((await rejects(nowhere.retrieve('pi_x'))).kind, 'network');
    await nowhere.close();
  });

  it('posts signed events, retried until answered, and twice when asked', async () => {
    const got: { signature: string; body: string }[] = [];
    let refuse = 2;
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ signature: String(req.headers['stripe-signature']), body: Buffer.concat(chunks).toString() });
        res.writeHead(refuse-- > 0 ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    stripe.webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const made = await client.createOxxoIntent({
      ...ORDER,
      amount: 3_000n,
      idempotencyKey: 'k-events',
      expiresAfterDays: 1,
    });
    await stripe.idle();
    got.length = 0;
    refuse = 2;
    stripe.pay(made.value.id, { notify: 'twice' });
    await stripe.idle();
    assert.equal(got.length, 4, 'two refused attempts, then the event, then its duplicate');
    for (const { signature, body } of got) {
      const verified = verifyStripeSignature(body, signature, STRIPE_TEST.webhookSecret, Math.floor(Date.now() / 1000));
      assert.equal(verified.ok && verified.event.type, 'payment_intent.succeeded');
    }
    stripe.webhookUrl = undefined;
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });
});
