/**
 * The payer's pages of Mexico's methods on the aggregate cashier: a SPEI transfer to the CLABE issued
 * for the order (at STP), and cash at an OXXO store against a voucher (through Stripe). Deadlines and
 * times in Mexico City time; the shared pieces of a page (header, countdown, sandbox) come from
 * views.ts.
 */
import { html, trusted, type Html } from '../http/html.js';
import { maskAccount, SPEI_BANK } from '../mexico/kinds.js';
import type { OrderRow } from '../orders/queries.js';
import { cashierDetails } from './checkout.js';
import { code128Svg } from './code128.js';
import { formatDeadline, type TextKey } from './i18n.js';
import type { ViewContext } from './views.js';

/** What a Mexican page takes from the cashier's shared pieces, made for its order. */
export interface MexicoPageParts {
  /** The header with the page's title: merchant, order, what for, and the amount. */
  header: (title: string) => Html;
  /** The order's amount as the payer's language writes it ("$1,234.50 MXN"). */
  amount: string;
  /** The note of a payment refused for its amount, when there is one. */
  note: Html | undefined;
  /** Time left to pay, ticking, and the deadline with its date and zone. */
  countdown: (end: number) => Html;
  /** "Waiting for your payment…", announced. */
  waiting: Html;
  /** The sandbox's controls, in the sandbox only. */
  sandbox: Html | undefined;
}

/** A CLABE as it is read out or typed by hand: bank (3), branch (3), account (11), check digit (1). */
export function groupClabe(clabe: string): string {
  if (!/^\d{18}$/.test(clabe)) return clabe;
  return `${clabe.slice(0, 3)} ${clabe.slice(3, 6)} ${clabe.slice(6, 17)} ${clabe.slice(17)}`;
}

/** Items of a message written as one text with `|` between them, as a list. */
const listOf = (text: string) => text.split('|').map((item) => html`<li>${item}</li>`);

/** The SPEI page: copy the CLABE first, then read it, to whom, how much, by when and how. */
export function speiPendingView(
  ctx: ViewContext,
  order: OrderRow,
  parts: MexicoPageParts,
): { title: string; body: Html } {
  const { t } = ctx;
  const title = t('speiTitle');
  const clabe = cashierDetails(order).clabe ?? '';
  const deadline = order.cashier_expire_at ?? ctx.now;
  if (clabe === '') {
    return {
      title,
      body: html`${parts.header(title)}${parts.note}<p id="spei-issuing">${t('speiIssuing')}</p>${parts.waiting}${parts.sandbox}`,
    };
  }
  const time = formatDeadline(ctx.lang, deadline, 'mexico');
  // The copy button copies the 18 digits as a bank app takes them; the grouped form is for reading.
  return {
    title,
    body: html`${parts.header(title)}${parts.note}
<button type="button" class="primary-copy" data-copy="spei-clabe" data-copied="${t('copied')}" hidden>${t('speiCopy')}</button>
<p class="muted">${t('speiClabe')}</p><p class="amount" id="clabe-grouped">${groupClabe(clabe)}</p>
<label for="spei-clabe">${t('speiClabePlain')}</label><textarea id="spei-clabe" class="code" rows="1" readonly>${clabe}</textarea>
<p>${t('speiBeneficiary', { payee: ctx.payeeName })}<br>${t('speiBank', { bank: SPEI_BANK.name })}</p>
${parts.countdown(deadline)}<h2>${t('speiHowTitle')}</h2><ol>${listOf(t('speiSteps', { amount: parts.amount, time }))}</ol>
<p id="spei-late">${t('speiLate')}</p>${parts.waiting}${parts.sandbox}`,
  };
}

/** The hosted voucher's address when it is a web address over HTTPS (Stripe's), else none. */
function voucherLink(url: string | undefined): URL | undefined {
  if (url === undefined || url === '') return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The OXXO page: the voucher's reference (copyable) and its barcode for the till, the amount, the
 * voucher's last day, how to pay at the store, and that the payment is confirmed by the next business
 * day. No ticking countdown: the voucher runs for days, and the order waits past its end for
 * Stripe's confirmation (a countdown at zero would reload the page while it still waits).
 */
export function oxxoPendingView(
  ctx: ViewContext,
  order: OrderRow,
  parts: MexicoPageParts,
): { title: string; body: Html } {
  const { t } = ctx;
  const title = t('oxxoTitle');
  const d = cashierDetails(order);
  const number = d.oxxoNumber ?? '';
  const confirm = html`<p id="oxxo-confirm">${t('oxxoConfirm', { merchant: ctx.merchantName })}</p>`;
  if (number === '') {
    return {
      title,
      body: html`${parts.header(title)}${parts.note}<p id="oxxo-issuing">${t('oxxoIssuing')}</p>${parts.waiting}${parts.sandbox}`,
    };
  }
  const expiresAt = d.oxxoExpiresAt ?? order.cashier_expire_at ?? ctx.now;
  const time = formatDeadline(ctx.lang, expiresAt, 'mexico');
  const expiry =
    expiresAt > ctx.now
      ? html`<p id="oxxo-expires">${t('oxxoExpires')}: <strong>${time}</strong></p>`
      : html`<p class="warning" id="oxxo-expires" role="alert">${t('oxxoExpired', { time, merchant: ctx.merchantName })}</p>`;
  const barcode = code128Svg(number, { title: t('oxxoBarcode', { number }), module: 2, height: 50 });
  const link = voucherLink(d.oxxoVoucherUrl);
  const hosted =
    link === undefined
      ? ''
      : html`<p><a class="button secondary" id="oxxo-voucher" href="${link.href}" target="_blank"
rel="noopener noreferrer">${t('oxxoVoucherLink')}</a></p>`;
  return {
    title,
    body: html`${parts.header(title)}${parts.note}${expiry}
<label for="oxxo-number">${t('oxxoNumber')}</label><textarea id="oxxo-number" class="code" rows="1" readonly>${number}</textarea>
<button type="button" class="secondary" data-copy="oxxo-number" data-copied="${t('copied')}" hidden>${t('oxxoCopy')}</button>
${trusted(barcode.replace('<svg ', '<svg class="barcode" preserveAspectRatio="none" '))}${hosted}
<h2>${t('oxxoHowTitle')}</h2><ol>${listOf(t('oxxoSteps', { amount: parts.amount }))}</ol>
<p id="oxxo-fee" class="muted">${t('oxxoFee')}</p>${confirm}${parts.waiting}${parts.sandbox}`,
  };
}

/** The rail's reference a Mexican order's receipt shows: its CLABE (SPEI) or its voucher's reference (OXXO). */
export function mexicoReference(order: OrderRow): { label: TextKey; value: string } | undefined {
  const d = cashierDetails(order);
  const value = order.channel_type === 'SPEI' ? d.clabe : order.channel_type === 'OXXO' ? d.oxxoNumber : undefined;
  if (value === undefined || value === '') return undefined;
  return { label: order.channel_type === 'SPEI' ? 'receiptClabe' : 'receiptOxxo', value };
}

/** Who paid a SPEI order, as its receipt shows it: the sending bank, the account masked, the name, the clave de rastreo. */
export function speiPayerRows(order: OrderRow): [TextKey, string][] {
  if (order.channel_type !== 'SPEI') return [];
  const d = cashierDetails(order);
  const rows: [TextKey, string][] = [];
  if (d.payerBank !== undefined && d.payerBank !== '') rows.push(['receiptPayerBank', d.payerBank]);
  if (d.payerAccount !== undefined && d.payerAccount !== '')
    rows.push(['receiptPayerAccount', maskAccount(d.payerAccount)]);
  if (d.payerName !== undefined && d.payerName !== '') rows.push(['receiptPayerName', d.payerName]);
  if (d.claveRastreo !== undefined && d.claveRastreo !== '') rows.push(['receiptClaveRastreo', d.claveRastreo]);
  return rows;
}
