import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { mexicoCityEndOfDay } from '../src/mexico/collections.js';
import {
  formEncode,
  intentOf,
  signStripePayload,
  STRIPE_API_VERSION,
  stripeErrorKind,
  StripeClient,
  StripeError,
  verifyStripeSignature,
} from '../src/rails/stripe/client.js';
import { oxxoExpiresAfter, startFakeStripe, STRIPE_TEST, type FakeStripe } from './support/fake-stripe.js';

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

const last = <T>(list: readonly T[]): T => {
  const item = list[list.length - 1];
  assert.ok(item !== undefined);
  return item;
};

/** A local endpoint that records what it is posted and answers with `status()`. */
async function receiver(status: () => number) {
  const got: { signature: string; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ signature: String(req.headers['stripe-signature']), body: Buffer.concat(chunks).toString() });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    got,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    /** the events received, verified as the gateway would */
    events: () =>
      got.map(({ signature, body }) => {
        const verified = verifyStripeSignature(
          body,
          signature,
          STRIPE_TEST.webhookSecret,
          Math.floor(Date.now() / 1000),
        );
        assert.ok(verified.ok, 'every delivery is signed with the endpoint secret');
        return verified.event;
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Stripe: webhook signatures', () => {
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'payment_intent.succeeded',
    created: 1,
    data: { object: { id: 'pi_1' } },
  });
  const now = 1_800_000_000;
  const reason = (
    header: string | undefined,
    text: string | Buffer = body,
    at = now,
    secret: string = STRIPE_TEST.webhookSecret,
  ) => {
    const result = verifyStripeSignature(text, header, secret, at);
    return result.ok ? 'ok' : result.reason;
  };

  it('accepts a v1 HMAC-SHA256 of "t.body" within 300 s either way, as a string or the raw bytes', () => {
    const header = signStripePayload(body, STRIPE_TEST.webhookSecret, now - 300);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    const ok = verifyStripeSignature(body, header, STRIPE_TEST.webhookSecret, now);
    assert.ok(ok.ok);
    assert.deepEqual(ok.event, {
      id: 'evt_1',
      type: 'payment_intent.succeeded',
      created: 1,
      data: { object: { id: 'pi_1' } },
    });
    assert.equal(reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now + 300)), 'ok');
    assert.equal(reason(header, Buffer.from(body, 'utf8')), 'ok');
  });

  it('accepts any matching v1 among several (a secret being rolled) and ignores v0', () => {
    const ours = signStripePayload(body, STRIPE_TEST.webhookSecret, now);
    const t = ours.split(',')[0] ?? '';
    const v1 = ours.split(',')[1] ?? '';
    const old = signStripePayload(body, 'whsec_old', now).split(',')[1] ?? '';
    assert.equal(reason(`${t},${old},${v1}`), 'ok', 'ours second');
    assert.equal(reason(`${t},${v1},${old},v0=${'f'.repeat(64)}`), 'ok', 'ours first, then others');
    assert.equal(reason(`${t}, ${old} , ${v1}`), 'ok', 'spaces around the elements');
    assert.equal(reason(`${t},${old}`), 'signature', 'only the old secret’s');
  });

  it('refuses a missing, malformed, stale, forged or tampered one, saying why', () => {
    assert.equal(reason(undefined), 'missing');
    assert.equal(reason(''), 'missing');
    assert.equal(reason('t=abc,v1=zz'), 'malformed');
    assert.equal(reason(`v1=${'0'.repeat(64)}`), 'malformed', 'no timestamp');
    assert.equal(reason(`t=${now}`), 'malformed', 'no v1');
    assert.equal(reason(`t=${now},v0=${'0'.repeat(64)}`), 'malformed', 'only v0');
    assert.equal(reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now - 301)), 'timestamp');
    assert.equal(reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now + 301)), 'timestamp');
    assert.equal(reason(signStripePayload(body, 'whsec_wrong', now)), 'signature');
    assert.equal(
      reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now), body.replace('pi_1', 'pi_2')),
      'signature',
    );
    assert.equal(
      reason(signStripePayload(body, STRIPE_TEST.webhookSecret, now), body, now, 'whsec_other'),
      'signature',
    );
    assert.equal(reason(signStripePayload('not json', STRIPE_TEST.webhookSecret, now), 'not json'), 'body');
    assert.equal(reason(signStripePayload('{"id":"evt_1"}', STRIPE_TEST.webhookSecret, now), '{"id":"evt_1"}'), 'body');
  });
});

describe('Stripe: forms, states and error kinds (pure)', () => {
  it('encodes forms in bracket notation', () => {
    assert.equal(
      decodeURIComponent(formEncode({ a: '1', b: { c: { d: 'x y' } }, e: ['oxxo'], f: undefined })),
      'a=1&b[c][d]=x+y&e[]=oxxo',
    );
  });

  it('reads PaymentIntents into Cashgate states', () => {
    const base = {
      id: 'pi_1',
      object: 'payment_intent',
      amount: 1500,
      amount_received: 0,
      currency: 'mxn',
      created: 7,
      metadata: { order_id: 'AC1' },
    };
    const awaiting = intentOf({
      ...base,
      status: 'requires_action',
      next_action: {
        type: 'oxxo_display_details',
        oxxo_display_details: { number: '12345678901234657', expires_after: 9, hosted_voucher_url: 'https://x' },
      },
    });
    assert.deepEqual(awaiting, {
      id: 'pi_1',
      status: 'requires_action',
      state: 'awaiting',
      amount: 1500n,
      amountReceived: 0n,
      currency: 'mxn',
      orderId: 'AC1',
      created: 7,
      voucher: { number: '12345678901234657', expiresAfter: 9, hostedVoucherUrl: 'https://x' },
      lastError: undefined,
    });
    assert.equal(intentOf({ ...base, status: 'succeeded', amount_received: 1500 })?.amountReceived, 1500n);
    assert.equal(intentOf({ ...base, status: 'succeeded' })?.state, 'paid');
    assert.equal(intentOf({ ...base, status: 'processing' })?.state, 'processing');
    const expired = intentOf({
      ...base,
      status: 'requires_payment_method',
      last_payment_error: { code: 'payment_intent_payment_attempt_expired', message: 'expired' },
    });
    assert.equal(expired?.state, 'expired');
    assert.equal(expired.lastError, 'expired');
    assert.equal(intentOf({ ...base, status: 'requires_payment_method' })?.state, 'other', 'no attempt yet');
    assert.equal(intentOf({ ...base, status: 'canceled' })?.state, 'canceled');
    assert.equal(intentOf({ ...base, status: 'requires_confirmation' })?.state, 'other');
    assert.equal(intentOf({ id: 'ch_1', object: 'charge' }), undefined);
  });

  it('maps HTTP statuses and Stripe codes to kinds', () => {
    assert.equal(stripeErrorKind(400, 'amount_too_small'), 'invalid');
    assert.equal(stripeErrorKind(401, undefined), 'invalid');
    assert.equal(stripeErrorKind(402, 'card_declined'), 'invalid');
    assert.equal(stripeErrorKind(404, 'resource_missing'), 'not-found');
    assert.equal(stripeErrorKind(404, undefined), 'invalid');
    assert.equal(stripeErrorKind(409, undefined), 'busy');
    assert.equal(stripeErrorKind(429, 'rate_limit'), 'busy');
    assert.equal(stripeErrorKind(503, undefined), 'busy');
    assert.equal(stripeErrorKind(500, undefined), 'unknown');
    assert.equal(stripeErrorKind(502, undefined), 'unknown');
  });

  it('computes the voucher deadline like the gateway does: 23:59:59 Mexico City, n calendar days on', () => {
    // Monday 2026-03-09 12:00 in Mexico City (UTC-6, no daylight saving since 2022): 2 days → Wednesday 23:59:59.
    assert.equal(oxxoExpiresAfter(Date.UTC(2026, 2, 9, 18), 2), Date.UTC(2026, 2, 12, 5, 59, 59) / 1000);
    // 21:30 in Mexico City is already the next day in UTC: the day counted is Mexico City's.
    assert.equal(oxxoExpiresAfter(Date.UTC(2026, 2, 10, 3, 30), 1), Date.UTC(2026, 2, 11, 5, 59, 59) / 1000);
    // Across a month and a year end.
    assert.equal(oxxoExpiresAfter(Date.UTC(2026, 11, 30, 12), 7), Date.UTC(2027, 0, 7, 5, 59, 59) / 1000);
    for (const at of [Date.UTC(2026, 0, 1), Date.UTC(2026, 6, 15, 23, 59), Date.UTC(2025, 9, 26, 7)])
      for (const days of [1, 3, 7])
        assert.equal(oxxoExpiresAfter(at, days), Math.floor(mexicoCityEndOfDay(at, days) / 1000), `${at} +${days}`);
  });
});

describe('Stripe: the client against the local Stripe', () => {
  let stripe: FakeStripe;
  let client: StripeClient;
  let registry: Registry;
  let clock = Date.UTC(2026, 2, 9, 18); // Monday noon in Mexico City
  before(async () => {
    stripe = await startFakeStripe({ now: () => clock, webhookRetryMs: 20, maxWebhookTries: 4 });
    registry = new Registry();
    client = new StripeClient({
      baseUrl: `${stripe.url}/`,
      secretKey: STRIPE_TEST.secretKey,
      timeoutMs: 500,
      registry,
    });
  });
  after(async () => {
    await client.close();
    await stripe.close();
  });

  it('creates a confirmed OXXO PaymentIntent: the exact form, the headers, the voucher, its expiry at 23:59:59 in Mexico City', async () => {
    const created = await client.createOxxoIntent({
      ...ORDER,
      amount: 123_450n,
      idempotencyKey: 'k-create',
      expiresAfterDays: 2,
      description: 'Pedido AC01',
    });
    const sent = last(stripe.requests);
    assert.equal(sent.method, 'POST');
    assert.equal(sent.path, '/v1/payment_intents');
    assert.equal(sent.headers.authorization, `Bearer ${STRIPE_TEST.secretKey}`);
    assert.equal(sent.headers['idempotency-key'], 'k-create');
    assert.equal(sent.headers['stripe-version'], STRIPE_API_VERSION);
    assert.equal(sent.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(sent.body, {
      amount: '123450',
      currency: 'mxn',
      payment_method_types: ['oxxo'],
      confirm: 'true',
      payment_method_data: { type: 'oxxo', billing_details: { name: ORDER.name, email: ORDER.email } },
      payment_method_options: { oxxo: { expires_after_days: '2' } },
      metadata: { order_id: ORDER.orderId },
      description: 'Pedido AC01',
    });
    const intent = created.value;
    assert.equal(intent.status, 'requires_action');
    assert.equal(intent.state, 'awaiting');
    assert.equal(intent.amount, 123_450n);
    assert.equal(intent.amountReceived, 0n);
    assert.equal(intent.currency, 'mxn');
    assert.equal(intent.orderId, ORDER.orderId);
    assert.equal(intent.created, clock / 1000);
    assert.match(intent.voucher?.number ?? '', /^\d{14,}$/);
    // Monday → Wednesday 2026-03-11 23:59:59 in Mexico City = Thursday 05:59:59 UTC.
    assert.equal(intent.voucher?.expiresAfter, Date.UTC(2026, 2, 12, 5, 59, 59) / 1000);
    assert.equal(intent.voucher.hostedVoucherUrl, `${stripe.url}/oxxo/voucher/${intent.id}`);
    const page = await fetch(intent.voucher.hostedVoucherUrl);
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes(intent.voucher.number), 'the hosted voucher shows its number');
    assert.equal(created.exchanges.length, 1);
    const exchange = created.exchanges[0];
    assert.equal(exchange?.code, 'ok');
    assert.equal(exchange.httpStatus, 200);
    assert.equal(exchange.operation, 'create');
    assert.equal(exchange.path, '/v1/payment_intents');
    assert.ok(stripe.events.some((e) => e.type === 'payment_intent.requires_action' && e.intent === intent.id));
    const metrics = await registry.getSingleMetricAsString('cashgate_stripe_requests_total');
    assert.match(metrics, /operation="create",outcome="ok"} 1/);
  });

  it('counts the voucher days from the Mexico City calendar day, late in the evening too', async () => {
    clock = Date.UTC(2026, 2, 10, 3, 30); // Monday 21:30 in Mexico City, Tuesday in UTC
    try {
      const made = await client.createOxxoIntent({
        ...ORDER,
        amount: 1_500n,
        idempotencyKey: 'k-evening',
        expiresAfterDays: 1,
      });
      assert.equal(made.value.voucher?.expiresAfter, Date.UTC(2026, 2, 11, 5, 59, 59) / 1000, 'Tuesday 23:59:59');
    } finally {
      clock = Date.UTC(2026, 2, 9, 18);
    }
  });

  it('replays an Idempotency-Key with the same parameters exactly, and refuses it with others', async () => {
    const request = { ...ORDER, amount: 5_000n, idempotencyKey: 'k-replay', expiresAfterDays: 3 };
    const first = await client.createOxxoIntent(request);
    const count = stripe.intents.size;
    const again = await client.createOxxoIntent(request);
    assert.deepEqual(again.value, first.value);
    assert.equal(stripe.intents.size, count, 'no second intent');
    assert.equal(last(stripe.requests).replayed, true);
    assert.deepEqual(again.exchanges[0]?.response, first.exchanges[0]?.response, 'the first answer, as it was');
    stripe.pay(first.value.id, { notify: 'skip' });
    const afterPaid = await client.createOxxoIntent(request);
    assert.equal(afterPaid.value.state, 'awaiting', 'a replay is the first answer, not the intent as it is now');
    const conflict = await rejects(client.createOxxoIntent({ ...request, amount: 5_001n }));
    assert.equal(conflict.kind, 'invalid');
    assert.equal(conflict.code, 'idempotency_error');
    assert.equal(conflict.type, 'idempotency_error');
    assert.equal(conflict.httpStatus, 400);
  });

  it('replays with the Idempotent-Replayed header, byte for byte', async () => {
    const form = formEncode({
      amount: '2500',
      currency: 'mxn',
      payment_method_types: ['oxxo'],
      confirm: 'true',
      payment_method_data: { type: 'oxxo', billing_details: { name: ORDER.name, email: ORDER.email } },
    });
    const post = () =>
      fetch(`${stripe.url}/v1/payment_intents`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${STRIPE_TEST.secretKey}`,
          'idempotency-key': 'k-raw',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form,
      });
    const one = await post();
    const two = await post();
    assert.equal(one.headers.get('idempotent-replayed'), null);
    assert.equal(two.headers.get('idempotent-replayed'), 'true');
    assert.equal(await two.text(), await one.text());
  });

  it('keeps nothing for a request refused by validation; a second request with the same key while the first runs is busy', async () => {
    const key = 'k-validation';
    const refused = await rejects(
      client.createOxxoIntent({ ...ORDER, amount: 500n, idempotencyKey: key, expiresAfterDays: 1 }),
    );
    assert.equal(refused.code, 'amount_too_small');
    const fixed = await client.createOxxoIntent({ ...ORDER, amount: 1_500n, idempotencyKey: key, expiresAfterDays: 1 });
    assert.equal(fixed.value.state, 'awaiting', 'the same key, now with valid parameters, runs');
    stripe.delayNext('create', 150);
    const request = { ...ORDER, amount: 1_600n, idempotencyKey: 'k-concurrent', expiresAfterDays: 1 };
    const slow = client.createOxxoIntent(request);
    await new Promise((r) => setTimeout(r, 30));
    const busy = await rejects(client.createOxxoIntent(request));
    assert.equal(busy.kind, 'busy');
    assert.equal(busy.httpStatus, 409);
    const done = await slow;
    assert.equal((await client.createOxxoIntent(request)).value.id, done.value.id);
  });

  it('takes MXN 10.00 and 10,000.00 and refuses 9.99 and 10,000.01 with Stripe’s codes', async () => {
    for (const [amount, code] of [
      [999n, 'amount_too_small'],
      [1_000_001n, 'amount_too_large'],
    ] as const) {
      const refused = await rejects(
        client.createOxxoIntent({ ...ORDER, amount, idempotencyKey: `k-${amount}`, expiresAfterDays: 1 }),
      );
      assert.equal(refused.kind, 'invalid');
      assert.equal(refused.code, code);
      assert.equal(refused.param, 'amount');
      assert.equal(refused.type, 'invalid_request_error');
    }
    for (const amount of [1_000n, 1_000_000n]) {
      const made = await client.createOxxoIntent({
        ...ORDER,
        amount,
        idempotencyKey: `ok-${amount}`,
        expiresAfterDays: 1,
      });
      assert.equal(made.value.state, 'awaiting');
      assert.equal(made.value.amount, amount);
    }
  });

  it('refuses other bad parameters as Stripe would: days outside 1–7, no billing name or email', async () => {
    for (const [change, param] of [
      [{ expiresAfterDays: 0 }, 'payment_method_options[oxxo][expires_after_days]'],
      [{ expiresAfterDays: 8 }, 'payment_method_options[oxxo][expires_after_days]'],
      [{ name: '' }, 'payment_method_data[billing_details][name]'],
      [{ email: 'not-an-email' }, 'payment_method_data[billing_details][email]'],
    ] as const) {
      const refused = await rejects(
        client.createOxxoIntent({
          ...ORDER,
          amount: 2_000n,
          idempotencyKey: `k-bad-${param}`,
          expiresAfterDays: 3,
          ...change,
        }),
      );
      assert.equal(refused.kind, 'invalid', param);
      assert.equal(refused.param, param);
    }
    const usd = await fetch(`${stripe.url}/v1/payment_intents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${STRIPE_TEST.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: formEncode({
        amount: '2000',
        currency: 'usd',
        payment_method_types: ['oxxo'],
        confirm: 'true',
        payment_method_data: { type: 'oxxo', billing_details: { name: ORDER.name, email: ORDER.email } },
      }),
    });
    assert.equal(usd.status, 400);
    assert.deepEqual(((await usd.json()) as { error: { param: string; type: string } }).error.param, 'currency');
    const fraction = await fetch(`${stripe.url}/v1/payment_intents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${STRIPE_TEST.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'amount=10.50&currency=mxn',
    });
    assert.equal(((await fraction.json()) as { error: { code: string } }).error.code, 'parameter_invalid_integer');
  });

  it('retrieves and cancels; cancelling a paid intent is refused; an unknown id is not found', async () => {
    const made = await client.createOxxoIntent({
      ...ORDER,
      amount: 2_000n,
      idempotencyKey: 'k-read',
      expiresAfterDays: 1,
    });
    const read = await client.retrieve(made.value.id);
    assert.equal(read.value.id, made.value.id);
    assert.equal(read.exchanges[0]?.method, 'GET');
    assert.equal(read.exchanges[0].path, `/v1/payment_intents/${made.value.id}`);
    stripe.pay(made.value.id, { notify: 'skip' });
    const paid = await client.retrieve(made.value.id);
    assert.equal(paid.value.state, 'paid');
    assert.equal(paid.value.amountReceived, 2_000n);
    assert.equal(paid.value.voucher, undefined);
    const notCancellable = await rejects(client.cancel(made.value.id));
    assert.equal(notCancellable.kind, 'invalid');
    assert.equal(notCancellable.code, 'payment_intent_unexpected_state');
    const other = await client.createOxxoIntent({
      ...ORDER,
      amount: 2_000n,
      idempotencyKey: 'k-cancel',
      expiresAfterDays: 1,
    });
    const canceled = await client.cancel(other.value.id);
    assert.equal(canceled.value.state, 'canceled');
    assert.equal(last(stripe.requests).path, `/v1/payment_intents/${other.value.id}/cancel`);
    assert.ok(stripe.events.some((e) => e.type === 'payment_intent.canceled' && e.intent === other.value.id));
    const missing = await rejects(client.retrieve('pi_missing'));
    assert.equal(missing.kind, 'not-found');
    assert.equal(missing.code, 'resource_missing');
  });

  it('reads an expired voucher back as expired', async () => {
    const made = await client.createOxxoIntent({
      ...ORDER,
      amount: 2_000n,
      idempotencyKey: 'k-expire',
      expiresAfterDays: 1,
    });
    stripe.expire(made.value.id, { notify: 'skip' });
    const read = await client.retrieve(made.value.id);
    assert.equal(read.value.status, 'requires_payment_method');
    assert.equal(read.value.state, 'expired');
    assert.match(read.value.lastError ?? '', /expired/);
  });

  it('lists every page of a window of creation times, both ends included', async () => {
    const base = Date.UTC(2026, 3, 1, 12);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 205; i++) {
        clock = base + i * 1000;
        ids.push(
          (
            await client.createOxxoIntent({
              ...ORDER,
              amount: 1_000n,
              idempotencyKey: `k-many-${i}`,
              expiresAfterDays: 1,
            })
          ).value.id,
        );
      }
    } finally {
      clock = Date.UTC(2026, 2, 9, 18);
    }
    const from = base / 1000 + 10;
    const to = base / 1000 + 200;
    const listed = await client.listCreatedBetween(from, to);
    assert.deepEqual(
      listed.value.map((i) => i.id),
      ids.slice(10, 201).reverse(),
      'seconds 10 to 200, newest first, each once',
    );
    assert.equal(listed.exchanges.length, 2, '191 intents: two pages of up to 100');
    const queries = stripe.requests.filter((r) => r.operation === 'list').slice(-2);
    assert.deepEqual(queries[0]?.body, { created: { gte: String(from), lte: String(to) }, limit: '100' });
    assert.equal(queries[1]?.body.starting_after, ids[101]);
    assert.deepEqual(listed.exchanges[1]?.request, {
      'created[gte]': String(from),
      'created[lte]': String(to),
      limit: '100',
      starting_after: ids[101],
    });
    assert.deepEqual((await client.listCreatedBetween(1, 2)).value, [], 'an empty window');
  });

  it('maps failures: 401 and a wrong URL invalid, 404 not found, 429 and 503 busy, 500, a timeout and a reset unknown, a refused connection network', async () => {
    const wrongKey = new StripeClient({ baseUrl: stripe.url, secretKey: 'sk_test_wrong', timeoutMs: 500 });
    const refusedKey = await rejects(wrongKey.retrieve('pi_x'));
    await wrongKey.close();
    assert.equal(refusedKey.kind, 'invalid');
    assert.equal(refusedKey.code, 'authentication_error');
    assert.equal(refusedKey.httpStatus, 401);
    assert.match(refusedKey.stripeMessage, /Invalid API Key/);
    assert.doesNotMatch(refusedKey.stripeMessage, /sk_test_wrong/, 'Stripe masks the key');

    const wrongUrl = new StripeClient({
      baseUrl: `${stripe.url}/nowhere`,
      secretKey: STRIPE_TEST.secretKey,
      timeoutMs: 500,
    });
    const unrecognized = await rejects(wrongUrl.retrieve('pi_x'));
    await wrongUrl.close();
    assert.equal(unrecognized.kind, 'invalid', 'a 404 without resource_missing is a mistake, not a missing intent');

    const cases = [
      ['rate-limited', 'busy', 'rate_limit', 429],
      ['unavailable', 'busy', 'api_error', 503],
      ['server-error', 'unknown', 'api_error', 500],
      ['timeout-before', 'unknown', 'timeout', null],
      ['timeout-after', 'unknown', 'timeout', null],
      ['reset', 'unknown', 'reset', null],
    ] as const;
    for (const [fault, kind, code, status] of cases) {
      stripe.failNext('retrieve', fault);
      const failed = await rejects(client.retrieve('pi_x'));
      assert.equal(failed.kind, kind, fault);
      assert.equal(failed.code, code, fault);
      assert.equal(failed.httpStatus, status, fault);
      assert.equal(failed.exchange.code, code, fault);
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
    const network = await rejects(nowhere.retrieve('pi_x'));
    await nowhere.close();
    assert.equal(network.kind, 'network');
    assert.equal(network.code, 'network');

    const metrics = await registry.getSingleMetricAsString('cashgate_stripe_requests_total');
    for (const outcome of ['rate_limit', 'api_error', 'timeout', 'reset'])
      assert.match(metrics, new RegExp(`operation="retrieve",outcome="${outcome}"`), outcome);
  });

  it('a create whose answer never came is replayed by its Idempotency-Key: one intent', async () => {
    const request = { ...ORDER, amount: 4_200n, idempotencyKey: 'k-lost-answer', expiresAfterDays: 2 };
    stripe.failNext('create', 'timeout-after');
    const lost = await rejects(client.createOxxoIntent(request));
    assert.equal(lost.kind, 'unknown');
    const made = [...stripe.intents.values()].filter((pi) => pi.amount === 4_200);
    assert.equal(made.length, 1, 'Stripe acted');
    const retried = await client.createOxxoIntent(request);
    assert.equal(retried.value.id, made[0]?.id);
    assert.equal(last(stripe.requests).replayed, true);
  });

  it('refuses an answer that is not a PaymentIntent as unknown', async () => {
    const odd = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"charge"}'),
    );
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    const oddClient = new StripeClient({
      baseUrl: `http://127.0.0.1:${(odd.address() as AddressInfo).port}`,
      secretKey: STRIPE_TEST.secretKey,
      timeoutMs: 500,
    });
    const failed = await rejects(oddClient.retrieve('pi_x'));
    assert.equal(failed.kind, 'unknown');
    assert.equal(failed.code, 'bad-answer');
    assert.equal((await rejects(oddClient.listCreatedBetween(1, 2))).code, 'bad-answer');
    await oddClient.close();
    odd.closeAllConnections();
    await new Promise<void>((resolve) => odd.close(() => resolve()));
  });
});

describe('Stripe: events from the local Stripe', () => {
  let stripe: FakeStripe;
  let client: StripeClient;
  before(async () => {
    stripe = await startFakeStripe({ webhookRetryMs: 20, maxWebhookTries: 4, expireWithDelayMs: 200 });
    client = new StripeClient({ baseUrl: stripe.url, secretKey: STRIPE_TEST.secretKey, timeoutMs: 1000 });
  });
  after(async () => {
    await client.close();
    await stripe.close();
  });

  const create = (key: string, email = ORDER.email) =>
    client.createOxxoIntent({ ...ORDER, email, amount: 3_000n, idempotencyKey: key, expiresAfterDays: 1 });

  it('posts signed events, retried every webhookRetryMs until answered, and twice when asked', async () => {
    let refuse = 2;
    const hook = await receiver(() => (refuse-- > 0 ? 500 : 200));
    stripe.webhookUrl = hook.url;
    try {
      const made = await create('e-retry');
      await stripe.idle();
      const created = stripe.events.find(
        (e) => e.intent === made.value.id && e.type === 'payment_intent.requires_action',
      );
      assert.deepEqual(created?.deliveries, [500, 500, 200], 'two refusals, then taken');
      hook.got.length = 0;
      refuse = 1;
      stripe.pay(made.value.id, { notify: 'twice' });
      await stripe.idle();
      const events = hook.events();
      assert.equal(events.length, 3, 'one refused attempt, then the event, then its duplicate');
      assert.ok(events.every((e) => e.type === 'payment_intent.succeeded'));
      assert.equal(new Set(events.map((e) => e.id)).size, 1, 'the duplicate is the same event');
      const object = events[0]?.data.object as { id: string; status: string; amount_received: number };
      assert.equal(object.id, made.value.id);
      assert.equal(object.status, 'succeeded');
      assert.equal(object.amount_received, 3_000);
    } finally {
      stripe.webhookUrl = undefined;
      await hook.close();
    }
  });

  it('gives up after maxWebhookTries; the event stays readable with GET /v1/events/:id', async () => {
    const hook = await receiver(() => 503);
    stripe.webhookUrl = hook.url;
    try {
      const made = await create('e-give-up');
      await stripe.idle();
      const record = stripe.events.find((e) => e.intent === made.value.id);
      assert.deepEqual(record?.deliveries, [503, 503, 503, 503]);
      const read = await fetch(`${stripe.url}/v1/events/${record.id}`, {
        headers: { authorization: `Bearer ${STRIPE_TEST.secretKey}` },
      });
      assert.equal(read.status, 200);
      const event = (await read.json()) as Record<string, any>;
      assert.equal(event.object, 'event');
      assert.equal(event.type, 'payment_intent.requires_action');
      assert.equal(event.api_version, STRIPE_API_VERSION);
      assert.equal(event.data.object.id, made.value.id);
      assert.equal(event.request.idempotency_key, 'e-give-up');
      assert.equal(JSON.stringify(event), record.payload, 'the same event as posted');
      const missing = await fetch(`${stripe.url}/v1/events/evt_missing`, {
        headers: { authorization: `Bearer ${STRIPE_TEST.secretKey}` },
      });
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'resource_missing');
    } finally {
      stripe.webhookUrl = undefined;
      await hook.close();
    }
  });

  it('delivers held events out of order, a lost one never, a resent one again', async () => {
    const hook = await receiver(() => 200);
    stripe.webhookUrl = hook.url;
    try {
      stripe.holdWebhooks();
      const made = await create('e-order');
      stripe.pay(made.value.id);
      assert.equal(hook.got.length, 0, 'held');
      stripe.releaseWebhooks('reversed');
      await stripe.idle();
      assert.deepEqual(
        hook.events().map((e) => e.type),
        ['payment_intent.succeeded', 'payment_intent.requires_action'],
        'the payment arrives before the voucher',
      );
      hook.got.length = 0;
      const lost = await create('e-lost');
      await stripe.idle();
      hook.got.length = 0;
      stripe.expire(lost.value.id, { notify: 'skip' });
      await stripe.idle();
      assert.equal(hook.got.length, 0, 'lost');
      const failed = stripe.events.find(
        (e) => e.intent === lost.value.id && e.type === 'payment_intent.payment_failed',
      );
      assert.ok(failed !== undefined);
      stripe.redeliver(failed.id);
      await stripe.idle();
      assert.deepEqual(
        hook.events().map((e) => e.id),
        [failed.id],
      );
      const object = hook.events()[0]?.data.object as { status: string; last_payment_error: { code: string } };
      assert.equal(object.status, 'requires_payment_method');
      assert.equal(object.last_payment_error.code, 'payment_intent_payment_attempt_expired');
    } finally {
      stripe.webhookUrl = undefined;
      await hook.close();
    }
  });

  it('follows Stripe’s test-mode emails: succeed_immediately, expire_immediately, expire_with_delay, fill_never', async () => {
    const paid = await create('e-succeed', 'x+succeed_immediately@example.mx');
    await stripe.idle();
    assert.equal((await client.retrieve(paid.value.id)).value.state, 'paid');
    assert.ok(stripe.events.some((e) => e.intent === paid.value.id && e.type === 'payment_intent.succeeded'));

    const gone = await create('e-expire', 'expire_immediately@example.mx');
    assert.equal(gone.value.voucher?.expiresAfter, gone.value.created, 'expires_after is the current time');
    await stripe.idle();
    assert.equal((await client.retrieve(gone.value.id)).value.state, 'expired');
    assert.ok(stripe.events.some((e) => e.intent === gone.value.id && e.type === 'payment_intent.payment_failed'));

    const later = await create('e-delay', 'expire_with_delay@example.mx');
    assert.equal(later.value.voucher?.expiresAfter, later.value.created, 'now + expireWithDelayMs (200 ms, 0 s)');
    assert.equal((await client.retrieve(later.value.id)).value.state, 'awaiting');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await client.retrieve(later.value.id)).value.state, 'expired');

    const never = await create('e-never', 'ana+fill_never@example.mx');
    assert.throws(() => stripe.pay(never.value.id), /fill_never/);
    stripe.expire(never.value.id);
    assert.equal((await client.retrieve(never.value.id)).value.state, 'expired');
  });
});
