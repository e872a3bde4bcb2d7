import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { databaseLabel } from './support/database.js';
import { launchBrowser, VIEWPORTS } from './support/browser.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';

let seq = 0;

/** The cashier page in a real browser: what the payer sees, the sandbox panel, and the merchant's callback. */
describe(`cashier pages in Chromium (${databaseLabel})`, async () => {
  const launched = await launchBrowser();
  const skip = 'skip' in launched ? launched.skip : undefined;
  const browser: Browser | undefined = 'browser' in launched ? launched.browser : undefined;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  const newContext = (viewport: { width: number; height: number }) => {
    if (browser === undefined) throw new Error('no browser: the test should have been skipped');
    return browser.newContext({ viewport });
  };
  const collect = async (body: Record<string, unknown>) => {
    const response = await signedCall(gw.url, merchant.credentials, { path: '/api/v3/bra/createCollectingOrder', body: { externalOrderId: `browser-${Date.now()}-${++seq}`, ...body } }, gw.clock.now());
    assert.equal(response.body.code, '200', response.body.msgEn);
    const data = response.body.data as { cashierUrl: string; currencyOrderVo: { orderId: string; payParam: string } };
    // The test gateway listens on a port chosen at start; the link's path is what matters.
    return { ...data, cashierUrl: new URL(new URL(data.cashierUrl).pathname, gw.url).href };
  };

  before(async () => {
    if (skip !== undefined) return;
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url });
  });
  after(async () => {
    if (skip !== undefined) return;
    await browser?.close();
    await gw.close();
    await receiver.close();
  });

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`a PIX cashier at the ${name} viewport: amount and code shown, the sandbox Pay button pays, the callback arrives`, { skip }, async () => {
      const data = await collect({ amount: '42.50', channelType: 'PIX' });
      const context = await newContext(viewport);
      try {
        const page = await context.newPage();
        const response = await page.goto(data.cashierUrl);
        assert.equal(response?.status(), 200);
        assert.ok(await page.getByText('42.50 BRL').isVisible(), 'the amount is visible');
        assert.ok(await page.getByText(data.currencyOrderVo.payParam).isVisible(), 'the Pix copy-and-paste code is visible');
        await page.getByRole('button', { name: 'Pay' }).click();
        await page.getByText('Payment received').waitFor();
        const [callback] = await eventually(
          async () => {
            const found = receiver.received.filter((r) => (JSON.parse(r.body) as { orderId?: string }).orderId === data.currencyOrderVo.orderId);
            return found.length > 0 ? found : undefined;
          },
          10_000,
          "the merchant's callback",
        );
        assert.equal((JSON.parse(callback?.body ?? '{}') as { orderStatusCode?: number }).orderStatusCode, 2);
      } finally {
        await context.close();
      }
    });
  }

  it('an expired cashier says so with HTTP 410', { skip }, async () => {
    const data = await collect({ amount: '10.00', channelType: 'PIX' });
    const context = await newContext(VIEWPORTS.phone);
    try {
      const page = await context.newPage();
      gw.clock.advance(31 * 60_000);
      const response = await page.goto(data.cashierUrl);
      assert.equal(response?.status(), 410);
      assert.ok(await page.getByRole('heading', { name: 'This payment has expired' }).isVisible());
    } finally {
      await context.close();
    }
  });
});
