import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { groupClabe } from '../src/cashier/mexico-views.js';
import { databaseLabel } from './support/database.js';
import { checkPageQuality, launchBrowser, loadCounted, saveScreenshot, VIEWPORTS } from './support/browser.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { eventually } from './support/receiver.js';

/** Every page a payer loads must fit in this many bytes on the wire (the budget of cashier-browser.test.ts). */

let seq = 0;
const nextId = () => `mx-browser-${Date.now()}-${++seq}`;

/** A deadline as a Mexican page writes it, in Mexico City time. */
const DEADLINE_ES = /^hasta el \d{1,2} [a-z]+\.? \d{4}, \d{2}:\d{2} \(CST\)$/;
const DEADLINE_EN = /^until \d{1,2} [A-Z][a-z]+ \d{4}, \d{2}:\d{2} \(CST\)$/;

/**
 * Mexico's aggregate cashier in a real browser, on a phone: the peso form in Mexican Spanish, SPEI's
 * CLABE page, OXXO's voucher with its barcode (its name and email asked only when OXXO is chosen),
 * the sandbox panel paying both, and the SPEI page in English.
 */
describe(`Mexican aggregate cashier in Chromium (${databaseLabel})`, async () => {
  const launched = await launchBrowser();
  const skip = 'skip' in launched ? launched.skip : undefined;
  const browser: Browser | undefined = 'browser' in launched ? launched.browser : undefined;
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  const withPage = async (
    locale: string,
    run: (page: Page) => Promise<void>,
    options: { javaScriptEnabled?: boolean } = {},
  ) => {
    if (browser === undefined) throw new Error('no browser: the test should have been skipped');
    const context = await browser.newContext({
      viewport: VIEWPORTS.phone,
      locale,
      javaScriptEnabled: options.javaScriptEnabled ?? true,
    });
    try {
      await run(await context.newPage());
    } finally {
      await context.close();
    }
  };
  /** A new aggregate cashier of the peso merchant, at the test gateway's own address. */
  const openCashier = async () => {
    const response = await signedCall(
      gw.url,
      merchant.credentials,
      { path: '/api/v3/polymerize/createCollectingOrder', body: { externalOrderId: nextId() } },
      gw.clock.now(),
    );
    assert.equal(response.body.code, '200', response.body.msgEn);
    return new URL(new URL(response.body.data as string).pathname, gw.url).href;
  };
  /** The order the page shows, by the cashier id in its address. */
  const orderOf = async (page: Page) => {
    const order = await gw.gateway.orders.findByCashier(new URL(page.url()).pathname.split('/').pop() ?? '');
    assert.ok(order !== undefined, `an order behind ${page.url()}`);
    return order;
  };
  /** A receipt line by its label. */
  const field = (page: Page, label: string) => page.locator(`dt:text-is("${label}") + dd`);

  before(async () => {
    if (skip !== undefined) return;
    gw = await startTestGateway();
    merchant = await gw.merchantWithKey();
    const set = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/cashier`, { currency: 'MXN' });
    assert.equal(set.status, 200, JSON.stringify(set.body));
  });
  after(async () => {
    if (skip !== undefined) return;
    await browser?.close();
    await gw.close();
  });

  it(
    'SPEI: the peso form in Mexican Spanish names a bad amount; the CLABE page (copyable, grouped, CST); the sandbox pays; the receipt names the payer',
    { skip },
    async () => {
      const address = await openCashier();
      await withPage('es-MX', async (page) => {
        const form = await loadCounted(page, address);
        assert.equal(form.status, 200);
        assert.equal(await page.locator('html').getAttribute('lang'), 'es-MX');
        assert.ok(await page.getByRole('heading', { name: '¿Cómo quieres pagar?' }).isVisible());
        // Mexican Spanish ("Monto"), not Spain's ("Importe").
        const amount = page.getByLabel('Monto (MXN)');
        assert.ok(await amount.isVisible(), 'the amount in pesos');
        assert.ok(await page.getByText('Por ejemplo 1,234.50').isVisible(), 'the hint writes pesos as Mexico does');
        assert.ok(await page.getByLabel(/^Transferencia SPEI/).isVisible(), 'SPEI offered');
        assert.ok(await page.getByLabel(/^Efectivo en OXXO/).isVisible(), 'OXXO offered');
        assert.equal(await page.getByLabel('CPF ou CNPJ').count(), 0, 'no Brazilian document');
        assert.match((await page.locator('#deadline').innerText()).trim(), DEADLINE_ES, 'the form counts down in CST');
        await checkPageQuality(page, form, 'MXN form');

        // A bad amount is named, in pesos, and nothing is made.
        await amount.fill('0.50');
        await page.getByLabel(/^Transferencia SPEI/).check();
        await page.getByRole('button', { name: 'Continuar' }).click();
        const error = page.locator('#amount-error');
        await error.waitFor();
        const problem = (await error.innerText()).trim();
        assert.match(problem, /^Ingresa un monto de \$1\.00 MXN a \$[\d,]+\.\d{2} MXN, con 2 decimales como máximo\.$/);
        assert.equal(await page.getByLabel('Monto (MXN)').getAttribute('aria-invalid'), 'true');
        assert.ok(await page.getByRole('link', { name: problem }).isVisible(), 'the summary links to the amount');
        assert.ok(await page.getByLabel(/^Transferencia SPEI/).isChecked(), 'the choice is kept');
        assert.ok(await page.locator('#contact-field').isHidden(), 'no name and email for SPEI');
        await checkPageQuality(page, { bytes: 0 }, 'MXN form with errors');

        await page.getByLabel('Monto (MXN)').fill('1234.50');
        await page.getByRole('button', { name: 'Continuar' }).click();
        await page.getByRole('heading', { name: 'Paga con transferencia SPEI' }).waitFor();
        const loaded = await loadCounted(page, page.url());
        assert.equal(loaded.status, 200);
        assert.ok(await page.locator('p.amount', { hasText: '$1,234.50 MXN' }).isVisible(), 'the amount');
        const order = await orderOf(page);
        assert.equal(order.channel_type, 'SPEI');
        const clabe = (JSON.parse(order.details) as { clabe: string }).clabe;

        // The copy button copies the 18 digits as a bank app takes them; the grouped form is for reading.
        const copy = page.getByRole('button', { name: 'Copiar CLABE' });
        assert.ok(await copy.isVisible(), 'the copy button (with script)');
        const target = await copy.getAttribute('data-copy');
        const copied = await page.locator(`#${target ?? 'missing'}`).inputValue();
        assert.match(copied, /^\d{18}$/, 'the copy target: 18 digits, no spaces');
        assert.equal(copied, clabe, "the order's own CLABE");
        const grouped = (await page.locator('#clabe-grouped').innerText()).trim();
        assert.match(grouped, /^646 180 \d{11} \d$/, 'the CLABE grouped for reading');
        assert.equal(grouped, groupClabe(clabe));
        assert.ok(await page.getByText('Beneficiario: CASHGATE SANDBOX').isVisible(), 'the beneficiary');
        assert.ok(await page.getByText('Banco: STP').isVisible(), 'the bank');
        assert.match((await page.locator('#deadline').innerText()).trim(), DEADLINE_ES, 'the deadline');
        assert.deepEqual(
          await page.locator('nav a[hreflang]').evaluateAll((links) => links.map((a) => a.getAttribute('hreflang'))),
          ['en'],
          'Mexico: Mexican Spanish and English',
        );
        await checkPageQuality(page, loaded, 'SPEI');
        await saveScreenshot(page, 'cashier-spei');

        await page.getByRole('button', { name: 'Pagar $1,234.50 MXN' }).click();
        await page.getByRole('heading', { name: 'Pago recibido' }).waitFor();
        assert.equal(await field(page, 'Monto pagado').innerText(), '$1,234.50 MXN');
        assert.equal(await field(page, 'Método').innerText(), 'Transferencia SPEI');
        assert.equal(await field(page, 'CLABE').innerText(), clabe);
        assert.equal(await field(page, 'Banco emisor').innerText(), 'BBVA MEXICO', "the payer's bank");
        assert.match(await field(page, 'Cuenta de origen').innerText(), /^\*{14}\d{4}$/, "the payer's account, masked");
        await checkPageQuality(page, { bytes: 0 }, 'SPEI paid');
      });
    },
  );

  it(
    'OXXO: name and email asked only once OXXO is chosen; the voucher number, its barcode and expiry (CST); the sandbox pays',
    { skip },
    async () => {
      const address = await openCashier();
      await withPage('es-MX', async (page) => {
        await page.goto(address);
        const contact = page.locator('#contact-field');
        assert.ok(await contact.isHidden(), 'no name and email before a method is chosen');
        await page.getByLabel(/^Transferencia SPEI/).check();
        assert.ok(await contact.isHidden(), 'nor for SPEI');
        await page.getByLabel(/^Efectivo en OXXO/).check();
        assert.ok(await contact.isVisible(), 'shown once OXXO is chosen');
        assert.ok(await page.getByRole('group', { name: 'Para OXXO: tu nombre y correo' }).isVisible());
        await page.getByLabel(/^Transferencia SPEI/).check();
        assert.ok(await contact.isHidden(), 'hidden again for SPEI');
        await page.getByLabel(/^Efectivo en OXXO/).check();
        await page.getByLabel('Monto (MXN)').fill('250');
        await page.getByLabel('Nombre completo').fill('Ana López');
        await page.getByLabel('Correo electrónico').fill('ana@example.mx');
        await checkPageQuality(page, { bytes: 0 }, 'MXN form, OXXO chosen');
        await page.getByRole('button', { name: 'Continuar' }).click();
        await page.getByRole('heading', { name: 'Paga en efectivo en OXXO' }).waitFor();

        // The voucher is issued by the rail after the order is made: the page shows it once it is.
        const order = await orderOf(page);
        assert.equal(order.channel_type, 'OXXO');
        const number = await eventually(
          async () =>
            (JSON.parse((await gw.gateway.orders.find(order.id))?.details ?? '{}') as { oxxoNumber?: string })
              .oxxoNumber,
          5000,
          'the OXXO voucher',
        );
        const loaded = await loadCounted(page, page.url());
        assert.equal(loaded.status, 200);
        assert.ok(await page.locator('p.amount', { hasText: '$250.00 MXN' }).isVisible(), 'the amount');
        assert.match(number, /^\d{20}$/);
        assert.equal(
          await page.getByLabel('Referencia OXXO', { exact: true }).inputValue(),
          number,
          'the voucher number',
        );
        assert.ok(await page.getByRole('button', { name: 'Copiar referencia' }).isVisible(), 'its copy button');
        const barcode = page.locator('svg.barcode');
        assert.ok(await barcode.isVisible(), 'the barcode, an inline SVG');
        assert.equal(
          await page.getByRole('img', { name: `Código de barras de la referencia OXXO ${number}` }).count(),
          1,
          'the barcode is named by its number',
        );
        // Tall enough to scan from a screen, as the boleto's: at least 13 mm (CSS mm at 96 dpi).
        const height = (await barcode.boundingBox())?.height ?? 0;
        assert.ok(height >= (13 * 96) / 25.4, `the barcode is ${height}px tall, under 13 mm`);
        assert.match(
          (await page.locator('#oxxo-expires').innerText()).trim(),
          /^Ficha válida hasta: \d{1,2} [a-z]+\.? \d{4}, 23:59 \(CST\)$/,
          'the voucher runs to the end of a day in Mexico City',
        );
        assert.ok(await page.getByRole('heading', { name: 'Cómo pagar en la tienda' }).isVisible(), 'how to pay');
        assert.ok(await page.getByText('Paga $250.00 MXN en efectivo.').isVisible());
        assert.ok(await page.getByRole('heading', { name: 'Sandbox: simula al pagador' }).isVisible(), 'the sandbox');
        await checkPageQuality(page, loaded, 'OXXO');
        await saveScreenshot(page, 'cashier-oxxo');

        await page.getByRole('button', { name: 'Pagar $250.00 MXN' }).click();
        await page.getByRole('heading', { name: 'Pago recibido' }).waitFor();
        assert.equal(await field(page, 'Método').innerText(), 'Efectivo en OXXO');
        assert.equal(await field(page, 'Referencia OXXO').innerText(), number);
        assert.equal(await field(page, 'Monto pagado').innerText(), '$250.00 MXN');
      });
    },
  );

  it(
    'without JavaScript the name and email stay shown, and OXXO is chosen and made all the same',
    { skip },
    async () => {
      const address = await openCashier();
      await withPage(
        'es-MX',
        async (page) => {
          await page.goto(address);
          assert.ok(await page.locator('#contact-field').isVisible(), 'the fields are there without script');
          await page.getByLabel('Monto (MXN)').fill('120');
          await page.getByLabel(/^Efectivo en OXXO/).check();
          await page.getByLabel('Nombre completo').fill('Luis Pérez');
          await page.getByLabel('Correo electrónico').fill('luis@example.mx');
          await page.getByRole('button', { name: 'Continuar' }).click();
          await page.getByRole('heading', { name: 'Paga en efectivo en OXXO' }).waitFor();
          assert.equal((await orderOf(page)).channel_type, 'OXXO');
        },
        { javaScriptEnabled: false },
      );
    },
  );

  it('in English (locale en) the SPEI page reads in English', { skip }, async () => {
    const address = await openCashier();
    await withPage('en', async (page) => {
      await page.goto(address);
      assert.equal(await page.locator('html').getAttribute('lang'), 'en');
      assert.ok(await page.locator('#contact-field').isHidden(), 'no name and email before OXXO is chosen');
      await page.getByLabel('Amount (MXN)').fill('1234.50');
      await page.getByLabel(/^SPEI bank transfer/).check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'Pay by SPEI transfer' }).waitFor();
      assert.ok(await page.locator('p.amount', { hasText: 'MXN 1,234.50' }).isVisible(), 'the amount');
      assert.ok(await page.getByRole('button', { name: 'Copy CLABE' }).isVisible());
      assert.match(
        await page.getByLabel('The CLABE without spaces, to paste in your bank app').inputValue(),
        /^\d{18}$/,
      );
      assert.ok(await page.getByText('Beneficiary: CASHGATE SANDBOX').isVisible());
      assert.ok(await page.getByText('Bank: STP').isVisible());
      assert.match((await page.locator('#deadline').innerText()).trim(), DEADLINE_EN, 'the deadline');
      assert.ok(await page.getByRole('heading', { name: 'How to pay' }).isVisible());
      assert.ok(await page.getByRole('button', { name: 'Pay MXN 1,234.50' }).isVisible(), 'the sandbox panel');
      assert.deepEqual(
        await page.locator('nav a[hreflang]').evaluateAll((links) => links.map((a) => a.getAttribute('hreflang'))),
        ['es-MX'],
        'the link back to Mexican Spanish',
      );
      await checkPageQuality(page, { bytes: 0 }, 'SPEI in English');
    });
  });
});
