/**
 * How the SDK's clients behave on the wire, against a local host that misbehaves on purpose (the
 * receiver of test/support, answering as each test says): non-JSON answers, 5xx and 429 with
 * Retry-After, an answer slower than the timeout, a closed port, and a base URL with a path.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { CashgateAdmin, CashgateClient, CashgateError, computeSign } from '@cashgate/sdk';
import { startReceiver, type Answer, type CallbackReceiver, type ReceivedCallback } from './support/receiver.js';

const credentials = { accessKey: 'AKtest', secretKey: 'secret-for-the-sdk-http-test' };
const OK_ENVELOPE = (data: unknown) =>
  JSON.stringify({ code: '200', success: true, msg: 'success', msgEn: 'success', data });
const QUERY = { externalOrderId: 'ORDER-1', orderId: 'BC1' };
const PIX = {
  amount: '10.00',
  channelType: 'PIX',
  externalOrderId: 'ORDER-2',
} as const;

let hosts: CallbackReceiver[] = [];
afterEach(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  hosts = [];
});

async function host(answer: (request: ReceivedCallback, index: number) => Answer): Promise<CallbackReceiver> {
  const started = await startReceiver(answer);
  hosts.push(started);
  return started;
}

const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof CashgateClient>[0]> = {}) =>
  new CashgateClient({ baseUrl, ...credentials, retryDelayMs: 1, ...extra });

async function failure(promise: Promise<unknown>): Promise<CashgateError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CashgateError, `a CashgateError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call should have failed');
}

/** A port nothing listens on: one that was just free. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('SDK over HTTP', () => {
  it('keeps the path of baseUrl and signs each request', async () => {
    const h = await host(() => ({ status: 200, body: OK_ENVELOPE([{ bankNames: 'Banco do Brasil S.A.' }]) }));
    const banks = await client(`${h.url}/cashgate/`).brazil.banks({ currencyType: 'BRL' });
    assert.deepEqual(banks, [{ bankNames: 'Banco do Brasil S.A.' }]);
    const got = h.received[0];
    assert.ok(got !== undefined, 'the host got the request');
    assert.equal(got.path, '/cashgate/api/v3/bra/query/bank');
    await client(`${h.url}/cashgate`).brazil.banks();
    assert.equal(h.received[1]?.path, '/cashgate/api/v3/bra/query/bank', 'a base path without the final slash too');
    const sign = computeSign(credentials.secretKey, JSON.parse(got.body) as Record<string, unknown>, {
      access_key: String(got.headers.access_key),
      timestamp: String(got.headers.timestamp),
      nonce: String(got.headers.nonce),
    });
    assert.equal(got.headers.sign, sign, 'the request is signed over the body it carries');
  });

  it('throws a CashgateError with the code, both messages, the HTTP status and the request id', async () => {
    const h = await host(() => ({
      status: 400,
      headers: { 'x-request-id': 'req_abc' },
      body: JSON.stringify({
        code: '300',
        success: false,
        msg: 'amount deve ter no máximo 2 casas decimais',
        msgEn: 'amount must have at most 2 decimal places',
        data: null,
      }),
    }));
    const error = await failure(client(h.url).brazil.createCollection({ ...PIX, amount: '1.001' }));
    assert.equal(error.code, '300');
    assert.equal(error.msgEn, 'amount must have at most 2 decimal places');
    assert.equal(error.msg, 'amount deve ter no máximo 2 casas decimais');
    assert.equal(error.status, 400);
    assert.equal(error.requestId, 'req_abc');
    assert.equal(h.received.length, 1, 'a parameter exception is not retried');
  });

  it('says clearly when the answer is not JSON, and does not retry a 200 that is not JSON', async () => {
    const h = await host(() => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>login</html>' }));
    const error = await failure(client(h.url).kenya.balance());
    assert.equal(error.code, 'invalid_response');
    assert.equal(error.status, 200);
    assert.match(error.msgEn, /text\/html, not JSON: "<html>login<\/html>"/);
    assert.ok(error.cause instanceof SyntaxError, 'the parse error is kept as the cause, not thrown');
    assert.equal(h.received.length, 1, 'a non-JSON 200 is not a temporary failure');
  });

  it('says clearly when JSON comes that is not a Cashgate envelope', async () => {
    const h = await host(() => ({ status: 200, body: '{"hello":"world"}' }));
    const error = await failure(client(h.url).kenya.balance());
    assert.equal(error.code, 'invalid_response');
    assert.match(error.msgEn, /not a Cashgate envelope/);
  });

  it('retries a read after a 503 with Retry-After, signing each attempt anew over the same body', async () => {
    const h = await host((_, index) =>
      index < 2
        ? { status: 503, headers: { 'retry-after': '0', 'content-type': 'text/html' }, body: '<h1>busy</h1>' }
        : { status: 200, body: OK_ENVELOPE([{ orderId: 'BC1' }]) },
    );
    const record = await client(h.url).brazil.queryTransfer(QUERY);
    assert.equal(record.orderId, 'BC1');
    assert.equal(h.received.length, 3, 'two retries');
    const nonces = new Set(h.received.map((r) => r.headers.nonce));
    assert.equal(nonces.size, 3, 'a fresh nonce for every attempt');
    assert.equal(new Set(h.received.map((r) => r.body)).size, 1, 'the same body every time');
  });

  it('retries a create on 500 (externalOrderId makes the repeat answer the first result)', async () => {
    const h = await host((_, index) =>
      index === 0
        ? {
            status: 500,
            body: JSON.stringify({ code: '500', success: false, msg: 'x', msgEn: 'system error', data: null }),
          }
        : { status: 200, body: OK_ENVELOPE({ orderId: 'BT1', orderStatus: 'ACCEPTED' }) },
    );
    const result = await client(h.url).brazil.createPixTransfer({
      currencyAmount: '5.00',
      channelType: 'PIX',
      externalOrderId: 'PAYOUT-1',
      personIdType: 'CPF',
      personId: '52998224725',
      personName: 'Maria',
      accountType: 'EVP',
      accountId: '123e4567-e89b-42d3-a456-426614174000',
    });
    assert.equal(result.orderId, 'BT1');
    assert.equal(h.received.length, 2, 'one retry');
    assert.equal(h.received[0]?.body, h.received[1]?.body, 'the same body and externalOrderId');
  });

  it('never retries a create without externalOrderId, nor a raw post', async () => {
    const busy = () => ({
      status: 500,
      body: JSON.stringify({ code: '500', success: false, msg: 'x', msgEn: 'system error', data: null }),
    });
    const h = await host(busy);
    const error = await failure(
      client(h.url).exchange.tokenToFiat({
        tokenAmount: '10',
        chainType: 'TRON',
        addressFrom: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
        currencyType: 'BRL',
        tokenType: 'USDT',
      }),
    );
    assert.equal(error.code, '500');
    assert.equal(h.received.length, 1, 'sent once');
    const raw = await client(h.url).post('/api/v3/bra/createCollectingOrder', PIX);
    assert.equal(raw.code, '500', 'post returns the failure envelope as it came');
    assert.equal(h.received.length, 2, 'post sends once');
  });

  it('gives up with the Retry-After the server asked for when it is longer than allowed', async () => {
    const h = await host(() => ({
      status: 429,
      headers: { 'retry-after': '120', 'x-request-id': 'req_429' },
      body: JSON.stringify({ code: '429', success: false, msg: 'slow down', msgEn: 'too many requests', data: null }),
    }));
    const error = await failure(client(h.url, { maxRetryDelayMs: 5_000 }).kenya.balance());
    assert.equal(error.code, '429');
    assert.equal(error.status, 429);
    assert.equal(error.retryAfter, 120);
    assert.equal(error.requestId, 'req_429');
    assert.equal(h.received.length, 1, 'no retry sooner than the server allows');
  });

  it('times out a slow answer, and retries only what may be repeated', async () => {
    const h = await host(() => 'hang');
    const read = await failure(client(h.url, { timeoutMs: 200, retries: 1 }).kenya.queryCollection(QUERY));
    assert.equal(read.code, 'timeout');
    assert.match(read.msgEn, /no answer within 200 ms/);
    assert.equal(read.attempts, 2, 'a query is sent again after a timeout');
    const raw = await failure(
      client(h.url, { timeoutMs: 200, retries: 1 }).post('/api/v3/ken/createTransferOrder', {}),
    );
    assert.equal(raw.code, 'timeout');
    assert.equal(raw.attempts, 1, 'a raw post is not');
  });

  it('stops at once when the caller aborts', async () => {
    const h = await host(() => 'hang');
    const controller = new AbortController();
    const call = client(h.url).kenya.balance({ signal: controller.signal });
    await h.waitFor(1);
    controller.abort();
    const error = await failure(call);
    assert.equal(error.code, 'aborted');
    assert.equal(error.attempts, 1);
  });

  it('an abort while waiting to retry is a CashgateError too', async () => {
    const h = await host(() => ({ status: 503, headers: { 'content-type': 'text/html' }, body: '<h1>busy</h1>' }));
    const controller = new AbortController();
    const call = client(h.url, { retryDelayMs: 60_000, maxRetryDelayMs: 120_000 }).kenya.balance({
      signal: controller.signal,
    });
    await h.waitFor(1);
    controller.abort();
    const error = await failure(call);
    assert.equal(error.code, 'aborted', error.msgEn);
    assert.equal(error.attempts, 1, 'aborted after the first attempt, while waiting');
  });

  it('names a dead host instead of "fetch failed"', async () => {
    const port = await closedPort();
    const error = await failure(client(`http://127.0.0.1:${port}`, { retries: 1 }).brazil.balance());
    assert.equal(error.code, 'network_error');
    assert.match(error.msgEn, new RegExp(`could not reach http://127.0.0.1:${port}: ECONNREFUSED`));
    assert.equal(error.attempts, 2, 'a balance read is retried');
    assert.ok(error.isTransport, 'a transport failure');
  });

  it('the admin client sends the bearer token and throws the admin error', async () => {
    const h = await host((request) =>
      request.method === 'GET'
        ? { status: 200, body: JSON.stringify({ rates: [] }) }
        : {
            status: 404,
            headers: { 'x-request-id': 'req_admin' },
            body: JSON.stringify({ error: { code: 'merchant_not_found', message: 'merchant mch_x does not exist' } }),
          },
    );
    const admin = new CashgateAdmin({ baseUrl: `${h.url}/ops`, token: 'tok', retryDelayMs: 1 });
    assert.deepEqual(await admin.rates.list(), []);
    const first = h.received[0];
    assert.ok(first !== undefined, 'the admin request arrived');
    assert.equal(first.headers.authorization, 'Bearer tok');
    assert.equal(first.path, '/ops/admin/v1/rates');
    const error = await failure(admin.merchants.setCallbackUrl('mch_x', null));
    assert.equal(error.code, 'merchant_not_found');
    assert.equal(error.status, 404);
    assert.equal(error.requestId, 'req_admin');
    assert.equal(h.received[1]?.body, '{"url":null}');
  });
});
