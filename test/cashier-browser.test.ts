import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import jsQR from 'jsqr';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { databaseLabel } from './support/database.js';
import { launchBrowser, seriousViolations, VIEWPORTS } from './support/browser.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';
import { MPESA_RESEND_COOLDOWN_MS } from '../src/cashier/views.js';

/** Every page a payer loads must fit in this many bytes on the wire (headers and bodies of all its responses). */
const PAGE_BUDGET_BYTES = 60 * 1024;

/** Where the tests leave their phone screenshots for the README (`npm run screenshots` sets it). */
const SCREENSHOT_DIR = process.env.CASHGATE_SCREENSHOT_DIR;

let seq = 0;
const nextId = () => `browser-${Date.now()}-${++seq}`;

type Viewport = (typeof VIEWPORTS)[keyof typeof VIEWPORTS];

/** The merchant's shop the payer returns to. */
async function startShop(): Promise<{ url: string; visits: string[]; close(): Promise<void> }> {
  const visits: string[] = [];
  const server: Server = createServer((request, response) => {
    visits.push(request.url ?? '');
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>Back at the shop</title><h1>Thanks for your order</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    visits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Decodes the QR code in a screenshot of an element. */
function decodeQr(png: Buffer): string | undefined {
  const image = PNG.sync.read(png);
  // jsqr is CommonJS with an `export default` declaration: from ESM its function is `.default`.
  return jsQR.default(new Uint8ClampedArray(image.data), image.width, image.height)?.data;
}

/** Loads `url`, counting every byte of every response on the way (the page and anything it loads). */
async function loadCounted(page: Page, url: string): Promise<{ status: number | undefined; bytes: number }> {
  const responses: Promise<number>[] = [];
  const count = (response: import('playwright-core').Response) => {
    responses.push(
      response
        .request()
        .sizes()
        .then((s) => s.responseBodySize + s.responseHeadersSize),
    );
  };
  page.on('response', count);
  const response = await page.goto(url, { waitUntil: 'load' });
  page.off('response', count);
  const sizes = await Promise.all(responses);
  return { status: response?.status(), bytes: sizes.reduce((a, b) => a + b, 0) };
}

/** What every page must be: within budget, without serious accessibility problems. */
async function checkPageQuality(page: Page, loaded: { bytes: number }, label: string): Promise<void> {
  if (loaded.bytes > 0) console.log(`# ${label}: ${loaded.bytes} bytes transferred`);
  assert.ok(
    loaded.bytes <= PAGE_BUDGET_BYTES,
    `${label}: ${loaded.bytes} bytes transferred, over the ${PAGE_BUDGET_BYTES}-byte budget`,
  );
  assert.deepEqual(await seriousViolations(page), [], `${label}: accessibility`);
}

async function screenshot(page: Page, name: string, viewport: Viewport): Promise<void> {
  if (SCREENSHOT_DIR === undefined || viewport !== VIEWPORTS.phone) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** The cashier pages in a real browser: what the payer sees, the sandbox panel, the return to the shop and the merchant's callback. */
describe(`cashier pages in Chromium (${databaseLabel})`, async () => {
  const launched = await launchBrowser();
  const skip = 'skip' in launched ? launched.skip : undefined;
  const browser: Browser | undefined = 'browser' in launched ? launched.browser : undefined;
  let gw: TestGateway;
  let receiver: CallbackReceiver;
  let shop: Awaited<ReturnType<typeof startShop>>;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  const newContext = (viewport: Viewport, locale = 'pt-BR'): Promise<BrowserContext> => {
    if (browser === undefined) throw new Error('no browser: the test should have been skipped');
    return browser.newContext({ viewport, locale });
  };
  const withPage = async (viewport: Viewport, locale: string, run: (page: Page) => Promise<void>) => {
    const context = await newContext(viewport, locale);
    try {
      await run(await context.newPage());
    } finally {
      await context.close();
    }
  };
  /** The test gateway listens on a port chosen at start; the link's path is what matters. */
  const local = (link: string) => new URL(new URL(link).pathname, gw.url).href;
  const create = async (path: string, body: Record<string, unknown>) => {
    const response = await signedCall(
      gw.url,
      merchant.credentials,
      { path, body: { externalOrderId: nextId(), ...body } },
      gw.clock.now(),
    );
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data as Record<string, any>;
  };
  const callbackOf = (orderId: string) =>
    eventually(
      async () =>
        receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>).find((b) => b.orderId === orderId),
      10_000,
      `the merchant's callback for ${orderId}`,
    );
  /** Pays with the sandbox panel, sees the success page, then lands back at the shop. */
  const payAndReturn = async (page: Page, successHeading: string, returnPath: string) => {
    await page
      .getByRole('button', { name: /^(Pagar|Pay|Lipa) / })
      .first()
      .click();
    await page.getByRole('heading', { name: successHeading }).waitFor();
    await page.waitForURL(`${shop.url}${returnPath}`, { timeout: 15_000 });
    assert.ok(await page.getByRole('heading', { name: 'Thanks for your order' }).isVisible());
  };

  before(async () => {
    if (skip !== undefined) return;
    gw = await startTestGateway({ env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', CALLBACK_POLL_INTERVAL_MS: '50' } });
    receiver = await startReceiver();
    shop = await startShop();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url });
    await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.25', sell: '5.40', spreadBps: 0 });
  });
  after(async () => {
    if (skip !== undefined) return;
    await browser?.close();
    await gw.close();
    await receiver.close();
    await shop.close();
  });

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(
      `PIX at the ${name} viewport: amount, QR (decoded) and code; the sandbox pays; back to the shop; the callback arrives`,
      { skip },
      async () => {
        const data = await create('/api/v3/bra/createCollectingOrder', {
          amount: '42.50',
          channelType: 'PIX',
          returnUrl: `${shop.url}/pix-${name}`,
        });
        const code = data.currencyOrderVo.payParam as string;
        await withPage(viewport, 'pt-BR', async (page) => {
          const loaded = await loadCounted(page, local(data.cashierUrl as string));
          assert.equal(loaded.status, 200);
          assert.ok(await page.getByText('R$ 42,50', { exact: true }).isVisible(), 'the amount');
          assert.equal(await page.getByLabel(/código Pix/).inputValue(), code, 'the copy-and-paste code');
          assert.ok(await page.getByRole('button', { name: 'Copiar' }).isVisible(), 'the copy button');
          assert.equal(decodeQr(await page.locator('svg.qr').screenshot()), code, 'the QR code decodes to the BR Code');
          await checkPageQuality(page, loaded, `PIX (${name})`);
          await screenshot(page, 'cashier-pix', viewport);
          await payAndReturn(page, 'Pagamento recebido', `/pix-${name}`);
        });
        const callback = await callbackOf(data.currencyOrderVo.orderId as string);
        assert.equal(callback.orderStatusCode, 2);
        assert.equal(callback.orderActualAmount, '42.50');
      },
    );

    it(
      `Boleto at the ${name} viewport: linha digitável, barcode, due date and PDF; the sandbox pays`,
      { skip },
      async () => {
        const data = await create('/api/v3/bra/createCollectingOrder', {
          amount: '150.00',
          channelType: 'BOLETO',
          returnUrl: `${shop.url}/boleto-${name}`,
        });
        const line = data.currencyOrderVo.payParam as string;
        await withPage(viewport, 'pt-BR', async (page) => {
          const loaded = await loadCounted(page, local(data.cashierUrl as string));
          assert.equal(loaded.status, 200);
          assert.ok(await page.getByText('R$ 150,00', { exact: true }).isVisible());
          assert.equal((await page.getByLabel('Linha digitável').inputValue()).replace(/\D/g, ''), line);
          assert.ok(
            await page.getByRole('img', { name: `Código de barras do boleto ${line}` }).isVisible(),
            'the barcode',
          );
          assert.ok(await page.getByText(/Vencimento: \d{2}\/\d{2}\/\d{4}/).isVisible(), 'the due date');
          const pdf = await page.request.get(
            await page
              .getByRole('link', { name: 'Baixar o boleto (PDF)' })
              .getAttribute('href')
              .then((href) => new URL(href ?? '', page.url()).href),
          );
          assert.equal(pdf.status(), 200);
          assert.equal(pdf.headers()['content-type'], 'application/pdf');
          assert.equal((await pdf.body()).subarray(0, 5).toString(), '%PDF-');
          await checkPageQuality(page, loaded, `Boleto (${name})`);
          await screenshot(page, 'cashier-boleto', viewport);
          await payAndReturn(page, 'Pagamento recebido', `/boleto-${name}`);
        });
        assert.equal((await callbackOf(data.currencyOrderVo.orderId as string)).orderStatusCode, 2);
      },
    );

    it(
      `Kenya at the ${name} viewport: the masked phone, the live status, a resend with its limit; the sandbox pays`,
      { skip },
      async () => {
        const data = await create('/api/v3/ken/createCollectingOrder', {
          amount: '1500',
          channelType: 'CHARGE',
          phone: '254712345123',
          checkingPhone: '254712345123',
          returnUrl: `${shop.url}/ken-${name}`,
        });
        await withPage(viewport, 'en-KE', async (page) => {
          const loaded = await loadCounted(page, local(data.cashierUrl as string));
          assert.equal(loaded.status, 200);
          assert.ok(
            await page
              .getByText('A payment request was sent to 2547•••••123. Enter your M-Pesa PIN on your phone to pay.')
              .isVisible(),
          );
          assert.ok(await page.getByText('KES 1,500', { exact: true }).isVisible());
          await checkPageQuality(page, loaded, `Kenya (${name})`);
          await screenshot(page, 'cashier-kenya', viewport);
          for (const left of [3, 2, 1]) {
            // A prompt may be asked for again once the cooldown after the last one has passed.
            gw.clock.advance(MPESA_RESEND_COOLDOWN_MS + 1);
            await page.getByRole('button', { name: `Send the request again (${left} left)` }).click();
            await page.getByText('A new request was sent. Check your phone.').waitFor();
          }
          assert.ok(await page.getByText('The request cannot be sent again.', { exact: false }).isVisible());
          // The status updates by itself: the payment is reported elsewhere (the admin sandbox), the page follows.
          assert.equal((await gw.sandbox(data.currencyOrderVo.orderId as string, 'paid')).status, 200);
          await page.getByRole('heading', { name: 'Payment received' }).waitFor({ timeout: 10_000 });
          await page.waitForURL(`${shop.url}/ken-${name}`, { timeout: 15_000 });
        });
        assert.equal((await callbackOf(data.currencyOrderVo.orderId as string)).orderStatusCode, 2);
      },
    );
  }

  it(
    'the aggregate cashier, BRL: amount, method and CPF; Pix pays; a second visit skips the document',
    { skip },
    async () => {
      const identity = `payer-${nextId()}`;
      const first = local(
        (await create('/api/v3/polymerize/createCollectingOrder', {
          userIdentity: identity,
          returnUrl: `${shop.url}/agg-1`,
        })) as unknown as string,
      );
      let orderId = '';
      await withPage(VIEWPORTS.phone, 'pt-BR', async (page) => {
        const loaded = await loadCounted(page, first);
        assert.equal(loaded.status, 200);
        await checkPageQuality(page, loaded, 'aggregate cashier');
        await page.getByLabel('Valor (R$)').fill('37,90');
        await page.getByLabel(/^Pix/).first().check();
        await page.getByLabel('CPF ou CNPJ').fill('111.444.777-3');
        await screenshot(page, 'checkout', VIEWPORTS.phone);
        await page.getByRole('button', { name: 'Continuar' }).click();
        // A wrong document is named, and nothing is made.
        await page.getByText('Informe um CPF (11 dígitos) ou CNPJ (14 caracteres) válido.').first().waitFor();
        assert.equal(await page.getByLabel('CPF ou CNPJ').getAttribute('aria-invalid'), 'true');
        await checkPageQuality(page, { bytes: 0 }, 'aggregate cashier with errors');
        await page.getByLabel('CPF ou CNPJ').fill('111.444.777-35');
        await page.getByRole('button', { name: 'Continuar' }).click();
        await page.getByRole('heading', { name: 'Pague com Pix' }).waitFor();
        assert.ok(await page.getByText('R$ 37,90', { exact: true }).isVisible());
        const code = await page.getByLabel(/código Pix/).inputValue();
        assert.equal(decodeQr(await page.locator('svg.qr').screenshot()), code);
        orderId =
          (await gw.gateway.orders.findByCashier(new URL(page.url()).pathname.split('/').pop() ?? ''))?.id ?? '';
        await payAndReturn(page, 'Pagamento recebido', '/agg-1');
      });
      const callback = await callbackOf(orderId);
      assert.equal(callback.payType, 101);
      assert.equal(callback.orderActualAmount, '37.90');

      const second = local(
        (await create('/api/v3/polymerize/createCollectingOrder', { userIdentity: identity })) as unknown as string,
      );
      await withPage(VIEWPORTS.desktop, 'pt-BR', async (page) => {
        await page.goto(second);
        assert.equal(await page.getByLabel('CPF ou CNPJ').count(), 0, 'the input step is skipped');
        assert.ok(await page.getByText('Pagando como CPF ***.444.777-** (salvo)').isVisible());
        await page.getByLabel('Valor (R$)').fill('12,00');
        await page.getByLabel(/^Boleto/).check();
        await page.getByRole('button', { name: 'Continuar' }).click();
        await page.getByRole('heading', { name: 'Pague com boleto' }).waitFor();
      });
    },
  );

  it(
    'the aggregate cashier, USDT: the derived TRON address and its QR; the crypto payment callback',
    { skip },
    async () => {
      const address = local(
        (await create('/api/v3/polymerize/createCollectingOrder', {
          returnUrl: `${shop.url}/agg-usdt`,
        })) as unknown as string,
      );
      let orderId = '';
      await withPage(VIEWPORTS.phone, 'en-US', async (page) => {
        await page.goto(address);
        await page.getByLabel('Amount (R$)').fill('105');
        await page.getByLabel(/^USDT on TRON/).check();
        assert.ok(await page.locator('#document-field').isHidden(), 'no document for USDT');
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('heading', { name: 'Pay with USDT (TRON)' }).waitFor();
        const loaded = await loadCounted(page, page.url());
        // 105.00 BRL at 5.25 per USDT: exactly 20 USDT.
        assert.equal(await page.getByLabel('Send exactly this amount of USDT').inputValue(), '20');
        const tron = await page.getByLabel('To this TRON (TRC-20) address').inputValue();
        assert.match(tron, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
        assert.equal(decodeQr(await page.locator('svg.qr').screenshot()), tron, 'the QR code decodes to the address');
        await checkPageQuality(page, loaded, 'USDT');
        await screenshot(page, 'cashier-usdt', VIEWPORTS.phone);
        orderId =
          (await gw.gateway.orders.findByCashier(new URL(page.url()).pathname.split('/').pop() ?? ''))?.id ?? '';
        await payAndReturn(page, 'Payment received', '/agg-usdt');
      });
      const callback = await callbackOf(orderId);
      assert.equal(callback.payType, 112);
      assert.equal(callback.orderActualAmount, '105.00');
    },
  );

  it(
    'without JavaScript the PIX page still shows amount and code, hides the copy button, and refreshes itself',
    { skip },
    async () => {
      const data = await create('/api/v3/bra/createCollectingOrder', { amount: '9.99', channelType: 'PIX' });
      if (browser === undefined) throw new Error('no browser');
      const context = await browser.newContext({
        viewport: VIEWPORTS.phone,
        locale: 'en-US',
        javaScriptEnabled: false,
      });
      try {
        const page = await context.newPage();
        await page.goto(local(data.cashierUrl as string));
        assert.ok(await page.getByText('R$9.99', { exact: true }).isVisible());
        assert.equal(await page.getByLabel(/copy this Pix code/).inputValue(), data.currencyOrderVo.payParam);
        assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 0, 'no copy button without script');
        assert.equal(await page.locator('noscript').count(), 1);
        assert.match((await page.content()).replace(/&lt;/g, '<'), /<meta http-equiv="refresh" content="10">/);
      } finally {
        await context.close();
      }
    },
  );

  it(
    'the paid page is a 200 that stays; the expired page a 410; cancelling from the sandbox panel a 410; unknown a 404',
    { skip },
    async () => {
      const paid = await create('/api/v3/bra/createCollectingOrder', { amount: '10.00', channelType: 'PIX' });
      await gw.sandbox(paid.currencyOrderVo.orderId as string, 'paid');
      const cancelled = await create('/api/v3/bra/createCollectingOrder', {
        amount: '11.00',
        channelType: 'PIX_DYNAMIC',
      });
      await withPage(VIEWPORTS.phone, 'en-US', async (page) => {
        const again = await loadCounted(page, local(paid.cashierUrl as string));
        assert.equal(again.status, 200);
        assert.ok(await page.getByRole('heading', { name: 'Payment received' }).isVisible());
        assert.ok(await page.getByText('You can close this page.').isVisible());
        await checkPageQuality(page, again, 'paid');

        await page.goto(local(cancelled.cashierUrl as string));
        await page.getByRole('button', { name: 'Cancel' }).click();
        await page.getByRole('heading', { name: 'This payment was cancelled' }).waitFor();
        assert.equal((await callbackOf(cancelled.currencyOrderVo.orderId as string)).orderStatusCode, 4);

        const unknown = await page.goto(new URL('/cashier/csh_00000000000000000000000000000000', gw.url).href);
        assert.equal(unknown?.status(), 404);
        assert.ok(await page.getByRole('heading', { name: 'Payment not found' }).isVisible());

        const late = await create('/api/v3/bra/createCollectingOrder', { amount: '12.00', channelType: 'PIX' });
        gw.clock.advance(31 * 60_000);
        const expired = await loadCounted(page, local(late.cashierUrl as string));
        assert.equal(expired.status, 410);
        assert.ok(await page.getByRole('heading', { name: 'This payment has expired' }).isVisible());
        await checkPageQuality(page, expired, 'expired');
      });
    },
  );
});
