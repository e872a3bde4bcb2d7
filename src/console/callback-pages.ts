/**
 * The console's callback pages: the unified callback address, test callbacks sent at once, the log
 * of every attempt across orders, re-triggering failed callbacks in bulk, and the callback panel of
 * an order's detail page with its own re-trigger.
 */
import { Value } from '@sinclair/typebox/value';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OperatorError } from '../admin/failures.js';
import * as q from '../callbacks/queries.js';
import {
  redactUrl,
  toAttemptView,
  toEventView,
  type CallbackAttemptView,
  type CallbackEventView,
} from '../callbacks/service.js';
import { TEST_CALLBACK_KIND } from '../callbacks/test-callbacks.js';
import { html, type Html } from '../http/html.js';
import { CallbackUrl } from '../merchants/schemas.js';
import {
  badge,
  dayRange,
  dayRangeLabels,
  dayStart,
  errorSummary,
  notice,
  textField,
  type FieldError,
} from './forms.js';
import { translator, type Translator, type MessageKey, type PlainKey } from '../i18n/messages.js';
import { dateTime } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import { merchantOrder } from './queries.js';
import { formOf, queryParam, seeOther, type ConsoleContext, type ConsoleRouter } from './router.js';

/** Attempts per page of the log. */
export const LOG_PAGE_SIZE = 50;
/** Orders re-triggered by one bulk submission at most. */
export const RETRIGGER_CAP = 500;
/** Characters of a response excerpt shown in a table cell (the rest behind a disclosure). */
const EXCERPT_CHARS = 120;
/** Events without a target listed under the log. */
const NO_TARGET_SHOWN = 10;

type T = Translator<'console.callbacks'>;

/** The callback events merchants filter by (the spec's event kinds), as the order kinds that send them. */
const EVENTS = {
  payment: { text: 'eventPayment', kinds: ['ken.collection', 'bra.collection', 'cashier.collection'] },
  transfer: { text: 'eventTransfer', kinds: ['ken.transfer', 'bra.transfer'] },
  exchange: { text: 'eventExchange', kinds: ['exchange.fiat_to_token', 'exchange.token_to_fiat'] },
  test: { text: 'eventTest', kinds: [TEST_CALLBACK_KIND] },
} as const satisfies Record<string, { text: MessageKey<'console.callbacks'>; kinds: readonly string[] }>;
type EventName = keyof typeof EVENTS;

function isEventName(value: string): value is EventName {
  return Object.hasOwn(EVENTS, value);
}

/** The event filter's select. */
function eventSelect(t: T, name: string, value: string, error: FieldError | undefined): Html {
  return html`<label for="${name}">${t('event')}</label>${
    error !== undefined ? html`<p class="error" id="${name}-error">${error.message}</p>` : ''
  }<select id="${name}" name="${name}"${
    error !== undefined ? html` aria-invalid="true" aria-describedby="${name}-error"` : ''
  }><option value="">${t('anyEvent')}</option>${(Object.keys(EVENTS) as EventName[]).map(
    (e) => html`<option value="${e}"${e === value ? html` selected` : ''}>${t(EVENTS[e].text)}</option>`,
  )}</select>`;
}

/** The order ids an externalOrderId filter narrows to (undefined: no such filter). */
async function externalScope(
  deps: ConsoleServices,
  merchantId: string,
  external: string,
): Promise<string[] | undefined> {
  return external === '' ? undefined : q.ordersWithExternalId(deps.store.read, merchantId, external);
}

/** "next retry at …" when this attempt is its event's latest and the outbox will try again. */
function nextRetry(
  t: T,
  lang: ConsoleContext['lang'],
  attempt: { attemptNo: number },
  event: { state: string; attempts: number; nextAttemptAt: number | null } | undefined,
): Html {
  if (event === undefined || event.state !== 'pending' || event.nextAttemptAt === null) return html``;
  if (attempt.attemptNo !== event.attempts) return html``;
  return html`<br><span class="retry">${t('nextRetry', { time: dateTime(lang, event.nextAttemptAt) })}</span>`;
}
type Tone = 'ok' | 'bad' | 'wait' | 'plain';

const OUTCOME_TONE: Record<string, Tone> = {
  delivered: 'ok',
  failed: 'bad',
  refused: 'bad',
  interrupted: 'wait',
  pending: 'wait',
  delivering: 'wait',
  no_target: 'plain',
};

function outcomeBadge(t: T, outcome: string): Html {
  const known = outcome in OUTCOME_TONE ? (outcome as PlainKey<'console.callbacks'>) : undefined;
  return badge(known === undefined ? outcome : t(known), OUTCOME_TONE[outcome] ?? 'plain');
}

function triggerText(t: T, trigger: 'automatic' | 'manual', orderKind: string): string {
  return orderKind === TEST_CALLBACK_KIND ? `${t('test')} · ${t(trigger)}` : t(trigger);
}

/** The first characters of a response, with the whole of it (still text) behind a disclosure. */
function excerptCell(t: T, excerpt: string | null): Html {
  if (excerpt === null || excerpt === '') return html`${t('none')}`;
  if (excerpt.length <= EXCERPT_CHARS) return html`<code>${excerpt}</code>`;
  return html`<details><summary><code>${excerpt.slice(0, EXCERPT_CHARS)}…</code></summary><pre>${excerpt}</pre></details>`;
}

function isCallbackUrl(value: string): boolean {
  return Value.Check(CallbackUrl, value);
}

interface LogQuery {
  failedOnly: boolean;
  orderId: string;
  external: string;
  event: string;
  from: string;
  to: string;
  before: string;
}

function logQueryOf(request: FastifyRequest): LogQuery {
  return {
    failedOnly: queryParam(request, 'failed') === '1',
    orderId: queryParam(request, 'order').trim().slice(0, 64),
    external: queryParam(request, 'external').trim().slice(0, 64),
    event: queryParam(request, 'event').slice(0, 16),
    from: queryParam(request, 'from').slice(0, 10),
    to: queryParam(request, 'to').slice(0, 10),
    before: queryParam(request, 'before').slice(0, 120),
  };
}

function logLink(query: LogQuery, before?: string): string {
  const params = new URLSearchParams();
  if (query.failedOnly) params.set('failed', '1');
  if (query.orderId !== '') params.set('order', query.orderId);
  if (query.external !== '') params.set('external', query.external);
  if (query.event !== '') params.set('event', query.event);
  if (query.from !== '') params.set('from', query.from);
  if (query.to !== '') params.set('to', query.to);
  if (before !== undefined) params.set('before', before);
  const text = params.toString();
  return `/console/callbacks${text === '' ? '' : `?${text}`}#log`;
}

/** `before=<startedAt>.<attemptId>`: the keyset of the log's next page. */
function parseBefore(value: string): { startedAt: number; id: string } | undefined {
  const match = /^(\d{1,16})\.([A-Za-z0-9_]{1,64})$/.exec(value);
  return match === null ? undefined : { startedAt: Number(match[1]), id: match[2] ?? '' };
}

interface PageInput {
  status?: number;
  errors?: FieldError[];
  /** Values typed in forms, shown again with their errors. */
  addressValue?: string;
  testUrlValue?: string;
  bulkFrom?: string;
  bulkTo?: string;
  bulkExternal?: string;
  bulkEvent?: string;
  /** The outcome of a test callback sent by this request. */
  testResult?: Html;
  done?: Html;
}

async function callbacksPage(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  request: FastifyRequest,
  reply: FastifyReply,
  input: PageInput = {},
): Promise<FastifyReply> {
  const t = translator('console.callbacks', ctx.lang);
  const errors = [...(input.errors ?? [])];
  const merchant = await deps.merchants.getMerchant(ctx.merchantId);
  const query = logQueryOf(request);
  const filterRange = dayRange(ctx.lang, { from: query.from, to: query.to, required: false });
  errors.push(...filterRange.errors);
  const eventError =
    query.event !== '' && !isEventName(query.event) ? { field: 'event', message: t('eventBad') } : undefined;
  if (eventError !== undefined) errors.push(eventError);
  const filter: q.MerchantLogFilter = {
    failedOnly: query.failedOnly,
    orderId: query.orderId === '' ? undefined : query.orderId,
    orderIds: await externalScope(deps, ctx.merchantId, query.external),
    orderKinds: isEventName(query.event) ? EVENTS[query.event].kinds : undefined,
    from: filterRange.range?.from,
    to: filterRange.range?.until,
    before: parseBefore(query.before),
  };
  const rows = await q.attemptsOfMerchant(deps.store.read, ctx.merchantId, filter, LOG_PAGE_SIZE + 1);
  const more = rows.length > LOG_PAGE_SIZE;
  const page = rows.slice(0, LOG_PAGE_SIZE);
  const last = page.at(-1);
  const noTarget = await q.noTargetEventsOfMerchant(deps.store.read, ctx.merchantId, filter, NO_TARGET_SHOWN);
  const status = input.status ?? (filterRange.errors.length > 0 || eventError !== undefined ? 400 : 200);
  const fieldErrors = errors;

  const logRows = page.map(
    (a) =>
      html`<tr><td>${dateTime(ctx.lang, a.started_at)}</td><td>${
        a.order_kind === TEST_CALLBACK_KIND
          ? html`<code>${a.order_id}</code> <span class="muted">(${t('testCallback')})</span>`
          : html`<a href="/console/orders/${encodeURIComponent(a.order_id)}"><code>${a.order_id}</code></a>`
      }</td><td>${triggerText(t, a.trigger, a.order_kind)}</td><td
class="num">${a.attempt_no}</td><td><code>${redactUrl(a.url) ?? ''}</code></td><td class="num">${
        a.http_status ?? t('none')
      }</td><td class="num">${a.latency_ms}</td><td>${outcomeBadge(t, a.outcome)}${nextRetry(
        t,
        ctx.lang,
        { attemptNo: a.attempt_no },
        { state: a.event_state, attempts: a.event_attempts, nextAttemptAt: a.next_attempt_at },
      )}${a.error !== null ? html`<br><span class="muted">${a.error}</span>` : ''}</td><td>${excerptCell(
        t,
        a.response_excerpt,
      )}</td></tr>`,
  );

  const addressField = textField({
    name: 'url',
    label: t('addressLabel'),
    type: 'url',
    value: input.addressValue ?? merchant.callbackUrl ?? '',
    hint: t('addressHint'),
    maxlength: 2048,
    errors: fieldErrors,
  });
  const testUrlField = textField({
    name: 'test-url',
    label: t('testUrl'),
    type: 'url',
    value: input.testUrlValue ?? '',
    hint: t('testUrlHint'),
    maxlength: 2048,
    errors: fieldErrors,
  });
  const days = dayRangeLabels(ctx.lang);
  const dayField = (name: string, label: string, value: string | undefined) =>
    textField({ name, label, type: 'date', value: value ?? '', required: true, errors: fieldErrors });
  const bulkFromField = dayField('retrigger-from', days.from, input.bulkFrom);
  const bulkToField = dayField('retrigger-to', days.to, input.bulkTo);
  const body = html`<h1>${t('title')}</h1>${input.done ?? ''}${errorSummary(ctx.lang, fieldErrors)}
<section class="panel" id="address"><h2>${t('addressTitle')}</h2><p>${t('addressLead')}</p>
<dl><dt>${t('current')}</dt><dd>${merchant.callbackUrl === null ? t('notSet') : html`<code>${redactUrl(merchant.callbackUrl)}</code>`}</dd></dl>
<form method="post" action="/console/callbacks/address" novalidate>${ctx.csrf}
${addressField}
<button type="submit">${t('addressSave')}</button></form></section>
<section class="panel" id="test"><h2>${t('testTitle')}</h2><p>${t('testLead')}</p>
<form method="post" action="/console/callbacks/test#test" novalidate>${ctx.csrf}
${testUrlField}
<button type="submit">${t('testSend')}</button></form>${input.testResult ?? ''}</section>
<section class="panel" id="log"><h2>${t('logTitle')}</h2><p class="muted">${t('logLead', { n: LOG_PAGE_SIZE })}</p>
<form method="get" action="/console/callbacks" class="filters">
<label class="check"><input type="checkbox" name="failed" value="1"${query.failedOnly ? html` checked` : ''}> ${t('failedOnly')}</label>
<div>${textField({ name: 'order', label: t('orderId'), type: 'search', value: query.orderId, maxlength: 64 })}</div>
<div>${textField({ name: 'external', label: t('externalOrderId'), type: 'search', value: query.external, maxlength: 64 })}</div>
<div>${eventSelect(t, 'event', query.event, eventError)}</div>
<div>${textField({ name: 'from', label: dayRangeLabels(ctx.lang).from, type: 'date', value: query.from, errors: fieldErrors })}</div>
<div>${textField({ name: 'to', label: dayRangeLabels(ctx.lang).to, type: 'date', value: query.to, errors: fieldErrors })}</div>
<div><button type="submit">${t('filter')}</button><a class="button secondary" href="/console/callbacks#log">${t('clear')}</a></div></form>
${
  noTarget.count > 0
    ? html`<div class="warning" id="no-target"><p>${t('noTargetNote', { count: noTarget.count })}</p><details><summary>${t('noTargetLatest')}</summary><div
class="table" tabindex="0"><table><thead><tr><th>${t('created')}</th><th>${t('orderId')}</th><th>${t('trigger')}</th></tr></thead><tbody>${noTarget.rows.map(
        (e) =>
          html`<tr><td>${dateTime(ctx.lang, e.created_at)}</td><td>${
            e.order_kind === TEST_CALLBACK_KIND
              ? html`<code>${e.order_id}</code>`
              : html`<a href="/console/orders/${encodeURIComponent(e.order_id)}"><code>${e.order_id}</code></a>`
          }</td><td>${triggerText(t, e.trigger, e.order_kind)}</td></tr>`,
      )}</tbody></table></div></details></div>`
    : ''
}
${
  page.length === 0
    ? html`<p>${t('noAttempts')}</p>`
    : html`<div class="table"
tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('orderId')}</th><th>${t('trigger')}</th><th
class="num">${t('attemptNo')}</th><th>${t('url')}</th><th class="num">${t('status')}</th><th
class="num">${t('latencyCol')}</th><th>${t('outcome')}</th><th>${t('response')}</th></tr></thead><tbody>${logRows}</tbody></table></div>`
}
<p class="pager">${query.before !== '' ? html`<a href="${logLink(query)}">${t('newest')}</a>` : ''}${
    more && last !== undefined
      ? html`<a href="${logLink(query, `${last.started_at}.${last.id}`)}" rel="next">${t('older')}</a>`
      : ''
  }</p></section>
<section class="panel" id="retrigger"><h2>${t('bulkTitle')}</h2><p>${t('bulkLead', { cap: RETRIGGER_CAP })}</p>
<form method="post" action="/console/callbacks/retrigger-failed" data-confirm="${t('bulkConfirm')}" novalidate>${ctx.csrf}<div class="filters">
<div>${bulkFromField}</div>
<div>${bulkToField}</div></div>
<p class="muted">${t('bulkFiltersHint')}</p><div class="filters">
<div>${textField({ name: 'retrigger-external', label: t('externalOrderId'), value: input.bulkExternal ?? '', maxlength: 64, errors: fieldErrors })}</div>
<div>${eventSelect(
    t,
    'retrigger-event',
    input.bulkEvent ?? '',
    fieldErrors.find((e) => e.field === 'retrigger-event'),
  )}</div></div>
<button type="submit">${t('bulkSend')}</button></form></section>`;
  return ctx.page(reply, { status, title: t('title'), section: 'callbacks', body });
}

/** Why a bulk re-trigger found nothing, from the redirect's query (undefined when it gives no reason). */
function bulkNothingReason(t: T, request: FastifyRequest): string | undefined {
  const from = queryParam(request, 'rf').slice(0, 10);
  const to = queryParam(request, 'rt').slice(0, 10);
  if (dayStart(from) === undefined || dayStart(to) === undefined) return undefined;
  const externalValue = queryParam(request, 'rx').slice(0, 64);
  const event = queryParam(request, 're');
  const eventText = isEventName(event) ? t(EVENTS[event].text) : '';
  const external = externalValue === '' ? '' : t('bulkForExternal', { external: externalValue });
  switch (queryParam(request, 'why')) {
    case 'days':
      return t('bulkNoneDays', { from, to });
    case 'external':
      return t('bulkNoneExternal', { from, to, external: externalValue });
    case 'event':
      return t('bulkNoneEvent', { from, to, external, event: eventText });
    case 'resent': {
      const n = Number(queryParam(request, 'n'));
      return t('bulkNoneResent', { from, to, n: Number.isInteger(n) && n >= 0 ? n : 0 });
    }
    default:
      return undefined;
  }
}

/** What a test callback did, as the page shows it right after sending. */
function testResultHtml(
  t: T,
  ctx: ConsoleContext,
  event: CallbackEventView,
  attempt: CallbackAttemptView | undefined,
): Html {
  const payload = JSON.stringify(event.payload, null, 2);
  const sent = html`<dt>${t('notifyId')}</dt><dd><code>${event.notifyId}</code></dd><dt>${t('body')}</dt><dd><pre>${payload}</pre>
<p class="muted">${t('signedWith', { key: event.accessKey })}</p></dd>`;
  if (event.state === 'no_target') {
    return html`<div class="warning" role="status" id="test-result"><p>${t('noTargetTest')}</p></div>`;
  }
  if (attempt === undefined) {
    return html`<div class="warning" role="status" id="test-result"><p>${t('notSentNow')}</p><dl>${sent}</dl></div>`;
  }
  const response =
    attempt.responseExcerpt === null || attempt.responseExcerpt === ''
      ? t('none')
      : html`<pre>${attempt.responseExcerpt}</pre>`;
  return html`<div id="test-result" role="status"><h3>${t('resultTitle')}</h3><dl>
<dt>${t('outcome')}</dt><dd>${outcomeBadge(t, attempt.outcome)}</dd>
<dt>${t('target')}</dt><dd><code>${attempt.url}</code></dd>
<dt>${t('httpStatus')}</dt><dd>${attempt.httpStatus ?? t('none')}</dd>
<dt>${t('latency')}</dt><dd>${t('latencyMs', { ms: attempt.latencyMs })}</dd>
<dt>${t('time')}</dt><dd>${dateTime(ctx.lang, attempt.startedAt)}</dd>
<dt>${t('error')}</dt><dd>${attempt.error ?? t('none')}</dd>
<dt>${t('response')}</dt><dd>${response}</dd>
${sent}</dl></div>`;
}

export function registerCallbackPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/callbacks', async (ctx, request, reply) => {
    const t = translator('console.callbacks', ctx.lang);
    const done = queryParam(request, 'done');
    const count = Number(queryParam(request, 'count'));
    const message =
      done === 'address-set'
        ? t('addressSet')
        : done === 'address-cleared'
          ? t('addressCleared')
          : done === 'retriggered' && Number.isInteger(count) && count >= 0
            ? t('bulkDone', { n: count })
            : undefined;
    const capped =
      done === 'retriggered' && queryParam(request, 'capped') === '1'
        ? html`<p class="warning" role="status">${t('bulkCapped', { cap: RETRIGGER_CAP })}</p>`
        : html``;
    const why = done === 'retriggered' && count === 0 ? bulkNothingReason(t, request) : undefined;
    return callbacksPage(ctx, deps, request, reply, {
      done:
        why === undefined
          ? html`${notice(message)}${capped}`
          : html`<p class="warning" role="status" id="retrigger-none">${why}</p>`,
    });
  });

  router.post('/console/callbacks/address', async (ctx, request, reply) => {
    const t = translator('console.callbacks', ctx.lang);
    const raw = formOf(request).get('url') ?? '';
    const url = raw.trim();
    if (url !== '' && !isCallbackUrl(url)) {
      return callbacksPage(ctx, deps, request, reply, {
        status: 400,
        errors: [{ field: 'url', message: t('addressBad') }],
        addressValue: raw.slice(0, 4096),
      });
    }
    await deps.merchants.setCallbackUrl(ctx.merchantId, url === '' ? null : url);
    return seeOther(reply, `/console/callbacks?done=${url === '' ? 'address-cleared' : 'address-set'}#address`);
  });

  router.post('/console/callbacks/test', async (ctx, request, reply) => {
    const t = translator('console.callbacks', ctx.lang);
    const raw = formOf(request).get('test-url') ?? '';
    const url = raw.trim();
    if (url !== '' && !isCallbackUrl(url)) {
      return callbacksPage(ctx, deps, request, reply, {
        status: 400,
        errors: [{ field: 'test-url', message: t('testUrlBad') }],
        testUrlValue: raw.slice(0, 4096),
      });
    }
    try {
      const { event, attempt } = await deps.callbacks.dispatcher.createAndDeliver((tx) =>
        deps.callbacks.tests.create(tx, ctx.merchantId, { url: url === '' ? null : url }),
      );
      const result = testResultHtml(
        t,
        ctx,
        toEventView(event),
        attempt === undefined ? undefined : toAttemptView(attempt, event),
      );
      return await callbacksPage(ctx, deps, request, reply, { testResult: result, testUrlValue: url });
    } catch (error) {
      if (!(error instanceof OperatorError) || error.failure.kind !== 'no_signing_key') throw error;
      const result = html`<div class="warning" role="alert" id="test-result"><p>${t('noKey')} <a href="/console/keys">${t('keysLink')}</a></p></div>`;
      return callbacksPage(ctx, deps, request, reply, { status: 409, testResult: result, testUrlValue: url });
    }
  });

  router.post('/console/callbacks/retrigger-failed', async (ctx, request, reply) => {
    const t = translator('console.callbacks', ctx.lang);
    const form = formOf(request);
    const from = (form.get('retrigger-from') ?? '').trim().slice(0, 10);
    const to = (form.get('retrigger-to') ?? '').trim().slice(0, 10);
    const external = (form.get('retrigger-external') ?? '').trim().slice(0, 64);
    const event = (form.get('retrigger-event') ?? '').slice(0, 16);
    const { range, errors } = dayRange(ctx.lang, {
      from,
      to,
      required: true,
      fromField: 'retrigger-from',
      toField: 'retrigger-to',
    });
    if (event !== '' && !isEventName(event)) errors.push({ field: 'retrigger-event', message: t('eventBad') });
    if (range?.from === undefined || range.until === undefined || errors.length > 0) {
      return callbacksPage(ctx, deps, request, reply, {
        status: 400,
        errors,
        bulkFrom: from,
        bulkTo: to,
        bulkExternal: external,
        bulkEvent: event,
      });
    }
    const window = { from: range.from, to: range.until };
    const byExternal = { orderIds: await externalScope(deps, ctx.merchantId, external) };
    const filter = { ...byExternal, orderKinds: isEventName(event) ? EVENTS[event].kinds : undefined };
    const orderIds = await deps.store.transact(async (tx) => {
      const ids = await q.ordersWithFailedEvents(tx, ctx.merchantId, window, RETRIGGER_CAP + 1, filter);
      const chosen = ids.slice(0, RETRIGGER_CAP);
      for (const orderId of chosen) await deps.callbacks.outbox.retrigger(tx, orderId);
      return { count: chosen.length, capped: ids.length > RETRIGGER_CAP };
    });
    deps.callbacks.dispatcher.wake();
    if (orderIds.count === 0) {
      // Say which filter matched no failed callback: the days, the external order ID, the event, or
      // none (everything that failed has been delivered or is under way since).
      const read = deps.store.read;
      const why =
        (await q.countFailedEvents(read, ctx.merchantId, window)) === 0
          ? 'days'
          : external !== '' && (await q.countFailedEvents(read, ctx.merchantId, window, byExternal)) === 0
            ? 'external'
            : event !== '' && (await q.countFailedEvents(read, ctx.merchantId, window, filter)) === 0
              ? 'event'
              : 'resent';
      const params = new URLSearchParams({ done: 'retriggered', count: '0', why, rf: from, rt: to });
      if (external !== '') params.set('rx', external);
      if (event !== '') params.set('re', event);
      if (why === 'resent') params.set('n', String(await q.countFailedEvents(read, ctx.merchantId, window, filter)));
      return seeOther(reply, `/console/callbacks?${params.toString()}`);
    }
    return seeOther(
      reply,
      `/console/callbacks?done=retriggered&count=${orderIds.count}${orderIds.capped ? '&capped=1' : ''}#log`,
    );
  });

  router.post('/console/orders/:orderId/callbacks', async (ctx, request, reply) => {
    const orderId = (request.params as { orderId?: string }).orderId ?? '';
    if ((await merchantOrder(deps.store.read, ctx.merchantId, orderId)) === undefined) return ctx.notFound(reply);
    await deps.callbacks.dispatcher.createAndDeliver((tx) => deps.callbacks.outbox.retrigger(tx, orderId));
    return seeOther(reply, `/console/orders/${encodeURIComponent(orderId)}?done=retriggered#callbacks`);
  });
}

/**
 * The callback panel of an order's detail page: its callback events and attempts, and the form that
 * re-triggers its callback (with the spec's warning when the order is not final yet).
 */
export async function orderCallbacksPanel(
  ctx: ConsoleContext,
  deps: ConsoleServices,
  order: { orderId: string; final: boolean },
): Promise<Html> {
  const t = translator('console.callbacks', ctx.lang);
  const history = await deps.callbacks.outbox.history(order.orderId);
  const events = history.events;
  const attempts = [...history.attempts].reverse();
  const eventTable =
    events.length === 0
      ? html`<p>${t('noEvents')}</p>`
      : html`<h3>${t('events')}</h3><div class="table"
tabindex="0"><table><thead><tr><th>${t('created')}</th><th>${t('notifyId')}</th><th>${t('trigger')}</th><th>${t('state')}</th><th>${t('target')}</th><th
class="num">${t('attemptsCount')}</th></tr></thead><tbody>${[...events].reverse().map((e) => {
          const created = dateTime(ctx.lang, e.createdAt);
          const state = outcomeBadge(t, e.state);
          const target = e.targetUrl === null ? t('none') : html`<code>${e.targetUrl}</code>`;
          return html`<tr><td>${created}</td><td><code>${e.notifyId}</code></td><td>${t(e.trigger)}</td><td>${state}</td><td>${target}</td><td
class="num">${e.attempts}</td></tr>`;
        })}</tbody></table></div>`;
  const attemptTable =
    events.length === 0
      ? html``
      : attempts.length === 0
        ? html`<p class="muted">${t('noOrderAttempts')}</p>`
        : html`<h3>${t('attempts')}</h3><div class="table"
tabindex="0"><table><thead><tr><th>${t('time')}</th><th>${t('trigger')}</th><th class="num">${t('attemptNo')}</th><th>${t('url')}</th><th
class="num">${t('status')}</th><th class="num">${t('latencyCol')}</th><th>${t('outcome')}</th><th>${t('response')}</th></tr></thead><tbody>${attempts.map(
            (a) =>
              html`<tr><td>${dateTime(ctx.lang, a.startedAt)}</td><td>${t(a.trigger)}</td><td class="num">${a.attemptNo}</td><td><code>${a.url}</code></td><td
class="num">${
                a.httpStatus ?? t('none')
              }</td><td class="num">${a.latencyMs}</td><td>${outcomeBadge(t, a.outcome)}${nextRetry(
                t,
                ctx.lang,
                a,
                events.find((e) => e.eventId === a.eventId),
              )}${a.error !== null ? html`<br><span class="muted">${a.error}</span>` : ''}</td><td>${excerptCell(
                t,
                a.responseExcerpt,
              )}</td></tr>`,
          )}</tbody></table></div>`;
  const action = `/console/orders/${encodeURIComponent(order.orderId)}/callbacks`;
  const form = order.final
    ? html`<form method="post" action="${action}">${ctx.csrf}<button type="submit">${t('retrigger')}</button></form>`
    : html`<p class="warning" role="note">${t('notFinalWarning')}</p><form method="post"
action="${action}" data-confirm="${t('notFinalConfirm')}">${ctx.csrf}<button type="submit"
class="secondary">${t('retrigger')}</button></form>`;
  return html`<section class="panel" id="callbacks"><h2>${t('orderTitle')}</h2>${eventTable}${attemptTable}<p
class="muted">${t('retriggerLead')}</p>${form}</section>`;
}
