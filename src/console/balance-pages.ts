/**
 * The console's balances: a card per currency, and the ledger statement of one currency over a
 * range of UTC days — every entry of the merchant's three accounts, with each account's opening
 * balance, the period's total and the closing balance, on the page (at most 500 rows) and as CSV
 * (every entry). The sum of the CSV's `amount` column per account equals closing − opening.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, type Html } from '../http/html.js';
import { CURRENCY_CODES, isCurrency, type Currency } from '../money.js';
import { DAY_MS, dayOf, dayRange, dayRangeLabels, errorSummary, textField, type FieldError } from './forms.js';
import type { Language } from '../http/language.js';
import { csvCell, csvText } from './csv.js';
import { translator, type Translator } from '../i18n/messages.js';
import { dateTime, decimalText, money } from './i18n.js';
import { signed } from './order-pages.js';
import type { ConsoleServices } from './plugin.js';
import {
  STATEMENT_ACCOUNTS,
  statementCount,
  statementEntries,
  statementTotals,
  type EntryView,
  type StatementRange,
} from './queries.js';
import { queryParam, type ConsoleContext, type ConsoleRouter } from './router.js';

/** Rows of the statement shown on the page; the CSV has all of them. */
export const PAGE_ROWS = 500;
/** The most rows one CSV carries; a longer range is refused (a cut file would not reconcile). */
export const CSV_MAX_ROWS = 100_000;
const CSV_BATCH = 5_000;
/** The default statement: the last 30 UTC days, today included. */
const DEFAULT_DAYS = 30;

type T = Translator<'console.balances'>;

interface StatementForm {
  currency: string;
  from: string;
  to: string;
}

type Parsed = { range: StatementRange; errors: [] } | { range: undefined; errors: FieldError[] };

function parseStatement(t: T, lang: Language, merchantId: string, form: StatementForm): Parsed {
  const errors: FieldError[] = [];
  const currency = isCurrency(form.currency) ? form.currency : undefined;
  if (currency === undefined) errors.push({ field: 'currency', message: t('badCurrency') });
  const days = dayRange(lang, { from: form.from, to: form.to, required: true });
  errors.push(...days.errors);
  const from = days.range?.from;
  const until = days.range?.until;
  if (errors.length > 0 || currency === undefined || from === undefined || until === undefined) {
    return { range: undefined, errors };
  }
  return { range: { merchantId, currency, from, until }, errors: [] };
}

/** The statement's form as sent, with defaults: the merchant's first currency, the last 30 days. */
function statementForm(request: FastifyRequest, currencies: readonly Currency[], now: number): StatementForm {
  const given = (name: string, fallback: string) =>
    Object.hasOwn((request.query as object | undefined) ?? {}, name) ? queryParam(request, name) : fallback;
  return {
    currency: given('currency', currencies[0] ?? 'BRL'),
    from: given('from', dayOf(now - (DEFAULT_DAYS - 1) * DAY_MS)),
    to: given('to', dayOf(now)),
  };
}

const ACCOUNT_KEYS = STATEMENT_ACCOUNTS;

function balanceCards(
  ctx: ConsoleContext,
  t: T,
  balances: Awaited<ReturnType<ConsoleServices['ledger']['balances']>>,
): Html {
  if (balances.length === 0) return html`<div class="panel"><p>${t('noBalances')}</p></div>`;
  return html`<div class="cards">${balances.map(
    (
      b,
    ) => html`<div class="panel"><h2>${b.currency}</h2><dl><dt>${t('available')}</dt><dd class="num">${money(ctx.lang, b.available, b.currency)}</dd>
<dt>${t('frozen')}</dt><dd class="num">${money(ctx.lang, b.frozen, b.currency)}</dd>
<dt>${t('awaiting_settlement')}</dt><dd class="num">${money(ctx.lang, b.awaitingSettlement, b.currency)}</dd></dl></div>`,
  )}</div>`;
}

function statementFormHtml(
  t: T,
  lang: Language,
  form: StatementForm,
  currencies: readonly Currency[],
  errors: readonly FieldError[],
): Html {
  const error = errors.find((e) => e.field === 'currency');
  const offered = currencies.length > 0 ? currencies : CURRENCY_CODES;
  const query = new URLSearchParams({ currency: form.currency, from: form.from, to: form.to }).toString();
  const download =
    errors.length === 0
      ? html` <a class="button secondary" href="/console/balances/statement.csv?${query}" download>${t('download')}</a>`
      : '';
  return html`<form method="get" action="/console/balances" novalidate><div class="filters">
<div><label for="currency">${t('currency')}</label>${
    error !== undefined ? html`<p class="error" id="currency-error">${error.message}</p>` : ''
  }<select id="currency" name="currency"${
    error !== undefined ? html` aria-invalid="true" aria-describedby="currency-error"` : ''
  }>${offered.map((c) => html`<option value="${c}"${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></div>
<div>${textField({ name: 'from', label: dayRangeLabels(lang).from, type: 'date', value: form.from, errors })}</div>
<div>${textField({ name: 'to', label: dayRangeLabels(lang).to, type: 'date', value: form.to, errors })}</div></div>
<button type="submit">${t('show')}</button>${download}</form>`;
}

async function balancesPage(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { form?: StatementForm; extraErrors?: FieldError[] } = {},
): Promise<FastifyReply> {
  const extraErrors = input.extraErrors ?? [];
  const t = translator('console.balances', ctx.lang);
  const db = deps.store.read;
  const currencies = await deps.ledger.currenciesOf(ctx.merchantId);
  const balances = await deps.ledger.balances(db, ctx.merchantId, currencies);
  const form = input.form ?? statementForm(request, currencies, ctx.now);
  const parsed = parseStatement(t, ctx.lang, ctx.merchantId, form);
  const errors = [...parsed.errors, ...extraErrors];
  let statement: Html = html``;
  if (parsed.range !== undefined && extraErrors.length === 0) {
    const range = parsed.range;
    const [totals, count, entries] = await Promise.all([
      statementTotals(db, range),
      statementCount(db, range),
      statementEntries(db, range, PAGE_ROWS),
    ]);
    const currency = range.currency;
    const summary = html`<div class="table" tabindex="0"><table><caption class="muted">${t('totalsCaption', { from: dateTime(ctx.lang, range.from) })}</caption>
<thead><tr><th>${t('account')}</th><th class="num">${t('opening')}</th><th class="num">${t('period')}</th><th
class="num">${t('closing')}</th></tr></thead><tbody>${ACCOUNT_KEYS.map((kind) => {
      const row = totals.get(kind) ?? { opening: 0n, period: 0n };
      return html`<tr data-account="${kind}"><td>${t(kind)}</td>
<td class="num" data-opening="${decimalText(row.opening, currency)}">${money(ctx.lang, row.opening, currency)}</td>
<td class="num">${signed(ctx.lang, row.period, currency)}</td>
<td class="num" data-closing="${decimalText(row.opening + row.period, currency)}">${money(ctx.lang, row.opening + row.period, currency)}</td></tr>`;
    })}</tbody></table></div>`;
    const capped =
      count > entries.length ? html`<p class="warning">${t('capped', { shown: entries.length, count })}</p>` : '';
    const rows =
      entries.length === 0
        ? html`<p>${t('noEntries')}</p>`
        : html`${capped}<div class="table" tabindex="0"><table><caption class="muted">${t('entriesCaption')}</caption>
<thead><tr><th>${t('time')}</th><th>${t('journalKind')}</th><th>${t('orderId')}</th><th>${t('account')}</th><th
class="num">${t('amount')}</th><th>${t('memo')}</th></tr></thead>
<tbody>${entries.map((e) => entryRow(ctx, t, e))}</tbody></table></div>`;
    statement = html`${summary}${rows}`;
  }
  const formHtml = statementFormHtml(t, ctx.lang, form, currencies, errors);
  return ctx.page(reply, {
    status: errors.length > 0 ? 400 : 200,
    title: t('title'),
    section: 'balances',
    body: html`<h1>${t('title')}</h1>${balanceCards(ctx, t, balances)}
<div class="panel"><h2>${t('statement')}</h2>${errorSummary(ctx.lang, errors)}<p class="muted">${t('statementLead')}</p>${formHtml}${statement}</div>`,
  });
}

function entryRow(ctx: ConsoleContext, t: T, e: EntryView): Html {
  const account = (ACCOUNT_KEYS as readonly string[]).includes(e.account)
    ? t(e.account as (typeof ACCOUNT_KEYS)[number])
    : e.account;
  return html`<tr><td>${dateTime(ctx.lang, e.createdAt)}</td><td class="mono">${e.journalKind}</td><td>${
    e.orderId !== null
      ? html`<a class="mono" href="/console/orders/${encodeURIComponent(e.orderId)}">${e.orderId}</a>`
      : '—'
  }</td><td>${account}</td><td class="num">${signed(ctx.lang, e.amount, e.currency)}</td><td>${e.memo ?? ''}</td></tr>`;
}

export const CSV_HEADER = 'time_utc,entry_id,journal_id,journal_kind,order_id,account,amount,currency,memo';

function csvLine(e: EntryView): string {
  return [
    csvText(new Date(e.createdAt).toISOString()),
    csvText(e.entryId),
    csvText(e.journalId),
    csvText(e.journalKind),
    csvText(e.orderId ?? ''),
    csvText(e.account),
    // The amount is a number: never prefixed, exact decimal text.
    csvCell(decimalText(e.amount, e.currency)),
    csvText(e.currency),
    csvText(e.memo ?? ''),
  ].join(',');
}

async function statementCsv(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const t = translator('console.balances', ctx.lang);
  const db = deps.store.read;
  const form: StatementForm = {
    currency: queryParam(request, 'currency'),
    from: queryParam(request, 'from'),
    to: queryParam(request, 'to'),
  };
  const parsed = parseStatement(t, ctx.lang, ctx.merchantId, form);
  if (parsed.range === undefined) return balancesPage(ctx, deps, request, reply, { form });
  const range = parsed.range;
  const count = await statementCount(db, range);
  if (count > CSV_MAX_ROWS) {
    return balancesPage(ctx, deps, request, reply, {
      form,
      extraErrors: [{ field: 'to', message: t('tooMany', { count, max: CSV_MAX_ROWS }) }],
    });
  }
  const lines = [CSV_HEADER];
  let after: { createdAt: number; entryId: string } | undefined;
  for (;;) {
    const batch = await statementEntries(db, range, CSV_BATCH, after);
    for (const e of batch) lines.push(csvLine(e));
    const last = batch.at(-1);
    if (batch.length < CSV_BATCH || last === undefined || lines.length > CSV_MAX_ROWS) break;
    after = { createdAt: last.createdAt, entryId: last.entryId };
  }
  const filename = `cashgate-statement-${ctx.merchantId}-${range.currency}-${form.from}-${form.to}.csv`;
  return reply
    .code(200)
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(`${lines.join('\r\n')}\r\n`);
}

/** The console's pages for balances and the ledger statement with its CSV export. */
export function registerBalancePages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/balances', (ctx, request, reply) => balancesPage(ctx, deps, request, reply));
  router.get('/console/balances/statement.csv', (ctx, request, reply) => statementCsv(ctx, deps, request, reply));
}
