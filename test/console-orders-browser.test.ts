import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchBrowser, saveScreenshot, VIEWPORTS } from './support/browser.js';
import { createConsoleUser } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

describe(`console overview and orders in a browser (${databaseLabel})`, () => {
  let gw: TestGateway;
  let browser: Browser | undefined;
  let skip: string | undefined;
  let user: { email: string; password: string };
  const ids: string[] = [];

  before(async () => {
    const launched = await launchBrowser();
    if ('skip' in launched) {
      skip = launched.skip;
      return;
    }
    browser = launched.browser;
    gw = await startTestGateway({ workers: false });
    const merchant = await gw.merchantWithKey();
    user = await createConsoleUser(gw, merchant.merchantId, { name: 'Ana Souza' });
    let seq = 0;
    const call = (path: string, body: Record<string, unknown>) =>
      signedCall(
        gw.url,
        merchant.credentials,
        { path, body: { externalOrderId: `browser-${Date.now()}-${++seq}`, ...body } },
        gw.clock.now(),
      );
    for (const [amount, paid] of [
      ['150.00', '150.00'],
      ['123.45', '100.00'],
      ['42.50', undefined],
    ] as const) {
      const made = await call('/api/v3/bra/createCollectingOrder', {
        amount,
        channelType: 'PIX',
        userInfoType: 'CPF',
        userInfoNo: '52998224725',
        remark: 'Pedido da loja',
      });
      assert.equal(made.body.code, '200', made.body.msgEn);
      const id = made.body.data.currencyOrderVo.orderId as string;
      ids.push(id);
      if (paid !== undefined) assert.equal((await gw.sandbox(id, 'paid', { amount: paid })).status, 200, `${id} paid`);
    }
    const ken = await call('/api/v3/ken/createCollectingOrder', {
      amount: '1500',
      channelType: 'CHARGE',
      phone: '254712345678',
      checkingPhone: '254712345678',
    });
    assert.equal(ken.body.code, '200', ken.body.msgEn);
    ids.push(ken.body.data.currencyOrderVo.orderId as string);
    assert.equal((await gw.sandbox(ids.at(-1) ?? '', 'paid')).status, 200, 'the Kenya order is paid');
  });
  after(async () => {
    await browser?.close();
    if (browser !== undefined) await gw.close();
  });

  async function signedIn(viewport: { width: number; height: number }) {
    if (browser === undefined) throw new Error('no browser');
    const context = await browser.newContext({ viewport, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(new URL('/console/sign-in', gw.url).toString());
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
    assert.ok(page.url().endsWith('/console'), `signed in: ${page.url()}`);
    return { context, page };
  }

  /** No accessibility violation of any impact, and nothing wider than the screen. */
  async function checkPage(page: Page, label: string): Promise<void> {
    assert.deepEqual(await axeViolations(page), [], `${label}: accessibility`);
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    assert.ok(overflow <= 0, `${label}: the page is ${overflow}px wider than the viewport`);
  }

  /** How many lines each date cell's text takes. */
  const dateLines = (page: Page, selector: string) =>
    page.locator(selector).evaluateAll((cells) =>
      cells.map((cell) => {
        const range = cell.ownerDocument.createRange();
        range.selectNodeContents(cell);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        return { text: cell.textContent ?? '', lines: tops.size };
      }),
    );

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`the overview has its figures and its chart, accessibly, on a ${name}`, async (t) => {
      if (skip !== undefined) return t.skip(skip);
      const { context, page } = await signedIn(viewport);
      try {
        const chart = page.getByRole('img', { name: /Orders per day, last 7 days \(UTC\)/ });
        assert.equal(await chart.count(), 1, 'the chart, named with its figures');
        const box = await chart.boundingBox();
        assert.ok(box !== null && box.width > 200 && box.height > 60, `the chart is drawn: ${JSON.stringify(box)}`);
        assert.ok(box.x + box.width <= viewport.width, 'the chart fits the screen');
        assert.equal(await page.locator('#stat-today .figure').textContent(), '4', "today's orders");
        assert.equal(await page.locator('#stat-success .figure').textContent(), '100%', 'the success rate');
        for (const cell of await dateLines(page, '#overview-days td.date'))
          assert.equal(cell.lines, 1, `the day "${cell.text}" is on one line`);
        await checkPage(page, `overview (${name})`);
        if (name === 'desktop') await saveScreenshot(page, 'console-overview');
        await page.locator('#stat-differs .figure a').click();
        await page.waitForLoadState('load');
        assert.match(page.url(), /\/console\/orders\?.*differs=1/, 'the card opens the filtered orders');
        assert.equal(await page.locator('#orders tbody tr').count(), 1, 'the one order paid a different amount');
      } finally {
        await context.close();
      }
    });

    it(`the orders list keeps its dates on one line, with badges, totals and filters, on a ${name}`, async (t) => {
      if (skip !== undefined) return t.skip(skip);
      const { context, page } = await signedIn(viewport);
      try {
        await page.goto(new URL('/console/orders', gw.url).toString());
        assert.equal(await page.locator('#orders tbody tr').count(), ids.length, 'every order');
        const dates = await dateLines(page, '#orders td.date');
        assert.equal(dates.length, ids.length, 'a date per order');
        for (const cell of dates) assert.equal(cell.lines, 1, `the date "${cell.text}" is on one line`);
        assert.equal(
          await page.locator('#orders .badge', { hasText: 'Paid a different amount' }).count(),
          1,
          'the different-amount badge',
        );
        assert.equal(await page.locator('#order-totals').count(), 0, 'no totals until asked for');
        await checkPage(page, `orders (${name})`);
        if (name === 'desktop') await saveScreenshot(page, 'console-orders');
        await page.getByRole('link', { name: 'Show totals' }).click();
        await page.waitForLoadState('load');
        assert.match(page.url(), /[?&]totals=1/, 'the totals are asked for');
        assert.equal(await page.locator('#order-totals tr[data-currency="BRL"] [data-count]').textContent(), '3');
        assert.equal(await page.locator('#orders tbody tr').count(), ids.length, 'beside the same orders');
        await checkPage(page, `orders with totals (${name})`);

        await page.getByLabel('Status').selectOption({ label: 'Paid' });
        await page.getByLabel('Search by order ID or external order ID').fill('982.247');
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await page.waitForLoadState('load');
        assert.equal(await page.locator('#orders tbody tr').count(), 2, 'the paid Brazil orders of that CPF');
        await checkPage(page, `orders filtered (${name})`);

        await page.goto(new URL(`/console/orders/${ids[1] ?? ''}`, gw.url).toString());
        assert.equal(
          await page.locator('dt:has-text("Payer’s document") + dd').textContent(),
          'CPF ***.982.247-**',
          'the payer’s document, masked',
        );
        await checkPage(page, `order detail (${name})`);
      } finally {
        await context.close();
      }
    });
  }
});
