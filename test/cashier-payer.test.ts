import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

let seq = 0;
const nextId = () => `payer-${Date.now()}-${++seq}`;

/** The visible text of a page: tags dropped, entities of the escaped text read back, spaces collapsed. */
const textOf = (page: string) =>
  page
    .replace(/<style>[\s\S]*?<\/style>|<script>[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

/** The language links of a page, as their hreflang values. */
const languageLinks = (page: string) => [...page.matchAll(/hreflang="([^"]+)"/g)].map((m) => m[1]);

/** A moment as the pages write it, worked out here with Intl on its own: "25 Nov 2026, 01:48". */
const written = (locale: string, zone: string, ms: number) =>
  new Intl.DateTimeFormat(locale, {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone: zone,
  }).format(new Date(ms));

/** What payers read on the cashier pages over plain HTTP: amounts paid, receipts, deadlines, languages. */
describe(`cashier pages for payers (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  before(async () => {
    gw = await startTestGateway();
    merchant = await gw.merchantWithKey();
    await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.25', sell: '5.40', spreadBps: 0 });
  });
  after(async () => {
    await gw.close();
  });

  const create = async (path: string, body: Record<string, unknown>) => {
    const response = await signedCall(
      gw.url,
      merchant.credentials,
      { path, body: { externalOrderId: nextId(), ...body } },
      gw.clock.now(),
    );
    assert.equal(response.body.code, '200', response.body.msgEn);
    return response.body.data;
  };
  const page = async (link: string, language = 'en') => {
    // The test gateway's addresses name no real port: the path and query are what matter.
    const address = new URL(link, gw.url);
    const response = await fetch(new URL(address.pathname + address.search, gw.url), {
      headers: { 'accept-language': language },
      redirect: 'manual',
    });
    return { status: response.status, html: await response.text(), location: response.headers.get('location') };
  };
  const pix = (amount: string, extra: Record<string, unknown> = {}) =>
    create('/api/v3/bra/createCollectingOrder', { amount, channelType: 'PIX', ...extra });
  const kenya = (amount: string, extra: Record<string, unknown> = {}) =>
    create('/api/v3/ken/createCollectingOrder', {
      amount,
      channelType: 'CHARGE',
      phone: '254712345777',
      checkingPhone: '254712345777',
      ...extra,
    });
  /** Opens an aggregate cashier and chooses; the order's cashier page. */
  const aggregate = async (create19: Record<string, unknown>, form: Record<string, string>) => {
    const address = (await create('/api/v3/polymerize/createCollectingOrder', create19)) as string;
    const response = await fetch(new URL(new URL(address).pathname, gw.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
    assert.equal(response.status, 303, await response.text());
    const cashierPath = response.headers.get('location') ?? '';
    const order = await gw.gateway.orders.findByCashier(cashierPath.split('/').pop() ?? '');
    assert.ok(order !== undefined, `an order behind ${cashierPath}`);
    return { cashierPath, order };
  };

  it('a partial Pix payment is told as received and still to pay, with no automatic return to the shop', async () => {
    const data = await pix('100.00', { returnUrl: 'https://shop.example/back' });
    assert.equal((await gw.sandbox(data.currencyOrderVo.orderId, 'paid', { amount: '54.22' })).status, 200);
    const en = await page(data.cashierUrl);
    assert.equal(en.status, 200);
    const text = textOf(en.html);
    assert.ok(text.includes(' Partly paid '), 'the title says partly paid');
    assert.ok(text.includes('R$54.22 received, R$45.78 still to pay.'), text);
    assert.ok(text.includes('The order asked for R$100.00.'), 'the amount asked');
    assert.ok(!text.includes('Payment received'), 'never a plain "Payment received"');
    assert.ok(!en.html.includes('data-return='), 'no countdown back to the shop');
    assert.ok(en.html.includes('href="https://shop.example/back"'), 'the way back stays a button');
    const pt = textOf((await page(data.cashierUrl, 'pt-BR')).html);
    assert.ok(pt.includes('R$ 54,22 recebidos, faltam R$ 45,78 para pagar.'), pt);
    const es = textOf((await page(data.cashierUrl, 'es')).html);
    assert.ok(es.includes('R$ 54,22 recibidos, faltan R$ 45,78 por pagar.'), es);
  });

  it('a payment over the amount says how much more; partial payments in USDT and in Kenya shillings', async () => {
    const over = await pix('100.00');
    await gw.sandbox(over.currencyOrderVo.orderId, 'paid', { amount: '120.00' });
    const text = textOf((await page(over.cashierUrl)).html);
    assert.ok(text.includes('Paid more than asked'), 'the title');
    assert.ok(text.includes('R$120.00 received, R$20.00 more than the R$100.00 asked.'), text);

    // USDT: counted in the units the payer sent (105 reais at 5.25 is 20 USDT).
    const usdt = await aggregate({}, { amount: '105', method: 'USDT_TRC20' });
    await gw.sandbox(usdt.order.id, 'paid', { amount: '15' });
    const uText = textOf((await page(usdt.cashierPath)).html);
    assert.ok(uText.includes('15 USDT received, 5 USDT still to pay.'), uText);

    const ken = await kenya('1500');
    assert.equal((await gw.sandbox(ken.currencyOrderVo.orderId, 'paid', { amount: '1000' })).status, 200);
    const kText = textOf((await page(ken.cashierUrl)).html);
    assert.ok(kText.includes('KES 1,000 received, KES 500 still to pay.'), kText);
  });

  it('the paid page is a receipt: date and zone, both order references, method, amount and the Pix end-to-end id; printable', async () => {
    const data = await pix('42.50', { remark: 'Camiseta azul <M>' });
    const orderId = data.currencyOrderVo.orderId as string;
    await gw.sandbox(orderId, 'paid');
    const order = await gw.gateway.orders.find(orderId);
    const e2e = (JSON.parse(order?.details ?? '{}') as { endToEndId?: string }).endToEndId ?? '';
    assert.match(e2e, /^E\d{8}/, 'the sandbox records an end-to-end id');
    const { html } = await page(data.cashierUrl);
    const text = textOf(html);
    const paidAt = written('en-GB', 'America/Sao_Paulo', order?.pay_time ?? 0);
    for (const [label, value] of [
      ['Paid on', `${paidAt} (BRT)`],
      ["Merchant's order", data.currencyOrderVo.externalOrderId as string],
      ['Cashgate order', orderId],
      ['Method', 'Pix'],
      ['Amount paid', 'R$42.50'],
      ['Pix end-to-end id', e2e],
      ['For', 'Camiseta azul <M>'],
    ])
      assert.ok(text.includes(` ${label} ${value} `), `the receipt's "${label}": ${value} in ${text}`);
    assert.ok(html.includes('Camiseta azul &lt;M&gt;'), 'the remark escaped');
    assert.match(html, /@media print\{[^}]*button[^}]*display:none/, 'the print style hides the buttons');
    assert.match(html, /<button type="button" class="secondary" data-print hidden>Print the receipt<\/button>/);
  });

  it('the receipt names the M-Pesa receipt and the USDT transaction hash', async () => {
    const ken = await kenya('700');
    await gw.gateway.orders.applyEvent(ken.currencyOrderVo.orderId, 'paid', {
      source: 'test:daraja',
      data: { mpesaReceipt: 'TKL9ABC12X', mpesaPhone: '254712345777' },
    });
    const kText = textOf((await page(ken.cashierUrl)).html);
    assert.ok(kText.includes(' M-Pesa receipt TKL9ABC12X '), kText);
    assert.ok(kText.includes(' Method M-Pesa '), 'the method');
    assert.match(kText, / Paid on \d{1,2} \w{3} \d{4}, \d{2}:\d{2} \(EAT\) /, 'Nairobi time');

    const { cashierPath, order } = await aggregate({}, { amount: '105', method: 'USDT_TRC20' });
    await gw.sandbox(order.id, 'paid', { tradeHash: 'a'.repeat(64) });
    const uText = textOf((await page(cashierPath)).html);
    assert.ok(uText.includes(` Transaction hash ${'a'.repeat(64)} `), uText);
    assert.ok(uText.includes(' Amount paid 20 USDT '), 'the amount in USDT');
    assert.match(uText, / Paid on \d{1,2} \w{3} \d{4}, \d{2}:\d{2} \(UTC\) /, 'UTC on the USDT page');
  });

  it('dynamicAmountNotify 2: the refusal names the amount in the payer unit (reais, or USDT)', async () => {
    const brl = await aggregate(
      { dynamicAmountNotify: 2 },
      { amount: '20,00', method: 'PIX', document: '52998224725' },
    );
    await gw.sandbox(brl.order.id, 'paid', { amount: '19.00' });
    const pt = textOf((await page(brl.cashierPath, 'pt-BR')).html);
    assert.ok(
      pt.includes('Seu pagamento de R$ 19,00 foi devolvido: este pedido deve ser pago com exatamente R$ 20,00.'),
      pt,
    );
    const usdt = await aggregate({ dynamicAmountNotify: 2 }, { amount: '105', method: 'USDT_TRC20' });
    await gw.sandbox(usdt.order.id, 'paid', { amount: '19.5' });
    const en = textOf((await page(usdt.cashierPath)).html);
    assert.ok(
      en.includes('Your payment of 19.5 USDT was not accepted: this order must be paid with exactly 20 USDT.'),
      en,
    );
  });

  it('every deadline has its date and time zone: Pix in Brasília time, M-Pesa in Nairobi time, USDT in UTC', async () => {
    const data = await pix('10.00');
    const order = await gw.gateway.orders.find(data.currencyOrderVo.orderId);
    const end = order?.cashier_expire_at ?? 0;
    const at = (locale: string, zone: string) => written(locale, zone, end);
    assert.ok(
      textOf((await page(data.cashierUrl, 'pt-BR')).html).includes(`até ${at('pt-BR', 'America/Sao_Paulo')} (BRT)`),
      'pt-BR, Brasília',
    );
    assert.ok(
      textOf((await page(data.cashierUrl, 'en')).html).includes(`until ${at('en-GB', 'America/Sao_Paulo')} (BRT)`),
      'en, Brasília',
    );
    const ken = await kenya('900');
    const kenEnd = (await gw.gateway.orders.find(ken.currencyOrderVo.orderId))?.cashier_expire_at ?? 0;
    const kenAt = written('en-GB', 'Africa/Nairobi', kenEnd);
    assert.ok(textOf((await page(ken.cashierUrl)).html).includes(`until ${kenAt} (EAT)`), 'Kenya, Nairobi');
    const { cashierPath } = await aggregate({}, { amount: '105', method: 'USDT_TRC20' });
    assert.match(textOf((await page(cashierPath)).html), /until \d{1,2} \w{3} \d{4}, \d{2}:\d{2} \(UTC\)/, 'USDT, UTC');
  });

  it('the aggregate cashier form shows its own countdown and the remark, escaped', async () => {
    const address = (await create('/api/v3/polymerize/createCollectingOrder', {
      remark: 'Plano <b>anual</b> & extras',
    })) as string;
    const { html } = await page(address, 'pt-BR');
    assert.ok(html.includes('Referente a: Plano &lt;b&gt;anual&lt;/b&gt; &amp; extras'), 'the remark, escaped');
    assert.ok(!html.includes('<b>anual'), 'no markup from the remark');
    assert.match(html, /Tempo restante para escolher como pagar: <strong><time data-expires="\d+"/, 'the countdown');
    assert.match(textOf(html), /até \d{1,2} de \w+\.? de \d{4}, \d{2}:\d{2} \(BRT\)/, 'its deadline');
    assert.match(html, /<body data-now="\d+">/, "the script's clock");
  });

  it('a dynamic Pix says it is paid once for exactly its amount; a static one does not', async () => {
    const dynamic = await create('/api/v3/bra/createCollectingOrder', { amount: '15.00', channelType: 'PIX_DYNAMIC' });
    assert.match(
      textOf((await page(dynamic.cashierUrl)).html),
      /This code is for this payment only: it can be paid once, for exactly R\$15\.00, within the time below\./,
    );
    const fixed = await pix('15.00');
    assert.ok(!(await page(fixed.cashierUrl)).html.includes('pix-once'), 'no such note on a static code');
  });

  it('Spanish writes reais symbol first: R$ 42,50', async () => {
    const data = await pix('42.50');
    const es = textOf((await page(`${new URL(data.cashierUrl).pathname}?lang=es`)).html);
    assert.ok(es.includes('R$ 42,50'), 'Spanish');
    assert.ok(!es.includes('42,50 R$'), 'never after the number');
  });

  it('language links: Brazil pt-BR and English, Kenya English and Swahili, USDT English, Portuguese and Spanish', async () => {
    const data = await pix('10.00');
    assert.deepEqual(languageLinks((await page(data.cashierUrl, 'pt-BR')).html), ['en']);
    assert.deepEqual(languageLinks((await page(data.cashierUrl, 'es')).html), ['pt-BR', 'en']);
    const ken = await kenya('500');
    assert.deepEqual(languageLinks((await page(ken.cashierUrl, 'en')).html), ['sw']);
    assert.deepEqual(languageLinks((await page(ken.cashierUrl, 'pt-BR')).html), ['en', 'sw']);
    const { cashierPath } = await aggregate({}, { amount: '105', method: 'USDT_TRC20' });
    assert.deepEqual(languageLinks((await page(cashierPath, 'en')).html), ['pt-BR', 'es']);
    const address = (await create('/api/v3/polymerize/createCollectingOrder', {})) as string;
    assert.deepEqual(languageLinks((await page(address, 'pt-BR')).html), ['en']);
  });

  it('Kenya: what to check when no prompt comes, that the number cannot be changed here, and no Paybill by hand', async () => {
    const ken = await kenya('800');
    const text = textOf((await page(ken.cashierUrl)).html);
    assert.ok(text.includes('The request goes to 2547•••••777: check that it is your M-Pesa number.'), text);
    assert.ok(text.includes('it cannot be changed on this page: ask'), 'the number is the merchant’s to change');
    assert.ok(
      text.includes('A payment sent by hand to a Paybill or till number cannot be matched to this order'),
      'no manual Paybill payment',
    );
  });
});
