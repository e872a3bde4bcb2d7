/**
 * The cashier's page bodies: what a payer sees for each kind of collection and each state, and the
 * aggregate cashier's form. Pure functions of the order (or cashier) and the language.
 */
import type { BoletoDetails } from '../brazil/boleto-live.js';
import { brazilDetails, type BrazilDetails } from '../brazil/details.js';
import { maskDocument } from '../brazil/voucher.js';
import { kenyaDetails } from '../kenya/kinds.js';
import { maskKenyanMobile } from '../kenya/phone.js';
import { formatMinor, formatMoney, fromDb, type Currency } from '../money.js';
import { sharedDetails } from '../orders/details.js';
import type { OrderRow } from '../orders/queries.js';
import { formatUnits } from '../exchange/amounts.js';
import { barcodeFromLinha } from '../rails/boleto/boleto.js';
import {
  cashierDetails,
  checkoutCurrency,
  type CheckoutProblem,
  type CheckoutState,
  type CheckoutChoice,
} from './checkout.js';
import {
  formatAmount,
  formatDate,
  formatDeadline,
  type CashierLanguage,
  type PageCountry,
  type TextKey,
  type Translate,
} from './i18n.js';
import { itfBarcodeSvg } from './itf-barcode.js';
import { html, trusted, type Html } from '../http/html.js';
import { CASHIER_METHOD_SPECS, isCashierMethod, type CashierCurrency } from './methods.js';
import { mexicoReference, oxxoPendingView, speiPayerRows, speiPendingView } from './mexico-views.js';
import { qrSvg } from './qr-svg.js';

/** What a cashier page shows of its order: waiting, or one of the ends. */
export type CashierState = 'pending' | 'paid' | 'expired' | 'cancelled';

export interface ViewContext {
  lang: CashierLanguage;
  t: Translate;
  now: number;
  merchantName: string;
  /** The Pix recipient's name as the payer's bank shows it. */
  payeeName: string;
  sandbox: boolean;
  /** Path of this cashier page. */
  path: string;
  /** `?lang=…` when the payer chose the language in the address (kept by the page's forms), else empty. */
  langQuery: string;
}

/** The kind of page an order is paid on. */
export type PayPage = 'mpesa' | 'pix' | 'boleto' | 'usdt' | 'spei' | 'oxxo';

export function payPageOf(order: OrderRow): PayPage {
  if (order.area === 'ken') return 'mpesa';
  if (order.channel_type === 'BOLETO') return 'boleto';
  if (order.channel_type === 'USDT_TRC20') return 'usdt';
  if (order.channel_type === 'SPEI') return 'spei';
  if (order.channel_type === 'OXXO') return 'oxxo';
  return 'pix';
}

/** The country whose languages, time zone and habits an order's pages follow (a USDT page is its own, priced in reais or pesos). */
export function countryOf(order: OrderRow): PageCountry {
  const page = payPageOf(order);
  return page === 'mpesa'
    ? 'kenya'
    : page === 'usdt'
      ? 'usdt'
      : page === 'spei' || page === 'oxxo'
        ? 'mexico'
        : 'brazil';
}

/** How many times a payer may ask for the M-Pesa prompt again. */
export const MPESA_RESEND_LIMIT = 3;
/**
 * How long after a prompt the payer may ask for the next one: Safaricom asks for at least a minute
 * between prompts to one phone (its subscriber lock refuses one sooner).
 */
export const MPESA_RESEND_COOLDOWN_MS = 60_000;

const money = (ctx: ViewContext, amount: number | bigint | string, currency: Currency) =>
  formatAmount(ctx.lang, formatMoney(fromDb(amount), currency), currency);

/** A readonly code with a copy button that appears once the script runs. */
function copyable(ctx: ViewContext, id: string, label: string, value: string, rows: number): Html {
  return html`<label for="${id}">${label}</label><textarea id="${id}" class="code" rows="${rows}" readonly>${value}</textarea>
<button type="button" class="secondary" data-copy="${id}" data-copied="${ctx.t('copied')}" hidden>${ctx.t('copy')}</button>`;
}

/** Time left to `end`, ticking with script, and the deadline itself with its date and time zone. */
function countdown(
  ctx: Pick<ViewContext, 't' | 'lang' | 'now'>,
  end: number,
  country: PageCountry,
  label: TextKey = 'timeLeft',
): Html {
  const left = Math.max(0, end - ctx.now);
  const minutes = Math.floor(left / 60_000);
  const seconds = Math.floor((left % 60_000) / 1000);
  const text =
    minutes >= 60
      ? `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}:${String(seconds).padStart(2, '0')}`
      : `${minutes}:${String(seconds).padStart(2, '0')}`;
  return html`<p>${ctx.t(label)}: <strong><time data-expires="${end}" datetime="${new Date(end).toISOString()}">${text}</time></strong>
<br><span class="muted" id="deadline">${ctx.t('until', { time: formatDeadline(ctx.lang, end, country) })}</span></p>`;
}

/** The order's own countdown, to the end of its cashier. */
const orderCountdown = (ctx: ViewContext, order: OrderRow) =>
  countdown(ctx, order.cashier_expire_at ?? ctx.now, countryOf(order));

/** What is being paid for (the merchant's remark), when the merchant gave one. */
const remarkLine = (t: Translate, remark: string | null) =>
  remark === null || remark === '' ? '' : html`<p>${t('paidFor', { remark })}</p>`;

function sandboxPanel(ctx: ViewContext, order: OrderRow, error: boolean): Html | undefined {
  if (!ctx.sandbox) return undefined;
  const usdt = payPageOf(order) === 'usdt';
  const action = `${ctx.path}/sandbox${ctx.langQuery}`;
  const amount = usdt ? tokens(order) : money(ctx, order.amount, order.currency);
  return html`<section class="sandbox" aria-labelledby="sandbox-title"><h2 id="sandbox-title">${ctx.t('sandboxTitle')}</h2><p>${ctx.t('sandboxText')}</p>
<form method="post" action="${action}"><button name="action" value="paid">${ctx.t('sandboxPay', { amount })}</button>
<button name="action" value="cancelled" class="secondary">${ctx.t('sandboxCancel')}</button><button name="action" value="expired"
class="secondary">${ctx.t('sandboxTimeout')}</button></form>
<form method="post" action="${action}" class="row"><div><label for="sandbox-amount">${ctx.t('sandboxOther', { unit: usdt ? 'USDT' : order.currency })}</label>
<input type="text" id="sandbox-amount" name="amount"
inputmode="decimal" autocomplete="off"${error ? trusted(' aria-invalid="true" aria-describedby="sandbox-error"') : ''}></div>
<button name="action" value="paid_other">${ctx.t('sandboxPayOther')}</button></form>
${error ? html`<p id="sandbox-error" class="error">${ctx.t('sandboxBadAmount')}</p>` : ''}</section>`;
}

const tokens = (order: OrderRow) => {
  const d = cashierDetails(order);
  return `${formatUnits(BigInt(d.tokenUnits ?? '0'), d.tokenDecimals ?? 6)} USDT`;
};

function header(ctx: ViewContext, order: OrderRow, title: string): Html {
  const amount = money(ctx, order.amount, order.currency);
  return html`<p class="muted">${ctx.t('payMerchant', { merchant: ctx.merchantName })} · ${ctx.t('orderRef', { ref: order.external_order_id })}</p>
<h1>${title}</h1>${remarkLine(ctx.t, order.remark)}<p class="muted">${ctx.t('amountLabel')}</p><p class="amount">${amount}</p>`;
}

function refusedNote(ctx: ViewContext, order: OrderRow): Html | undefined {
  const refused = order.area === 'cashier' ? cashierDetails(order).refusedPayment : undefined;
  if (refused === undefined) return undefined;
  // Named in the payer's unit: reais for Pix and boleto, USDT for the token page.
  if (refused.unit === 'USDT') {
    const text = ctx.t('refusedTokens', {
      sent: `${refused.amount} USDT`,
      amount: tokens(order),
      merchant: ctx.merchantName,
    });
    return html`<p class="warning" role="alert">${text}</p>`;
  }
  const sent = formatAmount(ctx.lang, refused.amount, refused.unit);
  return html`<p class="warning" role="alert">${ctx.t('refused', { sent, amount: money(ctx, order.amount, order.currency) })}</p>`;
}

const waiting = (ctx: ViewContext) => html`<p class="status" role="status" aria-live="polite">${ctx.t('waiting')}</p>`;

/** The page of a collection that waits for its payment. */
export function pendingView(
  ctx: ViewContext,
  order: OrderRow,
  extra: { sandboxError: boolean; boletoPanel?: Html | undefined },
): { title: string; body: Html } {
  const page = payPageOf(order);
  const sandbox = sandboxPanel(ctx, order, extra.sandboxError);
  const note = refusedNote(ctx, order);
  switch (page) {
    case 'spei':
    case 'oxxo': {
      const parts = {
        header: (title: string) => header(ctx, order, title),
        amount: money(ctx, order.amount, order.currency),
        note,
        countdown: (end: number) => countdown(ctx, end, 'mexico'),
        waiting: waiting(ctx),
        sandbox,
      };
      return page === 'spei' ? speiPendingView(ctx, order, parts) : oxxoPendingView(ctx, order, parts);
    }
    case 'mpesa': {
      const shared = sharedDetails(order);
      const restarts = shared.railRestarts ?? 0;
      const left = MPESA_RESEND_LIMIT - restarts;
      // Read from the order alone, so every answer to quick taps (sent or refused) says the same.
      const wait = Math.ceil(
        ((shared.railRestartedAt ?? order.created_at) + MPESA_RESEND_COOLDOWN_MS - ctx.now) / 1000,
      );
      const declined = kenyaDetails(order).mpesaLastResult?.code;
      const reasonKey = (
        ['1032', '1037', '2001', '1'].includes(declined ?? '') ? `mpesaReason${declined}` : 'mpesaReasonOther'
      ) as 'mpesaReasonOther';
      const title = ctx.t('mpesaTitle');
      const phone = maskKenyanMobile(kenyaDetails(order).checkingPhone ?? '');
      /** One note on resending: the cooldown left, or that the limit is reached. */
      const note =
        left <= 0
          ? ctx.t(wait > 0 && restarts > 0 ? 'mpesaLastSent' : 'mpesaNoMore')
          : wait > 0
            ? ctx.t(restarts > 0 ? 'mpesaResentWait' : 'mpesaWait', { seconds: wait })
            : undefined;
      const noteHtml = note === undefined ? '' : html`<p id="resend-note" role="status">${note}</p>`;
      const resend =
        left > 0
          ? html`<form method="post" action="${ctx.path}/resend${ctx.langQuery}"
data-once>${noteHtml}<button class="secondary">${ctx.t('mpesaResend', { left })}</button></form>`
          : noteHtml;
      return {
        title,
        body: html`${header(ctx, order, title)}<p>${ctx.t('mpesaSent', { phone })}</p>${waiting(ctx)}
${declined === undefined ? '' : html`<p class="warning" role="alert">${ctx.t('mpesaDeclined', { reason: ctx.t(reasonKey) })}</p>`}${orderCountdown(ctx, order)}
<h2>${ctx.t('mpesaNoPrompt')}</h2><ul>${ctx
          .t('mpesaCheckList', { phone })
          .split('|')
          .map((item) => html`<li>${item}</li>`)}${left > 0 ? html`<li>${ctx.t('mpesaCheckWait')}</li>` : ''}</ul>
${resend}
<p id="wrong-number">${ctx.t('mpesaWrongNumber', { merchant: ctx.merchantName })}</p><p class="muted"
id="no-manual">${ctx.t('mpesaNoManual', { merchant: ctx.merchantName })}</p>${sandbox}`,
      };
    }
    case 'boleto': {
      const d: BrazilDetails & BoletoDetails = brazilDetails(order);
      const line = d.payParam ?? '';
      const title = ctx.t('boletoTitle');
      if (line === '') {
        // A boleto at an issuer not registered yet: the payer gives what the issuer needs, or waits.
        const panel = extra.boletoPanel ?? html`<p id="boleto-registering">${ctx.t('boletoRegistering')}</p>`;
        return { title, body: html`${header(ctx, order, title)}${note}${panel}${waiting(ctx)}${sandbox}` };
      }
      const barcode = itfBarcodeSvg(d.boletoBarcode ?? barcodeFromLinha(line), {
        title: ctx.t('boletoBarcode', { line }),
        narrow: 1,
        height: 50,
      });
      // The issuer's boleto (Bolix, BolePix) can also be paid by Pix, and a bank's payment takes time to confirm.
      const pixCode = d.boletoPixCode;
      const pix =
        pixCode === undefined
          ? ''
          : html`${trusted(qrSvg(pixCode, { title: ctx.t('boletoPixQrTitle'), moduleSize: 4 }).replace('<svg ', '<svg class="qr" '))}
${copyable(ctx, 'boleto-pix', ctx.t('boletoPixCode'), pixCode, 3)}`;
      const live =
        d.boletoBarcode === undefined ? '' : html`<p id="boleto-confirm-wait">${ctx.t('boletoConfirmWait')}</p>`;
      return {
        title,
        body: html`${header(ctx, order, title)}<p>${ctx.t('payee', { payee: ctx.payeeName })}</p>
<p>${ctx.t('boletoDue')}: <strong>${formatDate(ctx.lang, d.boletoDueDate ?? '')}</strong></p>${note}
${copyable(ctx, 'boleto-line', ctx.t('boletoLine'), d.linhaFormatted ?? line, 2)}
${trusted(barcode.replace('<svg ', '<svg class="barcode" preserveAspectRatio="none" '))}
<p><a class="button secondary" href="${ctx.path}/boleto.pdf" download>${ctx.t('boletoPdf')}</a></p>
<p>${ctx.t('boletoSteps')}</p>${pix}${live}${waiting(ctx)}${sandbox}`,
      };
    }
    case 'usdt': {
      const title = ctx.t('usdtTitle');
      const d = cashierDetails(order);
      const address = d.addressTo ?? '';
      const amount = tokens(order);
      // The rate in the order's own currency: reais, or pesos on a Mexican cashier.
      const rate = formatAmount(ctx.lang, d.exchangeRate ?? '0', order.currency);
      return {
        title,
        body: html`${header(ctx, order, title)}<p class="warning">${ctx.t('usdtWarning')}</p>${note}
${copyable(ctx, 'usdt-amount', ctx.t('usdtSend'), amount.replace(/ USDT$/, ''), 1)}
<p class="muted">${ctx.t('usdtRate', { tokens: amount, rate, amount: money(ctx, order.amount, order.currency) })}</p>
${trusted(qrSvg(address, { title: ctx.t('usdtQrTitle', { address }), moduleSize: 5 }).replace('<svg ', '<svg class="qr" '))}
${copyable(ctx, 'usdt-address', ctx.t('usdtAddress'), address, 1)}${orderCountdown(ctx, order)}${waiting(ctx)}${sandbox}`,
      };
    }
    case 'pix': {
      const code = brazilDetails(order).payParam ?? '';
      const title = ctx.t('pixTitle');
      const amount = money(ctx, order.amount, order.currency);
      // A dynamic charge (its own txid) takes one payment of exactly its amount: worth saying. A static
      // code's rules are the page's own (amount and time shown above), so it says nothing more.
      const once =
        order.channel_type === 'PIX_DYNAMIC' ? html`<p id="pix-once">${ctx.t('pixOnce', { amount })}</p>` : '';
      const qrCode = qrSvg(code, { title: ctx.t('pixQrTitle', { amount }), moduleSize: 5 });
      const qr = trusted(qrCode.replace('<svg ', '<svg class="qr" '));
      // Copy first (a payer on a phone pays in the bank app on the same phone); the QR code for paying
      // from another device: folded on a phone, first and open on a wide screen (see the style).
      return {
        title,
        body: html`${header(ctx, order, title)}${note}<div class="pix"><div>
<button type="button" class="primary-copy" data-copy="pix-code" data-copied="${ctx.t('copied')}" hidden>${ctx.t('pixCopy')}</button>
<label for="pix-code">${ctx.t('pixCodeLabel')}</label><textarea id="pix-code" class="code" rows="4" readonly>${code}</textarea>
<p>${ctx.t('pixPaste')}</p></div>
<details class="qr-box" open><summary>${ctx.t('pixShowQr')}</summary><p>${ctx.t('pixScan')}</p>${qr}</details></div>
<p>${ctx.t('payee', { payee: ctx.payeeName })}</p>${once}${orderCountdown(ctx, order)}${waiting(ctx)}${sandbox}`,
      };
    }
  }
}

/** Where the merchant asked the payer to be sent back, when it is a web address. */
export function returnTarget(order: Pick<OrderRow, 'return_url'>): URL | undefined {
  if (order.return_url === null) return undefined;
  try {
    const url = new URL(order.return_url);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds the paid page counts down before it takes the payer back to the merchant's returnUrl. */
export const RETURN_DELAY_SECONDS = 5;

/**
 * The paid page's way back: a button to the shop, and (with script only) a visible countdown to the
 * same address that the payer can stop. No meta refresh: a page must not move on by itself unseen.
 */
function returnToShop(ctx: Pick<ViewContext, 't'>, target: URL): Html {
  const host = target.host;
  return html`<p><a class="button" id="return-link" href="${target.href}">${ctx.t('returnShop')}</a></p>
<p data-return="${target.href}" data-return-in="${RETURN_DELAY_SECONDS}"
data-template="${ctx.t('returningIn', { host, seconds: '{seconds}' })}" data-stopped="${ctx.t('returnStopped')}"
hidden><span data-return-text>${ctx.t('returningIn', { host, seconds: RETURN_DELAY_SECONDS })}</span>
<button type="button" class="secondary" data-return-stop>${ctx.t('returnStay')}</button></p>`;
}

/** The method the order was paid with, as the payer knows it. */
function methodName(t: Translate, order: OrderRow): string {
  if (order.area === 'ken') return t('method_MPESA');
  const channel = order.channel_type;
  return isCashierMethod(channel) ? t(`method_${channel}`) : channel;
}

/** What was paid against what was asked, in the payer's unit (USDT on the token page). */
function paidAgainstAsked(
  ctx: ViewContext,
  order: OrderRow,
): { received: string; asked: string; difference: string; sign: -1 | 0 | 1 } {
  if (payPageOf(order) === 'usdt') {
    const d = cashierDetails(order);
    const decimals = d.tokenDecimals ?? 6;
    const asked = BigInt(d.tokenUnits ?? '0');
    const paid = BigInt(d.paidUnits ?? d.tokenUnits ?? '0');
    const units = (n: bigint) => `${formatUnits(n, decimals)} USDT`;
    return {
      received: units(paid),
      asked: units(asked),
      difference: units(paid > asked ? paid - asked : asked - paid),
      sign: paid === asked ? 0 : paid > asked ? 1 : -1,
    };
  }
  const asked = fromDb(order.amount);
  const paid = order.actual_amount === null ? asked : fromDb(order.actual_amount);
  const show = (n: bigint) => formatAmount(ctx.lang, formatMoney(n, order.currency), order.currency);
  return {
    received: show(paid),
    asked: show(asked),
    difference: show(paid > asked ? paid - asked : asked - paid),
    sign: paid === asked ? 0 : paid > asked ? 1 : -1,
  };
}

/** The rail's own reference of the payment, where the order has one: what the payer's bank, M-Pesa or wallet shows too. */
function railReference(order: OrderRow): { label: TextKey; value: string } | undefined {
  const page = payPageOf(order);
  if (page === 'spei' || page === 'oxxo') return mexicoReference(order);
  const value =
    page === 'mpesa'
      ? kenyaDetails(order).mpesaReceipt
      : page === 'usdt'
        ? cashierDetails(order).tradeHash
        : page === 'pix'
          ? brazilDetails(order).endToEndId
          : undefined; // A boleto's clearing gives Cashgate no reference of its own to show.
  if (value === undefined || value === '' || page === 'boleto') return undefined;
  const label: Record<Exclude<PayPage, 'boleto' | 'spei' | 'oxxo'>, TextKey> = {
    mpesa: 'receiptMpesa',
    usdt: 'receiptHash',
    pix: 'receiptE2e',
  };
  return { label: label[page], value };
}

/** The paid page's receipt: when, to whom, for which order, how, how much and the rail's reference; printable. */
function receipt(ctx: ViewContext, order: OrderRow, paid: ReturnType<typeof paidAgainstAsked>): Html {
  const rows: [TextKey, string][] = [];
  if (order.pay_time !== null) rows.push(['receiptPaidAt', formatDeadline(ctx.lang, order.pay_time, countryOf(order))]);
  rows.push(['receiptMerchant', ctx.merchantName], ['receiptOrder', order.external_order_id]);
  rows.push(['receiptCashgate', order.id], ['receiptMethod', methodName(ctx.t, order)]);
  rows.push(['receiptAmount', paid.received]);
  if (paid.sign !== 0) rows.push(['receiptAsked', paid.asked]);
  const reference = railReference(order);
  if (reference !== undefined) rows.push([reference.label, reference.value]);
  rows.push(...speiPayerRows(order));
  if (order.remark !== null && order.remark !== '') rows.push(['receiptFor', order.remark]);
  return html`<h2>${ctx.t('receiptTitle')}</h2><dl class="receipt">${rows.map(
    ([key, value]) => html`<dt>${ctx.t(key)}</dt><dd>${value}</dd>`,
  )}</dl><p class="no-print"><button type="button" class="secondary" data-print hidden>${ctx.t('receiptPrint')}</button></p>`;
}

/** The end pages: paid (a receipt; a payment of another amount says so), expired, cancelled. */
export function finalView(
  ctx: ViewContext,
  order: OrderRow,
  state: Exclude<CashierState, 'pending'>,
): { title: string; body: Html } {
  const target = returnTarget(order);
  const back =
    target === undefined
      ? html`<p class="no-print">${ctx.t('closePage')}</p>`
      : html`<p><a class="button" href="${target.href}">${ctx.t('returnLink', { host: target.host })}</a></p>`;
  const ref = html`<p class="muted">${ctx.t('payMerchant', { merchant: ctx.merchantName })} · ${ctx.t('orderRef', { ref: order.external_order_id })}</p>`;
  if (state === 'paid') {
    const paid = paidAgainstAsked(ctx, order);
    const merchant = ctx.merchantName;
    if (paid.sign !== 0) {
      // Another amount than asked: said as it is, and no automatic return to the shop (the payer
      // has something to settle or ask about); the way back stays a button.
      const title = ctx.t(paid.sign < 0 ? 'partTitle' : 'overTitle');
      const said =
        paid.sign < 0
          ? html`<p class="status warning" role="status" id="paid-difference">${ctx.t('partText', { received: paid.received, left: paid.difference })}</p>
<p>${ctx.t('partNext', { amount: paid.asked, merchant })}</p>`
          : html`<p class="status warning" role="status"
id="paid-difference">${ctx.t('overText', { received: paid.received, extra: paid.difference, amount: paid.asked })}</p>
<p>${ctx.t('overNext', { merchant })}</p>`;
      return { title, body: html`${ref}<h1>${title}</h1>${said}${receipt(ctx, order, paid)}${back}` };
    }
    const title = ctx.t('paidTitle');
    return {
      title,
      body: html`${ref}<h1>${title}</h1><p class="status ok" role="status">${ctx.t('paidThanks', { amount: paid.received })}</p>
${receipt(ctx, order, paid)}${target === undefined ? back : returnToShop(ctx, target)}`,
    };
  }
  const title = ctx.t(state === 'expired' ? 'expiredTitle' : 'cancelledTitle');
  const text = ctx.t(state === 'expired' ? 'expiredText' : 'cancelledText');
  return {
    title,
    body: html`${ref}<h1>${title}</h1><p class="amount">${money(ctx, order.amount, order.currency)}</p><p>${text}</p>${back}`,
  };
}

export function notFoundView(t: Translate): { title: string; body: Html } {
  return { title: t('notFoundTitle'), body: html`<h1>${t('notFoundTitle')}</h1><p>${t('notFoundText')}</p>` };
}

/** The expired aggregate cashier (no order was made on it in time). */
export function checkoutExpiredView(
  ctx: Pick<ViewContext, 't' | 'merchantName'>,
  state: CheckoutState,
): { title: string; body: Html } {
  const target = returnTarget(state.checkout);
  return {
    title: ctx.t('expiredTitle'),
    body: html`<p class="muted">${ctx.t('payMerchant', { merchant: ctx.merchantName })}</p><h1>${ctx.t('expiredTitle')}</h1><p>${ctx.t('expiredText')}</p>
${target === undefined ? '' : html`<p><a class="button" href="${target.href}">${ctx.t('returnLink', { host: target.host })}</a></p>`}`,
  };
}

function problemText(
  ctx: Pick<ViewContext, 't' | 'lang'>,
  problem: CheckoutProblem,
  currency: CashierCurrency,
): string {
  switch (problem.rule) {
    case 'amount':
      return ctx.t('error_amount', {
        min: formatAmount(ctx.lang, formatMinor(problem.minimum, 2), currency),
        max: formatAmount(ctx.lang, formatMinor(problem.maximum, 2), currency),
      });
    case 'choose':
      return ctx.t('error_choose');
    case 'unavailable':
      return ctx.t('error_unavailable');
    case 'document':
      return ctx.t('error_document');
    case 'name':
      return ctx.t('error_name');
    case 'email':
      return ctx.t('error_email');
  }
}

/**
 * The aggregate cashier's form: amount (in the cashier's currency), method and, when no document is
 * known, the CPF or CNPJ; on a peso cashier offering OXXO, the payer's name and email for the voucher.
 */
export function checkoutView(
  ctx: Pick<ViewContext, 't' | 'lang' | 'path' | 'langQuery' | 'now'>,
  state: CheckoutState,
  input: CheckoutChoice = {},
  problems: readonly CheckoutProblem[] = [],
): { title: string; body: Html } {
  const { t } = ctx;
  const currency = checkoutCurrency(state.checkout);
  const problemOf = (field: CheckoutProblem['field']) => problems.find((p) => p.field === field);
  /** aria-describedby of an input: its error first when it has one, then its hint. */
  const describedBy = (field: CheckoutProblem['field'], hint?: string) => {
    const ids = [problemOf(field) === undefined ? undefined : `${field}-error`, hint].filter((id) => id !== undefined);
    return trusted(
      `${problemOf(field) === undefined ? '' : ' aria-invalid="true"'}${ids.length === 0 ? '' : ` aria-describedby="${ids.join(' ')}"`}`,
    );
  };
  const errorLine = (field: CheckoutProblem['field']) => {
    const problem = problemOf(field);
    return problem === undefined
      ? ''
      : html`<p id="${field}-error" class="error">${problemText(ctx, problem, currency)}</p>`;
  };
  // An error about the method points at the first method the payer can choose.
  const firstMethod = (state.methods.find((m) => m.available) ?? state.methods[0])?.method ?? '';
  const summary =
    problems.length === 0
      ? ''
      : html`<div class="summary" role="alert" tabindex="-1"><p class="error">${t('errorSummary')}</p><ul>${problems.map(
          (p) =>
            html`<li><a href="#${p.field === 'method' ? `method-${firstMethod}` : p.field}">${problemText(ctx, p, currency)}</a></li>`,
        )}</ul></div>`;
  const chosen =
    input.method ??
    (state.methods.filter((m) => m.available).length === 1
      ? state.methods.find((m) => m.available)?.method
      : undefined);
  const methods = state.methods.map(({ method, available }) => {
    const needs = CASHIER_METHOD_SPECS[method].needsDocument;
    return html`<label class="${chosen === method ? 'method checked' : 'method'}" for="method-${method}"><input type="radio"
id="method-${method}" name="method" value="${method}" data-needs-document="${String(needs)}" data-needs-contact="${String(method === 'OXXO')}"${
      available ? '' : trusted(' disabled')
    }${chosen === method ? trusted(' checked') : ''}${describedBy('method')}><span><strong>${t(`method_${method}`)}</strong><span class="muted">${
      available ? t(`hint_${method}`) : t('unavailable')
    }</span></span></label>`;
  });
  const hideDocument = chosen !== undefined && isCashierMethod(chosen) && !CASHIER_METHOD_SPECS[chosen].needsDocument;
  const documentField =
    state.document.source === 'ask'
      ? html`<div id="document-field"${hideDocument ? trusted(' hidden') : ''}><label for="document">${t('documentInput')}</label>${errorLine('document')}
<input type="text" id="document" name="document" inputmode="numeric" autocomplete="off" maxlength="18"
value="${input.document ?? ''}"${describedBy('document', 'document-hint')}>
<p id="document-hint" class="muted">${t('documentHint', { merchant: state.merchantName })}</p></div>`
      : state.document.source === 'saved'
        ? html`<p class="muted">${t('documentSaved', { type: state.document.type, number: maskDocument(state.document.type, state.document.number) })}</p>`
        : '';
  // OXXO's voucher names its payer: asked on the form whenever OXXO can be chosen (without script
  // the fields cannot appear when it is picked), and needed only when it is.
  const contactFields = state.methods.some((m) => m.method === 'OXXO' && m.available)
    ? html`<fieldset
id="contact-field"${chosen !== undefined && chosen !== 'OXXO' ? trusted(' hidden') : ''}><legend>${t('contactLegend')}</legend><p
id="contact-hint" class="muted">${t('contactHint')}</p>
<label for="name">${t('nameInput')}</label>${errorLine('name')}
<input type="text" id="name" name="name" autocomplete="name" maxlength="100"
value="${input.name ?? ''}"${describedBy('name', 'contact-hint')}>
<label for="email">${t('emailInput')}</label>${errorLine('email')}
<input type="text" id="email" name="email" inputmode="email" autocomplete="email" maxlength="254"
value="${input.email ?? ''}"${describedBy('email', 'contact-hint')}></fieldset>`
    : '';
  const pesos = currency === 'MXN';
  const title = t('chooseTitle');
  const timeLeft = countdown(ctx, state.checkout.expire_at, pesos ? 'mexico' : 'brazil', 'formTimeLeft');
  return {
    title,
    body: html`<p class="muted">${t('payMerchant', { merchant: state.merchantName })} · ${t('orderRef', { ref: state.checkout.external_order_id })}</p>
<h1>${title}</h1>${remarkLine(t, state.checkout.remark)}${timeLeft}${summary}<form method="post" action="${ctx.path}${ctx.langQuery}" novalidate>
<label for="amount">${t(pesos ? 'amountInputMXN' : 'amountInput')}</label>${errorLine('amount')}
<input type="text" id="amount" name="amount" inputmode="decimal" autocomplete="off" required
value="${input.amount ?? ''}"${describedBy('amount', 'amount-hint')}>
<p id="amount-hint" class="muted">${t(pesos ? 'amountHintMXN' : 'amountHint')}</p>
<fieldset><legend>${t('methodLegend')}</legend>${errorLine('method')}${methods}</fieldset>${documentField}${contactFields}
<button type="submit">${t('continue')}</button></form>`,
  };
}
