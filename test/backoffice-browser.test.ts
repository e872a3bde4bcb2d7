import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Credentials } from '@cashgate/sdk';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  createOperator,
  OPERATOR_PASSWORD,
  signedInAs,
  totpCode,
  type TestOperator,
  auditRecords,
} from './support/backoffice.js';
import { axeViolations, launchBrowser, saveScreenshot, VIEWPORTS } from './support/browser.js';
import { databaseLabel } from './support/database.js';
import { freePort } from './support/fake-daraja.js';
import { apiPixTestEnv, PSP_TEST, startFakePsp, type FakePsp } from './support/fake-psp.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { startReceiver, until, type CallbackReceiver } from './support/receiver.js';

const PIX_COLLECT = '/api/v3/bra/createCollectingOrder';
const KENYA_TRANSFER = '/api/v3/ken/createTransferOrder';

/** What every back-office page must be: axe-clean, nothing wider than the screen. */
async function checkPage(page: Page, label: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${label}: accessibility`);
  const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
  assert.ok(overflow <= 0, `${label}: the page is ${overflow}px wider than the viewport`);
}

describe(`back office in a browser (${databaseLabel})`, () => {
  let gw: TestGateway;
  let psp: FakePsp;
  let receiver: CallbackReceiver;
  let browser: Browser | undefined;
  let skip: string | undefined;
  let merchant: { merchantId: string; credentials: Credentials };
  /** Browser contexts signed in as each role (cookies from a signed-in client). */
  const contexts = new Map<string, BrowserContext>();
  const made = { orderId: '', e2eid: '', unmatchedE2eid: '', assignOrderId: '' };

  before(async () => {
    const launched = await launchBrowser();
    if ('skip' in launched) {
      skip = launched.skip;
      return;
    }
    browser = launched.browser;
    psp = await startFakePsp();
    const port = await freePort();
    gw = await startTestGateway({
      env: {
        ...apiPixTestEnv(psp, port),
        APPROVAL_THRESHOLD: 'BRL:100.00',
      },
    });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: `${receiver.url}/cb` });
    await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '5000',
      reason: 'float for the payout tests',
    });
  });
  after(async () => {
    if (skip !== undefined) return;
    for (const context of contexts.values()) await context.close();
    await browser?.close();
    await receiver.close();
    await gw.close();
    await psp.close();
  });

  /** A browser context signed in as a new operator of `role` (signed in through the pages). */
  async function contextOf(role: string): Promise<BrowserContext> {
    const existing = contexts.get(role);
    if (existing !== undefined) return existing;
    const { client } = await signedInAs(gw, role);
    const context = await (browser as Browser).newContext({ viewport: VIEWPORTS.desktop });
    await context.addCookies(
      [...client.cookies].map(([name, value]) => ({ name, value, url: `${gw.url}/backoffice` })),
    );
    contexts.set(role, context);
    return context;
  }

  it('signs in with the password, enrols the authenticator from the QR page, and refuses a wrong code', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const operator: TestOperator = await createOperator(gw, 'support', 'Sam Support');
    const context = await (browser as Browser).newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    await page.goto(`${gw.url}/backoffice/orders`);
    assert.match(page.url(), /\/backoffice\/sign-in\?next=/);
    await checkPage(page, 'sign-in');
    await saveScreenshot(page, 'backoffice-sign-in');
    await page.fill('input[name=email]', operator.email);
    await page.fill('input[name=password]', OPERATOR_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/backoffice\/two-factor$/);
    assert.equal(await page.locator('.qr svg').count(), 1, 'a QR code');
    const secret = await page.inputValue('#secret-raw');
    assert.match(secret, /^[A-Z2-7]{16,}$/);
    assert.equal((await page.textContent('#secret'))?.replace(/\s/g, ''), secret, 'the same secret as text');
    await checkPage(page, 'enrolment');
    await saveScreenshot(page, 'backoffice-enrol');
    await page.fill('input[name=code]', '123456');
    await page.click('form[action="/backoffice/two-factor"] button[type=submit]');
    assert.match((await page.textContent('.summary')) ?? '', /Code: it is wrong/);
    assert.equal(await page.inputValue('#secret-raw'), secret, 'still the secret that was scanned');
    gw.clock.advance(30_000);
    await page.fill('input[name=code]', totpCode(gw, secret));
    await page.click('form[action="/backoffice/two-factor"] button[type=submit]');
    await page.waitForSelector('#recovery-codes');
    assert.equal(await page.locator('#recovery-codes li').count(), 10);
    await page.click('text=Continue to the back office');
    await page.waitForURL(/\/backoffice$/);
    assert.match((await page.textContent('header')) ?? '', /Sam Support/);
    await context.close();
  });

  it('shows a viewer no adjust, pause or create button, and refuses and records a forged POST', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const viewer = await contextOf('viewer');
    const page = await viewer.newPage();
    await page.goto(`${gw.url}/backoffice/money`);
    assert.equal(
      await page.locator('form[action*="balance-adjustments"], form[action*="/adjust"]').count(),
      0,
      'no adjust form',
    );
    await page.goto(`${gw.url}/backoffice/merchants/${merchant.merchantId}`);
    assert.equal(await page.locator('form[action*="/pause"]').count(), 0, 'no pause form');
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    // The form a finance operator would send, forged by the viewer's page.
    const forged = await page.evaluate(
      async ({ url, csrf: token }) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: token, currency: 'KES', amount: '10', reason: 'forged' }).toString(),
        });
        return { status: response.status, text: await response.text() };
      },
      { url: `${gw.url}/backoffice/merchants/${merchant.merchantId}/adjust`, csrf },
    );
    assert.equal(forged.status, 403, forged.text.slice(0, 300));
    const denied = await auditRecords(gw, 'access.denied');
    assert.ok(
      denied.some(
        (e) =>
          String(e.target?.id ?? '').includes('balance-adjustments') || String(e.target?.id ?? '').includes('/adjust'),
      ),
      'the forged POST is recorded',
    );
    await page.close();
  });

  it('pauses a merchant’s payouts, refuses its next create with code 300, and resumes it', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const support = await contextOf('support');
    const page = await support.newPage();
    await page.goto(`${gw.url}/backoffice/merchants/${merchant.merchantId}`);
    const pause = page.locator('form[action$="/pause"]').first();
    await pause.locator('select[name=what]').selectOption('payouts');
    await pause.locator('input[name=reason], textarea[name=reason]').fill('chargeback review');
    await pause.locator('button[type=submit]').click();
    await page.waitForLoadState('load');
    assert.match((await page.textContent('main')) ?? '', /paused/i);
    await checkPage(page, 'merchant paused');
    await saveScreenshot(page, 'backoffice-merchant');
    const refused = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: KENYA_TRANSFER,
        body: {
          channelType: 'BANK',
          currencyAmount: '100',
          externalOrderId: `bo-paused-${Date.now()}`,
          phone: '254712345678',
        },
      },
      Date.now(),
    );
    assert.equal(refused.body.code, '300');
    assert.match(refused.body.msg, /payouts are paused for this merchant by the operator/);
    const resume = page.locator('form[action$="/resume"]:has(input[name=what][value=payouts])');
    await resume.locator('input[name=reason], textarea[name=reason]').fill('review done');
    await resume.locator('button[type=submit]').click();
    await page.waitForLoadState('load');
    const accepted = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: KENYA_TRANSFER,
        body: {
          channelType: 'BANK',
          currencyAmount: '100',
          externalOrderId: `bo-resumed-${Date.now()}`,
          phone: '254712345678',
        },
      },
      Date.now(),
    );
    assert.equal(accepted.body.code, '200', JSON.stringify(accepted.body));
    assert.equal((await auditRecords(gw, 'merchant.pause'))[0]?.reason, 'chargeback review');
    assert.equal((await auditRecords(gw, 'merchant.resume'))[0]?.reason, 'review done');
    await page.close();
  });

  it('finds a paid Pix order by its e2eid and shows its timeline: request, journals, rail messages and callbacks in time order', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: PIX_COLLECT,
        body: { channelType: 'PIX', amount: '25.00', externalOrderId: `bo-pix-${Date.now()}` },
      },
      Date.now(),
    );
    assert.equal(created.body.code, '200', JSON.stringify(created.body));
    made.orderId = created.body.data.currencyOrderVo.orderId;
    let txid = '';
    await until(async () => {
      const row = await gw.gateway.store.read
        .selectFrom('orders')
        .select('channel_order_id')
        .where('id', '=', made.orderId)
        .executeTakeFirst();
      txid = row?.channel_order_id ?? '';
      assert.notEqual(txid, '');
    });
    const pix = await psp.pay(txid);
    made.e2eid = pix.endToEndId;
    await until(() => assert.ok(receiver.received.some((c) => JSON.stringify(c.body).includes(made.orderId))), 15_000);

    const viewer = await contextOf('viewer');
    const page = await viewer.newPage();
    await page.goto(`${gw.url}/backoffice/orders`);
    await page.fill('input[name=q]', made.e2eid);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/backoffice/orders/${made.orderId}`));
    const kinds = await page.locator('.timeline > li .kind').allTextContents();
    const first = (pattern: RegExp) => kinds.findIndex((text) => pattern.test(text));
    const request = first(/^Merchant's request$/);
    const rail = first(/^(To|From) /);
    const journal = first(/^Ledger journal$/);
    const callback = first(/^Callback/);
    for (const [name, at] of Object.entries({ request, journal, rail, callback }))
      assert.ok(at >= 0, `the timeline shows the ${name}: ${kinds.join(' | ')}`);
    assert.ok(
      request < rail && rail <= journal && journal < callback,
      `in time order: ${JSON.stringify({ request, rail, journal, callback })}`,
    );
    await checkPage(page, 'order timeline');
    await saveScreenshot(page, 'backoffice-order');
    await page.close();
  });

  it('assigns an unmatched Pix to a waiting order with four eyes: a finance operator asks, another approves', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const waiting = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: PIX_COLLECT,
        body: { channelType: 'PIX', amount: '150.00', externalOrderId: `bo-assign-${Date.now()}` },
      },
      Date.now(),
    );
    made.assignOrderId = waiting.body.data.currencyOrderVo.orderId;
    const unmatched = await psp.payKey(PSP_TEST.pixKey, '150.00', {
      payer: { cpf: '52998224725', nome: 'José Pagador' },
    });
    made.unmatchedE2eid = unmatched.endToEndId;
    const finance = await contextOf('finance');
    const page = await finance.newPage();
    await until(async () => {
      await page.goto(`${gw.url}/backoffice/queues`);
      assert.ok(((await page.textContent('main')) ?? '').includes(made.unmatchedE2eid));
    }, 15_000);
    await checkPage(page, 'queues');
    await saveScreenshot(page, 'backoffice-queues');
    const form = page.locator(`form[action*="${made.unmatchedE2eid}/assign"]`);
    await form.locator('input[name=orderId]').fill(made.assignOrderId);
    await form.locator('input[name=reason], textarea[name=reason]').fill('payer used the key instead of the QR code');
    await form.locator('button[type=submit]').click();
    await page.waitForLoadState('load');
    assert.match((await page.textContent('main')) ?? '', /second operator|approval/i);
    // Today counts what was seeded: the one unmatched Pix (held by its request) and the one approval.
    await page.goto(`${gw.url}/backoffice`);
    const figure = (href: string) => page.locator(`.counts li:has(a[href="${href}"]) .figure`).textContent();
    assert.equal(await figure('/backoffice/queues#pix-unmatched'), '1');
    assert.equal(await figure('/backoffice/queues#approvals'), '1');
    const pending = await gw.admin('GET', '/admin/v1/approvals?state=pending');
    const approval = pending.body.approvals.find((a: any) => JSON.stringify(a).includes(made.unmatchedE2eid));
    assert.ok(approval !== undefined, 'a pending approval');
    const second = await (browser as Browser).newContext({ viewport: VIEWPORTS.desktop });
    const { client } = await signedInAs(gw, 'finance');
    await second.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: `${gw.url}/backoffice` })));
    const approver = await second.newPage();
    await approver.goto(`${gw.url}/backoffice/queues`);
    const decide = approver.locator(`form[action="/backoffice/queues/approvals/${approval.approvalId}/approve"]`);
    await decide
      .locator('input[name=reason], textarea[name=reason]')
      .fill('checked the statement')
      .catch(() => undefined);
    await decide.locator('button[type=submit]').click();
    await approver.waitForLoadState('load');
    await until(async () => {
      const order = await gw.gateway.store.read
        .selectFrom('orders')
        .select('status')
        .where('id', '=', made.assignOrderId)
        .executeTakeFirst();
      assert.equal(order?.status, 2, 'the order is paid');
    }, 10_000);
    await second.close();
    await page.goto(`${gw.url}/backoffice`);
    assert.equal(await figure('/backoffice/queues#pix-unmatched'), '0', 'assigned: no longer unmatched');
    assert.equal(await figure('/backoffice/queues#approvals'), '0');
    await page.close();
    assert.ok((await auditRecords(gw, 'payment.assign.request')).some((e) => e.target?.id === made.unmatchedE2eid));
  });

  it('shows every one of those actions in the audit log', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const auditor = await contextOf('auditor');
    const page = await auditor.newPage();
    await page.goto(`${gw.url}/backoffice/audit`);
    const text = (await page.textContent('main')) ?? '';
    for (const action of [
      'merchant.pause',
      'merchant.resume',
      'access.denied',
      'operator.totp.enrol',
      'payment.assign.request',
    ]) {
      assert.ok(text.includes(action), `the audit log shows ${action}`);
    }
    await checkPage(page, 'audit log');
    await saveScreenshot(page, 'backoffice-audit');
    await page.close();
  });

  it('keeps every page axe-clean and within the screen on a desktop and a phone', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const admin = await contextOf('admin');
    const paths = [
      '/backoffice',
      '/backoffice/orders',
      `/backoffice/orders/${made.orderId}`,
      '/backoffice/queues',
      '/backoffice/merchants',
      `/backoffice/merchants/${merchant.merchantId}`,
      '/backoffice/money',
      '/backoffice/operators',
      '/backoffice/audit',
      '/backoffice/system',
    ];
    const cookies = await admin.cookies();
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const sized = await (browser as Browser).newContext({ viewport });
      await sized.addCookies(cookies);
      const page = await sized.newPage();
      for (const path of paths) {
        const response = await page.goto(`${gw.url}${path}`);
        assert.equal(response?.status(), 200, `${path} answers`);
        await checkPage(page, `${path} (${name})`);
        if (path === '/backoffice' && name === 'desktop') await saveScreenshot(page, 'backoffice-today');
        if (path === '/backoffice/money' && name === 'desktop') await saveScreenshot(page, 'backoffice-money');
        if (path === '/backoffice/system' && name === 'phone') await saveScreenshot(page, 'backoffice-system-phone');
      }
      await sized.close();
    }
  });
});
