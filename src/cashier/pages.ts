import type { FastifyInstance, FastifyReply } from 'fastify';
import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { maskKenyanMobile } from '../kenya/phone.js';
import { formatMoney, fromDb, type Currency } from '../ledger/money.js';
import type { OrderRow } from '../orders/queries.js';
import type { OrderSandbox } from '../orders/sandbox.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { COLLECTION_STATUS } from '../orders/state-machine.js';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-security-policy', CSP)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
        `<title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:30rem;margin:2rem auto;padding:0 1rem}` +
        `.amount{font-size:2rem;font-weight:700}.sandbox{border:2px dashed #b45309;padding:1rem;margin-top:2rem}button{font-size:1rem;margin:.25rem}</style>` +
        `</head><body>${body}</body></html>`,
    );
}

function amountOf(order: OrderRow): string {
  return `${formatMoney(fromDb(order.amount), order.currency as Currency)} ${order.currency}`;
}

/** How the payer is asked to pay, per area and channel. */
function instructions(order: OrderRow): string {
  const details = JSON.parse(order.details) as { checkingPhone?: string; payParam?: string; linhaFormatted?: string; boletoDueDate?: string };
  if (order.area === 'ken' && details.checkingPhone !== undefined) {
    return `<p>A payment request was sent to <strong>${escapeHtml(maskKenyanMobile(details.checkingPhone))}</strong>. Enter your M-Pesa PIN on your phone to pay.</p>`;
  }
  if (details.linhaFormatted !== undefined) {
    return `<p>Pay this boleto by ${escapeHtml(details.boletoDueDate ?? '')} in your bank's app or at any bank:</p><p><code>${escapeHtml(details.linhaFormatted)}</code></p>`;
  }
  if (details.payParam !== undefined) {
    return `<p>Open your bank's app, choose Pix "copia e cola" and paste this code:</p><p><code style="word-break:break-all">${escapeHtml(details.payParam)}</code></p>`;
  }
  return '<p>Follow the payment instructions for this order.</p>';
}

/**
 * The payer's cashier page for a collection (plain: the full cashier replaces it): amount, how to
 * pay, the state, and in sandbox mode buttons that drive the simulated rail.
 */
export async function registerCashierPages(
  parent: FastifyInstance,
  deps: { orders: OrderService; sandbox: OrderSandbox; clock: Clock },
): Promise<void> {
  await parent.register(async (app) => cashierScope(app, deps));
}

function cashierScope(app: FastifyInstance, deps: { orders: OrderService; sandbox: OrderSandbox; clock: Clock }): void {
  // HTML forms post url-encoded bodies; only these pages accept them.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
  app.get<{ Params: { cashierId: string } }>('/cashier/:cashierId', async (request, reply) => {
    const order = await deps.orders.findByCashier(request.params.cashierId);
    if (order === undefined) return page(reply, 404, 'Not found', '<h1>Payment not found</h1><p>Check the link you were given.</p>');
    const amount = `<p class="amount">${escapeHtml(amountOf(order))}</p>`;
    if (order.status === COLLECTION_STATUS.paid) return page(reply, 200, 'Paid', `<h1>Payment received</h1>${amount}<p>Thank you. You can close this page.</p>`);
    const expired = order.status === COLLECTION_STATUS.expired || (order.cashier_expire_at ?? 0) <= deps.clock.now();
    if (expired) return page(reply, 410, 'Expired', `<h1>This payment has expired</h1>${amount}<p>Ask the merchant for a new payment link.</p>`);
    const sandbox = deps.sandbox.enabled
      ? `<form class="sandbox" method="post" action="/cashier/${escapeHtml(order.cashier_id ?? '')}/sandbox"><strong>Sandbox</strong>: simulate the payer.<br>` +
        `<button name="action" value="paid">Pay</button><button name="action" value="expired">Time out</button></form>`
      : '';
    const remark = order.remark === null ? '' : `<p>${escapeHtml(order.remark)}</p>`;
    const expires = new Date(order.cashier_expire_at ?? 0).toISOString();
    return page(reply, 200, 'Pay', `<h1>Pay</h1>${amount}${remark}${instructions(order)}<p>Waiting for payment. This page expires at ${expires}.</p>${sandbox}`);
  });

  app.post<{ Params: { cashierId: string }; Body: { action?: string } }>('/cashier/:cashierId/sandbox', async (request, reply) => {
    const order = await deps.orders.findByCashier(request.params.cashierId);
    if (order === undefined || !deps.sandbox.enabled) return page(reply, 404, 'Not found', '<h1>Not found</h1>');
    const action = (request.body as { action?: unknown } | undefined)?.action;
    if (action === 'paid' || action === 'expired') {
      try {
        await deps.sandbox.apply(order.id, action, { source: 'sandbox:cashier' });
      } catch (error) {
        // A second click after the order moved on changes nothing; the page shows the state.
        if (!(error instanceof EventNotAllowedError) && !(error instanceof OperatorError)) throw error;
      }
    }
    return reply.redirect(`/cashier/${encodeURIComponent(request.params.cashierId)}`, 303);
  });
}
