/**
 * Orders across every merchant: one search box for any id an order is known by (orderId,
 * externalOrderId, the rail's reference, a Pix end-to-end id, an M-Pesa receipt, a transaction
 * hash; one match goes straight to its timeline), filters (merchant, area, kind, status, channel,
 * UTC days, amount range), newest first with keyset paging, and the CSV of the filter (audited,
 * capped). And one order's whole story in time order: the merchant's request, its state changes,
 * ledger journals, rail messages, chain transactions and callbacks with the merchant's answers,
 * personal data masked as the admin routes mask it; its actions (ask the rail again, re-trigger the
 * callback, reveal personal data, settle a payout in doubt by hand) are the admin routes themselves.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { maskPersonalData } from '../access/redact.js';
import { csvCell, csvText } from '../console/csv.js';
import { badge, dayRange, type FieldError } from '../console/forms.js';
import { SUCCESS_STATUS } from '../console/queries.js';
import { dateTime, decimalText, money } from '../console/i18n.js';
import { queryParam, seeOther } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import { translator, type Translator } from '../i18n/messages.js';
import { MAX_MINOR, parseDecimal } from '../money.js';
import { eventsOfOrder, findSettledByHand, type OrderRow } from '../orders/queries.js';
import { isFinal, statusText, TRANSFER_STATUS } from '../orders/state-machine.js';
import { chainView } from '../rails/chain/chain-view.js';
import { railMessagesOfOrder } from '../rails/queries.js';
import type { OrderArea, OrderKind } from '../store/schema.js';
import {
  backofficeOrder,
  backofficeOrders,
  createRequestOf,
  orderCallbackHistory,
  orderJournals,
  ordersKnownBy,
  type BackofficeOrderCursor,
  type BackofficeOrderFilter,
} from './queries.js';
import {
  bodyOfForm,
  type AdminRouteKey,
  type BackofficeContext,
  type BackofficeRouter,
  type CallOutcome,
} from './router.js';
import type { BackofficeServices } from './services.js';
import { doneNotice, errorSummary } from './view.js';

export const PAGE_SIZE = 50;
/** The most rows one CSV export holds (the page says so). */
export const CSV_MAX_ROWS = 100_000;
const CSV_BATCH = 1_000;

const AREAS: readonly OrderArea[] = ['ken', 'bra', 'exchange', 'cashier'];
const KINDS: readonly OrderKind[] = ['collection', 'transfer', 'fiat_to_token', 'token_to_fiat'];
const FIELDS = ['q', 'merchant', 'area', 'kind', 'status', 'channel', 'from', 'to', 'min', 'max'] as const;
type Field = (typeof FIELDS)[number];
type Filters = Record<Field, string>;

const DONE = ['asked', 'retriggered', 'settled'] as const;
type Done = (typeof DONE)[number];

type T = Translator<'backoffice.orders'>;

function filtersOf(request: FastifyRequest): Filters {
  const f = {} as Filters;
  for (const name of FIELDS) f[name] = queryParam(request, name).trim();
  return f;
}

function linkWith(path: string, params: Record<string, string>): string {
  const kept = Object.entries(params).filter(([, v]) => v !== '');
  return kept.length === 0 ? path : `${path}?${new URLSearchParams(kept).toString()}`;
}

/** An amount field as hundredths: plain decimal text, at most two places, not negative. */
function hundredths(value: string): bigint | undefined {
  const amount = parseDecimal(value, 2);
  return amount === undefined || amount > MAX_MINOR ? undefined : amount;
}

/** The filters as the query reads them, or the problems, each naming its field and the rule. */
function parseFilters(lang: Language, t: T, f: Filters): { filter: BackofficeOrderFilter; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const filter: BackofficeOrderFilter = {};
  if (f.q.length > 128) errors.push({ field: 'q', message: t('badQuery') });
  if (f.merchant !== '') {
    if (/^[A-Za-z0-9_.-]{1,40}$/.test(f.merchant)) filter.merchantId = f.merchant;
    else errors.push({ field: 'merchant', message: t('badMerchant') });
  }
  if (f.area !== '') {
    if ((AREAS as readonly string[]).includes(f.area)) filter.area = f.area as OrderArea;
    else errors.push({ field: 'area', message: t('badArea') });
  }
  if (f.kind !== '') {
    if ((KINDS as readonly string[]).includes(f.kind)) filter.kind = f.kind as OrderKind;
    else errors.push({ field: 'kind', message: t('badKind') });
  }
  if (f.status !== '') {
    if (/^\d{1,3}$/.test(f.status)) filter.status = Number(f.status);
    else errors.push({ field: 'status', message: t('badStatus') });
  }
  if (f.channel !== '') {
    if (/^[A-Za-z0-9_]{1,16}$/.test(f.channel)) filter.channel = f.channel.toUpperCase();
    else errors.push({ field: 'channel', message: t('badChannel') });
  }
  const days = dayRange(lang, { from: f.from, to: f.to, required: false });
  errors.push(...days.errors);
  filter.from = days.range?.from;
  filter.until = days.range?.until;
  for (const [field, key] of [
    ['min', 'amountMin'],
    ['max', 'amountMax'],
  ] as const) {
    if (f[field] === '') continue;
    const amount = hundredths(f[field]);
    if (amount === undefined) errors.push({ field, message: t('badAmount', { field: t(field) }) });
    else filter[key] = amount;
  }
  if (filter.amountMin !== undefined && filter.amountMax !== undefined && filter.amountMax < filter.amountMin)
    errors.push({ field: 'max', message: t('amountOrder', { field: t('max'), other: t('min') }) });
  return { filter, errors };
}

function cursorOf(request: FastifyRequest): BackofficeOrderCursor | undefined | null {
  const raw = queryParam(request, 'before');
  if (raw === '') return undefined;
  const match = /^(\d{1,16})\.([A-Za-z0-9_.-]{1,64})$/.exec(raw);
  return match === null ? null : { createdAt: Number(match[1]), id: match[2] ?? '' };
}

function areaName(t: T, area: string): string {
  return (AREAS as readonly string[]).includes(area) ? t(`area_${area as OrderArea}`) : area;
}

function kindName(t: T, kind: string): string {
  return (KINDS as readonly string[]).includes(kind) ? t(`kind_${kind as OrderKind}`) : kind;
}

function statusBadge(kind: OrderKind, status: number): Html {
  const tone = !isFinal(kind, status) ? 'wait' : status === SUCCESS_STATUS[kind] ? 'ok' : 'bad';
  return badge(`${statusText(kind, status)} (${status})`, tone);
}

const amountOf = (lang: Language, order: OrderRow, minor: number | null): string =>
  minor === null ? '—' : money(lang, BigInt(minor), order.currency);

function shortUtc(ms: number): Html {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}</time>`;
}

function field(
  name: Field,
  label: string,
  value: string,
  errors: readonly FieldError[],
  type = 'text',
  extra: Html | '' = '',
): Html {
  const error = errors.find((e) => e.field === name);
  return html`<div><label for="f-${name}">${label}</label>${
    error === undefined ? '' : html`<p class="error" id="f-${name}-error">${error.message}</p>`
  }<input type="${type}" id="f-${name}" name="${name}" value="${value}"${
    error === undefined ? '' : html` aria-invalid="true" aria-describedby="f-${name}-error"`
  }${extra}></div>`;
}

function select(
  name: Field,
  label: string,
  value: string,
  choices: readonly [string, string][],
  errors: readonly FieldError[],
): Html {
  const error = errors.find((e) => e.field === name);
  return html`<div><label for="f-${name}">${label}</label>${
    error === undefined ? '' : html`<p class="error" id="f-${name}-error">${error.message}</p>`
  }<select id="f-${name}" name="${name}"${error === undefined ? '' : html` aria-invalid="true" aria-describedby="f-${name}-error"`}>${choices.map(
    ([v, l]) => html`<option value="${v}"${v === value ? html` selected` : ''}>${l}</option>`,
  )}</select></div>`;
}

// --- the list

async function listPage(
  ctx: BackofficeContext,
  deps: BackofficeServices,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const t = translator('backoffice.orders', ctx.lang);
  const f = filtersOf(request);
  const { filter, errors } = parseFilters(ctx.lang, t, f);
  const before = cursorOf(request);
  if (before === null) errors.push({ field: 'q', message: t('badPage') });
  let orders: OrderRow[] = [];
  let older: string | undefined;
  if (errors.length === 0) {
    if (f.q !== '') filter.ids = await ordersKnownBy(deps.store.read, f.q);
    const rows = await backofficeOrders(deps.store.read, filter, { before: before ?? undefined, limit: PAGE_SIZE + 1 });
    // A search that names one order goes to its story.
    if (f.q !== '' && rows.length === 1 && before === undefined && rows[0] !== undefined)
      return seeOther(reply, `/backoffice/orders/${encodeURIComponent(rows[0].id)}`);
    orders = rows.slice(0, PAGE_SIZE);
    const last = orders.at(-1);
    if (rows.length > PAGE_SIZE && last !== undefined)
      older = linkWith('/backoffice/orders', { ...f, before: `${last.created_at}.${last.id}` });
  }
  const any: [string, string] = ['', t('any')];
  const form = html`<form method="get" action="/backoffice/orders" class="panel" novalidate>
<div><label for="f-q">${t('search')}</label><p class="muted" id="f-q-hint">${t('searchHint')}</p>${
    errors.some((e) => e.field === 'q')
      ? html`<p class="error" id="f-q-error">${errors.find((e) => e.field === 'q')?.message ?? ''}</p>`
      : ''
  }<input type="search" id="f-q" name="q" value="${f.q}" maxlength="128" aria-describedby="f-q-hint"></div>
<div class="filters">${field('merchant', t('merchant'), f.merchant, errors)}
${select('area', t('area'), f.area, [any, ...AREAS.map((a): [string, string] => [a, areaName(t, a)])], errors)}
${select('kind', t('kind'), f.kind, [any, ...KINDS.map((k): [string, string] => [k, kindName(t, k)])], errors)}
${field('status', t('status'), f.status, errors, 'text', html` inputmode="numeric" maxlength="3"`)}
${field('channel', t('channel'), f.channel, errors, 'text', html` maxlength="16"`)}
${field('from', t('from'), f.from, errors, 'date')}${field('to', t('to'), f.to, errors, 'date')}
${field('min', t('min'), f.min, errors, 'text', html` inputmode="decimal"`)}${field('max', t('max'), f.max, errors, 'text', html` inputmode="decimal"`)}</div>
<p class="muted">${t('filterHint')}</p>
<button type="submit">${t('apply')}</button> <a class="button secondary" href="/backoffice/orders">${t('reset')}</a></form>`;
  const filtered = Object.values(f).some((v) => v !== '');
  const table =
    orders.length === 0
      ? html`<p>${errors.length > 0 ? '' : f.q !== '' ? t('notFound') : filtered || before !== undefined ? t('empty') : t('emptyAll')}</p>`
      : html`<div class="table" tabindex="0"><table id="orders"><caption class="muted">${t('caption')}</caption><thead><tr>
<th scope="col">${t('createdUtc')}</th><th scope="col">${t('orderId')}</th><th scope="col">${t('merchant')}</th><th scope="col">${t('externalOrderId')}</th>
<th scope="col">${t('areaKind')}</th><th scope="col">${t('channel')}</th><th scope="col" class="num">${t('amount')}</th>
<th scope="col">${t('status')}</th></tr></thead>
<tbody>${orders.map(
          (o) => html`<tr><td class="date">${shortUtc(o.created_at)}</td><td>
<a class="mono" href="/backoffice/orders/${encodeURIComponent(o.id)}">${o.id}</a></td>
<td><a class="mono" href="/backoffice/merchants/${encodeURIComponent(o.merchant_id)}">${o.merchant_id}</a></td><td class="mono">${o.external_order_id}</td>
<td>${areaName(t, o.area)} / ${kindName(t, o.kind)}</td><td>${o.channel_type}</td><td class="num">${amountOf(ctx.lang, o, o.amount)}</td>
<td>${statusBadge(o.kind, o.status)}</td></tr>`,
        )}</tbody></table></div>`;
  const pager =
    older !== undefined || before !== undefined
      ? html`<nav class="pager" aria-label="${t('paging')}">${
          before !== undefined ? html`<a href="${linkWith('/backoffice/orders', f)}">${t('newest')}</a> ` : ''
        }${older !== undefined ? html`<a href="${older}">${t('older')}</a>` : ''}</nav>`
      : '';
  const exportLink =
    errors.length === 0 && orders.length > 0
      ? html`<p><a class="button secondary" id="orders-csv" href="${linkWith('/backoffice/orders.csv', f)}" download>${t('download')}</a>
<span class="muted">${t('downloadHint', { max: CSV_MAX_ROWS })}</span></p>`
      : '';
  return ctx.page(reply, {
    status: errors.length > 0 ? 400 : 200,
    title: t('title'),
    section: 'orders',
    body: html`<h1>${t('title')}</h1>${
      errors.length === 0
        ? ''
        : html`<div class="summary" role="alert" tabindex="-1">${errors.map((e) => html`<p class="error">${e.message}</p>`)}</div>`
    }${form}<div class="panel">${exportLink}${table}${pager}</div>`,
  });
}

const CSV_HEADER =
  'created_utc,order_id,merchant_id,external_order_id,area,kind,channel,status_code,status,currency,amount,fee,actual_amount,pay_time_utc,complete_time_utc';

const isoOrEmpty = (ms: number | null): string => (ms === null ? '' : new Date(ms).toISOString());

function csvLine(o: OrderRow): string {
  const amount = (minor: number | null) => (minor === null ? '' : csvCell(decimalText(minor, o.currency)));
  return [
    csvText(isoOrEmpty(o.created_at)),
    csvText(o.id),
    csvText(o.merchant_id),
    csvText(o.external_order_id),
    csvText(o.area),
    csvText(o.kind),
    csvText(o.channel_type),
    csvCell(String(o.status)),
    csvText(statusText(o.kind, o.status)),
    csvText(o.currency),
    amount(o.amount),
    amount(o.fee),
    amount(o.actual_amount),
    csvText(isoOrEmpty(o.pay_time)),
    csvText(isoOrEmpty(o.complete_time)),
  ].join(',');
}

/** The CSV's lines, newest first, a batch at a time, at most CSV_MAX_ROWS rows. */
async function* csvLines(deps: BackofficeServices, filter: BackofficeOrderFilter): AsyncGenerator<string> {
  yield `${CSV_HEADER}\r\n`;
  let before: BackofficeOrderCursor | undefined;
  let written = 0;
  while (written < CSV_MAX_ROWS) {
    const batch = await backofficeOrders(deps.store.read, filter, {
      before,
      limit: Math.min(CSV_BATCH, CSV_MAX_ROWS - written),
    });
    if (batch.length > 0) yield `${batch.map(csvLine).join('\r\n')}\r\n`;
    written += batch.length;
    const last = batch.at(-1);
    if (batch.length < CSV_BATCH || last === undefined) return;
    before = { createdAt: last.created_at, id: last.id };
  }
}

// --- the timeline

interface Moment {
  at: number;
  /** Ties at one moment keep the story's order: request, state change, journal, rail, chain, callback. */
  rank: number;
  kind: string;
  body: Html;
}

/** A JSON value for the page, masked as the admin routes mask it for a role without personal_data.read. */
function shownJson(ctx: BackofficeContext, value: unknown): string {
  return JSON.stringify(ctx.holds('personal_data.read') ? value : maskPersonalData(value), null, 2);
}

function parsedJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A signed string (`k=v&k=v`, keys sorted) as its members, so that they can be masked by name. */
function signedMembers(text: string): Record<string, string> {
  const members: Record<string, string> = {};
  let last: string | undefined;
  for (const part of text.split('&')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(part);
    if (match !== null) {
      last = match[1] ?? '';
      members[last] = match[2] ?? '';
    } else if (last !== undefined) members[last] = `${members[last] ?? ''}&${part}`;
  }
  return members;
}

function pre(text: string): Html {
  return html`<details><summary>${text.length > 80 ? `${text.slice(0, 77).replace(/\s+/g, ' ')}…` : text.replace(/\s+/g, ' ')}</summary>
<pre class="mono">${text}</pre></details>`;
}

interface Revealed {
  details: unknown;
}

async function orderPage(
  ctx: BackofficeContext,
  deps: BackofficeServices,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: { failure?: Extract<CallOutcome, { ok: false }>; revealed?: Revealed } = {},
): Promise<FastifyReply> {
  const t = translator('backoffice.orders', ctx.lang);
  const lang = ctx.lang;
  const orderId = (request.params as { orderId?: string }).orderId ?? '';
  const db = deps.store.read;
  const order = orderId.length > 64 ? undefined : await backofficeOrder(db, orderId);
  if (order === undefined) return ctx.notFound(reply);
  const [createRequest, events, journals, railMessages, chain, callbacks, byHand] = await Promise.all([
    createRequestOf(db, order),
    eventsOfOrder(db, order.id),
    orderJournals(db, order.id),
    railMessagesOfOrder(db, order.id),
    order.area === 'exchange' || order.area === 'cashier' ? chainView(db, order.id, order.rail_ref) : undefined,
    orderCallbackHistory(db, order.id),
    order.kind === 'transfer' ? findSettledByHand(db, order.id) : undefined,
  ]);
  const moments: Moment[] = [];
  const push = (at: number | null, rank: number, kind: string, body: Html) => {
    if (at !== null) moments.push({ at, rank, kind, body });
  };

  // The merchant's request: the request log's record (a debug-mode key), else the order's create as stored.
  if (createRequest !== undefined) {
    const members = signedMembers(createRequest.signed_string ?? '');
    // Logged as its answer left, after the order was written: the story starts with it all the same.
    push(
      Math.min(createRequest.created_at, order.created_at),
      0,
      t('tlRequest'),
      html`<p>${createRequest.method} <code>${createRequest.path}</code> · HTTP ${createRequest.http_status} · ${t('code')} <code>${createRequest.code}</code>${
        createRequest.msg_en === '' ? '' : html` · ${createRequest.msg_en}`
      }</p><p class="muted">${t('fromRequestLog', { requestId: createRequest.request_id })}</p>${pre(shownJson(ctx, members))}`,
    );
  } else {
    const asked = {
      externalOrderId: order.external_order_id,
      channelType: order.channel_type,
      payType: order.pay_type,
      currency: order.currency,
      amount: decimalText(order.amount, order.currency),
      notifyUrl: order.notify_url,
      returnUrl: order.return_url,
      remark: order.remark,
      details: parsedJson(order.details),
    };
    push(
      order.created_at,
      0,
      t('tlRequest'),
      html`<p class="muted">${t('asStored')}</p>${pre(shownJson(ctx, asked))}
<p>${t('createResult')}</p>${pre(shownJson(ctx, parsedJson(order.create_result)))}`,
    );
  }
  for (const e of events) {
    push(
      e.at,
      1,
      t('tlState'),
      html`<p>${e.from_status === null ? '—' : statusBadge(order.kind, e.from_status)} → ${statusBadge(order.kind, e.to_status)}
· <code>${e.event}</code> · ${t('source')} ${e.source}</p>`,
    );
  }
  for (const j of journals) {
    push(
      j.created_at,
      2,
      t('tlJournal'),
      html`<p><code>${j.kind}</code>${j.memo === null ? '' : html` · ${j.memo}`}</p><div class="table" tabindex="0"><table><thead><tr>
<th scope="col">${t('account')}</th><th scope="col" class="num">${t('amount')}</th></tr></thead><tbody>${j.entries.map(
        (e) =>
          html`<tr><td class="mono">${e.account_code}</td><td class="num">${money(lang, BigInt(e.amount), e.currency)}</td></tr>`,
      )}</tbody></table></div>`,
    );
  }
  for (const m of railMessages) {
    const exchanged = [m.request, m.response].map(parsedJson).filter((part) => part !== null);
    push(
      m.at,
      3,
      m.direction === 'out' ? t('tlRailOut', { rail: m.rail }) : t('tlRailIn', { rail: m.rail }),
      html`<p><code>${m.endpoint}</code>${m.http_status === null ? '' : html` · HTTP ${m.http_status}`}${
        m.code === null ? '' : html` · ${t('code')} <code>${m.code}</code>`
      }${
        m.ref === null ? '' : html` · ${t('ref')} <code>${m.ref}</code>`
      }${m.disposition === null ? '' : html` · ${m.disposition}`}${m.duration_ms === null ? '' : html` · ${m.duration_ms} ms`}</p>${
        exchanged.length === 0 ? '' : pre(exchanged.map((part) => shownJson(ctx, part)).join('\n'))
      }`,
    );
  }
  if (chain !== undefined) {
    const send = chain.send;
    if (send !== null) {
      for (const a of send.attempts) {
        push(
          a.createdAt,
          4,
          t('tlChainSend', { chain: send.chain }),
          html`<p>${t('txHash')} <code>${a.txHash}</code> · ${a.outcome ?? t('open')}</p><p class="muted">${t(
            'sendState',
            {
              state: send.state,
              to: send.to,
              units: send.units,
            },
          )}${send.failure === null ? '' : ` · ${send.failure}`}</p>`,
        );
      }
      if (send.attempts.length === 0)
        push(
          send.updatedAt,
          4,
          t('tlChainSend', { chain: send.chain }),
          html`<p class="muted">${t('sendState', { state: send.state, to: send.to, units: send.units })}</p>`,
        );
    }
    for (const d of chain.deposits) {
      push(
        d.seenAt,
        4,
        t('tlChainDeposit', { chain: d.chain }),
        html`<p>${t('txHash')} <code>${d.txHash}</code> · ${d.state}</p>
<p class="muted">${t('depositFrom', { from: d.from, units: d.units, block: d.blockNumber })}</p>`,
      );
    }
  }
  for (const e of callbacks.events) {
    push(
      e.created_at,
      5,
      t('tlCallback'),
      html`<p>${e.trigger === 'manual' ? t('manual') : t('automatic')} · ${e.state} · ${e.target_url ?? t('noTarget')}
· notify_id <code>${e.notify_id}</code></p>${pre(shownJson(ctx, parsedJson(e.payload)))}`,
    );
  }
  for (const a of callbacks.attempts) {
    push(
      a.started_at,
      6,
      t('tlAttempt', { n: a.attempt_no }),
      html`<p>${a.outcome} · ${a.http_status === null ? t('noAnswer') : html`HTTP ${a.http_status}`} · ${a.latency_ms} ms${
        a.error === null ? '' : html` · ${a.error}`
      }</p>${a.response_excerpt === null ? '' : html`<p>${t('merchantAnswer')}</p>${pre(a.response_excerpt)}`}`,
    );
  }
  if (byHand !== undefined) {
    push(
      byHand.settled_at,
      7,
      t('tlSettledByHand'),
      html`<p><strong>${t('settledByHandText', { outcome: byHand.outcome, by: byHand.settled_by, from: byHand.from_status })}</strong></p>
<p>${t('reason')}: ${byHand.reason}</p>`,
    );
  }
  moments.sort((a, b) => a.at - b.at || a.rank - b.rank);

  // The actions, each only when the role may call its admin route.
  const base = `/backoffice/orders/${encodeURIComponent(order.id)}`;
  const actions: Html[] = [];
  if (ctx.can('POST /admin/v1/orders/:orderId/rail-query'))
    actions.push(
      html`<form method="post" action="${base}/rail-query">${ctx.csrf}<button type="submit" class="secondary">${t('askRail')}</button></form>`,
    );
  if (ctx.can('POST /admin/v1/orders/:orderId/callbacks'))
    actions.push(
      html`<form method="post" action="${base}/callbacks">${ctx.csrf}<button type="submit" class="secondary">${t('retrigger')}</button></form>`,
    );
  if (ctx.can('GET /admin/v1/orders/:orderId/personal-data'))
    actions.push(
      html`<form method="post" action="${base}/personal-data">${ctx.csrf}<button type="submit" class="secondary">${t('reveal')}</button></form>`,
    );
  const inDoubt =
    order.kind === 'transfer' &&
    (order.status === TRANSFER_STATUS.accepted || order.status === TRANSFER_STATUS.processing);
  const settleForm =
    inDoubt && ctx.can('POST /admin/v1/orders/:orderId/settle-by-hand')
      ? html`<section class="panel" aria-labelledby="settle"><h2 id="settle">${t('settleTitle')}</h2><p class="muted">${t('settleHint')}</p>
<form method="post" action="${base}/settle-by-hand">${ctx.csrf}<label for="outcome">${t('outcome')}</label><select id="outcome" name="outcome">
<option value="paid">${t('outcomePaid')}</option><option value="failed">${t('outcomeFailed')}</option></select>
<label for="settle-reason">${t('reason')}</label><input type="text" id="settle-reason" name="reason" required maxlength="500">
<label for="confirm">${t('confirm', { orderId: order.id })}</label><input type="text" id="confirm" name="confirm" required maxlength="64" autocomplete="off">
<button type="submit" class="danger">${t('settle')}</button></form></section>`
      : '';
  const revealed =
    extra.revealed === undefined
      ? ''
      : html`<section class="panel" aria-labelledby="revealed"><h2 id="revealed">${t('revealedTitle')}</h2><p class="muted">${t('revealedHint')}</p>
<div class="table" tabindex="0"><pre class="mono">${JSON.stringify(extra.revealed.details, null, 2)}</pre></div></section>`;
  const flag =
    byHand === undefined
      ? ''
      : html`<div class="summary" role="note"><p>
<strong>${t('settledByHandFlag', { outcome: byHand.outcome, date: dateTime(lang, byHand.settled_at), by: byHand.settled_by })}</strong></p><p>${t(
          'reason',
        )}: ${byHand.reason}</p></div>`;
  const title = t('orderTitle', { orderId: order.id });
  const dl = (label: string, value: Html | string) => html`<dt>${label}</dt><dd>${value}</dd>`;
  const code = (value: string | null) => (value === null ? '—' : html`<code>${value}</code>`);
  const merchantLink = html`<a class="mono" href="/backoffice/merchants/${encodeURIComponent(order.merchant_id)}">${order.merchant_id}</a>`;
  return ctx.page(reply, {
    status: extra.failure?.status ?? 200,
    title,
    section: 'orders',
    body: html`<p><a href="/backoffice/orders">${t('backToOrders')}</a></p><h1>${title}</h1>${doneNotice<Done>(request, DONE, (k) => t(`done_${k}`))}${
      extra.failure === undefined ? '' : errorSummary(extra.failure.message)
    }${flag}
<div class="panel"><dl>${dl(t('merchant'), merchantLink)}
${dl(t('externalOrderId'), html`<code>${order.external_order_id}</code>`)}${dl(t('areaKind'), `${areaName(t, order.area)} / ${kindName(t, order.kind)}`)}
${dl(t('channel'), order.channel_type)}${dl(t('status'), statusBadge(order.kind, order.status))}${dl(t('amount'), amountOf(lang, order, order.amount))}
${dl(t('fee'), amountOf(lang, order, order.fee))}${dl(t('actualAmount'), amountOf(lang, order, order.actual_amount))}
${dl(t('railRef'), code(order.rail_ref))}${dl(t('channelOrderId'), code(order.channel_order_id))}
${dl(t('created'), dateTime(lang, order.created_at))}${dl(t('updated'), dateTime(lang, order.updated_at))}</dl>
${actions.length === 0 ? '' : html`<div class="actions">${actions}</div>`}</div>${revealed}${settleForm}
<section class="panel" aria-labelledby="timeline"><h2 id="timeline">${t('timeline')}</h2><p class="muted">${
      ctx.holds('personal_data.read') ? t('unmaskedHint') : t('maskedHint')
    }</p><ol class="timeline">${moments.map(
      (m) =>
        html`<li><p><span class="kind">${m.kind}</span> · <span class="muted">${dateTime(lang, m.at)}</span></p>${m.body}</li>`,
    )}</ol></section>`,
  });
}

export function registerOrderPages(router: BackofficeRouter, deps: BackofficeServices): void {
  router.get('/orders', 'orders', (ctx, request, reply) => listPage(ctx, deps, request, reply));

  router.get('/orders.csv', 'orders', async (ctx, request, reply) => {
    const t = translator('backoffice.orders', ctx.lang);
    const f = filtersOf(request);
    const { filter, errors } = parseFilters(ctx.lang, t, f);
    if (errors.length > 0) return listPage(ctx, deps, request, reply);
    if (f.q !== '') filter.ids = await ordersKnownBy(deps.store.read, f.q);
    const recorded = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== ''));
    await ctx.record('orders.export', { changes: { request: recorded } });
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="cashgate-orders-${new Date(ctx.now).toISOString().slice(0, 10)}.csv"`,
      )
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(Readable.from(csvLines(deps, filter)));
  });

  router.get('/orders/:orderId', 'orders', (ctx, request, reply) => orderPage(ctx, deps, request, reply));

  const act =
    (route: AdminRouteKey, fields: readonly string[], done: Done) =>
    async (ctx: BackofficeContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const orderId = (request.params as { orderId?: string }).orderId ?? '';
      const outcome = await ctx.call(reply, route, {
        params: { orderId },
        ...(fields.length === 0 ? {} : { body: bodyOfForm(request, fields) }),
      });
      if (!outcome.ok) return outcome.forbidden ?? orderPage(ctx, deps, request, reply, { failure: outcome });
      return seeOther(reply, `/backoffice/orders/${encodeURIComponent(orderId)}?done=${done}`);
    };
  router.post('/orders/:orderId/rail-query', 'orders', act('POST /admin/v1/orders/:orderId/rail-query', [], 'asked'));
  router.post(
    '/orders/:orderId/callbacks',
    'orders',
    act('POST /admin/v1/orders/:orderId/callbacks', [], 'retriggered'),
  );
  router.post(
    '/orders/:orderId/settle-by-hand',
    'orders',
    act('POST /admin/v1/orders/:orderId/settle-by-hand', ['outcome', 'reason', 'confirm'], 'settled'),
  );
  // The revealed data is on the page answered to this POST only: never stored, never behind a link.
  router.post('/orders/:orderId/personal-data', 'orders', async (ctx, request, reply) => {
    const orderId = (request.params as { orderId?: string }).orderId ?? '';
    const outcome = await ctx.call(reply, 'GET /admin/v1/orders/:orderId/personal-data', { params: { orderId } });
    if (!outcome.ok) return outcome.forbidden ?? orderPage(ctx, deps, request, reply, { failure: outcome });
    return orderPage(ctx, deps, request, reply, {
      revealed: { details: (outcome.result as { details: unknown }).details },
    });
  });
}
