/**
 * The back office's Orders pages over HTTP, against the real gateway and the sandbox rails: an order
 * found by its orderId, its externalOrderId and its Pix end-to-end id (one match opens its timeline),
 * a filtered list and its CSV (an audited export), the timeline (the merchant's request, its state
 * changes, journals and callbacks in time order, personal data masked), a viewer who sees no action
 * and whose forged POSTs are refused and recorded, a support operator who re-triggers a callback and
 * reveals personal data, and an admin who settles a payout in doubt by hand.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Credentials } from '@cashgate/sdk';
import { BackofficeClient, inputValue, signedInAs, auditRecords } from './support/backoffice.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
const CPF = '52998224725';
let seq = 0;

describe(`back office: orders (${databaseLabel})`, () => {
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: { merchantId: string; credentials: Credentials };
  let orderId: string;
  let externalOrderId: string;
  let other: string;
  const clients = new Map<string, BackofficeClient>();
  const as = (role: string): BackofficeClient => {
    const client = clients.get(role);
    assert.ok(client !== undefined, role);
    return client;
  };
  const auditOf = (action: string) => auditRecords(gw, action);
  const collect = async (amount: string): Promise<{ orderId: string; externalOrderId: string }> => {
    const body = {
      amount,
      channelType: 'PIX',
      externalOrderId: `bo-orders-${Date.now()}-${++seq}`,
      userInfoType: 'CPF',
      userInfoNo: CPF,
      userInfoName: 'Maria da Silva',
    };
    const created = await signedCall(gw.url, merchant.credentials, { path: COLLECT, body }, gw.clock.now());
    assert.equal(created.body.code, '200', created.body.msgEn);
    return { orderId: created.body.data.currencyOrderVo.orderId, externalOrderId: body.externalOrderId };
  };

  before(async () => {
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    // A debug-mode key: its requests are in the request log the timeline shows.
    merchant = await gw.merchantWithKey({ debug: true });
    assert.equal(
      (await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url })).status,
      200,
    );
    ({ orderId, externalOrderId } = await collect('12.34'));
    gw.clock.advance(1_000);
    assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
    await receiver.waitFor(1);
    gw.clock.advance(1_000);
    other = (await collect('99.00')).orderId;
    for (const role of ['viewer', 'support', 'admin']) clients.set(role, (await signedInAs(gw, role)).client);
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  it('finds an order by its orderId and by its externalOrderId, and opens its timeline', async () => {
    for (const id of [orderId, externalOrderId]) {
      const found = await as('viewer').get(`/backoffice/orders?q=${encodeURIComponent(id)}`);
      assert.equal(found.status, 303, found.text.slice(0, 300));
      assert.equal(found.location, `/backoffice/orders/${orderId}`);
    }
    const none = await as('viewer').get('/backoffice/orders?q=no-such-id');
    assert.equal(none.status, 200);
    assert.match(none.text, /No order is known by this id/);
  });

  it('finds a Pix collection by its end-to-end id', async () => {
    const revealed = await gw.admin('GET', `/admin/v1/orders/${orderId}/personal-data`);
    const e2eid = revealed.body.details.endToEndId as string;
    assert.match(e2eid, /^E\d{8}/);
    const found = await as('viewer').get(`/backoffice/orders?q=${e2eid}`);
    assert.equal(found.status, 303);
    assert.equal(found.location, `/backoffice/orders/${orderId}`);
  });

  it('lists orders by filter, newest first, refuses a bad amount, and exports the filter as an audited CSV', async () => {
    const all = await as('viewer').get(`/backoffice/orders?merchant=${merchant.merchantId}`);
    assert.equal(all.status, 200);
    assert.ok(all.text.indexOf(other) > 0 && all.text.indexOf(other) < all.text.indexOf(orderId), 'newest first');
    const paid = await as('viewer').get(
      `/backoffice/orders?merchant=${merchant.merchantId}&area=bra&kind=collection&status=2&channel=PIX&min=12.00&max=12.34`,
    );
    assert.equal(paid.status, 200);
    assert.ok(paid.text.includes(orderId));
    assert.ok(!paid.text.includes(other));
    const bad = await as('viewer').get('/backoffice/orders?min=12,5');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Amount from: write an amount as plain decimal text/);
    assert.match(bad.text, /aria-invalid="true"/);

    const csv = await as('viewer').get(`/backoffice/orders.csv?merchant=${merchant.merchantId}&min=50`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    assert.match(lines[0] ?? '', /^created_utc,order_id,merchant_id,/);
    assert.equal(lines.length, 2);
    assert.ok(lines[1]?.includes(other) && lines[1].includes('99.00'));
    const exports = await auditOf('order.export');
    assert.equal(exports.length, 1);
    assert.deepEqual(exports[0].changes.request, { merchant: merchant.merchantId, min: '50' });
  });

  it('tells the whole story in time order, personal data masked', async () => {
    const page = await as('viewer').get(`/backoffice/orders/${orderId}`);
    assert.equal(page.status, 200, page.text.slice(0, 300));
    const at = (text: string) => {
      const index = page.text.indexOf(text);
      assert.ok(index > 0, `the timeline shows ${text}`);
      return index;
    };
    const request = at('<span class="kind">Merchant&#39;s request</span>');
    assert.ok(page.text.includes('From the request log'), 'the request log record');
    const state = at('<span class="kind">State change</span>');
    const journal = at('<span class="kind">Ledger journal</span>');
    const callback = at('<span class="kind">Callback to the merchant</span>');
    const attempt = at('<span class="kind">Callback attempt 1</span>');
    const story = [...page.text.matchAll(/<span class="kind">([^<]*)<\/span> · <span class="muted">([^<]*)</g)].map(
      (m) => `${m[1]} @ ${m[2]}`,
    );
    assert.ok(request < state && state < journal && journal < callback && callback < attempt, story.join('\n'));
    const leak = page.text.indexOf(CPF);
    assert.ok(leak < 0, `the CPF is masked: …${page.text.slice(leak - 300, leak + 50)}…`);
    assert.ok(page.text.includes('529••••••25'), 'masked as the admin routes mask it');
  });

  it('shows a viewer no action, and refuses and records a forged one', async () => {
    const page = await as('viewer').get(`/backoffice/orders/${orderId}`);
    for (const action of ['rail-query', 'callbacks', 'personal-data', 'settle-by-hand'])
      assert.ok(!page.text.includes(`/backoffice/orders/${orderId}/${action}`), `no ${action} form`);
    for (const action of ['rail-query', 'callbacks']) {
      const forged = await as('viewer').post(`/backoffice/orders/${orderId}/${action}`, {}, page.text);
      assert.equal(forged.status, 403, action);
    }
    const denied = (await auditOf('access.denied')).filter((e: any) =>
      /orders\/.+\/(rail-query|callbacks)$/.test(e.target?.id ?? ''),
    );
    assert.equal(denied.length, 2, JSON.stringify(denied));
  });

  it('lets a support operator re-trigger the callback and reveal personal data', async () => {
    const page = await as('support').get(`/backoffice/orders/${orderId}`);
    assert.ok(page.text.includes(`action="/backoffice/orders/${orderId}/callbacks"`));
    assert.ok(page.text.includes(`action="/backoffice/orders/${orderId}/rail-query"`));
    assert.ok(!page.text.includes('settle-by-hand'), 'settling is an admin’s, and only for a payout');
    const before = receiver.received.length;
    const sent = await as('support').post(`/backoffice/orders/${orderId}/callbacks`, {}, page.text);
    assert.equal(sent.status, 303, sent.text.slice(0, 500));
    assert.equal(sent.location, `/backoffice/orders/${orderId}?done=retriggered`);
    await receiver.waitFor(before + 1);
    const after = await as('support').get(`/backoffice/orders/${orderId}?done=retriggered`);
    assert.match(after.text, /class="notice" role="status">The callback was sent again/);
    assert.ok(after.text.includes('re-triggered'));
    const retriggers = (await auditOf('callback.retrigger')).filter((e: any) => e.target?.id === orderId);
    assert.equal(retriggers.length, 1, JSON.stringify(retriggers, null, 1));

    // A sandbox order has no live rail to ask: the route's refusal shows on the page.
    const asked = await as('support').post(`/backoffice/orders/${orderId}/rail-query`, {}, page.text);
    assert.equal(asked.status, 409);
    assert.match(asked.text, /role="alert"/);

    const revealed = await as('support').post(`/backoffice/orders/${orderId}/personal-data`, {}, page.text);
    assert.equal(revealed.status, 200);
    assert.ok(revealed.text.includes(CPF), 'the revealed page shows the CPF');
    assert.equal(revealed.headers.get('cache-control'), 'no-store');
    const reveals = (await auditOf('pii.reveal')).filter(
      (e: any) => e.target?.id === orderId && e.actor.type === 'operator',
    );
    assert.equal(reveals.length, 1, JSON.stringify(reveals));
    const again = await as('support').get(`/backoffice/orders/${orderId}`);
    assert.ok(!again.text.includes(CPF), 'gone once the page is loaded again');
  });

  it('lets an admin settle a payout in doubt by hand, flagged on its timeline', async () => {
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '100.00',
      reason: 'float',
    });
    const body = {
      currencyAmount: '20.00',
      channelType: 'PIX',
      externalOrderId: `bo-orders-trf-${Date.now()}`,
      personIdType: 'CPF',
      personId: CPF,
      personName: 'Maria da Silva',
      accountType: 'EMAIL',
      accountId: 'maria@example.com.br',
    };
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/bra/createTransferOrder', body },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', created.body.msgEn);
    const payout = created.body.data.orderId as string;
    const page = await as('admin').get(`/backoffice/orders/${payout}`);
    assert.ok(page.text.includes(`action="/backoffice/orders/${payout}/settle-by-hand"`), 'the admin sees the form');
    const wrong = await as('admin').post(
      `/backoffice/orders/${payout}/settle-by-hand`,
      { outcome: 'failed', reason: 'provider says it bounced', confirm: 'not-the-id' },
      page.text,
    );
    assert.equal(wrong.status, 400, wrong.text.slice(0, 300));
    assert.match(wrong.text, /role="alert"/);
    const settled = await as('admin').post(
      `/backoffice/orders/${payout}/settle-by-hand`,
      { outcome: 'failed', reason: 'provider says it bounced', confirm: payout },
      page.text,
    );
    assert.equal(settled.status, 303, settled.text.slice(0, 500));
    await eventually(async () => {
      const after = await as('admin').get(`/backoffice/orders/${payout}`);
      assert.match(after.text, /Settled by hand: marked failed by /);
      assert.match(after.text, /<span class="kind">Settled by hand<\/span>/);
      assert.ok(!after.text.includes('settle-by-hand"'), 'a payout that ended is not offered again');
      return true;
    });
    assert.equal(inputValue(page.text, '_csrf').length > 0, true);
  });
});
