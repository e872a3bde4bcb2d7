/**
 * The audit log (admin and auditor: `audit.read`): filtered by actor, action, target and date
 * through `GET /admin/v1/audit-log`, each record's before and after, the hash chain verified from
 * the page, and a JSON-lines export (itself an audited action).
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditJsonLines, parseIsoTime, verifyAuditLog } from '../access/audit-log.js';
import { AUDIT_ACTIONS } from '../access/permissions.js';
import { dateTime } from '../console/i18n.js';
import { queryParam } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import { translator } from '../i18n/messages.js';
import type { BackofficeContext, BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';
import { errorSummary, readFailed } from './view.js';

interface AuditEntryRow {
  id: string;
  seq: number;
  at: string;
  actor: { type: string; id: string | null; email: string | null };
  action: string;
  target: { type: string; id: string | null } | null;
  reason: string | null;
  changes: unknown;
  ip: string | null;
  requestId: string | null;
}

const FILTERS = ['actor', 'action', 'targetType', 'targetId', 'from', 'to'] as const;
type Filter = Partial<Record<(typeof FILTERS)[number] | 'cursor', string>>;

function filterOf(request: FastifyRequest): Filter {
  const filter: Filter = {};
  for (const name of [...FILTERS, 'cursor'] as const) {
    const value = queryParam(request, name).trim();
    if (value !== '') filter[name] = value;
  }
  return filter;
}

/** A query string of the filter (and more). */
function queryOf(filter: Filter, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({ ...filter, ...extra } as Record<string, string>);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export function registerAuditPages(router: BackofficeRouter, deps: BackofficeServices): void {
  const page = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    verified?: Html,
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.audit', ctx.lang);
    const filter = filterOf(request);
    const listed = await ctx.call(reply, 'GET /admin/v1/audit-log', { query: filter });
    let problem: Html = html``;
    let entries: AuditEntryRow[] = [];
    let next: string | null = null;
    if (listed.ok) {
      const result = listed.result as { entries: AuditEntryRow[]; nextCursor: string | null };
      entries = result.entries;
      next = result.nextCursor;
    } else if (listed.forbidden !== undefined) {
      return readFailed(ctx, reply, listed);
    } else {
      problem = errorSummary(listed.message);
    }
    const field = (name: (typeof FILTERS)[number], type = 'text', list?: string): Html =>
      html`<div><label for="f-${name}">${t(name)}</label><input type="${type}" id="f-${name}" name="${name}" value="${filter[name] ?? ''}"${
        list === undefined ? '' : html` list="${list}"`
      }></div>`;
    const rows = entries.map((e) => {
      const who = e.actor.email ?? (e.actor.type === 'cli' ? `cli:${e.actor.id ?? ''}` : e.actor.type);
      const changes =
        e.changes === null || e.changes === undefined
          ? html`<span class="muted">—</span>`
          : html`<details><summary>${t('changes')}</summary><pre>${JSON.stringify(e.changes, null, 2)}</pre></details>`;
      return html`<tr><td class="num">${e.seq}</td><td class="date">${dateTime(ctx.lang, Date.parse(e.at))}</td><td>${who}</td>
<td><code>${e.action}</code></td><td>${e.target === null ? '—' : html`${e.target.type} <code>${e.target.id ?? ''}</code>`}</td>
<td>${e.reason ?? '—'}</td><td>${changes}</td></tr>`;
    });
    const exportLink = `/backoffice/audit.jsonl${queryOf({ ...(filter.from && { from: filter.from }), ...(filter.to && { to: filter.to }) })}`;
    return ctx.page(reply, {
      status: listed.ok ? 200 : listed.status,
      title: t('title'),
      section: 'audit',
      body: html`<h1>${t('title')}</h1>${problem}${verified ?? ''}
<form method="get" action="/backoffice/audit" class="panel">
<div class="filters">${field('actor')}${field('action', 'text', 'audit-actions')}${field('targetType')}${field(
        'targetId',
      )}${field('from', 'date')}${field('to', 'date')}</div>
<datalist id="audit-actions">${AUDIT_ACTIONS.map((a) => html`<option value="${a}"></option>`)}</datalist>
<button type="submit">${t('filter')}</button> <a href="/backoffice/audit">${t('clear')}</a></form>
<div class="panel actions"><form method="post" action="/backoffice/audit/verify">${ctx.csrf}<button type="submit" class="secondary">${t('verify')}</button>
</form>
<a class="button secondary" href="${exportLink}">${t('export')}</a><p class="muted">${t('exportHint')}</p></div>
<div class="panel"><div class="table" tabindex="0"><table><caption class="muted">${t('caption')}</caption><thead><tr><th scope="col" class="num">#</th>
<th scope="col">${t('at')}</th>
<th scope="col">${t('actor')}</th><th scope="col">${t('action')}</th><th scope="col">${t('target')}</th><th scope="col">${t('reason')}</th>
<th scope="col">${t('changes')}</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="7">${t('none')}</td></tr>` : rows}</tbody></table></div>
${next === null ? '' : html`<p class="pager"><a href="/backoffice/audit${queryOf(filter, { cursor: next })}">${t('older')}</a></p>`}</div>`,
    });
  };

  router.get('/audit', 'audit', (ctx, request, reply) => page(ctx, request, reply));

  router.post('/audit/verify', 'audit', async (ctx, request, reply) => {
    const t = translator('backoffice.audit', ctx.lang);
    await ctx.record('audit.verify', {});
    const result = await verifyAuditLog(deps.store.read);
    const verdict = result.ok
      ? html`<p class="notice" role="status">${t('verifiedOk', { entries: result.entries })}</p>`
      : errorSummary(
          t('verifiedBroken', { entries: result.entries, reason: result.reason, entry: result.firstBadEntry ?? '—' }),
        );
    return page(ctx, request, reply, verdict);
  });

  router.get('/audit.jsonl', 'audit', async (ctx, request, reply) => {
    const from = queryParam(request, 'from');
    const to = queryParam(request, 'to');
    const t = translator('backoffice.audit', ctx.lang);
    const fromMs = from === '' ? undefined : parseIsoTime(from);
    const toMs = to === '' ? undefined : parseIsoTime(to);
    if (fromMs === undefined && from !== '')
      return page(ctx, request, reply, errorSummary(t('badDate', { field: 'from' })));
    if (toMs === undefined && to !== '') return page(ctx, request, reply, errorSummary(t('badDate', { field: 'to' })));
    await ctx.record('audit.export', { changes: { request: { from: from || null, to: to || null } } });
    const lines = auditJsonLines(deps.store.read, { from: fromMs, to: toMs });
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="cashgate-audit-${new Date(ctx.now).toISOString().slice(0, 10)}.jsonl"`,
      )
      .header('cache-control', 'no-store')
      .send(Readable.from(lines));
  });
}
