import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyCallback } from '@cashgate/sdk';
import { dayOf } from '../src/console/forms.js';
import { dateTime } from '../src/console/i18n.js';
import { consoleSignIn, type ConsoleClient } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { callbackHeaders, eventually, receiverPool } from './support/receiver.js';

const FAST = {
  CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
  CALLBACK_RETRY_INTERVAL_MS: '200',
  CALLBACK_RETRY_WINDOW_MS: '60000',
  CALLBACK_TIMEOUT_MS: '2000',
  CALLBACK_POLL_INTERVAL_MS: '50',
};

const COLLECT = '/api/v3/bra/createCollectingOrder';
let seq = 0;

describe(`console callback pages (${databaseLabel})`, () => {
  let gw: TestGateway;
  const receivers = receiverPool();
  const receiver = receivers.start;

  before(async () => {
    gw = await startTestGateway({ env: FAST });
  });
  after(async () => {
    await gw.close();
    await receivers.closeAll();
  });

  async function signedInMerchant() {
    const merchant = await gw.merchantWithKey();
    const client = await consoleSignIn(gw, merchant.merchantId);
    return { ...merchant, client };
  }

  async function callbackUrlOf(merchantId: string): Promise<string | null> {
    const got = await gw.admin('GET', `/admin/v1/merchants/${merchantId}`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    return got.body.callbackUrl as string | null;
  }

  async function pixCollection(merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>): Promise<string> {
    const body = {
      amount: '12.34',
      channelType: 'PIX',
      externalOrderId: `cons-cb-${Date.now()}-${++seq}`,
      userInfoType: 'CPF',
      userInfoNo: '52998224725',
      userInfoName: 'Maria',
    };
    const response = await signedCall(gw.url, merchant.credentials, { path: COLLECT, body }, gw.clock.now());
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data.currencyOrderVo.orderId as string;
  }

  async function history(orderId: string) {
    const found = await gw.admin('GET', `/admin/v1/orders/${orderId}/callbacks`);
    assert.equal(found.status, 200, JSON.stringify(found.body));
    return found.body as {
      events: { state: string; trigger: string }[];
      attempts: { outcome: string; trigger: string }[];
    };
  }

  const failedForGood = (orderId: string) =>
    eventually(
      async () => {
        const h = await history(orderId);
        return h.events.length > 0 && h.events.every((e) => e.state === 'failed') ? h : undefined;
      },
      15_000,
      `the callback of ${orderId} to fail for good`,
    );

  it('sets, refuses and clears the unified callback address through the form', async () => {
    const { merchantId, client } = await signedInMerchant();
    const page = await client.get('/console/callbacks');
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.match(page.text, /notifyUrl has priority/, 'the page explains the priority of the order notifyUrl');

    const saved = await client.post('/console/callbacks/address', {
      url: 'https://merchant.example.com/hooks/cashgate',
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 300));
    assert.equal(saved.location, '/console/callbacks?done=address-set#address');
    assert.equal(await callbackUrlOf(merchantId), 'https://merchant.example.com/hooks/cashgate');
    assert.match(
      (await client.get('/console/callbacks?done=address-set')).text,
      /class="notice"/,
      'a notice after saving',
    );

    const bad = await client.post('/console/callbacks/address', { url: 'ftp://merchant.example.com/x' });
    assert.equal(bad.status, 400, 'a bad address is refused');
    assert.match(
      bad.text,
      /Callback address: enter an http:\/\/ or https:\/\/ URL of at most 2048 characters/,
      'the message names the field and the rule',
    );
    assert.match(bad.text, /id="url"[^>]*aria-invalid="true"/, 'the field is marked');
    assert.match(bad.text, /value="ftp:\/\/merchant.example.com\/x"/, 'the typed value is shown again');
    const tooLong = await client.post('/console/callbacks/address', {
      url: `https://merchant.example.com/${'a'.repeat(2100)}`,
    });
    assert.equal(tooLong.status, 400, 'an address over 2048 characters is refused');
    assert.equal(await callbackUrlOf(merchantId), 'https://merchant.example.com/hooks/cashgate', 'nothing changed');

    const cleared = await client.post('/console/callbacks/address', { url: '' });
    assert.equal(cleared.location, '/console/callbacks?done=address-cleared#address');
    assert.equal(await callbackUrlOf(merchantId), null, 'an empty field clears the address');
  });

  it('sends a signed test callback at once and shows the answer', async () => {
    const r = await receiver(() => ({ status: 200, body: '{"code":"200","success":true}' }));
    const { client, credentials } = await signedInMerchant();
    await client.post('/console/callbacks/address', { url: `${r.url}/hook` });
    const page = await client.post('/console/callbacks/test', { 'test-url': '' });
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.equal(r.received.length, 1, 'delivered before the page answered');
    const [got] = r.received;
    assert.ok(got !== undefined, 'the receiver got the test callback');
    assert.equal(got.path, '/hook', 'sent to the unified address');
    const body = JSON.parse(got.body) as Record<string, unknown>;
    assert.equal(body.notifyType, 'test');
    const headers = callbackHeaders(got);
    assert.equal(headers.access_key, credentials.accessKey);
    assert.ok(verifyCallback(credentials.secretKey, body, headers), 'the sign verifies with the key secret');
    assert.ok(!verifyCallback('another secret', body, headers), 'and not with another secret');
    const result = page.text.slice(page.text.indexOf('id="test-result"'));
    assert.match(result, /<dt>HTTP status<\/dt><dd>200<\/dd>/, 'the page shows status 200');
    assert.match(result, /badge ok">delivered/, 'the page shows the outcome');
    assert.ok(
      result.includes('{&quot;code&quot;:&quot;200&quot;,&quot;success&quot;:true}'),
      'the page shows the response excerpt',
    );
    assert.ok(result.includes(String(got.headers.notify_id)), 'the page shows the notify_id');
    assert.ok(result.includes(credentials.accessKey), 'the page names the signing key');
    assert.ok(result.includes(`${r.url}/hook`), 'the page shows the target');
  });

  it('signs a test callback with the key order callbacks use, not a newer key still waiting for activation', async () => {
    const r = await receiver(() => ({ status: 200, body: '{"code":"200","success":true}' }));
    const merchant = await signedInMerchant();
    const { client, credentials, merchantId } = merchant;
    const waiting = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: '0.0.0.0',
    });
    assert.equal(waiting.status, 200, JSON.stringify(waiting.body));
    assert.ok(Number(waiting.body.activeAt) > gw.clock.now(), 'the newer key still waits for its activation');
    await client.post('/console/callbacks/address', { url: `${r.url}/hook` });

    const orderId = await pixCollection(merchant);
    assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
    const [orderCallback] = await r.waitFor(1);
    assert.ok(orderCallback !== undefined, 'the order callback arrived');
    assert.equal((JSON.parse(orderCallback.body) as Record<string, unknown>).orderId, orderId, 'it is the order');
    const orderKey = String(orderCallback.headers.access_key);
    assert.equal(orderKey, credentials.accessKey, 'the order callback names the active key');

    const page = await client.post('/console/callbacks/test', { 'test-url': '' });
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const sent = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/callback/test`, {});
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(sent.body.accessKey, orderKey, 'the admin test callback names the key order callbacks use');
    const all = await r.waitFor(3);
    const tests = all.slice(1);
    assert.equal(tests.length, 2, 'the console test and the admin test arrived');
    for (const got of tests) {
      const body = JSON.parse(got.body) as Record<string, unknown>;
      assert.equal(body.notifyType, 'test');
      const headers = callbackHeaders(got);
      assert.equal(headers.access_key, orderKey, 'the test callback names the key order callbacks use');
      assert.notEqual(headers.access_key, waiting.body.accessKey, 'not the key still waiting');
      assert.ok(verifyCallback(credentials.secretKey, body, headers), "the sign verifies with the active key's secret");
      assert.ok(!verifyCallback(String(waiting.body.secretKey), body, headers), "and not with the waiting key's");
    }
    assert.ok(
      page.text.slice(page.text.indexOf('id="test-result"')).includes(orderKey),
      'the page names the active key as the signing key',
    );
  });

  it('shows a failed test callback, keeping the response body as text', async () => {
    const r = await receiver(() => ({
      status: 500,
      body: '<script>alert("xss")</script><img src=x onerror=alert(1)>',
    }));
    const { client } = await signedInMerchant();
    const page = await client.post('/console/callbacks/test', { 'test-url': `${r.url}/other` });
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.equal(r.received[0]?.path, '/other', 'sent to the address typed in');
    const result = page.text.slice(page.text.indexOf('id="test-result"'));
    assert.match(result, /<dt>HTTP status<\/dt><dd>500<\/dd>/, 'the page shows status 500');
    assert.match(result, /badge bad">failed/, 'the page shows the failure');
    assert.match(result, /only 200 acknowledges a callback/, 'the page shows the error');
    assert.ok(!page.text.includes('<script>alert('), 'the response body is not markup');
    assert.ok(!page.text.includes('<img src=x'), 'the response body is not markup');
    assert.ok(
      page.text.includes('&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt;'),
      'the response body is shown as text',
    );

    const log = await client.get('/console/callbacks');
    assert.ok(!log.text.includes('<script>alert('), 'the log keeps the response as text too');
    assert.ok(log.text.includes('&lt;img src=x onerror=alert(1)&gt;'), 'the log shows the response as text');
  });

  it('refuses a bad test address and explains a missing signing key', async () => {
    const { client } = await signedInMerchant();
    const bad = await client.post('/console/callbacks/test', { 'test-url': 'javascript:alert(1)' });
    assert.equal(bad.status, 400, 'a bad test address is refused');
    assert.match(bad.text, /Send to: enter an http:\/\/ or https:\/\/ URL/, 'the message names the field');
    const nobody = await client.post('/console/callbacks/test', {});
    assert.equal(nobody.status, 200, nobody.text.slice(0, 300));
    assert.match(
      nobody.text,
      /Nothing was sent: there is no unified callback address/,
      'no address: nothing sent, said so',
    );

    const created = await gw.admin('POST', '/admin/v1/merchants', { name: 'Keyless' });
    const keyless = await consoleSignIn(gw, created.body.merchantId as string);
    const noKey = await keyless.post('/console/callbacks/test', { 'test-url': 'https://merchant.example.com/hook' });
    assert.equal(noKey.status, 409, 'no key to sign with');
    assert.match(noKey.text, /no active API key to sign callbacks with/, 'a clear message');
    assert.match(noKey.text, /href="\/console\/keys"[^>]*>API keys/, 'a link to the keys page');
  });

  it('logs failed order callbacks, re-triggers one order and the failed ones of a day range', async () => {
    const r = await receiver(() => ({ status: 500, body: 'down for maintenance' }));
    const merchant = await signedInMerchant();
    const { client } = merchant;
    await client.post('/console/callbacks/address', { url: `${r.url}/orders` });
    const first = await pixCollection(merchant);
    const second = await pixCollection(merchant);

    const pending = await client.get(`/console/orders/${first}`);
    assert.equal(pending.status, 200, pending.text.slice(0, 300));
    assert.match(pending.text, /<section class="panel" id="callbacks">/, 'the order page has the callback panel');
    assert.match(pending.text, /This order is not final yet/, 'a non-final order shows the warning');
    assert.match(
      pending.text,
      new RegExp(`action="/console/orders/${first}/callbacks" data-confirm="`),
      'its form asks for confirmation',
    );

    assert.equal((await gw.sandbox(first, 'paid')).status, 200);
    assert.equal((await gw.sandbox(second, 'paid')).status, 200);
    await failedForGood(first);
    await failedForGood(second);
    const failedLog = await client.get('/console/callbacks?failed=1');
    assert.equal(failedLog.status, 200);
    assert.ok(failedLog.text.includes(`href="/console/orders/${first}"`), 'the failed-only log lists the first order');
    assert.ok(failedLog.text.includes(`href="/console/orders/${second}"`), 'and the second');
    assert.ok(failedLog.text.includes('down for maintenance'), 'with the response excerpt');
    assert.ok(!failedLog.text.includes('badge ok">delivered'), 'and nothing delivered');
    const oneOrder = await client.get(`/console/callbacks?order=${first}`);
    assert.ok(!oneOrder.text.includes(`href="/console/orders/${second}"`), 'the order filter keeps one order');
    const badFilter = await client.get('/console/callbacks?from=2026-13-45');
    assert.equal(badFilter.status, 400, 'a bad filter date is a field error');

    const final = await client.get(`/console/orders/${first}`);
    assert.ok(!final.text.includes('This order is not final yet'), 'a final order has no warning');

    r.answer = () => ({ status: 200, body: '{"code":"200","success":true}' });
    const before = r.received.length;
    const retriggered = await client.post(`/console/orders/${first}/callbacks`, {});
    assert.equal(retriggered.status, 303, retriggered.text.slice(0, 300));
    assert.equal(retriggered.location, `/console/orders/${first}?done=retriggered#callbacks`);
    assert.equal(r.received.length, before + 1, 'sent at once');
    const h = await history(first);
    assert.deepEqual(
      h.attempts.at(-1),
      { ...h.attempts.at(-1), trigger: 'manual', outcome: 'delivered' },
      'a new manual attempt, delivered',
    );
    const log = await client.get(`/console/callbacks?order=${first}`);
    assert.match(log.text, /<td>manual<\/td>/, 'the log shows the manual trigger');
    const panel = await client.get(`/console/orders/${first}`);
    assert.match(
      panel.text.slice(panel.text.indexOf('id="callbacks"')),
      /<td>manual<\/td>/,
      'the order panel shows the manual attempt',
    );

    const badRange = await client.post('/console/callbacks/retrigger-failed', {
      'retrigger-from': 'yesterday',
      'retrigger-to': '',
    });
    assert.equal(badRange.status, 400, 'bad dates are refused');
    assert.match(badRange.text, /id="retrigger-from"[^>]*aria-invalid="true"/, 'the from field is marked');
    assert.match(badRange.text, /id="retrigger-to"[^>]*aria-invalid="true"/, 'the to field is marked');

    const today = dayOf(gw.clock.now());
    const bulk = await client.post('/console/callbacks/retrigger-failed', {
      'retrigger-from': today,
      'retrigger-to': today,
    });
    assert.equal(bulk.status, 303, bulk.text.slice(0, 300));
    assert.equal(
      bulk.location,
      '/console/callbacks?done=retriggered&count=1#log',
      'only the order still failed (the first was delivered since)',
    );
    const arrived = await r.waitFor(before + 2);
    assert.ok(arrived.at(-1)?.body.includes(second), 'the receiver got the second order again');
    const notice = await client.get(bulk.location);
    assert.match(notice.text, /1 callback re-triggered\. It is being delivered now/, 'the notice counts them');
    await eventually(
      async () => ((await history(second)).events.at(-1)?.state === 'delivered' ? true : undefined),
      10_000,
      'the re-triggered callback to be delivered',
    );

    // Nothing to re-trigger: the page says which filter matched no failed callback.
    const nothing = async (fields: Record<string, string>): Promise<string> => {
      const posted = await client.post('/console/callbacks/retrigger-failed', fields);
      assert.equal(posted.status, 303, posted.text.slice(0, 300));
      assert.match(posted.location ?? '', /^\/console\/callbacks\?done=retriggered&count=0&/, 'nothing re-triggered');
      const page = await client.get(posted.location ?? '');
      assert.equal(page.status, 200, page.text.slice(0, 300));
      const why = /<p class="warning" role="status" id="retrigger-none">([^<]*)<\/p>/.exec(page.text)?.[1];
      assert.ok(why !== undefined, `a reason is given: ${page.text.slice(0, 300)}`);
      assert.ok(!page.text.includes('callbacks re-triggered'), 'no "0 callbacks re-triggered" notice');
      return why;
    };
    assert.match(
      await nothing({ 'retrigger-from': '2020-01-01', 'retrigger-to': '2020-01-02' }),
      /no callback failed for good \(retries exhausted\) in the UTC days from 2020-01-01 to 2020-01-02/,
      'the days matched no failed callback',
    );
    assert.match(
      await nothing({ 'retrigger-from': today, 'retrigger-to': today, 'retrigger-external': 'no-such-order' }),
      new RegExp(
        `failed for good in the UTC days from ${today} to ${today}, but none for the external order ID “no-such-order”`,
      ),
      'the external order ID matched no failed callback',
    );
    assert.match(
      await nothing({ 'retrigger-from': today, 'retrigger-to': today, 'retrigger-event': 'transfer' }),
      /but none of the event “Transfer”/,
      'the event matched no failed callback',
    );
    assert.match(
      await nothing({ 'retrigger-from': today, 'retrigger-to': today, 'retrigger-event': 'payment' }),
      /2 callbacks failed for good .* but each of those orders had a callback delivered or under way since/,
      'both failed orders were delivered since',
    );
    const badEvent = await client.post('/console/callbacks/retrigger-failed', {
      'retrigger-from': today,
      'retrigger-to': today,
      'retrigger-event': 'refund',
    });
    assert.equal(badEvent.status, 400, 'an unknown event is refused');
    assert.match(badEvent.text, /id="retrigger-event"[^>]*aria-invalid="true"/, 'the event field is marked');
  });

  it("answers 404 for another merchant's order", async () => {
    const owner = await signedInMerchant();
    const orderId = await pixCollection(owner);
    const other: ConsoleClient = (await signedInMerchant()).client;
    const refused = await other.post(`/console/orders/${orderId}/callbacks`, {});
    assert.equal(refused.status, 404, "another merchant's order is not found");
    assert.equal((await history(orderId)).events.length, 0, 'nothing was sent');
    assert.equal(
      (await other.post('/console/orders/no_such_order/callbacks', {})).status,
      404,
      'an unknown order is not found',
    );
    const forged = await other.post(`/console/orders/${orderId}/callbacks`, {}, { csrf: 'wrong' });
    assert.equal(forged.status, 403, 'the CSRF token is checked');
  });

  it('pages the log with an older link', async () => {
    const r = await receiver();
    const { client } = await signedInMerchant();
    for (let i = 0; i < 52; i++) await client.post('/console/callbacks/test', { 'test-url': r.url });
    const first = await client.get('/console/callbacks');
    const older = /href="(\/console\/callbacks\?before=[^"]+)" rel="next"/.exec(first.text)?.[1];
    assert.ok(older !== undefined, 'an older link on a full page');
    const next = await client.get(older.replace(/&amp;/g, '&'));
    assert.equal(next.status, 200);
    assert.equal(next.text.match(/<tr><td>/g)?.length, 2, 'the two oldest attempts on the second page');
    assert.ok(!next.text.includes('rel="next"'), 'no older link on the last page');
  });
});

describe(`console callbacks: next retry time and the log's filters (${databaseLabel})`, () => {
  let gw: TestGateway;
  const receivers = receiverPool();

  before(async () => {
    // Retries three minutes apart, as the spec has them: an attempt stays "will be retried" long
    // enough to be read.
    gw = await startTestGateway({
      env: { ...FAST, CALLBACK_RETRY_INTERVAL_MS: '180000', CALLBACK_RETRY_WINDOW_MS: '1800000' },
    });
  });
  after(async () => {
    await gw.close();
    await receivers.closeAll();
  });

  it('shows "next retry at" with date, time and zone on an attempt that will be retried, and filters by externalOrderId and event', async () => {
    const r = await receivers.start(() => ({ status: 503, body: 'busy' }));
    const merchant = await gw.merchantWithKey();
    const client = await consoleSignIn(gw, merchant.merchantId);
    await client.post('/console/callbacks/address', { url: `${r.url}/orders` });
    const externals = [`ext-a-${Date.now()}`, `ext-b-${Date.now()}`];
    const orderIds: string[] = [];
    for (const externalOrderId of externals) {
      const response = await signedCall(
        gw.url,
        merchant.credentials,
        {
          path: COLLECT,
          body: {
            amount: '12.34',
            channelType: 'PIX',
            externalOrderId,
            userInfoType: 'CPF',
            userInfoNo: '52998224725',
            userInfoName: 'Maria',
          },
        },
        gw.clock.now(),
      );
      assert.equal(response.body.code, '200', response.body.msgEn);
      const orderId = response.body.data.currencyOrderVo.orderId as string;
      orderIds.push(orderId);
      assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
    }
    const [first = '', second = ''] = orderIds;
    const waiting = await eventually(
      async () => {
        const found = await gw.admin('GET', `/admin/v1/orders/${first}/callbacks`);
        const event = (found.body.events as { state: string; nextAttemptAt: number | null; attempts: number }[])[0];
        return event !== undefined && event.state === 'pending' && event.attempts === 1 && event.nextAttemptAt !== null
          ? event
          : undefined;
      },
      15_000,
      'the first attempt to fail and a retry to be scheduled',
    );
    const retryAt = waiting.nextAttemptAt ?? 0;
    const expected = `next retry at ${dateTime('en', retryAt)}`;
    assert.match(expected, /\d{4}, \d{1,2}:\d{2}:\d{2}( [AP]M)? UTC$/, 'a date, a time and a zone');

    const log = await client.get(`/console/callbacks?order=${first}`);
    assert.equal(log.status, 200, log.text.slice(0, 300));
    assert.ok(log.text.includes(expected), `the log shows "${expected}"`);
    const panel = await client.get(`/console/orders/${first}`);
    assert.ok(
      panel.text.slice(panel.text.indexOf('id="callbacks"')).includes(expected),
      'the order page shows it on the attempt too',
    );
    const pt = await client.get(`/console/callbacks?order=${first}&lang=pt-BR`);
    assert.equal(pt.status, 200, 'the log in Portuguese');

    const byExternal = await client.get(`/console/callbacks?external=${externals[0]}`);
    assert.equal(byExternal.status, 200, byExternal.text.slice(0, 300));
    assert.ok(
      byExternal.text.includes(`href="/console/orders/${first}"`),
      'the externalOrderId filter finds its order',
    );
    assert.ok(!byExternal.text.includes(`href="/console/orders/${second}"`), 'and only that order');
    assert.match(
      byExternal.text,
      new RegExp(`id="external"[^>]*value="${externals[0]}"`),
      'the filter keeps its value',
    );
    const unknown = await client.get('/console/callbacks?external=nobody-sent-this');
    assert.ok(unknown.text.includes('No callback attempts match.'), 'an unknown externalOrderId matches nothing');

    const payments = await client.get('/console/callbacks?event=payment');
    assert.ok(
      payments.text.includes(`href="/console/orders/${first}"`) &&
        payments.text.includes(`href="/console/orders/${second}"`),
      'the payment event lists both collections',
    );
    assert.match(payments.text, /<option value="payment" selected>/, 'the event filter keeps its value');
    const transfers = await client.get('/console/callbacks?event=transfer');
    assert.ok(transfers.text.includes('No callback attempts match.'), 'no transfer callbacks');
    const mixed = await client.get(`/console/callbacks?external=${externals[1]}&event=payment&order=${first}`);
    assert.ok(mixed.text.includes('No callback attempts match.'), 'the filters narrow together');
    const bad = await client.get('/console/callbacks?event=bogus');
    assert.equal(bad.status, 400, 'an unknown event is a field error');
    assert.match(bad.text, /id="event"[^>]*aria-invalid="true"/, 'the event field is marked');
  });
});
