import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import jsQR from 'jsqr';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { databaseLabel } from './support/database.js';
import { checkPageQuality, launchBrowser, loadCounted, saveScreenshot, VIEWPORTS } from './support/browser.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually, startReceiver, type CallbackReceiver } from './support/receiver.js';
import { MPESA_RESEND_COOLDOWN_MS } from '../src/cashier/views.js';

/** Every page a payer loads must fit in this many bytes on the wire (headers and bodies of all its responses). */

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

/** The README shows payers' pages as a phone shows them. */
async function screenshot(page: Page, name: string, viewport: Viewport): Promise<void> {
  if (viewport === VIEWPORTS.phone) await saveScreenshot(page, name);
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

  const newContext = (
    viewport: { width: number; height: number },
    locale = 'pt-BR',
    javaScriptEnabled = true,
  ): Promise<BrowserContext> => {
    if (browser === undefined) throw new Error('no browser: the test should have been skipped');
    return browser.newContext({ viewport, locale, javaScriptEnabled });
  };
  const withPage = async (
    viewport: { width: number; height: number },
    locale: string,
    run: (page: Page) => Promise<void>,
    options: { javaScriptEnabled?: boolean } = {},
  ) => {
    const context = await newContext(viewport, locale, options.javaScriptEnabled);
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
  /** The Pix QR code decoded; on a phone it is folded away first and opened by its summary. */
  const pixQr = async (page: Page, viewport: Viewport) => {
    if (viewport === VIEWPORTS.phone) {
      assert.ok(await page.locator('svg.qr').isHidden(), 'on a phone the QR code is folded away');
      await page.locator('.qr-box summary').click();
    }
    return decodeQr(await page.locator('svg.qr').screenshot());
  };
  /** The language links the page offers, by hreflang. */
  const languageLinks = (page: Page) =>
    page.locator('nav a[hreflang]').evaluateAll((links) => links.map((a) => a.getAttribute('hreflang')));

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
          const copy = page.getByRole('button', { name: 'Copiar código Pix' });
          assert.ok(await copy.isVisible(), 'the copy button');
          assert.match(
            (await page.locator('#deadline').innerText()).trim(),
            /^até \d{1,2} de \w+\.? de \d{4}, \d{2}:\d{2} \(BRT\)$/,
          );
          assert.deepEqual(await languageLinks(page), ['en'], 'Brazil: Portuguese and English');
          const top = async (selector: string) => (await page.locator(selector).boundingBox())?.y ?? Number.NaN;
          if (viewport === VIEWPORTS.phone) {
            // Copy first: the primary button right under the amount, before everything else.
            assert.ok((await top('.primary-copy')) < (await top('.qr-box')), 'the copy button above the QR code');
            assert.ok((await top('.primary-copy')) < 844, 'the copy button on the first screen');
            assert.equal(await copy.evaluate((b) => b.classList.contains('secondary')), false, 'a primary button');
            assert.equal(await page.locator('details.qr-box').evaluate((d) => d.hasAttribute('open')), false);
          } else {
            assert.ok(await page.locator('svg.qr').isVisible(), 'on a wide screen the QR code is shown');
            assert.ok((await top('svg.qr')) < (await top('.primary-copy')), 'and comes first');
          }
          await checkPageQuality(page, loaded, `PIX (${name})`);
          await screenshot(page, 'cashier-pix', viewport);
          assert.equal(await pixQr(page, viewport), code, 'the QR code decodes to the BR Code');
          await checkPageQuality(page, { bytes: 0 }, `PIX, QR code shown (${name})`);
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
          // Tall enough to scan from a screen: at least 13 mm, as on the PDF (CSS mm at 96 dpi: 49.1 px).
          const height = (await page.locator('svg.barcode').boundingBox())?.height ?? 0;
          assert.ok(height >= (13 * 96) / 25.4, `the barcode is ${height}px tall, under 13 mm`);
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
          assert.ok(
            await page.getByText('The request goes to 2547•••••123: check that it is your M-Pesa number.').isVisible(),
            'what to check',
          );
          assert.ok(await page.locator('#wrong-number').isVisible(), 'what to do with a wrong number');
          assert.ok(await page.locator('#no-manual').isVisible(), 'no Paybill by hand');
          assert.match(
            (await page.locator('#deadline').innerText()).trim(),
            /^until \d{1,2} \w{3} \d{4}, \d{2}:\d{2} \(EAT\)$/,
          );
          assert.deepEqual(await languageLinks(page), ['sw'], 'Kenya: English and Swahili');
          await checkPageQuality(page, loaded, `Kenya (${name})`);
          await screenshot(page, 'cashier-kenya', viewport);
          for (const left of [3, 2]) {
            // A prompt may be asked for again once the cooldown after the last one has passed.
            gw.clock.advance(MPESA_RESEND_COOLDOWN_MS + 1);
            await page.getByRole('button', { name: `Send the request again (${left} left)` }).click();
            await page.getByRole('button', { name: `Send the request again (${left - 1} left)` }).waitFor();
            assert.ok(
              await page.getByText('A new request was sent. Check your phone.', { exact: false }).isVisible(),
              'the resend is confirmed',
            );
          }
          gw.clock.advance(MPESA_RESEND_COOLDOWN_MS + 1);
          await page.getByRole('button', { name: 'Send the request again (1 left)' }).click();
          await page
            .getByText('The last request was sent. Check your phone: the request cannot be sent again.')
            .waitFor();
          assert.equal(await page.locator('#resend-note').count(), 1, 'one note at the limit');
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
          remark: 'Assinatura <anual> & brinde',
        })) as unknown as string,
      );
      let orderId = '';
      await withPage(VIEWPORTS.phone, 'pt-BR', async (page) => {
        const loaded = await loadCounted(page, first);
        assert.equal(loaded.status, 200);
        assert.ok(await page.getByText('Referente a: Assinatura <anual> & brinde').isVisible(), 'what is paid for');
        assert.match(await page.locator('time[data-expires]').innerText(), /^\d+:\d{2}$/, 'its own countdown');
        assert.match(
          (await page.locator('#deadline').innerText()).trim(),
          /^até \d{1,2} de \w+\.? de \d{4}, \d{2}:\d{2} \(BRT\)$/,
          'its deadline',
        );
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
        assert.equal(await pixQr(page, VIEWPORTS.phone), code);
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
    'M-Pesa resend: taps while a resend is in flight send nothing more, and the page says one thing at a time',
    { skip },
    async () => {
      const data = await create('/api/v3/ken/createCollectingOrder', {
        amount: '700',
        channelType: 'CHARGE',
        phone: '254712345124',
        checkingPhone: '254712345124',
      });
      const orderId = data.currencyOrderVo.orderId as string;
      const restarts = async () =>
        (await gw.gateway.orders.history(orderId)).filter((e) => e.event === 'rail_restarted').length;
      /** The resend section's notes: exactly one says where the payer stands. */
      const notes = (page: Page) => page.locator('#resend-note');
      await withPage(VIEWPORTS.phone, 'en-KE', async (page) => {
        await page.goto(local(data.cashierUrl as string));
        // A minute from the prompt, less the seconds a loaded machine took to open the page.
        const first = (await page.locator('#resend-note').innerText()).trim();
        const seconds = Number(/^You can ask for a new request in (\d+) s\.$/.exec(first)?.[1]);
        assert.ok(seconds >= 45 && seconds <= 60, `the first cooldown: ${first}`);
        gw.clock.advance(MPESA_RESEND_COOLDOWN_MS + 1);
        const button = page.getByRole('button', { name: 'Send the request again (3 left)' });
        // First without leaving the page: a listener after the page's own records whether each submit
        // would go out (not prevented by the page) and then keeps it from going out.
        await page.locator('form[action*="/resend"]').evaluate((form) => {
          const seen: boolean[] = [];
          form.setAttribute('data-test-submits', '');
          form.addEventListener('submit', (event: { defaultPrevented: boolean; preventDefault(): void }) => {
            seen.push(!event.defaultPrevented);
            form.setAttribute('data-test-submits', seen.join(','));
            event.preventDefault();
          });
        });
        await button.click();
        assert.ok(await button.isDisabled(), 'the button is disabled while the resend is in flight');
        await page.locator('form[action*="/resend"]').evaluate((form) => {
          const again = form as unknown as { requestSubmit(): void };
          again.requestSubmit();
          again.requestSubmit();
        });
        assert.equal(
          await page.locator('form[action*="/resend"]').getAttribute('data-test-submits'),
          'true,false,false',
          'only the first of three submits goes out',
        );
        // Then for real: three quick taps post one resend.
        await page.reload();
        const posts: string[] = [];
        page.on('request', (request) => {
          if (request.method() === 'POST' && request.url().includes('/resend')) posts.push(request.url());
        });
        await button.click({ clickCount: 3 });
        await page.getByText('A new request was sent. Check your phone.', { exact: false }).waitFor();
        assert.equal(posts.length, 1, 'one resend posted for three taps');
        assert.equal(await restarts(), 1, 'one new prompt');
        assert.equal(await notes(page).count(), 1, 'one note after the resend');
        assert.equal(
          await notes(page).innerText(),
          'A new request was sent. Check your phone. You can ask for another in 60 s.',
        );

        // Within the cooldown a tap sends nothing and the page says how long is left, once.
        gw.clock.advance(20_000);
        await page.getByRole('button', { name: 'Send the request again (2 left)' }).click();
        await page.getByText('You can ask for another in 40 s.', { exact: false }).waitFor();
        assert.equal(await restarts(), 1, 'no prompt within the cooldown');
        assert.equal(await notes(page).count(), 1, 'one note within the cooldown');

        gw.clock.advance(MPESA_RESEND_COOLDOWN_MS);
        await page.getByRole('button', { name: 'Send the request again (2 left)' }).click();
        await page.getByRole('button', { name: 'Send the request again (1 left)' }).waitFor();
        gw.clock.advance(MPESA_RESEND_COOLDOWN_MS);
        await page.getByRole('button', { name: 'Send the request again (1 left)' }).click();
        await page.getByText('The last request was sent.', { exact: false }).waitFor();
        assert.equal(await restarts(), 3, 'three prompts in all, one per cooldown');
        assert.equal(await notes(page).count(), 1, 'one note at the limit');
        assert.equal(
          await notes(page).innerText(),
          'The last request was sent. Check your phone: the request cannot be sent again.',
        );
        assert.equal(await page.getByText('A new request was sent', { exact: false }).count(), 0, 'not both');
        assert.equal(await page.getByRole('button', { name: /Send the request again/ }).count(), 0, 'no more button');
      });
    },
  );

  it(
    'the paid page with a returnUrl: a "Return to the shop" button and a countdown the payer can stop; no meta refresh',
    { skip },
    async () => {
      const paidWith = async (path: string) => {
        const data = await create('/api/v3/bra/createCollectingOrder', {
          amount: '10.00',
          channelType: 'PIX',
          returnUrl: `${shop.url}${path}`,
        });
        assert.equal((await gw.sandbox(data.currencyOrderVo.orderId as string, 'paid')).status, 200);
        return local(data.cashierUrl as string);
      };
      const stays = await paidWith('/paid-stay');
      await withPage(VIEWPORTS.phone, 'en-US', async (page) => {
        const loaded = await loadCounted(page, stays);
        assert.equal(loaded.status, 200);
        assert.doesNotMatch(await page.content(), /http-equiv="refresh"/, 'no meta refresh');
        await page.getByRole('button', { name: 'Stay on this page' }).click();
        await checkPageQuality(page, loaded, 'paid with a return');
      });
      await withPage(VIEWPORTS.phone, 'en-US', async (page) => {
        // The page's time stands still until the test moves it.
        const start = Date.now();
        await page.clock.install({ time: start });
        await page.clock.pauseAt(start + 1_000);
        await page.goto(stays);
        const back = page.getByRole('link', { name: 'Return to the shop' });
        assert.ok(await back.isVisible(), 'the return button');
        assert.equal(await back.getAttribute('href'), `${shop.url}/paid-stay`);
        const host = new URL(shop.url).host;
        assert.ok(await page.getByText(`Taking you back to ${host} in 5 s.`).isVisible(), 'the countdown');
        await page.clock.runFor(2_000);
        assert.ok(await page.getByText(`Taking you back to ${host} in 3 s.`).isVisible(), 'the countdown ticks');
        await page.getByRole('button', { name: 'Stay on this page' }).click();
        assert.ok(await page.getByText('You stay on this page.').isVisible(), 'the countdown is stopped');
        await page.clock.runFor(30_000);
        assert.equal(page.url(), stays, 'still on the paid page');
        assert.ok(!shop.visits.includes('/paid-stay'), 'the shop was not visited');
        assert.ok(await back.isVisible(), 'the return button stays');
      });

      const returns = await paidWith('/paid-go');
      await withPage(VIEWPORTS.desktop, 'pt-BR', async (page) => {
        await page.clock.install();
        await page.goto(returns);
        assert.ok(await page.getByRole('link', { name: 'Voltar à loja' }).isVisible(), 'the return button (pt-BR)');
        await page.clock.runFor(5_000);
        await page.waitForURL(`${shop.url}/paid-go`);
      });
      await withPage(VIEWPORTS.phone, 'es', async (page) => {
        await page.goto(returns);
        assert.ok(await page.getByRole('link', { name: 'Volver a la tienda' }).isVisible(), 'the return button (es)');
      });

      await withPage(
        VIEWPORTS.phone,
        'en-US',
        async (page) => {
          await page.goto(returns);
          assert.ok(
            await page.getByRole('link', { name: 'Return to the shop' }).isVisible(),
            'the button without script',
          );
          assert.ok(await page.getByText(/Taking you back/).isHidden(), 'no countdown without script');
          assert.equal(await page.getByRole('button', { name: 'Stay on this page' }).count(), 0, 'no stop button');
          assert.doesNotMatch(await page.content(), /http-equiv="refresh"/, 'no meta refresh without script');
        },
        { javaScriptEnabled: false },
      );
    },
  );

  for (const [name, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1366, height: 900 }],
  ] as const) {
    it(
      `the aggregate cashier's method radios at the ${name} viewport: one size, the chosen card highlighted`,
      { skip },
      async () => {
        const address = local((await create('/api/v3/polymerize/createCollectingOrder', {})) as unknown as string);
        await withPage(viewport, 'en-US', async (page) => {
          await page.goto(address);
          const radios = page.locator('input[name=method]');
          assert.ok((await radios.count()) >= 3, 'several methods');
          const sizes = await radios.evaluateAll((inputs) =>
            inputs.map((input) => {
              const box = input.getBoundingClientRect();
              return `${box.width.toFixed(2)}x${box.height.toFixed(2)}`;
            }),
          );
          assert.equal(new Set(sizes).size, 1, `every radio the same size: ${sizes.join(', ')}`);
          await page.getByLabel(/^Pix/).first().check();
          const looks = await page.locator('label.method').evaluateAll((labels) =>
            labels.map((label) => {
              const style = label.ownerDocument.defaultView?.getComputedStyle(label);
              return {
                checked: label.querySelector('input')?.checked === true,
                look: `${style?.borderColor} ${style?.backgroundColor}`,
              };
            }),
          );
          const chosen = looks.filter((l) => l.checked);
          const others = looks.filter((l) => !l.checked);
          assert.equal(chosen.length, 1, 'one chosen card');
          for (const other of others)
            assert.notEqual(other.look, chosen[0]?.look, 'the chosen card looks different from the others');
          assert.equal(new Set(others.map((o) => o.look)).size, 1, 'the other cards look alike');
          await checkPageQuality(page, { bytes: 0 }, `aggregate cashier, a method chosen (${name})`);
        });
      },
    );
  }

  it(
    'without JavaScript the PIX page still shows amount and code, hides the copy button, and refreshes itself',
    { skip },
    async () => {
      const data = await create('/api/v3/bra/createCollectingOrder', { amount: '9.99', channelType: 'PIX' });
      await withPage(
        VIEWPORTS.phone,
        'en-US',
        async (page) => {
          await page.goto(local(data.cashierUrl as string));
          assert.ok(await page.getByText('R$9.99', { exact: true }).isVisible());
          assert.equal(await page.getByLabel(/Pix code to copy and paste/).inputValue(), data.currencyOrderVo.payParam);
          assert.ok(await page.locator('svg.qr').isVisible(), 'without script the QR code is open, after the code');
          assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 0, 'no copy button without script');
          assert.equal(await page.locator('noscript').count(), 1);
          assert.match((await page.content()).replace(/&lt;/g, '<'), /<meta http-equiv="refresh" content="10">/);
        },
        { javaScriptEnabled: false },
      );
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
  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(
      `the paid page at the ${name} viewport is a printable receipt: date and zone, references, method, amount, end-to-end id`,
      { skip },
      async () => {
        const data = await create('/api/v3/bra/createCollectingOrder', {
          amount: '42.50',
          channelType: 'PIX',
          remark: 'Camiseta azul',
          returnUrl: `${shop.url}/receipt-${name}`,
        });
        const orderId = data.currencyOrderVo.orderId as string;
        assert.equal((await gw.sandbox(orderId, 'paid')).status, 200);
        const e2e = (JSON.parse((await gw.gateway.orders.find(orderId))?.details ?? '{}') as { endToEndId: string })
          .endToEndId;
        await withPage(viewport, 'en-US', async (page) => {
          const loaded = await loadCounted(page, local(data.cashierUrl as string));
          assert.equal(loaded.status, 200);
          // The payer stops the return countdown to read the receipt.
          await page.getByRole('button', { name: 'Stay on this page' }).click();
          const field = (label: string) => page.locator(`dt:text-is("${label}") + dd`);
          assert.match(await field('Paid on').innerText(), /^\d{1,2} \w{3} \d{4}, \d{2}:\d{2} \(BRT\)$/);
          assert.equal(await field("Merchant's order").innerText(), data.currencyOrderVo.externalOrderId);
          assert.equal(await field('Cashgate order').innerText(), orderId);
          assert.equal(await field('Method').innerText(), 'Pix');
          assert.equal(await field('Amount paid').innerText(), 'R$42.50');
          assert.equal(await field('Pix end-to-end id').innerText(), e2e);
          assert.equal(await field('For').innerText(), 'Camiseta azul');
          const print = page.getByRole('button', { name: 'Print the receipt' });
          assert.ok(await print.isVisible(), 'the print button (with script)');
          assert.ok(await page.getByRole('link', { name: 'Return to the shop' }).isVisible(), 'the way back');
          assert.ok(await page.getByText('You stay on this page.').isVisible(), 'the countdown stopped');
          await checkPageQuality(page, loaded, `receipt (${name})`);
          await screenshot(page, 'cashier-receipt', viewport);
          // Printed: the receipt without buttons, links of the page's own or language links.
          await page.emulateMedia({ media: 'print' });
          assert.ok(await print.isHidden(), 'no print button on paper');
          assert.ok(
            await page.getByRole('link', { name: 'Return to the shop' }).isHidden(),
            'no return button on paper',
          );
          assert.ok(await page.locator('nav').isHidden(), 'no language links on paper');
          assert.ok(await field('Pix end-to-end id').isVisible(), 'the receipt is printed');
        });
      },
    );

    it(
      `a partial payment at the ${name} viewport: received and still to pay, no automatic return; the same on Kenya's page`,
      { skip },
      async () => {
        const data = await create('/api/v3/bra/createCollectingOrder', {
          amount: '100.00',
          channelType: 'PIX',
          returnUrl: `${shop.url}/partial-${name}`,
        });
        await withPage(viewport, 'pt-BR', async (page) => {
          await page.goto(local(data.cashierUrl as string));
          // The payer pays less than asked (the sandbox panel's "another amount").
          await page.getByLabel('Outro valor (BRL)').fill('54.22');
          await page.getByRole('button', { name: 'Pagar este valor' }).click();
          await page.getByRole('heading', { name: 'Pago em parte' }).waitFor();
          assert.ok(
            await page.getByText('R$ 54,22 recebidos, faltam R$ 45,78 para pagar.').isVisible(),
            'what was received and what is left',
          );
          assert.equal(await page.getByRole('heading', { name: 'Pagamento recebido' }).count(), 0, 'not "received"');
          assert.equal(await page.locator('[data-return]').count(), 0, 'no countdown back to the shop');
          assert.ok(await page.locator('dt:text-is("Valor do pedido") + dd').isVisible(), 'the amount asked');
          await checkPageQuality(page, { bytes: 0 }, `partial payment (${name})`);
          await screenshot(page, 'cashier-partial', viewport);
        });
        const ken = await create('/api/v3/ken/createCollectingOrder', {
          amount: '1500',
          channelType: 'CHARGE',
          phone: '254712345126',
          checkingPhone: '254712345126',
        });
        assert.equal((await gw.sandbox(ken.currencyOrderVo.orderId as string, 'paid', { amount: '1000' })).status, 200);
        await withPage(viewport, 'en-KE', async (page) => {
          const loaded = await loadCounted(page, local(ken.cashierUrl as string));
          assert.ok(await page.getByRole('heading', { name: 'Partly paid' }).isVisible());
          assert.ok(await page.getByText('KES 1,000 received, KES 500 still to pay.').isVisible());
          await checkPageQuality(page, loaded, `Kenya partial payment (${name})`);
        });
      },
    );
  }
});
