/**
 * The console's view of Pix that came in for a merchant's orders through a live PSP
 * (BRAZIL_RAIL=apipix): on an order's page, every Pix received for it and what became of it; on
 * its own page, the Pix that were returned to their payers instead of credited (late, a second
 * payment, or refused by the order's rules).
 */
import { maskDocument } from '../brazil/api-pix.js';
import { merchantPixReturns, pixReceivedOfOrder, type PixReceivedRow } from '../brazil/queries.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { badge } from './forms.js';
import { translator, type Translator } from '../i18n/messages.js';
import { dateTime, money } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import { merchantHasUncreditedPix } from './queries.js';
import type { ConsoleContext, ConsoleRouter } from './router.js';

/** The returns page lists this many, newest first. */
const RETURNS_PAGE_SIZE = 200;

type T = Translator<'console.pix'>;

function outcome(t: T, row: PixReceivedRow): Html {
  const tone =
    row.disposition === 'credited' || row.disposition === 'returned'
      ? 'ok'
      : row.disposition === 'return_failed'
        ? 'bad'
        : 'wait';
  return badge(t(row.disposition), tone);
}

function payer(row: PixReceivedRow): string {
  const document = row.payer_document === null ? '' : maskDocument(row.payer_document);
  return [row.payer_name ?? '', document].filter((part) => part !== '').join(' · ') || '—';
}

function paidAt(lang: Language, row: PixReceivedRow): string {
  const at = Date.parse(row.paid_at);
  return Number.isNaN(at) ? row.paid_at : dateTime(lang, at);
}

/** The order page's panel of the Pix received for it; empty when there were none. */
export async function pixReceivedPanel(ctx: ConsoleContext, deps: ConsoleServices, orderId: string): Promise<Html> {
  const rows = await pixReceivedOfOrder(deps.store.read, orderId);
  if (rows.length === 0) return html``;
  const t = translator('console.pix', ctx.lang);
  const returned = rows.some((row) => row.disposition !== 'credited');
  return html`<div class="panel"><h2>${t('received')}</h2><p class="muted">${t('receivedHint')}</p><div class="table"
tabindex="0"><table><thead><tr><th>${t('paidAt')}</th><th>${t('e2eid')}</th><th
class="num">${t('amount')}</th><th>${t('payer')}</th><th>${t('outcome')}</th><th>${t('reason')}</th></tr></thead><tbody>${rows.map(
    (row) => {
      const reason = row.disposition === 'credited' ? '' : (row.reason ?? '');
      return html`<tr><td>${paidAt(ctx.lang, row)}</td><td class="mono">${row.e2eid}</td><td
class="num">${money(ctx.lang, row.amount, 'BRL')}</td><td>${payer(row)}</td><td>${outcome(t, row)}</td><td>${reason}</td></tr>`;
    },
  )}</tbody></table></div>${returned ? html`<p><a href="/console/pix-returns">${t('link')}</a></p>` : ''}</div>`;
}

/** A link to the returns page for the orders page, when the merchant has any. */
export async function pixReturnsLink(ctx: ConsoleContext, deps: ConsoleServices): Promise<Html> {
  if (!(await merchantHasUncreditedPix(deps.store.read, ctx.merchantId))) return html``;
  return html`<p><a href="/console/pix-returns">${translator('console.pix', ctx.lang)('link')}</a></p>`;
}

export function registerPixPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/pix-returns', async (ctx, _request, reply) => {
    const t = translator('console.pix', ctx.lang);
    const rows = await merchantPixReturns(deps.store.read, ctx.merchantId, RETURNS_PAGE_SIZE);
    const caption = t('caption', { n: RETURNS_PAGE_SIZE });
    const table =
      rows.length === 0
        ? html`<p>${t('empty')}</p>`
        : html`<div class="table"
tabindex="0"><table><caption class="muted">${caption}</caption><thead><tr><th>${t('paidAt')}</th><th>${t('order')}</th><th>${t('e2eid')}</th><th
class="num">${t('amount')}</th><th>${t('payer')}</th><th>${t('outcome')}</th><th>${t('reason')}</th></tr></thead><tbody>${rows.map(
            (row) =>
              html`<tr><td>${paidAt(ctx.lang, row)}</td><td class="mono"><a
href="/console/orders/${row.order_id ?? ''}">${row.order_id ?? ''}</a></td><td class="mono">${row.e2eid}</td><td
class="num">${money(ctx.lang, row.amount, 'BRL')}</td><td>${payer(row)}</td><td>${outcome(t, row)}</td><td>${row.reason ?? ''}</td></tr>`,
          )}</tbody></table></div>`;
    return ctx.page(reply, {
      title: t('title'),
      section: 'orders',
      body: html`<h1>${t('title')}</h1><p>${t('intro')}</p><div class="panel">${table}</div>`,
    });
  });
}
