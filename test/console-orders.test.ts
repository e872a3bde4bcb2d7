import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseLabel } from './support/database.js';
import { consoleSignIn, type ConsoleClient } from './support/console.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const DECIMALS: Record<string, number> = { BRL: 2, KES: 0, MXN: 2 };

/** Exact decimal text → minor units, with BigInt (never a float). */
function minorOf(text: string, currency: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  assert.ok(match !== null, `decimal text: ${text}`);
  const decimals = DECIMALS[currency] ?? 2;
  const fraction = match[3] ?? '';
  assert.ok(fraction.length <= decimals, `at most ${decimals} places: ${text}`);
  const minor = BigInt((match[2] ?? '0') + fraction.padEnd(decimals, '0'));
  return match[1] === '-' ? -minor : minor;
}

/** RFC 4180 records of a CSV text. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** Opening and closing balances the statement page shows, per account (as exact decimal text). */
function statementTotals(page: string): Record<string, { opening: string; closing: string }> {
  const totals: Record<string, { opening: string; closing: string }> = {};
  for (const match of page.matchAll(
    /<tr data-account="(\w+)">.*?data-opening="([-\d.]+)".*?data-closing="([-\d.]+)"/gs,
  )) {
    totals[match[1] ?? ''] = { opening: match[2] ?? '', closing: match[3] ?? '' };
  }
  return totals;
}

describe(`console orders and balances (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let other: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let consoleA: ConsoleClient;
  const ids = { bra: '', braExt: '', ken: '', kenExt: '', transfer: '', late: '', otherOrder: '' };
  let firstDay = '';
  let lastDay = '';
  const call = (path: string, body: unknown, credentials = merchant.credentials) =>
    signedCall(gw.url, credentials, { path, body }, gw.clock.now());
  const HYPERLINK = '=HYPERLINK("http://evil.example","click")';

  before(async () => {
    gw = await startTestGateway({ workers: false, env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
    merchant = await gw.merchantWithKey();
    other = await gw.merchantWithKey();
    await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/fees/ken.collection.CHARGE`, { percentBps: 200 });
    firstDay = day(gw.clock.now());

    ids.braExt = `bra-${Date.now()}`;
    const bra = await call('/api/v3/bra/createCollectingOrder', {
      amount: '123.45',
      channelType: 'PIX',
      externalOrderId: ids.braExt,
      remark: '<script>alert(1)</script>',
    });
    assert.equal(bra.body.code, '200', bra.body.msgEn);
    ids.bra = bra.body.data.currencyOrderVo.orderId;
    assert.equal((await gw.sandbox(ids.bra, 'paid')).status, 200, 'the Brazil collection is paid');

    ids.kenExt = `ken-${Date.now()}`;
    const ken = await call('/api/v3/ken/createCollectingOrder', {
      amount: '1500',
      channelType: 'CHARGE',
      externalOrderId: ids.kenExt,
      phone: '254712345678',
      checkingPhone: '254712345123',
    });
    assert.equal(ken.body.code, '200', ken.body.msgEn);
    ids.ken = ken.body.data.currencyOrderVo.orderId;
    assert.equal((await gw.sandbox(ids.ken, 'paid')).status, 200, 'the Kenya collection is paid');

    const adjusted = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '5000',
      reason: HYPERLINK,
    });
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
    const transfer = await call('/api/v3/ken/createTransferOrder', {
      channelType: 'BANK',
      currencyAmount: '700',
      externalOrderId: `ken-trf-${Date.now()}`,
      phone: '254110000001',
    });
    assert.equal(transfer.body.code, '200', transfer.body.msgEn);
    ids.transfer = transfer.body.data.orderId;
    assert.ok(
      typeof ids.transfer === 'string' && ids.transfer !== '',
      `transfer id: ${JSON.stringify(transfer.body.data)}`,
    );

    const theirs = await call(
      '/api/v3/ken/createCollectingOrder',
      {
        amount: '900',
        channelType: 'CHARGE',
        externalOrderId: `other-${Date.now()}`,
        phone: '254712345678',
        checkingPhone: '254712345123',
      },
      other.credentials,
    );
    assert.equal(theirs.body.code, '200', theirs.body.msgEn);
    ids.otherOrder = theirs.body.data.currencyOrderVo.orderId;

    // Two days later: one more order, and a second adjustment (so a statement from today has an opening balance).
    gw.clock.advance(2 * DAY);
    lastDay = day(gw.clock.now());
    const late = await call('/api/v3/ken/createCollectingOrder', {
      amount: '300',
      channelType: 'CHARGE',
      externalOrderId: `ken-late-${Date.now()}`,
      phone: '254712345678',
      checkingPhone: '254712345123',
    });
    assert.equal(late.body.code, '200', late.body.msgEn);
    ids.late = late.body.data.currencyOrderVo.orderId;
    await gw.sandbox(ids.late, 'paid');
    const second = await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
      currency: 'KES',
      amount: '-100',
      reason: '+ correction, "quoted"',
    });
    assert.equal(second.status, 200, JSON.stringify(second.body));

    consoleA = await consoleSignIn(gw, merchant.merchantId);
  });

  after(async () => {
    await gw.close();
  });

  it("lists the merchant's orders newest first, with the remark escaped", async () => {
    const page = await consoleA.get('/console/orders');
    assert.equal(page.status, 200, page.text.slice(0, 300));
    for (const id of [ids.bra, ids.ken, ids.transfer, ids.late]) assert.ok(page.text.includes(id), `lists ${id}`);
    assert.ok(!page.text.includes(ids.otherOrder), "not another merchant's order");
    assert.ok(page.text.indexOf(ids.late) < page.text.indexOf(ids.bra), 'newest first');
    assert.ok(!page.text.includes('<script>alert(1)</script>'), 'the remark is not markup');
    assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'the remark is escaped text');
    assert.ok(page.text.includes('PAYMENT_SUCCESS (2)'), 'the status name and number');
    assert.ok(!/ style=|onclick=/i.test(page.text), 'no inline style or handler');
  });

  it('finds an order by its orderId and by its externalOrderId', async () => {
    const byId = await consoleA.get(`/console/orders?q=${encodeURIComponent(ids.ken)}`);
    assert.ok(byId.text.includes(ids.ken) && !byId.text.includes(ids.bra), 'only the Kenya order');
    const byExternal = await consoleA.get(`/console/orders?q=${encodeURIComponent(ids.braExt)}`);
    assert.ok(byExternal.text.includes(ids.bra) && !byExternal.text.includes(ids.ken), 'only the Brazil order');
    const foreign = await consoleA.get(`/console/orders?q=${encodeURIComponent(ids.otherOrder)}`);
    assert.ok(!foreign.text.includes(`/console/orders/${ids.otherOrder}`), "another merchant's order is not found");
    assert.ok(foreign.text.includes('No orders match'), 'the empty state');
  });

  it('filters by area, kind, status and UTC days', async () => {
    const bra = await consoleA.get('/console/orders?area=bra');
    assert.ok(bra.text.includes(ids.bra) && !bra.text.includes(ids.ken), 'area bra');
    const paidKen = await consoleA.get('/console/orders?area=ken&kind=collection&status=2');
    assert.ok(
      paidKen.text.includes(ids.ken) && paidKen.text.includes(ids.late) && !paidKen.text.includes(ids.transfer),
      'paid Kenya collections',
    );
    const transfers = await consoleA.get('/console/orders?kind=transfer&status=1');
    assert.ok(transfers.text.includes(ids.transfer) && !transfers.text.includes(ids.ken), 'accepted transfers');
    const today = await consoleA.get(`/console/orders?from=${lastDay}`);
    assert.ok(today.text.includes(ids.late) && !today.text.includes(ids.ken), 'from today');
    const earlier = await consoleA.get(`/console/orders?from=${firstDay}&to=${firstDay}`);
    assert.ok(
      earlier.text.includes(ids.ken) && !earlier.text.includes(ids.late),
      'to is inclusive and excludes later days',
    );
  });

  it('refuses a bad filter with 400 naming the field', async () => {
    const area = await consoleA.get('/console/orders?area=moon');
    assert.equal(area.status, 400, 'unknown area');
    assert.ok(area.text.includes('Area: choose'), 'names the area field');
    const date = await consoleA.get('/console/orders?from=2026-02-30');
    assert.equal(date.status, 400, 'bad date');
    assert.ok(date.text.includes('href="#from"'), 'names the from field');
    const status = await consoleA.get('/console/orders?status=abc');
    assert.equal(status.status, 400, 'bad status');
  });

  it('shows an order with its history, amounts, ledger entries and voucher', async () => {
    const page = await consoleA.get(`/console/orders/${ids.bra}`);
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.ok(page.text.includes(ids.braExt), 'the external id');
    assert.ok(page.text.includes('123.45'), 'the amount');
    assert.ok(page.text.includes('collection.paid'), 'the ledger journal');
    assert.ok(page.text.includes('awaiting settlement'), 'the account');
    assert.ok(/<td class="mono">paid<\/td>/.test(page.text), 'the paid event in the history');
    assert.ok(page.text.includes('WAITING_PAYMENT (1)') && page.text.includes('PAYMENT_SUCCESS (2)'), 'from → to');
    assert.ok(
      !page.text.includes('<script>alert(1)</script>') && page.text.includes('&lt;script&gt;'),
      'remark escaped on the detail',
    );
    const voucher = await call('/api/v3/bra/query/voucher', { orderId: ids.bra });
    assert.equal(voucher.body.code, '200', voucher.body.msgEn);
    assert.ok(page.text.includes(`href="${voucher.body.data}"`), 'the same voucher link as endpoint 17');

    const transfer = await consoleA.get(`/console/orders/${ids.transfer}`);
    assert.ok(transfer.text.includes('transfer.freeze') && transfer.text.includes('frozen'), 'the freeze entries');
    assert.ok(!transfer.text.includes('/vouchers/'), 'no voucher for a Kenya order');
    const ken = await consoleA.get(`/console/orders/${ids.ken}?done=retriggered`);
    assert.ok(ken.text.includes('https://pay.example.com/cashier/'), 'the cashier link');
    assert.ok(ken.text.includes('Callback re-triggered.'), 'the notice');
  });

  it("answers 404 for another merchant's order", async () => {
    const page = await consoleA.get(`/console/orders/${ids.otherOrder}`);
    assert.equal(page.status, 404, "another merchant's order is not found");
    assert.equal((await consoleA.get('/console/orders/ord_nope')).status, 404, 'an unknown order');
  });

  it('shows balances and a statement whose CSV reconciles with them', async () => {
    const page = await consoleA.get('/console/balances');
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.ok(page.text.includes('BRL') && page.text.includes('KES'), 'a card per currency');

    const api = (
      await signedCall(
        gw.url,
        merchant.credentials,
        { method: 'GET', path: '/api/v3/ken/query/balance' },
        gw.clock.now(),
      )
    ).body.data[0];
    const range = `currency=KES&from=${firstDay}&to=${lastDay}`;
    const statement = await consoleA.get(`/console/balances?${range}`);
    const totals = statementTotals(statement.text);
    assert.deepEqual(
      Object.keys(totals).sort(),
      ['available', 'awaiting_settlement', 'frozen'],
      'opening and closing per account',
    );
    for (const t of Object.values(totals)) assert.equal(t.opening, '0', 'nothing before the first day');
    assert.equal(totals.available?.closing, api.accountBalance, 'closing available = the API balance');
    assert.equal(totals.frozen?.closing, api.accountFreezeAmount, 'closing frozen = the API balance');
    assert.equal(
      totals.awaiting_settlement?.closing,
      api.accountWaitSettledAmount,
      'closing awaiting = the API balance',
    );

    const csv = await consoleA.get(`/console/balances/statement.csv?${range}`);
    assert.equal(csv.status, 200, csv.text.slice(0, 300));
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(
      csv.headers.get('content-disposition'),
      `attachment; filename="cashgate-statement-${merchant.merchantId}-KES-${firstDay}-${lastDay}.csv"`,
    );
    const rows = parseCsv(csv.text);
    assert.deepEqual(rows[0], [
      'time_utc',
      'entry_id',
      'journal_id',
      'journal_kind',
      'order_id',
      'account',
      'amount',
      'currency',
      'memo',
    ]);
    const body = rows.slice(1);
    const stored = await gw.gateway.store.read
      .selectFrom('ledger_entries')
      .select('id')
      .where('merchant_id', '=', merchant.merchantId)
      .where('currency', '=', 'KES')
      .execute();
    assert.deepEqual(body.map((r) => r[1]).sort(), stored.map((r) => r.id).sort(), 'every entry, once');
    const sums: Record<string, bigint> = {};
    for (const r of body) sums[r[5] ?? ''] = (sums[r[5] ?? ''] ?? 0n) + minorOf(r[6] ?? '', 'KES');
    for (const [account, t] of Object.entries(totals)) {
      assert.equal(
        sums[account] ?? 0n,
        minorOf(t.closing, 'KES') - minorOf(t.opening, 'KES'),
        `${account}: sum of amounts = closing − opening`,
      );
    }
    const adjustment = body.find((r) => r[3] === 'adjustment' && r[8]?.includes('HYPERLINK'));
    assert.equal(adjustment?.[8], `'${HYPERLINK}`, 'a memo starting with = gets a leading quote');
    assert.ok(csv.text.includes(`"'=HYPERLINK(""http://evil.example"",""click"")"`), 'RFC 4180 quoting');
    const plus = body.find((r) => r[8]?.includes('correction'));
    assert.equal(plus?.[8], `'+ correction, "quoted"`, 'a memo starting with + is escaped too');
    assert.equal(plus[6], '-100', 'the amount cell is not prefixed');
  });

  it('gives a statement starting today its opening balance', async () => {
    const statement = await consoleA.get(`/console/balances?currency=KES&from=${lastDay}&to=${lastDay}`);
    const totals = statementTotals(statement.text);
    assert.equal(
      totals.available?.opening,
      String(5000 - 700 - 0),
      'available before today: the credit less the frozen transfer',
    );
    const csv = parseCsv(
      (await consoleA.get(`/console/balances/statement.csv?currency=KES&from=${lastDay}&to=${lastDay}`)).text,
    ).slice(1);
    const sums: Record<string, bigint> = {};
    for (const r of csv) sums[r[5] ?? ''] = (sums[r[5] ?? ''] ?? 0n) + minorOf(r[6] ?? '', 'KES');
    for (const [account, t] of Object.entries(totals)) {
      assert.equal(
        sums[account] ?? 0n,
        minorOf(t.closing, 'KES') - minorOf(t.opening, 'KES'),
        `${account}: period sum`,
      );
    }
    assert.ok(statement.text.includes(ids.late), "today's order is linked");
    assert.ok(!statement.text.includes(ids.ken), "an earlier order is not in today's statement");
  });

  it('refuses a bad statement date or currency with 400 naming the field', async () => {
    const page = await consoleA.get('/console/balances?currency=KES&from=yesterday&to=2026-01-01');
    assert.equal(page.status, 400, 'bad date on the page');
    assert.ok(page.text.includes('href="#from"'), 'names from');
    const csv = await consoleA.get('/console/balances/statement.csv?currency=XXX&from=2026-01-01&to=2026-01-02');
    assert.equal(csv.status, 400, 'bad currency on the CSV');
    assert.ok(csv.text.includes('href="#currency"'), 'names currency');
    const missing = await consoleA.get('/console/balances/statement.csv?currency=KES');
    assert.equal(missing.status, 400, 'the CSV needs its dates');
  });
});
