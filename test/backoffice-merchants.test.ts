/**
 * The back office's Merchants and Money pages over HTTP, against the real gateway: the list finds a
 * merchant by a part of its name, a merchant's page shows its keys, fees and balances, a support
 * operator pauses its payouts (the merchant's next transfer create is refused with 300) and resumes
 * them, a viewer sees no pause, create or adjust form and a forged adjustment is refused and
 * recorded, a finance operator's adjustment below the threshold shows on the money page (one above
 * it waits for a second operator, who approves it), and the money export is audited.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Credentials } from '@cashgate/sdk';
import { BackofficeClient, inputValue, signedInAs, auditRecords } from './support/backoffice.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const KEN_TRANSFER = '/api/v3/ken/createTransferOrder';

let seq = 0;
const kenTransfer = () => ({
  channelType: 'BANK',
  currencyAmount: '700',
  externalOrderId: `bo-trf-${Date.now()}-${++seq}`,
  phone: '254110000001',
});

describe(`back office: merchants and money (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: { merchantId: string; name: string; credentials: Credentials };
  let other: { merchantId: string };
  const clients = new Map<string, BackofficeClient>();
  const as = (role: string): BackofficeClient => {
    const client = clients.get(role);
    assert.ok(client !== undefined, role);
    return client;
  };
  const auditOf = (action: string) => auditRecords(gw, action);

  before(async () => {
    gw = await startTestGateway({ env: { APPROVAL_THRESHOLD: 'KES:100000' }, workers: false });
    const name = `Duka la Azure ${Date.now()}`;
    const created = await gw.admin('POST', '/admin/v1/merchants', { name });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const key = await gw.admin('POST', `/admin/v1/merchants/${created.body.merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: ['0.0.0.0'],
      label: 'shop backend',
    });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    gw.clock.advance(Math.max(0, key.body.activeAt - gw.clock.now()) + 1);
    merchant = {
      merchantId: created.body.merchantId,
      name,
      credentials: { accessKey: key.body.accessKey, secretKey: key.body.secretKey },
    };
    other = await gw.merchantWithKey();
    const fee = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/ken.transfer.BANK`, {
      percentBps: 150,
      fixed: '10',
      reason: 'standard Kenya schedule',
    });
    assert.equal(fee.status, 200, JSON.stringify(fee.body));
    const credit = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '50000',
      reason: 'opening float',
    });
    assert.equal(credit.status, 200, JSON.stringify(credit.body));
    for (const role of ['viewer', 'support', 'finance']) clients.set(role, (await signedInAs(gw, role)).client);
  });

  after(async () => {
    await gw.close();
  });

  it('finds a merchant by a part of its name, in any case, and by its id', async () => {
    const found = await as('viewer').get('/backoffice/merchants?q=duka+LA+azure');
    assert.equal(found.status, 200, found.text.slice(0, 500));
    assert.match(found.text, new RegExp(`href="/backoffice/merchants/${merchant.merchantId}"`));
    assert.doesNotMatch(found.text, new RegExp(other.merchantId));
    const byId = await as('viewer').get(`/backoffice/merchants?q=${other.merchantId}`);
    assert.match(byId.text, new RegExp(`href="/backoffice/merchants/${other.merchantId}"`));
    assert.doesNotMatch(byId.text, new RegExp(merchant.merchantId));
    const none = await as('viewer').get('/backoffice/merchants?q=%25_nothing');
    assert.doesNotMatch(none.text, /href="\/backoffice\/merchants\/mch_/, 'LIKE wildcards are taken literally');
  });

  it('pages the list newest first', async () => {
    for (let i = 0; i < 51; i += 1) {
      gw.clock.advance(1);
      assert.equal((await gw.admin('POST', '/admin/v1/merchants', { name: `Bulk ${i}` })).status, 200);
    }
    const first = await as('viewer').get('/backoffice/merchants');
    assert.match(first.text, /Bulk 50/);
    assert.doesNotMatch(first.text, /Duka la Azure/);
    const next = /href="(\/backoffice\/merchants\?before=[^"]+)"/.exec(first.text)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(next !== undefined, 'a link to the next page');
    const second = await as('viewer').get(next);
    assert.match(second.text, /Duka la Azure/);
    assert.doesNotMatch(second.text, /Bulk 50</);
  });

  it("shows a merchant's keys with their last use, fees and balances", async () => {
    const used = await signedCall(
      gw.url,
      merchant.credentials,
      { method: 'GET', path: '/api/v3/ken/query/balance' },
      gw.clock.now(),
    );
    assert.equal(used.body.code, '200', JSON.stringify(used.body));
    const page = await as('viewer').get(`/backoffice/merchants/${merchant.merchantId}`);
    assert.equal(page.status, 200, page.text.slice(0, 500));
    assert.match(page.text, new RegExp(merchant.credentials.accessKey));
    assert.match(page.text, /shop backend/);
    assert.doesNotMatch(page.text, new RegExp(merchant.credentials.secretKey), 'never the secret');
    assert.doesNotMatch(page.text, /<td class="date">Never<\/td>/, 'the key has been used');
    assert.match(page.text, /ken\.transfer\.BANK/);
    assert.match(page.text, /1\.50 %/);
    assert.match(page.text, /50,000/);
    const missing = await as('viewer').get('/backoffice/merchants/mch_nope');
    assert.equal(missing.status, 404);
  });

  it("lets a support operator pause a merchant's payouts with a reason: the next transfer create is refused with 300; resumed, it works", async () => {
    const support = as('support');
    const page = await support.get(`/backoffice/merchants/${merchant.merchantId}`);
    assert.match(page.text, /action="\/backoffice\/merchants\/[^"]+\/pause"/);
    assert.doesNotMatch(page.text, /\/adjust"/, 'support may not adjust');
    const paused = await support.post(
      `/backoffice/merchants/${merchant.merchantId}/pause`,
      { what: 'payouts', reason: 'chargeback ratio review, case 4411' },
      page.text,
    );
    assert.equal(paused.status, 303, paused.text.slice(0, 500));
    assert.equal(paused.location, `/backoffice/merchants/${merchant.merchantId}?done=paused`);
    const location = paused.location;

    const refused = await signedCall(
      gw.url,
      merchant.credentials,
      { path: KEN_TRANSFER, body: kenTransfer() },
      gw.clock.now(),
    );
    assert.equal(refused.body.code, '300', JSON.stringify(refused.body));

    const shown = await support.get(location);
    assert.match(shown.text, /<div class="paused" id="paused-payouts">/);
    assert.match(shown.text, /chargeback ratio review, case 4411/);
    assert.match(shown.text, /role="status"/);
    const listed = await as('viewer').get(`/backoffice/merchants?q=${merchant.merchantId}`);
    assert.match(listed.text, /badge bad">Payouts paused/);

    const resumed = await support.post(
      `/backoffice/merchants/${merchant.merchantId}/resume`,
      { what: 'payouts', reason: 'review done' },
      shown.text,
    );
    assert.equal(resumed.status, 303, resumed.text.slice(0, 500));
    const after = await support.get(resumed.location ?? '');
    assert.doesNotMatch(after.text, /class="paused"/);
    const accepted = await signedCall(
      gw.url,
      merchant.credentials,
      { path: KEN_TRANSFER, body: kenTransfer() },
      gw.clock.now(),
    );
    assert.equal(accepted.body.code, '200', JSON.stringify(accepted.body));
    assert.equal((await auditOf('merchant.pause'))[0]?.reason, 'chargeback ratio review, case 4411');
    assert.equal((await auditOf('merchant.resume'))[0]?.reason, 'review done');
  });

  it('shows a viewer no pause, create or adjust form; a forged adjustment is 403 and recorded as access.denied', async () => {
    const viewer = as('viewer');
    const list = await viewer.get('/backoffice/merchants');
    assert.doesNotMatch(list.text, /<form method="post" action="\/backoffice\/merchants"/);
    const detail = await viewer.get(`/backoffice/merchants/${merchant.merchantId}`);
    assert.doesNotMatch(detail.text, /\/pause"|\/resume"|\/adjust"/);
    const money = await viewer.get('/backoffice/money');
    assert.equal(money.status, 200, money.text.slice(0, 500));
    assert.doesNotMatch(money.text, /\/adjust"|\/approve"|\/reject"/);
    const forged = await viewer.post(
      '/backoffice/money/adjust',
      { merchantId: merchant.merchantId, currency: 'KES', amount: '10', reason: 'forged' },
      money.text,
    );
    assert.equal(forged.status, 403, forged.text.slice(0, 300));
    const forgedHere = await viewer.post(
      `/backoffice/merchants/${merchant.merchantId}/adjust`,
      { currency: 'KES', amount: '10', reason: 'forged' },
      detail.text,
    );
    assert.equal(forgedHere.status, 403);
    const forgedPause = await viewer.post(
      `/backoffice/merchants/${merchant.merchantId}/pause`,
      { what: 'payments', reason: 'forged' },
      detail.text,
    );
    assert.equal(forgedPause.status, 403);
    const denied = await auditOf('access.denied');
    assert.ok(
      denied.some((e) => JSON.stringify(e).includes('balance-adjustments') && JSON.stringify(e).includes('viewer')),
      JSON.stringify(denied.slice(0, 3)),
    );
    const shown = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/balances`);
    assert.equal(shown.body.balances.find((b: any) => b.currency === 'KES')?.available !== undefined, true);
  });

  it("shows a finance operator's adjustment below the threshold on the money page; one above it waits for a second operator", async () => {
    const finance = as('finance');
    const money = await finance.get('/backoffice/money');
    assert.match(money.text, /action="\/backoffice\/money\/adjust"/);
    const applied = await finance.post(
      '/backoffice/money/adjust',
      { merchantId: merchant.merchantId, currency: 'KES', amount: '250', reason: 'goodwill credit, ticket 77' },
      money.text,
    );
    assert.equal(applied.status, 303, applied.text.slice(0, 800));
    assert.match(applied.location ?? '', /done=applied/);
    const shown = await finance.get(applied.location ?? '');
    assert.match(shown.text, /The adjustment was applied\./);
    assert.match(shown.text, /goodwill credit, ticket 77/);
    assert.match(shown.text, new RegExp(merchant.name));
    assert.match(shown.text, /Below the threshold/);

    const refused = await finance.post(
      '/backoffice/money/adjust',
      { merchantId: merchant.merchantId, currency: 'KES', amount: '12.5', reason: 'bad amount' },
      shown.text,
    );
    assert.equal(refused.status, 400, refused.text.slice(0, 500));
    assert.match(refused.text, /class="summary" role="alert"/);

    const big = await finance.post(
      '/backoffice/money/adjust',
      { merchantId: merchant.merchantId, currency: 'KES', amount: '200000', reason: 'migration from the old platform' },
      shown.text,
    );
    assert.equal(big.status, 303, big.text.slice(0, 500));
    assert.match(big.location ?? '', /done=pending/);
    const waiting = await finance.get('/backoffice/money');
    assert.match(waiting.text, /href="\/backoffice\/queues#approvals"/, 'decided on the Queues page');
    const second = (await signedInAs(gw, 'finance')).client;
    const queues = await second.get('/backoffice/queues');
    const approvalId = /action="\/backoffice\/queues\/approvals\/([^/"]+)\/approve"/.exec(queues.text)?.[1];
    assert.ok(approvalId !== undefined, 'the pending adjustment has an approve form for another operator');
    const own = await finance.post(`/backoffice/queues/approvals/${approvalId}/approve`, {}, waiting.text);
    assert.equal(own.status, 403, 'not by the operator who asked');
    const approved = await second.post(
      `/backoffice/queues/approvals/${approvalId}/approve`,
      { reason: 'checked the old ledger' },
      queues.text,
    );
    assert.equal(approved.status, 303, approved.text.slice(0, 500));
    const after = await second.get('/backoffice/money');
    assert.match(after.text, /migration from the old platform/);
    assert.match(after.text, /approved by/);
  });

  it("reconciles a day per rail: the ledger's rail clearing against the rails' confirmations", async () => {
    // A payout paid through the sandbox M-Pesa rail: the ledger sends it out, and no rail confirms it.
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      { path: KEN_TRANSFER, body: kenTransfer() },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', JSON.stringify(created.body));
    const orderId = created.body.data.orderId as string;
    assert.equal((await gw.sandbox(orderId, 'processing')).status, 200);
    assert.equal((await gw.sandbox(orderId, 'succeeded')).body.orderStatus, 8);
    const day = new Date(gw.clock.now()).toISOString().slice(0, 10);
    const page = await as('viewer').get(`/backoffice/money?day=${day}`);
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`Reconciliation of ${day}`));
    assert.equal(inputValue(page.text, 'day'), day);
    const mpesa = /<tr><th scope="row">M-Pesa[\s\S]*?<\/tr>/.exec(page.text)?.[0] ?? '';
    assert.match(mpesa, /Differs by KES.700</, mpesa);
    assert.match(page.text, /<th scope="row">OXXO[\s\S]*?not kept/);
    const quiet = await as('viewer').get('/backoffice/money?day=2001-01-01');
    const quietMpesa = /<tr><th scope="row">M-Pesa[\s\S]*?<\/tr>/.exec(quiet.text)?.[0] ?? '';
    assert.match(quietMpesa, /Matches/);
    assert.doesNotMatch(quietMpesa, /Differs/);
  });

  it('exports every balance as CSV, audited as money.export', async () => {
    const before = (await auditOf('money.export')).length;
    const csv = await as('viewer').get('/backoffice/money.csv');
    assert.equal(csv.status, 200, csv.text.slice(0, 300));
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    assert.match(csv.text, /^account,merchant_id,merchant_name,currency,kind,balance\r\n/);
    assert.match(
      csv.text,
      new RegExp(`${merchant.merchantId}/KES/available,${merchant.merchantId},Duka la Azure \\d+,KES,available,\\d+`),
    );
    assert.match(csv.text, /system\/KES\/adjustments,,,KES,adjustments,-\d+/);
    const records = await auditOf('money.export');
    assert.equal(records.length, before + 1);
    assert.match(JSON.stringify(records[0]), /viewer/);
  });
});
