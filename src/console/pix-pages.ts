/**
 * The console's view of Pix that came in for a merchant's orders through a live PSP
 * (BRAZIL_RAIL=apipix): on an order's page, every Pix received for it and what became of it; on
 * its own page, the Pix that were returned to their payers instead of credited (late, a second
 * payment, or refused by the order's rules).
 */
import { maskDocument } from '../brazil/api-pix.js';
import {
  merchantHasPixReturns,
  merchantPixReturns,
  pixReceivedOfOrder,
  type PixReceivedRow,
} from '../brazil/queries.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { badge } from './forms.js';
import { consoleTexts, dateTime, money, translate, type Translator } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import type { ConsoleContext, ConsoleRouter } from './router.js';

/** The returns page lists this many, newest first. */
const RETURNS_PAGE_SIZE = 200;

const TEXTS = consoleTexts('pix', {
  received: ['Pix received', 'Pix recebidos', 'Pix recibidos'],
  receivedHint: [
    'Every Pix the PSP received for this order. One that the order could not take is returned to its payer: it is not in your balance.',
    'Cada Pix que o PSP recebeu para este pedido. Um que o pedido não podia aceitar é devolvido ao pagador: não entra no seu saldo.',
    'Cada Pix que el PSP recibió para este pedido. Uno que el pedido no podía aceptar se devuelve al pagador: no entra en su saldo.',
  ],
  title: ['Pix returned to payers', 'Pix devolvidos aos pagadores', 'Pix devueltos a los pagadores'],
  intro: [
    'Pix paid for your orders that were not credited to you: paid after the order expired, a second payment of a paid order, or an amount the order refused. Cashgate returns each to its payer through the PSP; none is in your balance.',
    'Pix pagos para os seus pedidos que não foram creditados a você: pagos depois que o pedido expirou, um segundo pagamento de um pedido pago, ou um valor que o pedido recusou. O Cashgate devolve cada um ao pagador pelo PSP; nenhum está no seu saldo.',
    'Pix pagados por sus pedidos que no se le acreditaron: pagados después de que el pedido venció, un segundo pago de un pedido pagado, o un importe que el pedido rechazó. Cashgate devuelve cada uno a su pagador a través del PSP; ninguno está en su saldo.',
  ],
  empty: [
    'No Pix has been returned for your orders.',
    'Nenhum Pix foi devolvido para os seus pedidos.',
    'No se ha devuelto ningún Pix de sus pedidos.',
  ],
  caption: [
    'Returned Pix, newest first (the latest {n})',
    'Pix devolvidos, mais recentes primeiro (os últimos {n})',
    'Pix devueltos, los más recientes primero (los últimos {n})',
  ],
  link: ['Pix returned to payers →', 'Pix devolvidos aos pagadores →', 'Pix devueltos a los pagadores →'],
  paidAt: ['Paid at the PSP', 'Pago no PSP', 'Pagado en el PSP'],
  e2eid: ['End-to-end id', 'Identificador fim a fim', 'Identificador de extremo a extremo'],
  order: ['Order', 'Pedido', 'Pedido'],
  amount: ['Amount', 'Valor', 'Importe'],
  payer: ['Payer', 'Pagador', 'Pagador'],
  outcome: ['What became of it', 'O que aconteceu', 'Qué pasó'],
  reason: ['Why', 'Motivo', 'Motivo'],
  credited: ['Credited to the order', 'Creditado ao pedido', 'Acreditado al pedido'],
  returning: ['Being returned to the payer', 'Sendo devolvido ao pagador', 'Devolviéndose al pagador'],
  returned: ['Returned to the payer', 'Devolvido ao pagador', 'Devuelto al pagador'],
  return_failed: [
    'Return failed: waiting for the operator',
    'Devolução falhou: aguardando o operador',
    'La devolución falló: esperando al operador',
  ],
  unmatched: ['Not matched to an order', 'Sem pedido correspondente', 'Sin pedido correspondiente'],
});

type T = Translator<keyof typeof TEXTS>;

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
  const t = translate(TEXTS, ctx.lang);
  const returned = rows.some((row) => row.disposition !== 'credited');
  return html`<div class="panel"><h2>${t('received')}</h2><p class="muted">${t('receivedHint')}</p><div class="table" tabindex="0"><table><thead><tr><th>${t('paidAt')}</th><th>${t('e2eid')}</th><th class="num">${t('amount')}</th><th>${t('payer')}</th><th>${t('outcome')}</th><th>${t('reason')}</th></tr></thead><tbody>${rows.map(
    (row) =>
      html`<tr><td>${paidAt(ctx.lang, row)}</td><td class="mono">${row.e2eid}</td><td class="num">${money(ctx.lang, row.amount, 'BRL')}</td><td>${payer(row)}</td><td>${outcome(t, row)}</td><td>${row.disposition === 'credited' ? '' : (row.reason ?? '')}</td></tr>`,
  )}</tbody></table></div>${returned ? html`<p><a href="/console/pix-returns">${t('link')}</a></p>` : ''}</div>`;
}

/** A link to the returns page for the orders page, when the merchant has any. */
export async function pixReturnsLink(ctx: ConsoleContext, deps: ConsoleServices): Promise<Html> {
  if (!(await merchantHasPixReturns(deps.store.read, ctx.merchantId))) return html``;
  return html`<p><a href="/console/pix-returns">${translate(TEXTS, ctx.lang)('link')}</a></p>`;
}

export function registerPixPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/pix-returns', async (ctx, _request, reply) => {
    const t = translate(TEXTS, ctx.lang);
    const rows = await merchantPixReturns(deps.store.read, ctx.merchantId, RETURNS_PAGE_SIZE);
    const table =
      rows.length === 0
        ? html`<p>${t('empty')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('caption', { n: RETURNS_PAGE_SIZE })}</caption><thead><tr><th>${t('paidAt')}</th><th>${t('order')}</th><th>${t('e2eid')}</th><th class="num">${t('amount')}</th><th>${t('payer')}</th><th>${t('outcome')}</th><th>${t('reason')}</th></tr></thead><tbody>${rows.map(
            (row) =>
              html`<tr><td>${paidAt(ctx.lang, row)}</td><td class="mono"><a href="/console/orders/${row.order_id ?? ''}">${row.order_id ?? ''}</a></td><td class="mono">${row.e2eid}</td><td class="num">${money(ctx.lang, row.amount, 'BRL')}</td><td>${payer(row)}</td><td>${outcome(t, row)}</td><td>${row.reason ?? ''}</td></tr>`,
          )}</tbody></table></div>`;
    return ctx.page(reply, {
      title: t('title'),
      section: 'orders',
      body: html`<h1>${t('title')}</h1><p>${t('intro')}</p><div class="panel">${table}</div>`,
    });
  });
}
