import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleSignIn, type ConsoleClient } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The orders a list page links to. */
function listedOrders(page: string): string[] {
  const table = /<table id="orders">[\s\S]*?<\/table>/.exec(page)?.[0] ?? '';
  return [...table.matchAll(/href="\/console\/orders\/([^"?#]+)"/g)].map((m) => decodeURIComponent(m[1] ?? '')).sort();
}

/** The figure and link of one of the overview's cards. */
function stat(page: string, id: string): { value: string; href: string } {
  const match = new RegExp(
    `<div class="panel stat" id="${id}">.*?<p class="figure"><a href="([^"]*)" aria-describedby="${id}-label">([^<]*)</a>`,
    's',
  ).exec(page);
  assert.ok(match !== null, `the card ${id}`);
  return { href: (match[1] ?? '').replace(/&amp;/g, '&'), value: match[2] ?? '' };
}

/** One row of the table by area. */
function areaRow(page: string, key: string): string {
  return new RegExp(`<tr data-area="${key}">.*?</tr>`, 's').exec(page)?.[0] ?? '';
}

describe(`console overview: figures of today and the last 7 UTC days (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let other: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let staff: ConsoleClient;
  let page = '';
  let today = '';
  let weekStart = '';
  let seq = 0;
  const ids = { old: '', bra50: '', ken200: '', braDiff: '', ken1500: '', ken300: '', payout: '', theirs: '' };
  const call = (path: string, body: Record<string, unknown>, credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body: { externalOrderId: `ov-${++seq}`, ...body } }, gw.clock.now());
  const kenya = async (amount: string, credentials = merchant.credentials) => {
    const made = await call(
      '/api/v3/ken/createCollectingOrder',
      { amount, channelType: 'CHARGE', phone: '254712345678', checkingPhone: '254712345678' },
      credentials,
    );
    assert.equal(made.body.code, '200', made.body.msgEn);
    return made.body.data.currencyOrderVo.orderId as string;
  };
  const brazil = async (amount: string, credentials = merchant.credentials) => {
    const made = await call('/api/v3/bra/createCollectingOrder', { amount, channelType: 'PIX' }, credentials);
    assert.equal(made.body.code, '200', made.body.msgEn);
    return made.body.data.currencyOrderVo.orderId as string;
  };
  const sandbox = async (orderId: string, event: string, extra: Record<string, unknown> = {}) =>
    assert.equal((await gw.sandbox(orderId, event, extra)).status, 200, `${orderId}: ${event}`);

  before(async () => {
    gw = await startTestGateway({ workers: false });
    merchant = await gw.merchantWithKey();
    other = await gw.merchantWithKey();
    // Noon UTC of the next day: every order below sits well inside its day.
    const now = gw.clock.now();
    gw.clock.advance(Math.floor(now / DAY) * DAY + DAY + DAY / 2 - now);

    // Eight days ago: outside the last 7 days.
    ids.old = await kenya('1000');
    await sandbox(ids.old, 'paid');
    // Two days ago.
    gw.clock.advance(6 * DAY);
    ids.bra50 = await brazil('50.00');
    await sandbox(ids.bra50, 'paid');
    ids.ken200 = await kenya('200');
    await sandbox(ids.ken200, 'expired');
    // Today.
    gw.clock.advance(2 * DAY);
    today = day(gw.clock.now());
    weekStart = day(gw.clock.now() - 6 * DAY);
    ids.braDiff = await brazil('123.45');
    await sandbox(ids.braDiff, 'paid', { amount: '100.00' });
    ids.ken1500 = await kenya('1500');
    await sandbox(ids.ken1500, 'paid');
    ids.ken300 = await kenya('300');
    const funds = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '5000',
      reason: 'float',
    });
    assert.equal(funds.status, 200, JSON.stringify(funds.body));
    const payout = await call('/api/v3/ken/createTransferOrder', {
      channelType: 'BANK',
      currencyAmount: '700',
      phone: '254110000001',
    });
    assert.equal(payout.body.code, '200', payout.body.msgEn);
    ids.payout = payout.body.data.orderId as string;
    await sandbox(ids.payout, 'processing');
    await sandbox(ids.payout, 'succeeded');
    ids.theirs = await brazil('999.00', other.credentials);
    await sandbox(ids.theirs, 'paid');

    // Callbacks that failed for good: one still waiting, one sent again and delivered since, one of another merchant.
    const at = gw.clock.now();
    const event = (id: string, orderId: string, merchantId: string, state: 'failed' | 'delivered', offset: number) => ({
      id,
      notify_id: `n-${id}`,
      order_id: orderId,
      order_kind: 'collection',
      merchant_id: merchantId,
      access_key: merchant.credentials.accessKey,
      trigger: 'automatic' as const,
      payload: '{}',
      target_url: 'https://shop.example/notify',
      target_host: 'shop.example',
      state,
      attempts: state === 'failed' ? 8 : 1,
      next_attempt_at: null,
      first_attempt_at: at + offset,
      lease_token: null,
      lease_owner: null,
      created_at: at + offset,
      updated_at: at + offset,
    });
    await gw.gateway.store.transact(async (tx) => {
      await tx
        .insertInto('callback_events')
        .values([
          event(`ev-${seq}-1`, ids.ken1500, merchant.merchantId, 'failed', 0),
          event(`ev-${seq}-2`, ids.bra50, merchant.merchantId, 'failed', 0),
          event(`ev-${seq}-3`, ids.bra50, merchant.merchantId, 'delivered', 1),
          event(`ev-${seq}-4`, ids.theirs, other.merchantId, 'failed', 0),
        ])
        .execute();
    });

    staff = await consoleSignIn(gw, merchant.merchantId);
    const overview = await staff.get('/console');
    assert.equal(overview.status, 200, overview.text.slice(0, 300));
    page = overview.text;
  });

  after(async () => {
    await gw.close();
  });

  it('says that days are UTC days', () => {
    assert.ok(page.includes('Days are UTC days'), 'the time zone is said');
  });

  it("counts today's and the last 7 days' orders, each linked to the matching list", async () => {
    const todayCard = stat(page, 'stat-today');
    assert.equal(todayCard.value, '4', "today's orders");
    assert.equal(todayCard.href, `/console/orders?from=${today}&to=${today}`, 'linked to today’s orders');
    assert.deepEqual(
      listedOrders((await staff.get(todayCard.href)).text),
      [ids.braDiff, ids.ken1500, ids.ken300, ids.payout].sort(),
      'the link lists them',
    );
    const weekCard = stat(page, 'stat-week');
    assert.equal(weekCard.value, '6', 'the last 7 days, not the order of 8 days ago');
    assert.deepEqual(
      listedOrders((await staff.get(weekCard.href)).text),
      [ids.bra50, ids.ken200, ids.braDiff, ids.ken1500, ids.ken300, ids.payout].sort(),
      'the link lists them',
    );
  });

  it('gives the success rate over the orders that ended, and the orders paid a different amount', async () => {
    const success = stat(page, 'stat-success');
    assert.equal(success.value, '80%', '4 of the 5 that ended succeeded');
    assert.ok(page.includes('4 of 5 orders that ended succeeded; 1 still open'), 'the figures behind it');
    assert.deepEqual(
      listedOrders((await staff.get(success.href)).text),
      [ids.bra50, ids.braDiff, ids.ken1500, ids.payout].sort(),
      'the link lists the successes',
    );
    const differs = stat(page, 'stat-differs');
    assert.equal(differs.value, '1', 'one collection paid another amount');
    assert.deepEqual(listedOrders((await staff.get(differs.href)).text), [ids.braDiff], 'the link lists it');
  });

  it('counts the failed callbacks still waiting, linked to the failed callbacks', () => {
    const callbacks = stat(page, 'stat-callbacks');
    assert.equal(callbacks.value, '1', 'not the one delivered since, nor another merchant’s');
    assert.equal(
      callbacks.href,
      `/console/callbacks?failed=1&from=${weekStart}&to=${today}#log`,
      'linked to the failed attempts of the same days',
    );
  });

  it('gives volume, count and success rate per area, summed exactly', () => {
    const kenCollections = areaRow(page, 'ken.collection');
    assert.ok(kenCollections.includes('data-count-today="2"'), `Kenya collections today: ${kenCollections}`);
    assert.ok(kenCollections.includes('data-count-week="3"'), 'Kenya collections in 7 days');
    assert.equal(
      [...kenCollections.matchAll(/data-volume="KES:1500"/g)].length,
      2,
      'KES 1500 today and in 7 days (the expired one moved nothing)',
    );
    assert.ok(kenCollections.includes('50%'), 'one of the two that ended succeeded');
    const braCollections = areaRow(page, 'bra.collection');
    assert.ok(braCollections.includes('data-volume="BRL:100.00"'), 'today: what was paid, R$ 100,00');
    assert.ok(braCollections.includes('data-volume="BRL:150.00"'), '7 days: R$ 50,00 + R$ 100,00');
    assert.ok(!braCollections.includes('999'), 'not another merchant’s');
    const payouts = areaRow(page, 'ken.transfer');
    assert.ok(payouts.includes('data-volume="KES:700"') && payouts.includes('100%'), 'the payout paid out');
    assert.ok(
      payouts.includes(`href="/console/orders?area=ken&amp;kind=transfer&amp;from=${today}&amp;to=${today}"`),
      'linked to the filtered list',
    );
    assert.equal(areaRow(page, 'exchange.fiat_to_token'), '', 'no row for an area without orders');
  });

  it('draws the 7 days as an SVG chart with its figures in words and in a table', () => {
    const svg = /<svg id="overview-chart" role="img" aria-labelledby="overview-chart-title"[\s\S]*?<\/svg>/.exec(
      page,
    )?.[0];
    assert.ok(svg !== undefined, 'the chart is there');
    assert.equal([...page.matchAll(/<script/g)].length, 1, 'no script library: the console’s one inline script only');
    const title = /<title id="overview-chart-title">([^<]*)<\/title>/.exec(svg)?.[1] ?? '';
    assert.match(title, /4 orders, 3 succeeded/, `today in the chart's name: ${title}`);
    assert.match(title, /2 orders, 1 succeeded/, 'two days ago');
    assert.equal([...svg.matchAll(/<rect /g)].length, 14, 'two bars a day for 7 days');
    const rows = [...page.matchAll(/<tr data-day="([\d-]+)">.*?<\/tr>/gs)];
    assert.deepEqual(
      rows.map((r) => r[1]),
      Array.from({ length: 7 }, (_, i) => day(Date.parse(`${weekStart}T00:00:00Z`) + i * DAY)),
      'a row per day, oldest first',
    );
    assert.match(rows[6]?.[0] ?? '', />4<\/a>.*>3<\/a>/s, 'today: 4 orders, 3 succeeded');
    assert.match(rows[4]?.[0] ?? '', />2<\/a>.*>1<\/a>/s, 'two days ago: 2 orders, 1 succeeded');
  });

  it("shows the balances per currency as the API gives them, and keeps the merchant's details", async () => {
    const api = await signedCall(
      gw.url,
      merchant.credentials,
      { method: 'GET', path: '/api/v3/ken/query/balance' },
      gw.clock.now(),
    );
    assert.equal(api.body.code, '200', api.body.msgEn);
    assert.ok(
      page.includes(
        `<tr data-currency="KES"><th scope="row">KES</th><td class="num" data-available="${api.body.data[0].accountBalance}">`,
      ),
      'KES available as the API says',
    );
    assert.ok(page.includes('data-currency="BRL"'), 'a row for BRL');
    assert.ok(page.includes('href="/console/balances?currency=KES"'), 'linked to the statement');
    assert.ok(page.includes(`<code id="overview-merchant-id">${merchant.merchantId}</code>`), 'the merchant ID');
    assert.ok(page.includes('<div class="cards wide">'), 'the wide cards of the details stay');
  });

  it('answers in Portuguese too', async () => {
    const pt = await consoleSignIn(gw, merchant.merchantId);
    await pt.post('/console/language', { lang: 'pt-BR', back: '/console' });
    const text = (await pt.get('/console')).text;
    assert.ok(text.includes('Os dias são dias UTC'), 'the time zone in Portuguese');
    assert.ok(text.includes('Pedidos hoje'), 'the cards in Portuguese');
  });
});
