/**
 * Money: what merchants hold per currency (totals, and the merchants holding the most), the
 * system accounts (the other side of every journal: rail clearing, fees, returns, suspense), the
 * balance adjustments (applied ones, and those waiting for a second operator, decided on the Queues
 * page), a form to adjust a merchant's balance, and the daily reconciliation per rail: what the
 * ledger moved through the rail's clearing account on a UTC day beside what the rail confirmed that
 * day. Adjusting is the admin route of the same name, offered only to a
 * role that may call them; the CSV export of every balance is audited (`money.export`).
 *
 * "Confirmed by the rail" means, per rail, the records Cashgate keeps of the rail's own word:
 * - M-Pesa: Daraja requests Daraja settled with ResultCode 0 (an STK push: in; a B2C payment: out),
 *   by when the result came;
 * - Pix: Pix the PSP reported received (in, matched or not: it is money in the account), and Pix
 *   payouts the PSP settled plus returns it completed (out);
 * - Boleto: charges the issuer reported paid, credited or kept in suspense (in: the amount paid);
 * - SPEI: incoming transfers STP settled and Cashgate confirmed (in), and Cashgate's returns STP
 *   settled (out).
 * Brazilian bank transfers (TED) and OXXO keep no such record, and the sandbox rails none at all:
 * their lines show the ledger alone. A payment near midnight can fall on either side of the day on
 * each side, so a difference is a lead to look at, not a loss.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { csvCell, csvText } from '../console/csv.js';
import { dateTime, decimalText, money } from '../console/i18n.js';
import { formOf, queryParam, seeOther } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import { translator, type Translator } from '../i18n/messages.js';
import { CURRENCY_CODES, fromDb, isCurrency, type Currency, type Minor } from '../money.js';
import { decimalMoney } from './merchant-pages.js';
import * as q from './queries.js';
import { bodyOfForm, type BackofficeContext, type BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';
import { doneNotice, errorSummary, readFailed, type PageFailure as Failure } from './view.js';

const DONE = ['applied', 'pending'] as const;
const DAY = 86_400_000;
const LARGEST = 10;
const ADJUSTMENTS_SHOWN = 50;

/** The rails of the reconciliation, in the order shown, with their currency. */
const RAILS = [
  ['mpesa', 'KES'],
  ['pix', 'BRL'],
  ['boleto', 'BRL'],
  ['bank', 'BRL'],
  ['spei', 'MXN'],
  ['oxxo', 'MXN'],
] as const satisfies readonly (readonly [string, Currency])[];
type Rail = (typeof RAILS)[number][0];

/** The rails that keep a record of the rail's confirmations. */
const CONFIRMING: ReadonlySet<Rail> = new Set(['mpesa', 'pix', 'boleto', 'spei']);

/** The rail a rail-clearing movement went through: by its currency and its order's channel (none: a Pix or SPEI of no order). */
export function railOf(currency: Currency, channel: string | null): Rail {
  if (currency === 'KES') return 'mpesa';
  if (currency === 'MXN') return channel === 'OXXO' ? 'oxxo' : 'spei';
  if (channel === 'BOLETO') return 'boleto';
  return channel === 'BANK' ? 'bank' : 'pix';
}

interface Side {
  amount: Minor;
  count: number;
}
interface RailLine {
  rail: Rail;
  currency: Currency;
  ledgerIn: Side;
  ledgerOut: Side;
  /** Absent: the rail keeps no record of its confirmations. */
  confirmedIn?: Side;
  confirmedOut?: Side;
}

const side = (row: q.ConfirmedSum | undefined): Side => ({
  amount: fromDb(row?.total ?? null),
  count: Number(row?.count ?? 0),
});
const add = (a: Side, b: Side): Side => ({ amount: a.amount + b.amount, count: a.count + b.count });
const ZERO: Side = { amount: 0n, count: 0 };

/** The day's reconciliation: the ledger's rail-clearing movements beside the rails' confirmations. */
async function reconcile(deps: BackofficeServices, from: number): Promise<RailLine[]> {
  const db = deps.store.read;
  const to = from + DAY;
  const [movements, daraja, pixIn, pixOut, boleto, spei] = await Promise.all([
    q.railClearingMovements(db, from, to),
    q.darajaConfirmed(db, from, to),
    q.pixReceivedConfirmed(db, from, to),
    q.pixOutConfirmed(db, from, to),
    q.boletoConfirmed(db, from, to),
    q.speiConfirmed(db, from, to),
  ]);
  const lines = new Map<Rail, RailLine>(
    RAILS.map(([rail, currency]) => [rail, { rail, currency, ledgerIn: ZERO, ledgerOut: ZERO }]),
  );
  for (const m of movements) {
    const line = lines.get(railOf(m.currency, m.channel_type));
    if (line === undefined || line.currency !== m.currency) continue;
    const inAmount = fromDb(m.in_total);
    const outAmount = fromDb(m.out_total);
    if (inAmount !== 0n) line.ledgerIn = add(line.ledgerIn, { amount: inAmount, count: Number(m.in_entries) });
    if (outAmount !== 0n) line.ledgerOut = add(line.ledgerOut, { amount: outAmount, count: Number(m.out_entries) });
  }
  const set = (rail: Rail, confirmedIn: Side, confirmedOut: Side) => {
    const line = lines.get(rail);
    if (line !== undefined && CONFIRMING.has(rail)) Object.assign(line, { confirmedIn, confirmedOut });
  };
  set('mpesa', side(daraja.find((r) => r.api === 'stk')), side(daraja.find((r) => r.api === 'b2c')));
  set('pix', side(pixIn), pixOut.map(side).reduce(add, ZERO));
  set('boleto', side(boleto), ZERO);
  set('spei', side(spei.in), side(spei.out));
  return [...lines.values()];
}

/** The UTC day asked for (YYYY-MM-DD), else yesterday's: its first millisecond. */
function dayStart(text: string, now: number): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match !== null) {
    const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
    if (Number.isFinite(ms) && new Date(ms).toISOString().startsWith(text)) return ms;
  }
  return Math.floor(now / DAY) * DAY - DAY;
}

interface ApprovalRow {
  approvalId: string;
  merchantId: string;
  currency: string;
  amount: string;
  reason: string;
  requestedBy: string;
  createdAt: string;
}

function reconciliationTable(
  t: Translator<'backoffice.money'>,
  lang: BackofficeContext['lang'],
  lines: RailLine[],
): Html {
  const amount = (s: Side, currency: Currency) =>
    html`${money(lang, s.amount, currency)}<br><span class="muted">${t('entries', { count: s.count })}</span>`;
  const difference = (ledger: Side, confirmed: Side | undefined, currency: Currency): Html => {
    if (confirmed === undefined) return html`<span class="muted">${t('notKept')}</span>`;
    const diff = ledger.amount - confirmed.amount;
    return diff === 0n
      ? html`<span class="badge ok">${t('matches')}</span>`
      : html`<span class="badge bad">${t('differs', { amount: money(lang, diff, currency) })}</span>`;
  };
  const railName = (rail: (typeof lines)[number]['rail']): string => t(`rail_${rail}`);
  const confirmedCell = (s: Side | undefined, currency: Currency): Html =>
    s === undefined ? html`<span class="muted">${t('notKept')}</span>` : amount(s, currency);
  return html`<div class="table" tabindex="0"><table><caption class="muted">${t('reconCaption')}</caption>
<thead><tr><th scope="col">${t('rail')}</th><th scope="col" class="num">${t('ledgerIn')}</th><th scope="col" class="num">${t('confirmedIn')}</th>
<th scope="col">${t('differenceIn')}</th>
<th scope="col" class="num">${t('ledgerOut')}</th><th scope="col" class="num">${t('confirmedOut')}</th><th scope="col">${t('differenceOut')}</th></tr></thead>
<tbody>${lines.map(
    (l) => html`<tr><th scope="row">${railName(l.rail)} <span class="muted">${l.currency}</span></th>
<td class="num">${amount(l.ledgerIn, l.currency)}</td><td class="num">${confirmedCell(l.confirmedIn, l.currency)}</td>
<td>${difference(l.ledgerIn, l.confirmedIn, l.currency)}</td>
<td class="num">${amount(l.ledgerOut, l.currency)}</td><td class="num">${confirmedCell(l.confirmedOut, l.currency)}</td>
<td>${difference(l.ledgerOut, l.confirmedOut, l.currency)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function registerMoneyPages(router: BackofficeRouter, deps: BackofficeServices): void {
  const page = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    failure?: Failure,
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.money', ctx.lang);
    const db = deps.store.read;
    const from = dayStart(queryParam(request, 'day'), ctx.now);
    const day = new Date(from).toISOString().slice(0, 10);
    const pending = await ctx.call(reply, 'GET /admin/v1/approvals', { query: { state: 'pending' } });
    if (!pending.ok) return readFailed(ctx, reply, pending);
    const approvals = (pending.result as { approvals: ApprovalRow[] }).approvals;
    const [sums, largest, system, applied, lines] = await Promise.all([
      q.merchantBalanceSums(db),
      Promise.all(CURRENCY_CODES.map(async (c) => [c, await q.largestBalances(db, c, LARGEST)] as const)),
      q.moneySystemAccounts(db),
      q.adjustmentsApplied(db, ADJUSTMENTS_SHOWN),
      reconcile(deps, from),
    ]);
    const names = await q.merchantNames(
      db,
      approvals.map((a) => a.merchantId),
    );

    const totalOf = (currency: Currency, kind: string) => sums.find((s) => s.currency === currency && s.kind === kind);
    const held = CURRENCY_CODES.filter((c) => sums.some((s) => s.currency === c));
    const totals =
      held.length === 0
        ? html`<p class="muted">${t('noBalances')}</p>`
        : html`<ul class="counts">${held.map((c) => {
            const available = totalOf(c, 'available');
            return html`<li><span class="muted">${t('availableIn', { currency: c })}</span><br>
<span class="figure">${money(ctx.lang, fromDb(available?.total ?? null), c)}</span><br>
<span class="muted">${t('frozen')}: ${money(ctx.lang, fromDb(totalOf(c, 'frozen')?.total ?? null), c)} ·
${t('awaiting')}: ${money(ctx.lang, fromDb(totalOf(c, 'awaiting_settlement')?.total ?? null), c)}</span><br>
<span class="muted">${t('merchantsHolding', { count: Number(available?.accounts ?? 0) })}</span></li>`;
          })}</ul>`;
    const largestTables = largest
      .filter(([, rows]) => rows.length > 0)
      .map(
        ([
          c,
          rows,
        ]) => html`<div class="table" tabindex="0"><table><caption>${t('largestCaption', { currency: c })}</caption>
<thead><tr><th scope="col">${t('merchant')}</th><th scope="col" class="num">${t('available')}</th></tr></thead>
<tbody>${rows.map(
          (r) =>
            html`<tr><td><a href="/backoffice/merchants/${r.merchant_id ?? ''}">${r.name}</a></td>
<td class="num">${money(ctx.lang, fromDb(r.balance), c)}</td></tr>`,
        )}</tbody></table></div>`,
      );
    const systemTable =
      system.length === 0
        ? html`<p class="muted">${t('noSystem')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('systemCaption')}</caption>
<thead><tr><th scope="col">${t('account')}</th><th scope="col">${t('currency')}</th><th scope="col" class="num">${t('balance')}</th>
<th scope="col">${t('updated')}</th></tr></thead>
<tbody>${system.map(
            (a) => html`<tr><th scope="row">${t(`kind_${a.kind}`)}<br><code>${a.code}</code></th><td>${a.currency}</td>
<td class="num">${money(ctx.lang, fromDb(a.balance), a.currency)}</td><td class="date">${dateTime(ctx.lang, a.updated_at)}</td></tr>`,
          )}</tbody></table></div><p class="muted">${t('systemHint')}</p>`;

    // Decided in one place, the Queues page (its forms, and the requester not offered their own).
    const pendingTable =
      approvals.length === 0
        ? html`<p class="muted">${t('noPending')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('pendingCaption', { count: approvals.length })}</caption>
<thead><tr><th scope="col">${t('merchant')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col">${t('reason')}</th>
<th scope="col">${t('requestedBy')}</th><th scope="col">${t('decision')}</th></tr></thead>
<tbody>${approvals.map(
            (
              a,
            ) => html`<tr><td><a href="/backoffice/merchants/${a.merchantId}">${names.get(a.merchantId) ?? a.merchantId}</a></td>
<td class="num">${decimalMoney(ctx.lang, a.amount, a.currency)}</td><td>${a.reason}</td><td>${a.requestedBy}<br>
<span class="date">${dateTime(ctx.lang, Date.parse(a.createdAt))}</span></td>
<td><span class="badge wait">${t('waiting')}</span> <a href="/backoffice/queues#approvals">${t('decideInQueues')}</a></td></tr>`,
          )}</tbody></table></div>`;
    const appliedTable =
      applied.length === 0
        ? html`<p class="muted">${t('noAdjustments')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('appliedCaption', { count: applied.length })}</caption>
<thead><tr><th scope="col">${t('when')}</th><th scope="col">${t('merchant')}</th><th scope="col" class="num">${t('amount')}</th>
<th scope="col">${t('reason')}</th><th scope="col">${t('approval')}</th></tr></thead>
<tbody>${applied.map(
            (a) => html`<tr class="adjustment"><td class="date">${dateTime(ctx.lang, a.created_at)}</td>
<td>${a.merchant_id === null ? '—' : html`<a href="/backoffice/merchants/${a.merchant_id}">${a.name ?? a.merchant_id}</a>`}</td>
<td class="num">${money(ctx.lang, -fromDb(a.amount), a.currency)}</td><td>${a.memo ?? ''}</td>
<td>${
              a.approval_id === null
                ? html`<span class="muted">${t('belowThreshold')}</span>`
                : t('approvedBy', { requester: a.requested_by_email ?? '—', approver: a.decided_by_email ?? '—' })
            }</td></tr>`,
          )}</tbody></table></div>`;

    const adjustForm = ctx.can('POST /admin/v1/merchants/:merchantId/balance-adjustments')
      ? html`<section class="panel" aria-labelledby="adjust"><h2 id="adjust">${t('adjustTitle')}</h2><p class="muted">${t(
          'adjustHint',
          {
            thresholds:
              Object.entries(deps.config.approvalThreshold)
                .filter(([c]) => isCurrency(c))
                .map(([c, minor]) => money(ctx.lang, minor, c))
                .join(', ') || '—',
          },
        )}</p>
<form method="post" action="/backoffice/money/adjust">${ctx.csrf}<div class="filters">
<div><label for="adj-merchant">${t('merchantId')}</label>
<input type="text" id="adj-merchant" name="merchantId" required maxlength="64"
value="${failure?.form?.get('merchantId') ?? queryParam(request, 'merchant').slice(0, 64)}"></div>
<div><label for="adj-currency">${t('currency')}</label><select id="adj-currency" name="currency">${CURRENCY_CODES.map(
          (c) => html`<option value="${c}"${failure?.form?.get('currency') === c ? html` selected` : ''}>${c}</option>`,
        )}</select></div>
<div><label for="adj-amount">${t('amountSigned')}</label>
<input type="text" id="adj-amount" name="amount" required inputmode="decimal" maxlength="32" value="${failure?.form?.get('amount') ?? ''}"></div>
<div><label for="adj-reason">${t('reason')}</label>
<input type="text" id="adj-reason" name="reason" required maxlength="500" value="${failure?.form?.get('reason') ?? ''}"></div>
</div><button type="submit">${t('adjustButton')}</button></form></section>`
      : html``;

    return ctx.page(reply, {
      status: failure?.status ?? 200,
      title: t('title'),
      section: 'money',
      body: html`<h1>${t('title')}</h1>${doneNotice(request, DONE, (k) => t(`done_${k}`))}${failure === undefined ? '' : errorSummary(failure.message)}
<p><a href="/backoffice/money.csv">${t('export')}</a></p>
<section class="panel" aria-labelledby="m-totals"><h2 id="m-totals">${t('totals')}</h2>${totals}<div class="twocol">${largestTables}</div></section>
<section class="panel" aria-labelledby="m-system"><h2 id="m-system">${t('system')}</h2>${systemTable}</section>
<section class="panel" aria-labelledby="m-adjustments"><h2 id="m-adjustments">${t('adjustments')}</h2>${pendingTable}${appliedTable}</section>
${adjustForm}
<section class="panel" aria-labelledby="m-recon"><h2 id="m-recon">${t('reconciliation', { day })}</h2>
<form method="get" action="/backoffice/money"><div class="filters"><div><label for="recon-day">${t('day')}</label>
<input type="date" id="recon-day" name="day" value="${day}"></div></div>
<button type="submit">${t('show')}</button></form><p class="muted">${t('reconHint')}</p>${reconciliationTable(t, ctx.lang, lines)}</section>`,
    });
  };

  router.get('/money', 'money', (ctx, request, reply) => page(ctx, request, reply));

  router.post('/money/adjust', 'money', async (ctx, request, reply) => {
    const form = formOf(request);
    const outcome = await ctx.call(reply, 'POST /admin/v1/merchants/:merchantId/balance-adjustments', {
      params: { merchantId: (form.get('merchantId') ?? '').trim() },
      body: bodyOfForm(request, ['currency', 'amount', 'reason']),
    });
    if (!outcome.ok) return outcome.forbidden ?? page(ctx, request, reply, { ...outcome, form });
    const state = (outcome.result as { state: 'applied' | 'pending' }).state;
    return seeOther(reply, `/backoffice/money?done=${state}#m-adjustments`);
  });

  router.get('/money.csv', 'money', async (ctx, _request, reply) => {
    const db = deps.store.read;
    const [accounts, system] = await Promise.all([q.merchantAccountsForExport(db), q.moneySystemAccounts(db)]);
    await ctx.record('money.export', {
      targetType: 'route',
      targetId: 'GET /backoffice/money.csv',
      changes: { request: { format: 'csv', merchantAccounts: accounts.length, systemAccounts: system.length } },
    });
    const lines = ['account,merchant_id,merchant_name,currency,kind,balance'];
    for (const a of accounts) {
      lines.push(
        [
          csvCell(`${a.merchant_id ?? ''}/${a.currency}/${a.kind}`),
          csvText(a.merchant_id ?? ''),
          csvText(a.name),
          a.currency,
          a.kind,
          decimalText(fromDb(a.balance), a.currency),
        ].join(','),
      );
    }
    for (const a of system)
      lines.push([csvCell(a.code), '', '', a.currency, a.kind, decimalText(fromDb(a.balance), a.currency)].join(','));
    const filename = `cashgate-money-${new Date(ctx.now).toISOString().slice(0, 10)}.csv`;
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(`${lines.join('\r\n')}\r\n`);
  });
}
