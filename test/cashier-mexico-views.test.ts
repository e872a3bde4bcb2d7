import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CheckoutProblem, CheckoutState } from '../src/cashier/checkout.js';
import {
  CODE128_QUIET_ZONE,
  code128Modules,
  code128Svg,
  code128Values,
  code128Widths,
} from '../src/cashier/code128.js';
import { cashierTranslator, type CashierLanguage } from '../src/cashier/i18n.js';
import { groupClabe } from '../src/cashier/mexico-views.js';
import { checkoutView, countryOf, finalView, payPageOf, pendingView, type ViewContext } from '../src/cashier/views.js';
import type { OrderRow } from '../src/orders/queries.js';

/** 2026-11-25 05:59 UTC: 23:59 of 24 November in Mexico City (UTC-6 all year). */
const DEADLINE = Date.parse('2026-11-25T05:59:00Z');
const NOW = DEADLINE - 30 * 60_000;
const CLABE = '646180157036325892';
const VOUCHER = '93000262128498372846';

function order(changes: Partial<OrderRow> & { details?: string } = {}): OrderRow {
  return {
    id: 'ord_mx_1',
    merchant_id: 'mer_1',
    access_key: 'ak_1',
    area: 'cashier',
    kind: 'collection',
    external_order_id: 'shop-42',
    request_hash: 'h',
    create_result: '{}',
    status: 1,
    currency: 'MXN',
    channel_type: 'SPEI',
    pay_type: 102,
    amount: 123450,
    fee: 0,
    actual_amount: null,
    notify_url: null,
    return_url: null,
    remark: null,
    details: JSON.stringify({ checkoutId: 'chk_1', method: 'SPEI', dynamicAmountNotify: 1, clabe: CLABE }),
    cashier_id: 'csh_1',
    cashier_expire_at: DEADLINE,
    channel_order_id: null,
    rail_ref: `clabe:${CLABE}`,
    error_msg: null,
    error_msg_en: null,
    created_at: NOW - 60_000,
    pay_time: null,
    complete_time: null,
    updated_at: NOW,
    ...changes,
  };
}

const detailsOf = (collection: Record<string, unknown>) =>
  JSON.stringify({ checkoutId: 'chk_1', dynamicAmountNotify: 1, ...collection });

function oxxoOrder(extra: Record<string, unknown> = {}, changes: Partial<OrderRow> = {}): OrderRow {
  return order({
    channel_type: 'OXXO',
    pay_type: 110,
    rail_ref: null,
    cashier_expire_at: DEADLINE + 3 * 86_400_000,
    details: detailsOf({ method: 'OXXO', oxxoNumber: VOUCHER, oxxoExpiresAt: DEADLINE, ...extra }),
    ...changes,
  });
}

function ctx(lang: CashierLanguage, changes: Partial<ViewContext> = {}): ViewContext {
  return {
    lang,
    t: cashierTranslator(lang),
    now: NOW,
    merchantName: 'Tienda Azul',
    payeeName: 'CASHGATE PAGOS',
    sandbox: false,
    path: '/cashier/csh_1',
    langQuery: '',
    ...changes,
  };
}

const pending = (c: ViewContext, o: OrderRow) => pendingView(c, o, { sandboxError: false }).body.text;

describe('Code 128', () => {
  it('writes an even number of digits in code set C, with its check symbol', () => {
    // Start C (105); 12; 34; check (105 + 12×1 + 34×2) mod 103 = 82.
    assert.deepEqual(code128Values('1234'), [105, 12, 34, 82]);
    assert.equal(code128Widths('1234').join(''), '211232' + '112232' + '131123' + '121241' + '2331112');
  });

  it('writes an odd number of digits, or text, in code set B', () => {
    // Start B (104); "A" is 33; check (104 + 33) mod 103 = 34.
    assert.deepEqual(code128Values('A'), [104, 33, 34]);
    assert.equal(code128Widths('A').join(''), '211214' + '111323' + '131123' + '2331112');
    // "1" "2" "3" are 17, 18, 19; check (104 + 17 + 2×18 + 3×19) mod 103 = 8.
    assert.deepEqual(code128Values('123'), [104, 17, 18, 19, 8]);
    assert.equal(code128Widths('123').join(''), '211214' + '123221' + '223211' + '221132' + '132212' + '2331112');
  });

  it('makes each symbol 11 modules, the stop 13, between quiet zones; bars first', () => {
    const modules = code128Modules(VOUCHER);
    // Start, 10 pairs of digits, check: 12 symbols; then the stop.
    assert.equal(modules.length, 12 * 11 + 13 + 2 * CODE128_QUIET_ZONE);
    assert.equal(modules[CODE128_QUIET_ZONE - 1], false);
    assert.equal(modules[CODE128_QUIET_ZONE], true);
    assert.equal(modules.at(-CODE128_QUIET_ZONE - 1), true, 'the stop ends with a bar');
  });

  it('draws an inline SVG with its title escaped, and refuses what it cannot encode', () => {
    const svg = code128Svg('1234', { title: 'a <b> & c', module: 2, height: 50 });
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 77 25" width="154" height="50"/);
    assert.ok(svg.includes('<title>a &lt;b&gt; &amp; c</title>'));
    assert.ok(svg.startsWith('<svg') && svg.endsWith('</svg>'));
    assert.throws(() => code128Values(''), RangeError);
    assert.throws(() => code128Values('ñ'), RangeError);
    assert.throws(() => code128Svg('12', { module: 0 }), RangeError);
  });
});

describe('Mexican cashier pages', () => {
  it('groups a CLABE 3-3-11-1 for reading', () => {
    assert.equal(groupClabe(CLABE), '646 180 15703632589 2');
    assert.equal(groupClabe('123'), '123');
  });

  it('maps SPEI and OXXO orders to their pages and to Mexico; USDT priced in pesos stays a USDT page', () => {
    assert.equal(payPageOf(order()), 'spei');
    assert.equal(countryOf(order()), 'mexico');
    assert.equal(payPageOf(oxxoOrder()), 'oxxo');
    assert.equal(countryOf(oxxoOrder()), 'mexico');
    const usdt = order({ channel_type: 'USDT_TRC20', pay_type: 112 });
    assert.equal(payPageOf(usdt), 'usdt');
    assert.equal(countryOf(usdt), 'usdt');
  });

  it('SPEI in Mexican Spanish: copy the unspaced CLABE first, read it grouped, to STP, by the deadline in Mexico City time', () => {
    const body = pending(ctx('es-MX'), order());
    assert.ok(body.includes('$1,234.50 MXN'));
    assert.ok(body.includes('Paga con transferencia SPEI'));
    const copy = body.indexOf('data-copy="spei-clabe"');
    assert.ok(copy > 0 && copy < body.indexOf('646 180 15703632589 2'), 'the copy button comes first');
    assert.ok(body.includes('>Copiar CLABE</button>'));
    assert.ok(body.includes(`<textarea id="spei-clabe" class="code" rows="1" readonly>${CLABE}</textarea>`));
    assert.ok(body.includes('Beneficiario: CASHGATE PAGOS'));
    assert.ok(body.includes('Banco: STP'));
    assert.ok(body.includes('24 nov 2026, 23:59 (CST)'), 'the deadline in Mexico City time');
    assert.ok(body.includes(`data-expires="${DEADLINE}"`));
    assert.ok(body.includes('Envía exactamente $1,234.50 MXN.'));
    assert.ok(body.includes('se te devuelve automáticamente'));
    assert.ok(!body.includes('sandbox'), 'no sandbox panel outside the sandbox');
  });

  it('SPEI in English, with the refused note and the sandbox panel', () => {
    const refused = order({
      details: detailsOf({
        method: 'SPEI',
        clabe: CLABE,
        refusedPayment: { amount: '1000.00', unit: 'MXN', at: NOW - 1000 },
      }),
    });
    const body = pending(ctx('en', { sandbox: true }), refused);
    assert.ok(body.includes('Pay by SPEI transfer'));
    assert.ok(body.includes('>Copy CLABE</button>'));
    assert.ok(body.includes('646 180 15703632589 2'));
    assert.ok(body.includes('24 Nov 2026, 23:59 (CST)'));
    assert.ok(body.includes('MXN 1,234.50'));
    assert.ok(body.includes('Your payment of MXN 1,000.00 was returned'));
    assert.ok(body.includes('action="/cashier/csh_1/sandbox"'));
    assert.ok(body.includes('value="paid_other"') && body.includes('value="expired"'));
    assert.ok(body.includes('Another amount (MXN)'));
  });

  it('SPEI before its CLABE is issued says it is being prepared', () => {
    const body = pending(ctx('es-MX'), order({ details: detailsOf({ method: 'SPEI' }) }));
    assert.ok(body.includes('id="spei-issuing"'));
    assert.ok(!body.includes('data-copy'));
  });

  it('OXXO: the reference, its Code 128 barcode, the amount, the voucher expiry in Mexico City time, how to pay; no hosted link in the sandbox', () => {
    const es = pending(ctx('es-MX'), oxxoOrder());
    assert.ok(es.includes('Paga en efectivo en OXXO'));
    assert.ok(es.includes(`<textarea id="oxxo-number" class="code" rows="1" readonly>${VOUCHER}</textarea>`));
    assert.ok(es.includes('data-copy="oxxo-number"'));
    assert.ok(es.includes('<svg class="barcode" preserveAspectRatio="none" xmlns='));
    assert.ok(es.includes(`<title>Código de barras de la referencia OXXO ${VOUCHER}</title>`));
    assert.ok(es.includes('$1,234.50 MXN'));
    assert.ok(es.includes('Ficha válida hasta: <strong>24 nov 2026, 23:59 (CST)</strong>'));
    assert.ok(es.includes('OXXO Pay (Stripe)'));
    assert.ok(es.includes('Paga $1,234.50 MXN en efectivo.'));
    assert.ok(es.includes('comisión'));
    assert.ok(es.includes('siguiente día hábil'));
    assert.ok(!es.includes('id="oxxo-voucher"'), 'no hosted voucher without its address');
    assert.ok(!es.includes('data-expires'), 'no countdown that would reload a page still waiting');
    const en = pending(ctx('en'), oxxoOrder());
    assert.ok(en.includes('Pay in cash at OXXO'));
    assert.ok(en.includes('Voucher valid until: <strong>24 Nov 2026, 23:59 (CST)</strong>'));
    assert.ok(en.includes('tell the cashier you are paying an OXXO Pay (Stripe) voucher'));
  });

  it('OXXO links the hosted voucher when Stripe gave one (HTTPS only)', () => {
    const url = 'https://payments.stripe.com/oxxo/voucher/test_abc?x=1&y=2';
    const body = pending(ctx('en'), oxxoOrder({ oxxoVoucherUrl: url }));
    assert.ok(body.includes('id="oxxo-voucher" href="https://payments.stripe.com/oxxo/voucher/test_abc?x=1&amp;y=2"'));
    assert.ok(body.includes('Open the voucher to print or save it'));
    const bad = pending(ctx('en'), oxxoOrder({ oxxoVoucherUrl: 'javascript:alert(1)' }));
    assert.ok(!bad.includes('id="oxxo-voucher"'));
  });

  it('OXXO after its voucher expired, still waiting for confirmation, says so without a countdown', () => {
    const body = pending(ctx('en', { now: DEADLINE + 60_000 }), oxxoOrder());
    assert.ok(body.includes('This voucher expired on 24 Nov 2026, 23:59 (CST)'));
    assert.ok(!body.includes('data-expires'));
  });

  it('OXXO before its voucher is issued says it is being issued', () => {
    const body = pending(ctx('es-MX'), oxxoOrder({ oxxoNumber: undefined }));
    assert.ok(body.includes('Estamos generando tu ficha OXXO'));
    assert.ok(!body.includes('<svg'));
  });

  it('the paid SPEI receipt names the CLABE, the sending bank, the masked account, the payer and the clave de rastreo', () => {
    const paid = order({
      status: 2,
      actual_amount: 123450,
      pay_time: DEADLINE - 10 * 60_000,
      details: detailsOf({
        method: 'SPEI',
        clabe: CLABE,
        payerBank: 'BBVA MEXICO',
        payerBankCode: '40012',
        payerAccount: '012180000123456784',
        payerName: 'ANA LOPEZ',
        claveRastreo: 'MBAN01002611250001',
      }),
    });
    const es = finalView(ctx('es-MX'), paid, 'paid').body.text;
    assert.ok(es.includes('<dt>Método</dt><dd>Transferencia SPEI</dd>'));
    assert.ok(es.includes(`<dt>CLABE</dt><dd>${CLABE}</dd>`));
    assert.ok(es.includes('<dt>Banco emisor</dt><dd>BBVA MEXICO</dd>'));
    assert.ok(es.includes('<dt>Cuenta de origen</dt><dd>**************6784</dd>'));
    assert.ok(!es.includes('012180000123456784'), 'the account is masked');
    assert.ok(es.includes('<dt>Nombre del ordenante</dt><dd>ANA LOPEZ</dd>'));
    assert.ok(es.includes('<dt>Clave de rastreo</dt><dd>MBAN01002611250001</dd>'));
    assert.ok(es.includes('24 nov 2026, 23:49 (CST)'));
    assert.ok(es.includes('$1,234.50 MXN'));
    const en = finalView(ctx('en'), paid, 'paid').body.text;
    assert.ok(en.includes('<dt>Payer&#39;s account</dt><dd>**************6784</dd>'));
    assert.ok(en.includes('<dt>SPEI tracking key (clave de rastreo)</dt><dd>MBAN01002611250001</dd>'));
  });

  it('the paid OXXO receipt names the voucher reference', () => {
    const paid = oxxoOrder({}, { status: 2, actual_amount: 123450, pay_time: DEADLINE - 3600_000 });
    const body = finalView(ctx('es-MX'), paid, 'paid').body.text;
    assert.ok(body.includes(`<dt>Referencia OXXO</dt><dd>${VOUCHER}</dd>`));
    assert.ok(body.includes('<dt>Método</dt><dd>Efectivo en OXXO</dd>'));
  });
});

function checkoutState(currency: 'MXN' | 'BRL'): CheckoutState {
  return {
    checkout: {
      id: 'chk_1',
      merchant_id: 'mer_1',
      access_key: 'ak_1',
      external_order_id: 'shop-42',
      request_hash: 'h',
      notify_url: null,
      return_url: null,
      remark: null,
      user_identity: null,
      generated_document: null,
      dynamic_amount_notify: 1,
      order_id: null,
      expire_at: DEADLINE,
      created_at: NOW - 60_000,
      currency,
    },
    merchantName: 'Tienda Azul',
    methods:
      currency === 'MXN'
        ? [
            { method: 'SPEI', available: true },
            { method: 'OXXO', available: true },
            { method: 'USDT_TRC20', available: false },
          ]
        : [
            { method: 'PIX', available: true },
            { method: 'BOLETO', available: true },
          ],
    document: currency === 'MXN' ? { source: 'none' } : { source: 'ask' },
    order: undefined,
    expired: false,
  };
}

describe('the aggregate cashier form in pesos', () => {
  const form = (lang: CashierLanguage, currency: 'MXN' | 'BRL', problems: CheckoutProblem[] = []) =>
    checkoutView(
      { t: cashierTranslator(lang), lang, path: '/checkout/chk_1', langQuery: '', now: NOW },
      checkoutState(currency),
      {},
      problems,
    ).body.text;

  it('asks pesos, offers SPEI and OXXO with their hints, counts down in Mexico City time, asks no CPF', () => {
    const es = form('es-MX', 'MXN');
    assert.ok(es.includes('Monto (MXN)'));
    assert.ok(es.includes('Por ejemplo 1,234.50'));
    assert.ok(es.includes('<strong>Transferencia SPEI</strong>'));
    assert.ok(es.includes('<strong>Efectivo en OXXO</strong>'));
    assert.ok(es.includes('De $10 a $10,000 MXN; paga en efectivo en cualquier OXXO'));
    assert.ok(es.includes('24 nov 2026, 23:59 (CST)'));
    assert.ok(!es.includes('name="document"'));
    assert.ok(es.includes('name="name"') && es.includes('name="email"'), 'OXXO asks the name and email');
    const en = form('en', 'MXN');
    assert.ok(en.includes('Amount (MXN)'));
    assert.ok(en.includes('MXN 10 to 10,000; pay in cash at any OXXO store'));
    assert.ok(en.includes('24 Nov 2026, 23:59 (CST)'));
  });

  it('writes the amount problem in pesos, and the contact problems', () => {
    const problems: CheckoutProblem[] = [
      { field: 'amount', rule: 'amount', minimum: 1000n, maximum: 1_000_000n },
      { field: 'name', rule: 'name' },
      { field: 'email', rule: 'email' },
    ];
    const es = form('es-MX', 'MXN', problems);
    assert.ok(es.includes('Ingresa un monto de $10.00 MXN a $10,000.00 MXN'));
    assert.ok(es.includes('id="name-error"') && es.includes('id="email-error"'));
    assert.match(es, /id="name" name="name"[^>]*aria-invalid="true"/);
    assert.ok(es.includes('Ingresa tu nombre completo'));
    const en = form('en', 'MXN', problems.slice(0, 1));
    assert.ok(en.includes('Enter an amount from MXN 10.00 to MXN 10,000.00'));
  });

  it('leaves the reais form as it was: R$, Brasília time, no contact fields', () => {
    const pt = form('pt-BR', 'BRL', [{ field: 'amount', rule: 'amount', minimum: 100n, maximum: 10_000n }]);
    assert.ok(pt.includes('Valor (R$)'));
    assert.ok(pt.includes('R$ 1,00') && pt.includes('R$ 100,00'));
    assert.ok(pt.includes('(BRT)'));
    assert.ok(!pt.includes('name="email"'));
  });
});
