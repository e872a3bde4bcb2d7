/**
 * The request log of debug-mode keys: the merchant's recent API requests made with such a key,
 * newest first, with their outcome and the string the server signed, to debug an integration.
 * Recording happens in the HTTP layer; these pages only read, scoped to the signed-in merchant.
 */
import type { Language } from '../http/language.js';
import type { FastifyReply } from 'fastify';
import { describeFailure } from '../http/failures.js';
import { html, type Html } from '../http/html.js';
import { allApiKeys } from './keys-pages.js';
import { badge, copyButton, errorSummary, type FieldError } from './forms.js';
import { translator, type Translator } from '../i18n/messages.js';
import { dateTime } from './i18n.js';
import type { ConsoleServices } from './plugin.js';
import type { RequestLogRow } from './queries.js';
import { queryParam, type ConsoleContext, type ConsoleRouter } from './router.js';

const PAGE_SIZE = 50;

type T = Translator<'console.requests'>;

/** Code 200 is a success; any other code a failure. */
function codeBadge(code: string): Html {
  return badge(code, code === '200' ? 'ok' : 'bad');
}

function requestPath(requestId: string): string {
  return `/console/requests/${encodeURIComponent(requestId)}`;
}

interface Filters {
  accessKey: string;
  failedOnly: boolean;
  before: { at: number; requestId: string } | undefined;
}

function filterForm(
  t: T,
  lang: Language,
  keys: readonly string[],
  filters: Filters,
  errors: readonly FieldError[],
): Html {
  const keyError = errors.find((e) => e.field === 'key');
  const keyOptions = keys.map(
    (k) => html`<option value="${k}"${k === filters.accessKey ? html` selected` : ''}>${k}</option>`,
  );
  return html`<form method="get" action="/console/requests" class="panel" aria-label="${t('filter')}">${errorSummary(lang, errors)}<div class="filters">
<div><label for="key">${t('key')}</label>${
    keyError !== undefined ? html`<p class="error" id="key-error">${keyError.message}</p>` : ''
  }<select id="key" name="key"${
    keyError !== undefined ? html` aria-invalid="true" aria-describedby="key-error"` : ''
  }><option value="">${t('anyKey')}</option>${keyOptions}</select></div>
<div><label class="check"><input type="checkbox" name="failed" value="1"${filters.failedOnly ? html` checked` : ''}> ${t('failedOnly')}</label></div>
<div><button type="submit">${t('apply')}</button></div></div></form>`;
}

function listQuery(filters: Filters, before: Filters['before']): string {
  const params = new URLSearchParams();
  if (filters.accessKey !== '') params.set('key', filters.accessKey);
  if (filters.failedOnly) params.set('failed', '1');
  if (before !== undefined) params.set('before', `${before.at}.${before.requestId}`);
  const query = params.toString();
  return query === '' ? '/console/requests' : `/console/requests?${query}`;
}

function rowsTable(ctx: ConsoleContext, t: T, rows: readonly RequestLogRow[]): Html {
  // Time, key and path stay on one line (they fit at 1366 px); the message wraps in what is left.
  return html`<div class="table" tabindex="0" role="region" aria-label="${t('title')}"><table class="reqlog"><thead><tr><th
scope="col">${t('time')}</th><th scope="col">${t('key')}</th><th scope="col">${t('request')}</th><th scope="col"
class="num">${t('httpStatus')}</th><th scope="col">${t('code')}</th><th scope="col">${t('message')}</th></tr></thead><tbody>${rows.map(
    (
      r,
    ) => html`<tr><td class="nowrap"><a href="${requestPath(r.request_id)}">${dateTime(ctx.lang, r.created_at)}</a></td>
<td class="mono nowrap">${r.access_key}</td>
<td class="mono nowrap">${r.method} ${r.path}</td><td class="num">${r.http_status}</td><td class="nowrap">${codeBadge(r.code)}</td>
<td class="msg">${r.msg_en}</td></tr>`,
  )}</tbody></table></div>`;
}

async function listPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  deps: ConsoleServices,
  keys: readonly string[],
  filters: Filters,
  errors: FieldError[],
): Promise<FastifyReply> {
  const t = translator('console.requests', ctx.lang);
  const rows =
    errors.length > 0
      ? []
      : await deps.requestLog.list(ctx.merchantId, {
          accessKey: filters.accessKey === '' ? undefined : filters.accessKey,
          failedOnly: filters.failedOnly,
          before: filters.before,
          limit: PAGE_SIZE,
        });
  const last = rows.at(-1);
  const pager = html`<p class="pager">${filters.before !== undefined ? html`<a href="${listQuery(filters, undefined)}">${t('newest')}</a>` : ''}${
    rows.length === PAGE_SIZE && last !== undefined
      ? html`<a href="${listQuery(filters, { at: last.created_at, requestId: last.request_id })}">${t('older')}</a>`
      : ''
  }</p>`;
  return ctx.page(reply, {
    status: errors.length > 0 ? 400 : 200,
    title: t('title'),
    section: 'requests',
    body: html`<h1>${t('title')}</h1><p>${t('lead')}</p>${filterForm(t, ctx.lang, keys, filters, errors)}
<div class="panel">${rows.length === 0 ? html`<p>${t('none')}</p>` : rowsTable(ctx, t, rows)}${pager}</div>`,
  });
}

/** The console's pages for the request log of debug-mode keys. */
export function registerRequestPages(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console/requests', async (ctx, request, reply) => {
    const keys = (await allApiKeys(deps, ctx.merchantId)).map((k) => k.accessKey);
    const errors: FieldError[] = [];
    const accessKey = queryParam(request, 'key');
    if (accessKey !== '' && !keys.includes(accessKey)) {
      errors.push({
        field: 'key',
        message: describeFailure(
          { kind: 'invalid_field', field: 'key', rule: { rule: 'oneOf', allowed: keys } },
          ctx.lang,
        ).text,
      });
    }
    const rawBefore = queryParam(request, 'before');
    let before: Filters['before'];
    if (rawBefore !== '') {
      // The paging link's cursor: the last entry's time and request id.
      const cursor = /^(\d{1,15})\.([A-Za-z0-9_-]{1,40})$/.exec(rawBefore);
      if (cursor !== null) before = { at: Number(cursor[1]), requestId: cursor[2] ?? '' };
      else
        errors.push({
          field: 'before',
          message: describeFailure({ kind: 'invalid_field', field: 'before', rule: { rule: 'invalid' } }, ctx.lang)
            .text,
        });
    }
    return listPage(
      ctx,
      reply,
      deps,
      keys,
      { accessKey, failedOnly: queryParam(request, 'failed') === '1', before },
      errors,
    );
  });

  router.get('/console/requests/:requestId', async (ctx, request, reply) => {
    const t = translator('console.requests', ctx.lang);
    const { requestId = '' } = request.params as { requestId?: string };
    const entry = requestId.length > 40 ? undefined : await deps.requestLog.find(ctx.merchantId, requestId);
    if (entry === undefined) return ctx.notFound(reply);
    const title = t('detailTitle', { id: entry.request_id });
    return ctx.page(reply, {
      title,
      section: 'requests',
      body: html`<p><a href="/console/requests">${t('back')}</a></p><h1>${title}</h1><div class="panel"><dl>
<dt>${t('requestId')}</dt><dd><code id="request-id">${entry.request_id}</code> ${copyButton('request-id', ctx.lang)}</dd>
<dt>${t('time')}</dt><dd>${dateTime(ctx.lang, entry.created_at)}</dd>
<dt>${t('key')}</dt><dd><a class="mono" href="/console/keys/${encodeURIComponent(entry.access_key)}">${entry.access_key}</a></dd>
<dt>${t('method')}</dt><dd class="mono">${entry.method}</dd>
<dt>${t('path')}</dt><dd class="mono">${entry.path}</dd>
<dt>${t('httpStatus')}</dt><dd>${entry.http_status}</dd>
<dt>${t('code')}</dt><dd>${codeBadge(entry.code)}</dd>
<dt>${t('message')}</dt><dd>${entry.msg_en}</dd></dl></div>
<div class="panel"><h2>${t('signedString')}</h2>${
        entry.signed_string === null
          ? html`<p class="muted">${t('noSignedString')}</p>`
          : html`<pre id="signed-string">${entry.signed_string}</pre>${copyButton('signed-string', ctx.lang)}`
      }
<p>${t('compareHint')} <a href="/console/signature">${t('signatureTool')}</a></p></div>`,
    });
  });
}
