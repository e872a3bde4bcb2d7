import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, seriousViolations, VIEWPORTS } from './support/browser.js';
import { createConsoleUser } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

/** Where the tests leave their screenshots for the README (`npm run screenshots` sets it). */
const SCREENSHOT_DIR = process.env.CASHGATE_SCREENSHOT_DIR;

async function screenshot(page: Page, name: string): Promise<void> {
  if (SCREENSHOT_DIR === undefined) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** What every console page must be: no serious accessibility problem, nothing wider than a phone's screen. */
async function checkPage(page: Page, label: string): Promise<void> {
  assert.deepEqual(await seriousViolations(page), [], `${label}: accessibility`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${label}: the page is ${overflow}px wider than the viewport`);
}

describe(`console in a browser (${databaseLabel})`, () => {
  let gw: TestGateway;
  let browser: Browser | undefined;
  let skip: string | undefined;
  let merchantId: string;
  let user: { email: string; password: string };

  before(async () => {
    const launched = await launchBrowser();
    if ('skip' in launched) {
      skip = launched.skip;
      return;
    }
    browser = launched.browser;
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    ({ merchantId } = await gw.merchantWithKey());
    user = await createConsoleUser(gw, merchantId, { name: 'Ana Souza' });
  });
  after(async () => {
    await browser?.close();
    if (browser !== undefined) await gw.close();
  });

  async function signedInPage(viewport: (typeof VIEWPORTS)[keyof typeof VIEWPORTS]): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser!.newContext({ viewport, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(new URL('/console', gw.url).toString());
    assert.match(page.url(), /\/console\/sign-in/, 'a visitor is sent to sign in');
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
    if (!page.url().endsWith('/console')) throw new Error(`sign-in ended at ${page.url()}: ${(await page.textContent('main')) ?? ''}`);
    return { context, page };
  }

  it('signs in and shows the overview, on a phone and a desktop', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await signedInPage(viewport);
      try {
        assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Test Merchant');
        await checkPage(page, `overview (${name})`);
        await page.goto(new URL('/console/account', gw.url).toString());
        await checkPage(page, `account (${name})`);
        if (name === 'phone') await screenshot(page, 'console-account');
      } finally {
        await context.close();
      }
    }
  });
});
