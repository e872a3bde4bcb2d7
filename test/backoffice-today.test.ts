import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually } from './support/receiver.js';
import { inputValue, signedInAs } from './support/backoffice.js';

const COLLECT = '/api/v3/bra/createCollectingOrder';
let seq = 0;

/** The figure of the Today card whose link text is `label`. */
function figure(page: string, label: string): number {
  const match = new RegExp(`<div class="figure">(\\d+)</div><a href="[^"]*">${label}</a>`).exec(page);
  assert.ok(match, `a card "${label}" on Today`);
  return Number(match[1]);
}

describe(`back office Today and Queues (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchantId: string;
  let approvalId: string;

  before(async () => {
    gw = await startTestGateway({
      env: {
        APPROVAL_THRESHOLD: 'BRL:100.00',
        BACKOFFICE_LOW_WATER: 'BRL:5000.00,KES:100000,USDT:1000',
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
        // One attempt, then a long wait: the two callbacks stay retrying.
        CALLBACK_RETRY_INTERVAL_MS: '3600000',
        CALLBACK_RETRY_WINDOW_MS: '86400000',
        CALLBACK_TIMEOUT_MS: '2000',
        CALLBACK_POLL_INTERVAL_MS: '50',
      },
    });
    // A merchant whose callback address refuses every connection: two paid orders, two callbacks failing.
    const merchant = await gw.merchantWithKey();
    merchantId = merchant.merchantId;
    assert.equal(
      (await gw.admin('PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: 'http://127.0.0.1:9/cb' })).status,
      200,
    );
    const orders: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const body = {
        amount: '12.34',
        channelType: 'PIX',
        externalOrderId: `bo-today-${Date.now()}-${++seq}`,
        userInfoType: 'CPF',
        userInfoNo: '52998224725',
        userInfoName: 'Maria',
      };
      const created = await signedCall(gw.url, merchant.credentials, { path: COLLECT, body }, gw.clock.now());
      assert.equal(created.body.code, '200', created.body.msgEn);
      const orderId = created.body.data.currencyOrderVo.orderId as string;
      assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
      orders.push(orderId);
    }
    for (const orderId of orders) {
      await eventually(
        async () => {
          const h = await gw.admin('GET', `/admin/v1/orders/${orderId}/callbacks`);
          return (h.body.attempts as unknown[]).length > 0 ? true : undefined;
        },
        15_000,
        `a failed attempt of ${orderId}'s callback`,
      );
    }
    // A balance adjustment above APPROVAL_THRESHOLD (asked with the root token): one approval waits.
    const asked = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '250.00',
      reason: 'goodwill credit',
    });
    assert.ok(asked.status === 200 || asked.status === 202, JSON.stringify(asked.body));
    const pending = await gw.admin('GET', '/admin/v1/approvals?state=pending');
    approvalId = (pending.body.approvals as { approvalId: string }[])[0]?.approvalId ?? '';
    assert.notEqual(approvalId, '');
    // An unmatched Pix, as reconciliation records one (the sandbox rail has no PSP to send it): the
    // assign and return actions on it are tested against the live fake PSP in test/pix-assign.test.ts.
    const now = gw.clock.now();
    await gw.gateway.store.transact(async (tx) => {
      await tx
        .insertInto('pix_received')
        .values({
          e2eid: `E00000000${now}BOTODAY`,
          txid: null,
          order_id: null,
          amount: 1050,
          paid_at: new Date(now).toISOString(),
          payer_name: 'Joana Pagadora',
          payer_document: '52998224725',
          disposition: 'unmatched',
          reason: null,
          refund_id: null,
          refund_status: null,
          refund_rtr_id: null,
          next_check_at: null,
          unmatched_posted: 1,
          approval_id: null,
          assigned_by: null,
          assigned_reason: null,
          assigned_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    });
  });
  after(async () => {
    await gw.close();
  });

  it('counts on Today what was seeded: unmatched Pix, failing callbacks by merchant, approvals; floats against the low-water marks', async () => {
    const { client } = await signedInAs(gw, 'viewer');
    const today = await client.get('/backoffice');
    assert.equal(today.status, 200, today.text.slice(0, 400));
    assert.equal(figure(today.text, 'Pix received unmatched'), 1);
    assert.equal(figure(today.text, 'Approvals waiting for a second operator'), 1);
    assert.equal(figure(today.text, 'Payouts waiting on their rail past its deadline'), 0);
    assert.equal(figure(today.text, 'Pix returns failed'), 0);
    assert.match(
      today.text,
      new RegExp(`<a href="/backoffice/merchants/${merchantId}">[^<]*</a></td><td class="num">2</td>`),
    );
    assert.match(today.text, /Rail health/);
    assert.match(today.text, /since it started/);
    // The BRL float (nothing collected through the sandbox rail is paid out: it is below 5,000.00).
    assert.match(today.text, /system\/BRL\/rail_clearing/);
    assert.match(today.text, /below the low-water mark/);
  });

  it('shows a viewer the queues without action forms, and refuses a forged action with 403 and access.denied', async () => {
    const { client, operator } = await signedInAs(gw, 'viewer');
    const queues = await client.get('/backoffice/queues');
    assert.equal(queues.status, 200, queues.text.slice(0, 400));
    assert.match(queues.text, /Joana Pagadora|J•+/);
    assert.doesNotMatch(queues.text, /52998224725/, 'the payer document is masked');
    assert.doesNotMatch(queues.text, /action="\/backoffice\/queues\/pix\//);
    assert.doesNotMatch(queues.text, /action="\/backoffice\/queues\/approvals\//);
    assert.match(queues.text, new RegExp(`id="approval-${approvalId}"`));
    const forged = await client.post(
      `/backoffice/queues/approvals/${approvalId}/approve`,
      { reason: 'me' },
      queues.text,
    );
    assert.equal(forged.status, 403);
    const audit = await gw.admin('GET', `/admin/v1/audit-log?action=access.denied`);
    assert.ok(
      (audit.body.entries as unknown[]).some((r) => JSON.stringify(r).includes(operator.email)),
      JSON.stringify(audit.body).slice(0, 500),
    );
    const still = await gw.admin('GET', '/admin/v1/approvals?state=pending');
    assert.equal((still.body.approvals as unknown[]).length, 1, 'still pending');
  });

  it("lets a finance operator approve another's request from the queue page (four eyes)", async () => {
    const { client } = await signedInAs(gw, 'finance');
    const queues = await client.get('/backoffice/queues');
    assert.match(queues.text, new RegExp(`action="/backoffice/queues/approvals/${approvalId}/approve"`));
    assert.match(queues.text, new RegExp(`action="/backoffice/queues/pix/[^"]+/assign"`), 'finance may assign');
    assert.notEqual(inputValue(queues.text, '_csrf'), '');
    const approved = await client.post(
      `/backoffice/queues/approvals/${approvalId}/approve`,
      { reason: 'checked the ticket' },
      queues.text,
    );
    assert.equal(approved.status, 303, approved.text.slice(0, 400));
    assert.match(approved.location ?? '', /done=approved/);
    const after_ = await client.get(approved.location ?? '/backoffice/queues');
    assert.match(after_.text, /Approved and carried out/);
    const decided = await gw.admin('GET', '/admin/v1/approvals?state=approved');
    assert.ok((decided.body.approvals as { approvalId: string }[]).some((a) => a.approvalId === approvalId));
    const today = await client.get('/backoffice');
    assert.equal(figure(today.text, 'Approvals waiting for a second operator'), 0);
  });
});
