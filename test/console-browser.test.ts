import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { signString, stringToSign, verifyCallback, type Credentials } from '@cashgate/sdk';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { axeViolations, launchBrowser, saveScreenshot, VIEWPORTS } from './support/browser.js';
import { createConsoleUser } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { callbackHeaders, startReceiver, type CallbackReceiver } from './support/receiver.js';

const PIX_COLLECT = '/api/v3/bra/createCollectingOrder';
const BANK_LIST = { path: '/api/v3/bra/query/bank', body: { currencyType: 'BRL' } };

/** What every console page must be: no serious accessibility problem, nothing wider than a phone's screen. */
async function checkPage(page: Page, label: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${label}: accessibility`);
  const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
  assert.ok(overflow <= 0, `${label}: the page is ${overflow}px wider than the viewport`);
}

/** Sums CSV amount cells per account with exact decimal arithmetic (hundredths as BigInt). */
function csvSums(csv: string): { header: string; sums: Record<string, bigint>; rows: number } {
  const lines = csv.trim().split('\r\n');
  const header = lines[0] ?? '';
  const columns = header.split(',');
  const account = columns.indexOf('account');
  const amount = columns.indexOf('amount');
  const sums: Record<string, bigint> = {};
  for (const line of lines.slice(1)) {
    // The test's entries have no commas inside quoted cells before the amount column.
    const cells = line.split(',');
    const [whole = '0', fraction = ''] = (cells[amount] ?? '0').replace('-', '').split('.');
    const cents =
      (BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0') || '0')) *
      ((cells[amount] ?? '').startsWith('-') ? -1n : 1n);
    const name = cells[account] ?? '';
    sums[name] = (sums[name] ?? 0n) + cents;
  }
  return { header, sums, rows: lines.length - 1 };
}

const cents = (decimal: string): bigint => {
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction = ''] = decimal.replace('-', '').split('.');
  const value = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0') || '0');
  return negative ? -value : value;
};

describe(`console in a browser (${databaseLabel})`, () => {
  let gw: TestGateway;
  let browser: Browser | undefined;
  let skip: string | undefined;
  let merchant: { merchantId: string; credentials: Credentials };
  let user: { email: string; password: string };
  let receiver: CallbackReceiver;
  /** What earlier steps made, for the later ones and the page sweep. */
  const made = { accessKey: '', secretKey: '', orderId: '' };

  before(async () => {
    const launched = await launchBrowser();
    if ('skip' in launched) {
      skip = launched.skip;
      return;
    }
    browser = launched.browser;
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    merchant = await gw.merchantWithKey();
    user = await createConsoleUser(gw, merchant.merchantId, { name: 'Ana Souza' });
    receiver = await startReceiver();
  });
  after(async () => {
    await browser?.close();
    if (browser !== undefined) {
      await receiver.close();
      await gw.close();
    }
  });

  async function signedInPage(
    viewport: { width: number; height: number },
    who: { email: string; password: string } = user,
  ): Promise<{ context: BrowserContext; page: Page }> {
    if (browser === undefined) throw new Error('no browser');
    const context = await browser.newContext({ viewport, locale: 'en-US', acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(new URL('/console', gw.url).toString());
    assert.match(page.url(), /\/console\/sign-in/, 'a visitor is sent to sign in');
    await page.getByLabel('E-mail').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
    if (!page.url().endsWith('/console'))
      throw new Error(`sign-in ended at ${page.url()}: ${(await page.textContent('main')) ?? ''}`);
    return { context, page };
  }

  const open = (page: Page, path: string) => page.goto(new URL(path, gw.url).toString());
  const call = (credentials: Credentials) => signedCall(gw.url, credentials, BANK_LIST, gw.clock.now());

  it('signs in; creates a key whose secret is shown once and signs a real call once active; an edited whitelist refuses it with 301', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const { context, page } = await signedInPage(VIEWPORTS.desktop);
    try {
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Test Merchant');
      await open(page, '/console/keys');
      await page.getByLabel('Label').fill('shop backend');
      await page.getByRole('checkbox', { name: 'all', exact: true }).check();
      await page.getByLabel('IP whitelist').fill('0.0.0.0');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.waitForLoadState('load');
      const accessKey = await page.locator('#new-access-key').inputValue();
      const secretKey = await page.locator('#new-secret-key').inputValue();
      assert.match(accessKey, /^AK[0-9a-f]{32}$/);
      assert.match(secretKey, /^[0-9a-f]{64}$/);
      assert.match(
        (await page.textContent('main')) ?? '',
        /cannot be shown again|can't be shown again|not be shown again/i,
        'the once-only warning',
      );
      assert.match((await page.textContent('main')) ?? '', /takes effect in \d+ s/, 'the countdown');
      await saveScreenshot(page, 'console-key-created');
      made.accessKey = accessKey;
      made.secretKey = secretKey;
      const credentials = { accessKey, secretKey };

      assert.equal((await call(credentials)).body.code, '301', 'not active yet');
      gw.clock.advance(90_001);
      const ok = await call(credentials);
      assert.equal(ok.body.code, '200', ok.body.msgEn);

      await open(page, '/console/keys');
      assert.equal(await page.locator(`text=${secretKey}`).count(), 0, 'the list never shows the secret');
      await open(page, `/console/keys/${accessKey}`);
      await page.getByLabel('IP whitelist').fill('10.9.8.7');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.waitForLoadState('load');
      assert.match(
        (await page.textContent('main')) ?? '',
        /takes effect in \d+ s/,
        'the edit restarts the activation delay, and says so',
      );
      gw.clock.advance(90_001);
      const refused = await call(credentials);
      assert.equal(refused.body.code, '301', refused.body.msgEn);
      assert.match(refused.body.msgEn, /whitelist/);
    } finally {
      await context.close();
    }
  });

  it('sets the callback address and receives a signed test callback, with the response shown', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const { context, page } = await signedInPage(VIEWPORTS.desktop);
    try {
      await open(page, '/console/callbacks');
      await page.getByLabel('Callback address (URL)').fill(`${receiver.url}/notify`);
      await page.getByRole('button', { name: 'Save address' }).click();
      await page.waitForLoadState('load');
      assert.equal(
        (await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.callbackUrl,
        `${receiver.url}/notify`,
      );
      const before = receiver.received.length;
      await page.getByRole('button', { name: 'Send test callback' }).click();
      await page.waitForLoadState('load');
      const result = (await page.locator('#test-result').textContent()) ?? '';
      assert.match(result, /200/, 'the receiver’s status is shown');
      const [got] = (await receiver.waitFor(before + 1)).slice(before);
      assert.ok(got !== undefined, 'the test callback arrived');
      // Signed with the merchant's newest active key: one of the two this test knows the secret of.
      const secrets: Record<string, string> = {
        [merchant.credentials.accessKey]: merchant.credentials.secretKey,
        [made.accessKey]: made.secretKey,
      };
      const secret = secrets[String(got.headers.access_key)];
      assert.ok(secret !== undefined, `signed with a known key: ${String(got.headers.access_key)}`);
      const headers = callbackHeaders(got);
      assert.ok(verifyCallback(secret, JSON.parse(got.body) as Record<string, unknown>, headers), 'its sign verifies');
      await saveScreenshot(page, 'console-callbacks');
    } finally {
      await context.close();
    }
  });

  it('finds an order, re-triggers its callback and shows the new attempt', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const externalOrderId = `console-browser-${Date.now()}`;
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: PIX_COLLECT,
        body: {
          amount: '150.00',
          channelType: 'PIX',
          externalOrderId,
          userInfoType: 'CPF',
          userInfoNo: '52998224725',
          userInfoName: 'Maria Silva',
          remark: '<img src=x onerror=alert(1)>',
        },
      },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', created.body.msgEn);
    const orderId = created.body.data.currencyOrderVo.orderId as string;
    made.orderId = orderId;
    assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
    const { context, page } = await signedInPage(VIEWPORTS.desktop);
    try {
      await open(page, '/console/orders');
      await page.getByLabel('Order ID or external order ID').fill(externalOrderId);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForLoadState('load');
      await page.getByRole('link', { name: orderId }).click();
      await page.waitForLoadState('load');
      assert.match(page.url(), new RegExp(`/console/orders/${orderId}$`));
      const main = (await page.textContent('main')) ?? '';
      assert.match(main, /<img src=x onerror=alert\(1\)>/, 'the remark shows as text');
      const attempts = page.locator('#callbacks tbody tr');
      await receiver.waitFor(2);
      await page.reload();
      const before = await attempts.count();
      await page.getByRole('button', { name: 'Re-trigger callback now' }).click();
      await page.waitForLoadState('load');
      assert.match(page.url(), /done=retriggered/);
      assert.ok((await attempts.count()) > before, 'a new attempt is listed');
      assert.match((await page.locator('#callbacks').textContent()) ?? '', /manual/i, 'the manual attempt');
      await saveScreenshot(page, 'console-order');
    } finally {
      await context.close();
    }
  });

  it('the signature tool gives the signing module’s string and sign', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const { context, page } = await signedInPage(VIEWPORTS.desktop);
    try {
      await open(page, '/console/signature');
      await page.locator('#accessKey').selectOption(merchant.credentials.accessKey);
      const body = '{"currencyType":"BRL","page":{"size":10},"note":""}';
      await page.locator('#params').fill(body);
      const timestamp = await page.getByLabel('timestamp').inputValue();
      const nonce = await page.getByLabel('nonce').inputValue();
      await page.getByRole('button', { name: 'Compute the signature' }).click();
      await page.waitForLoadState('load');
      const expectedString = stringToSign(JSON.parse(body) as Record<string, unknown>, {
        access_key: merchant.credentials.accessKey,
        timestamp,
        nonce,
      });
      assert.equal(await page.locator('#string-to-sign').textContent(), expectedString);
      assert.equal(
        await page.locator('#computed-sign').textContent(),
        signString(merchant.credentials.secretKey, expectedString),
      );
      await saveScreenshot(page, 'console-signature');
    } finally {
      await context.close();
    }
  });

  it('downloads the CSV statement, whose sums are the closing minus the opening balances', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const adjust = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'BRL',
      amount: '25.50',
      reason: 'welcome credit',
    });
    assert.equal(adjust.status, 200, JSON.stringify(adjust.body));
    const { context, page } = await signedInPage(VIEWPORTS.desktop);
    try {
      await open(page, '/console/balances');
      await page.getByLabel('Currency').selectOption('BRL');
      await page.getByRole('button', { name: 'Show statement' }).click();
      await page.waitForLoadState('load');
      const totals: Record<string, { opening: string; closing: string }> = {};
      for (const row of await page.locator('tr[data-account]').all()) {
        const name = (await row.getAttribute('data-account')) ?? '';
        totals[name] = {
          opening: (await row.locator('[data-opening]').getAttribute('data-opening')) ?? '',
          closing: (await row.locator('[data-closing]').getAttribute('data-closing')) ?? '',
        };
      }
      await saveScreenshot(page, 'console-balances');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: /Download CSV/ }).click(),
      ]);
      const csv = readFileSync(await download.path(), 'utf8');
      const { header, sums, rows } = csvSums(csv);
      assert.equal(header, 'time_utc,entry_id,journal_id,journal_kind,order_id,account,amount,currency,memo');
      assert.ok(rows >= 2, 'the collection and the adjustment are there');
      for (const [account, total] of Object.entries(totals)) {
        assert.equal(
          sums[account] ?? 0n,
          cents(total.closing) - cents(total.opening),
          `${account}: CSV sum = closing − opening`,
        );
      }
      const api = await signedCall(
        gw.url,
        merchant.credentials,
        { method: 'GET', path: '/api/v3/bra/query/balance' },
        gw.clock.now(),
      );
      assert.equal(api.body.code, '200', api.body.msgEn);
      assert.equal(totals.available?.closing, api.body.data[0].accountBalance, 'closing available = the API’s balance');
    } finally {
      await context.close();
    }
  });

  it('the overview keeps the merchant ID and a long callback address inside their card at 1366 px and on a phone', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const own = await gw.merchantWithKey();
    const url = `https://payments.merchant-example-store.com.br/integrations/cashgate/v3/callbacks/unified-notify-endpoint?merchant=${own.merchantId}&channel=all`;
    assert.equal((await gw.admin('PUT', `/admin/v1/merchants/${own.merchantId}/callback`, { url })).status, 200);
    const who = await createConsoleUser(gw, own.merchantId);
    for (const viewport of [
      { width: 1366, height: 900 },
      { width: 390, height: 844 },
    ]) {
      const label = `${viewport.width}x${viewport.height}`;
      const { context, page } = await signedInPage(viewport, who);
      try {
        for (const [id, text] of [
          ['overview-merchant-id', own.merchantId],
          ['overview-callback-address', url],
        ] as const) {
          const value = page.locator(`#${id}`);
          assert.equal(await value.textContent(), text, `${label}: #${id} shows the whole value`);
          // The text's own extent (a Range over it), not its element's box, which may be narrower than the text.
          const boxes = await value.evaluate((el) => {
            const range = el.ownerDocument.createRange();
            range.selectNodeContents(el);
            const text = range.getBoundingClientRect();
            const panel = el.closest('.panel');
            if (panel === null) throw new Error('the value is in no card');
            const card = panel.getBoundingClientRect();
            return {
              text: { left: text.left, right: text.right },
              card: { left: card.left, right: card.right },
              cardOverflow: panel.scrollWidth - panel.clientWidth,
            };
          });
          assert.ok(
            boxes.text.left >= boxes.card.left && boxes.text.right <= boxes.card.right,
            `${label}: #${id} runs from ${boxes.text.left} to ${boxes.text.right} px, its card from ${boxes.card.left} to ${boxes.card.right} px`,
          );
          assert.ok(boxes.cardOverflow <= 0, `${label}: the card of #${id} overflows by ${boxes.cardOverflow} px`);
        }
        const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
        assert.ok(overflow <= 0, `${label}: the page is ${overflow}px wider than the viewport`);
      } finally {
        await context.close();
      }
    }
  });

  it('on a phone the navigation is a "Menu" disclosure that opens and shows every section; a desktop keeps the row', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const sections = [
      'Overview',
      'API keys',
      'Callbacks',
      'Orders',
      'Balances',
      'Signature tool',
      'Request log',
      'Account',
    ];
    const phone = await signedInPage(VIEWPORTS.phone);
    try {
      const { page } = phone;
      await open(page, '/console/keys');
      assert.equal(await page.locator('header nav.row').isVisible(), false, 'phone: no cut-off row of links');
      const summary = page.locator('header details.menu summary');
      assert.equal(await summary.isVisible(), true, 'phone: a Menu button');
      assert.match((await summary.textContent()) ?? '', /^Menu · API keys$/, 'phone: it names the current section');
      const menu = page.getByRole('navigation', { name: 'Main' });
      assert.equal(await menu.count(), 0, 'phone: the closed menu hides its links from everyone');
      // Keyboard: the summary is focusable and opens with Enter, no script needed.
      await summary.focus();
      await page.keyboard.press('Enter');
      assert.equal(await page.locator('header details.menu').getAttribute('open'), '', 'phone: the menu opened');
      assert.equal(await menu.count(), 1, 'phone: one navigation once open');
      for (const name of sections) {
        const link = menu.getByRole('link', { name, exact: true });
        assert.equal(await link.isVisible(), true, `phone: the menu shows ${name}`);
        const box = await link.boundingBox();
        assert.ok(
          box !== null && box.x >= 0 && box.x + box.width <= VIEWPORTS.phone.width,
          `phone: ${name} is on screen`,
        );
        assert.ok(box.height >= 24, `phone: ${name} is a target of ${box.height} px`);
      }
      assert.equal(
        await menu.getByRole('link', { name: 'API keys', exact: true }).getAttribute('aria-current'),
        'page',
        'phone: the current section is marked',
      );
      await checkPage(page, 'phone menu open');
      await saveScreenshot(page, 'console-menu-phone');
      await menu.getByRole('link', { name: 'Request log', exact: true }).click();
      await page.waitForLoadState('load');
      assert.match(page.url(), /\/console\/requests$/, 'phone: a menu link opens its section');
    } finally {
      await phone.context.close();
    }
    const desktop = await signedInPage(VIEWPORTS.desktop);
    try {
      const { page } = desktop;
      await open(page, '/console/keys');
      assert.equal(await page.locator('header details.menu').isVisible(), false, 'desktop: no menu button');
      const row = page.getByRole('navigation', { name: 'Main' });
      assert.equal(await row.count(), 1, 'desktop: one navigation');
      const tops = new Set<number>();
      for (const name of sections) {
        const box = await row.getByRole('link', { name, exact: true }).boundingBox();
        assert.ok(box !== null, `desktop: the row shows ${name}`);
        tops.add(Math.round(box.y));
      }
      assert.equal(tops.size, 1, 'desktop: the sections are one row');
    } finally {
      await desktop.context.close();
    }
  });

  it('the request log wraps its messages: no cell overflows, and time, key and path keep one line at 1366 px', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const debugKey = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/api-keys`, {
      permissions: ['all'],
      ipWhitelist: '0.0.0.0',
      debug: true,
      label: 'debugging',
    });
    assert.equal(debugKey.status, 200, JSON.stringify(debugKey.body));
    gw.clock.advance(debugKey.body.activeAt - gw.clock.now() + 1);
    const debugCredentials = {
      accessKey: debugKey.body.accessKey as string,
      secretKey: debugKey.body.secretKey as string,
    };
    // A wrong sign: its message carries the request log's address and the string the server signed (long).
    const failed = await signedCall(
      gw.url,
      debugCredentials,
      { ...BANK_LIST, headers: { sign: `${'A'.repeat(27)}=` } },
      gw.clock.now(),
    );
    assert.equal(failed.body.code, '307', failed.body.msgEn);
    assert.equal((await call(debugCredentials)).body.code, '200', 'and a request that works');
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await signedInPage(viewport);
      try {
        await open(page, '/console/requests');
        const cells = await page.locator('table.reqlog td').evaluateAll((tds) =>
          tds.map((td) => {
            // The lines of the cell's text: its text fragments' tops, those within half a line of each other as one.
            const tops: number[] = [];
            const walker = td.ownerDocument.createTreeWalker(td, 4 /* NodeFilter.SHOW_TEXT */);
            for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
              const range = td.ownerDocument.createRange();
              range.selectNodeContents(node);
              for (const r of range.getClientRects()) if (r.width > 0) tops.push(r.top);
            }
            tops.sort((x, y) => x - y);
            const half = parseFloat(td.ownerDocument.defaultView?.getComputedStyle(td).lineHeight ?? '16') / 2 || 8;
            const lines = tops.filter((top, i) => i === 0 || top - (tops[i - 1] ?? top) > half);
            return {
              text: (td.textContent ?? '').slice(0, 40),
              cls: td.className,
              over: td.scrollWidth - td.clientWidth,
              lines: lines.length,
            };
          }),
        );
        assert.ok(cells.length >= 12, `${name}: both requests are listed (${cells.length} cells)`);
        for (const cell of cells)
          assert.ok(cell.over <= 0, `${name}: the cell "${cell.text}" overflows by ${cell.over} px`);
        const messages = cells.filter((c) => c.cls === 'msg');
        assert.ok(
          messages.some((c) => c.lines > 1),
          `${name}: the long message wraps onto several lines`,
        );
        if (name === 'desktop') {
          for (const cell of cells.filter((c) => c.cls.includes('nowrap')))
            assert.equal(cell.lines, 1, `desktop: "${cell.text}" is on one line`);
          const table = await page.locator('table.reqlog').evaluate((el) => {
            const box = el.parentElement;
            if (box === null) throw new Error('the table has no container');
            return box.scrollWidth - box.clientWidth;
          });
          assert.ok(table <= 0, `desktop: the table fits its panel at 1366 px (${table} px over)`);
        }
        await checkPage(page, `/console/requests (${name})`);
      } finally {
        await context.close();
      }
    }
  });

  it('rolls a key from its page: the new key is shown once and the list shows both, with the old one’s stop time', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const own = await gw.merchantWithKey({ permissions: ['bra.collection', 'query'] });
    const who = await createConsoleUser(gw, own.merchantId);
    const { context, page } = await signedInPage(VIEWPORTS.desktop, who);
    try {
      assert.equal((await call(own.credentials)).body.code, '200', 'the key is used once');
      await open(page, `/console/keys/${own.credentials.accessKey}`);
      await page.getByLabel('Overlap (both keys work)').selectOption({ label: '1 day' });
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Create the new key and schedule this one to stop' }).click();
      await page.waitForLoadState('load');
      assert.match(page.url(), /\/console\/keys\/AK[0-9a-f]{32}\/created$/, 'the roll shows the new key');
      assert.match(await page.locator('#new-secret-key').inputValue(), /^[0-9a-f]{64}$/, 'its secret, once');
      assert.match(
        (await page.locator('#rolled').textContent()) ?? '',
        new RegExp(`replaces ${own.credentials.accessKey}`),
      );
      await checkPage(page, 'rolled key created');
      await open(page, '/console/keys');
      const main = (await page.textContent('main')) ?? '';
      assert.match(main, /stops /, 'the old key shows its stop time');
      assert.match(main, /pending until /, 'the new key shows as pending with its activation time');
      assert.match(main, /Brazil collections, Queries/, 'permissions in words');
      await checkPage(page, 'keys after a roll (desktop)');
      await saveScreenshot(page, 'console-keys');
    } finally {
      await context.close();
    }
  });

  it('every page works on a phone and a desktop: nothing wider than the screen, no serious accessibility problem', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const paths = [
      '/console',
      '/console/keys',
      `/console/keys/${made.accessKey}`,
      '/console/callbacks',
      '/console/orders',
      `/console/orders/${made.orderId}`,
      '/console/balances',
      '/console/signature',
      '/console/requests',
      '/console/account',
      '/console/pix-returns',
      `/console/keys/${made.accessKey}/created`,
      '/console/callbacks?event=payment&failed=1',
    ];
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const { context, page } = await signedInPage(viewport);
      try {
        for (const path of paths) {
          const response = await open(page, path);
          assert.equal(response?.status(), 200, `${path} (${name})`);
          await checkPage(page, `${path} (${name})`);
        }
        if (name === 'phone') {
          await open(page, `/console/orders/${made.orderId}`);
          await saveScreenshot(page, 'console-order-phone');
        }
      } finally {
        await context.close();
      }
    }
    // The pages before a session: sign-in in each language.
    if (browser === undefined) throw new Error('no browser');
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const context = await browser.newContext({ viewport, locale: 'en-US' });
      try {
        const page = await context.newPage();
        for (const path of ['/console/sign-in', '/console/sign-in?lang=pt-BR', '/console/sign-in?lang=es']) {
          const response = await open(page, path);
          assert.equal(response?.status(), 200, `${path} (${name})`);
          await checkPage(page, `${path} (${name})`);
        }
      } finally {
        await context.close();
      }
    }
  });
});
