/**
 * Queues: the work Today counts, one section each. Unmatched and late incoming payments (a Pix no
 * charge asked for: assign it to a merchant's waiting order or return it; SPEI transfers returned,
 * boletos in suspense, rail messages no order took), the money actions waiting for a second
 * operator (approve or reject: four eyes from the page, never one's own), returns that failed or
 * are late, and payouts in doubt (the rail's last answer; ask the rail again; an admin marks the
 * outcome by hand). Every action is its admin route called as the operator, offered only to a role
 * that may call it; personal data is masked as the admin routes mask it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keepEnds, maskPersonalData } from '../access/redact.js';
import { dateTime, money } from '../console/i18n.js';
import { seeOther } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import { translator } from '../i18n/messages.js';
import { fromDb, isCurrency } from '../money.js';
import { statusText } from '../orders/state-machine.js';
import {
  boletosInSuspense,
  lateReturningPix,
  payoutsInDoubt,
  pendingApprovals,
  recentUnmatchedRailMessages,
  recentUnmatchedSpei,
  speiReturnsNeedingHelp,
  uncreditedPix,
} from './queries.js';
import { bodyOfForm, type AdminRouteKey, type BackofficeContext, type BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';
import { todayCutoffs } from './today-page.js';
import { doneNotice, errorSummary, type PageFailure as Failure } from './view.js';

const LIMIT = 100;
const DONE = ['assigned', 'assignPending', 'returned', 'approved', 'rejected', 'asked', 'settled'] as const;
type Done = (typeof DONE)[number];

export function registerQueuePages(router: BackofficeRouter, deps: BackofficeServices): void {
  const page = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    failure?: Failure,
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.queues', ctx.lang);
    const db = deps.store.read;
    const cutoffs = todayCutoffs(deps.config, ctx.now);
    const [unmatched, returnFailed, returning, spei, speiReturns, boletos, railMessages, approvals, inDoubt] =
      await Promise.all([
        uncreditedPix(db, 'unmatched', LIMIT),
        uncreditedPix(db, 'return_failed', LIMIT),
        lateReturningPix(db, cutoffs.returnLateBefore, LIMIT),
        recentUnmatchedSpei(db, cutoffs.recentSince, LIMIT),
        speiReturnsNeedingHelp(db, cutoffs.returnLateBefore, LIMIT),
        boletosInSuspense(db, LIMIT),
        recentUnmatchedRailMessages(db, cutoffs.recentSince, LIMIT),
        pendingApprovals(db, LIMIT),
        payoutsInDoubt(db, cutoffs.payoutLateBefore, LIMIT),
      ]);
    // Personal data as the admin routes show it to this role: documents and accounts always cut short.
    const shown = <T>(value: T): T => (ctx.holds('personal_data.read') ? value : (maskPersonalData(value) as T));
    const brl = (minor: number | string | null) => money(ctx.lang, fromDb(minor ?? 0), 'BRL');
    const mxn = (minor: number | string) => money(ctx.lang, fromDb(minor), 'MXN');
    const orderLink = (orderId: string | null): Html =>
      orderId === null ? html`—` : html`<a href="/backoffice/orders/${orderId}">${orderId}</a>`;
    const reasonField = (id: string, required = true): Html =>
      html`<label for="${id}">${t('reason')}</label><input type="text" id="${id}" name="reason"${required ? html` required` : ''} maxlength="500">`;
    const empty = (cols: number) => html`<tr><td colspan="${String(cols)}">${t('none')}</td></tr>`;
    const pendingIds = new Set(approvals.map((a) => a.id));

    // Incoming Pix not credited: the actions an operator takes on one.
    const canAssign = ctx.can('POST /admin/v1/pix/received/:e2eid/assign');
    const canReturn = ctx.can('POST /admin/v1/pix/received/:e2eid/return');
    const pixActions = (p: (typeof unmatched)[number]): Html => {
      if (p.approval_id !== null) {
        return html`<span class="badge wait">${t('waitingSecond')}</span> ${
          pendingIds.has(p.approval_id) ? html`<a href="#approval-${p.approval_id}">${t('seeApproval')}</a>` : ''
        }`;
      }
      const forms: Html[] = [];
      const id = p.e2eid.replace(/[^A-Za-z0-9_-]/g, '');
      if (canAssign) {
        forms.push(html`<form method="post" action="/backoffice/queues/pix/${encodeURIComponent(p.e2eid)}/assign">${ctx.csrf}
<label for="assign-order-${id}">${t('orderId')}</label><input type="text" id="assign-order-${id}" name="orderId" required maxlength="64">
${reasonField(`assign-reason-${id}`)}<button type="submit">${t('assign')}</button></form>`);
      }
      if (canReturn) {
        forms.push(html`<form method="post" action="/backoffice/queues/pix/${encodeURIComponent(p.e2eid)}/return">${ctx.csrf}
${reasonField(`return-reason-${id}`)}<button type="submit" class="secondary">${t('return')}</button></form>`);
      }
      return forms.length === 0 ? html`—` : html`<div class="actions">${forms}</div>`;
    };
    const pixTable = (rows: typeof unmatched, caption: string): Html =>
      html`<div class="table" tabindex="0"><table><caption class="muted">${caption}</caption><thead><tr><th scope="col">${t('e2eid')}</th>
<th scope="col">${t('amount')}</th>
<th scope="col">${t('payer')}</th><th scope="col">${t('received')}</th><th scope="col">${t('actions')}</th></tr></thead><tbody>${
        rows.length === 0
          ? empty(5)
          : rows.map((row) => {
              const v = shown({
                payerName: row.payer_name,
                payerDocument: row.payer_document === null ? null : keepEnds(row.payer_document, 3, 2),
              });
              return html`<tr><td><code>${row.e2eid}</code>${row.reason === null ? '' : html`<br><span class="muted">${row.reason}</span>`}</td>
<td class="num">${brl(row.amount)}</td><td>${v.payerName ?? '—'}<br><span class="muted">${v.payerDocument ?? ''}</span></td>
<td class="date">${dateTime(ctx.lang, row.created_at)}</td><td>${pixActions(row)}</td></tr>`;
            })
      }</tbody></table></div>`;

    const incoming = html`<section class="panel" aria-labelledby="pix-unmatched"><h2 id="pix-unmatched">${t('pixUnmatched')}</h2>
<p class="muted">${t('pixUnmatchedText')}</p>${pixTable(unmatched, t('count', { count: unmatched.length }))}</section>
<section class="panel" aria-labelledby="spei-unmatched"><h2 id="spei-unmatched">${t('speiUnmatched')}</h2>
<p class="muted">${t('speiUnmatchedText')}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('claveRastreo')}</th><th scope="col">${t('amount')}</th><th scope="col">${t('payer')}</th>
<th scope="col">${t('order')}</th><th scope="col">${t('disposition')}</th><th scope="col">${t('received')}</th></tr></thead><tbody>${
      spei.length === 0
        ? empty(6)
        : spei.map((s) => {
            const v = shown({
              payerName: s.payer_name,
              payerAccount: s.payer_account === null ? null : keepEnds(s.payer_account, 0, 4),
            });
            return html`<tr><td><code>${s.clave_rastreo}</code></td><td class="num">${mxn(s.amount)}</td><td>${v.payerName ?? '—'}<br>
<span class="muted">${v.payerAccount ?? ''}</span></td>
<td>${orderLink(s.order_id)}</td><td>${s.disposition}${
              s.return_state === null
                ? ''
                : html`<br>
<span class="muted">${t('returnState', { state: s.return_state })}</span>`
            }</td><td class="date">${dateTime(ctx.lang, s.created_at)}</td></tr>`;
          })
    }</tbody></table></div></section>
<section class="panel" aria-labelledby="boleto-suspense"><h2 id="boleto-suspense">${t('boletoSuspense')}</h2>
<p class="muted">${t('boletoSuspenseText')}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('order')}</th><th scope="col">${t('issuer')}</th><th scope="col">${t('amount')}</th>
<th scope="col">${t('paidAmount')}</th><th scope="col">${t('updated')}</th></tr></thead><tbody>${
      boletos.length === 0
        ? empty(5)
        : boletos.map(
            (b) =>
              html`<tr><td>${orderLink(b.order_id)}</td><td>${b.issuer}</td><td class="num">${brl(b.amount)}</td>
<td class="num">${brl(b.paid_amount)}</td><td class="date">${dateTime(ctx.lang, b.updated_at)}</td></tr>`,
          )
    }</tbody></table></div></section>
<section class="panel" aria-labelledby="rail-unmatched"><h2 id="rail-unmatched">${t('railUnmatched')}</h2>
<p class="muted">${t('railUnmatchedText')}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('rail')}</th><th scope="col">${t('endpoint')}</th><th scope="col">${t('ref')}</th>
<th scope="col">${t('received')}</th></tr></thead><tbody>${
      railMessages.length === 0
        ? empty(4)
        : railMessages.map(
            (m) =>
              html`<tr><td>${m.rail}</td><td>${m.endpoint}</td><td><code>${m.ref ?? '—'}</code></td><td class="date">${dateTime(ctx.lang, m.at)}</td>
</tr>`,
          )
    }</tbody></table></div></section>`;

    // Approvals: four eyes from the page; one's own request is never offered to approve.
    const canDecide = ctx.can('POST /admin/v1/approvals/:approvalId/approve');
    const approvalsSection = html`<section class="panel" aria-labelledby="approvals"><h2 id="approvals">${t('approvals')}</h2>
<p class="muted">${t('approvalsText')}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('approval')}</th><th scope="col">${t('amount')}</th>
<th scope="col">${t('requestedBy')}</th>
<th scope="col">${t('reason')}</th><th scope="col">${t('actions')}</th></tr></thead><tbody>${
      approvals.length === 0
        ? empty(5)
        : approvals.map((a) => {
            const own = a.requested_by === ctx.session.operatorId;
            const amount = isCurrency(a.currency) ? money(ctx.lang, fromDb(a.amount), a.currency) : String(a.amount);
            const what =
              a.kind === 'payment_assignment'
                ? html`${t('kindAssignment')}<br><code>${a.e2eid ?? ''}</code> → ${orderLink(a.order_id)}`
                : html`${t('kindAdjustment')}<br><a href="/backoffice/merchants/${a.merchant_id}">${a.merchant_id}</a>`;
            const actions = !canDecide
              ? html`—`
              : own
                ? html`<span class="muted">${t('ownRequest')}</span>`
                : html`<div class="actions"><form method="post" action="/backoffice/queues/approvals/${a.id}/approve">${ctx.csrf}
${reasonField(`approve-reason-${a.id}`, false)}<button type="submit">${t('approve')}</button></form>
<form method="post" action="/backoffice/queues/approvals/${a.id}/reject">${ctx.csrf}${reasonField(`reject-reason-${a.id}`)}
<button type="submit" class="danger">${t('reject')}</button></form></div>`;
            return html`<tr id="approval-${a.id}"><td>${what}<br><span class="muted">${dateTime(ctx.lang, a.created_at)}</span></td>
<td class="num">${amount}</td>
<td>${a.requested_by_email ?? a.requested_by}</td><td>${a.reason}</td><td>${actions}</td></tr>`;
          })
    }</tbody></table></div></section>`;

    const returnsSection = html`<section class="panel" aria-labelledby="returns"><h2 id="returns">${t('returns')}</h2>
<p class="muted">${t('returnsText')}</p>
<h3>${t('pixReturnsFailed')}</h3>${pixTable(returnFailed, t('count', { count: returnFailed.length }))}
<h3>${t('pixReturnsLate')}</h3><div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('e2eid')}</th><th scope="col">${t('amount')}</th>
<th scope="col">${t('refund')}</th><th scope="col">${t('updated')}</th></tr></thead><tbody>${
      returning.length === 0
        ? empty(4)
        : returning.map(
            (r) =>
              html`<tr><td><code>${r.e2eid}</code></td><td class="num">${brl(r.amount)}</td><td>${r.refund_id ?? '—'}<br>
<span class="muted">${r.refund_status ?? ''}</span></td><td class="date">${dateTime(ctx.lang, r.updated_at)}</td></tr>`,
          )
    }</tbody></table></div>
<h3>${t('speiReturns')}</h3><div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('claveRastreo')}</th><th scope="col">${t('amount')}</th>
<th scope="col">${t('state')}</th><th scope="col">${t('lastError')}</th><th scope="col">${t('updated')}</th></tr></thead><tbody>${
      speiReturns.length === 0
        ? empty(5)
        : speiReturns.map(
            (s) =>
              html`<tr><td><code>${s.clave_rastreo}</code></td><td class="num">${mxn(s.amount)}</td>
<td>${s.return_state ?? ''} · ${t('attempts', { count: s.return_attempts })}</td><td>${s.last_error ?? '—'}</td>
<td class="date">${dateTime(ctx.lang, s.updated_at)}</td></tr>`,
          )
    }</tbody></table></div></section>`;

    // Payouts in doubt: the rail's last answer, ask again, settle by hand (admin).
    const canAsk = ctx.can('POST /admin/v1/orders/:orderId/rail-query');
    const canSettle = ctx.can('POST /admin/v1/orders/:orderId/settle-by-hand');
    const inDoubtSection = html`<section class="panel" aria-labelledby="in-doubt"><h2 id="in-doubt">${t('inDoubt')}</h2>
<p class="muted">${t('inDoubtText')}</p>
<div class="table" tabindex="0"><table><thead><tr><th scope="col">${t('order')}</th><th scope="col">${t('amount')}</th><th scope="col">${t('status')}</th>
<th scope="col">${t('lastAnswer')}</th><th scope="col">${t('actions')}</th></tr></thead><tbody>${
      inDoubt.length === 0
        ? empty(5)
        : inDoubt.map((o) => {
            const m = o.lastMessage;
            const answer = html`${
              m === undefined
                ? t('noAnswer')
                : html`${m.rail} ${m.endpoint} · ${m.http_status === null ? t('noHttp') : String(m.http_status)}${
                    m.code === null ? '' : html` · <code>${m.code}</code>`
                  }
<br><span class="muted">${dateTime(ctx.lang, m.at)}</span>`
            }${
              o.task === undefined
                ? ''
                : html`<br>
<span class="muted">${t('handOver', { state: o.task.state, attempts: o.task.attempts })}${o.task.last_error === null ? '' : ` · ${o.task.last_error}`}</span>`
            }`;
            const forms: Html[] = [];
            if (canAsk) {
              forms.push(
                html`<form method="post" action="/backoffice/queues/orders/${o.id}/rail-query">${ctx.csrf}
<button type="submit" class="secondary">${t('askAgain')}</button></form>`,
              );
            }
            if (canSettle) {
              forms.push(html`<form method="post" action="/backoffice/queues/orders/${o.id}/settle-by-hand">${ctx.csrf}
<label for="outcome-${o.id}">${t('outcome')}</label><select id="outcome-${o.id}" name="outcome"><option value="paid">${t('paid')}</option>
<option value="failed">${t('failed')}</option></select>
${reasonField(`settle-reason-${o.id}`)}<label for="confirm-${o.id}">${t('confirm')}</label>
<input type="text" id="confirm-${o.id}" name="confirm" required maxlength="64" autocomplete="off">
<button type="submit" class="danger">${t('settle')}</button></form>`);
            }
            const amount = isCurrency(o.currency) ? money(ctx.lang, fromDb(o.amount), o.currency) : String(o.amount);
            return html`<tr><td>${orderLink(o.id)}<br>
<span class="muted">${o.area}.${o.channel_type} · <a href="/backoffice/merchants/${o.merchant_id}">${o.merchant_id}</a>
· ${dateTime(ctx.lang, o.created_at)}</span></td>
<td class="num">${amount}</td><td>${statusText('transfer', o.status)}</td><td>${answer}</td>
<td>${forms.length === 0 ? '—' : html`<div class="actions">${forms}</div>`}</td></tr>`;
          })
    }</tbody></table></div></section>`;

    const nav = html`<nav aria-label="${t('sections')}"><ul class="row">
<li><a href="#pix-unmatched">${t('pixUnmatched')} (${String(unmatched.length)})</a></li><li>
<a href="#approvals">${t('approvals')} (${String(approvals.length)})</a></li>
<li><a href="#returns">${t('returns')} (${String(returnFailed.length + returning.length + speiReturns.length)})</a></li><li>
<a href="#in-doubt">${t('inDoubt')} (${String(inDoubt.length)})</a></li></ul></nav>`;
    return ctx.page(reply, {
      status: failure?.status ?? 200,
      title: t('title'),
      section: 'queues',
      body: html`<h1>${t('title')}</h1>${doneNotice<Done>(request, DONE, (k) => t(`done_${k}`))}${
        failure === undefined ? '' : errorSummary(failure.message)
      }${nav}${incoming}${approvalsSection}${returnsSection}${inDoubtSection}`,
    });
  };

  router.get('/queues', 'queues', (ctx, request, reply) => page(ctx, request, reply));

  /** Calls the action's admin route; on success back to the queues with its notice. */
  const act =
    (
      route: AdminRouteKey,
      param: 'e2eid' | 'approvalId' | 'orderId',
      fields: readonly string[],
      done: (result: unknown) => Done,
      anchor: string,
    ) =>
    async (ctx: BackofficeContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const value = (request.params as Record<string, string>)[param] ?? '';
      const outcome = await ctx.call(reply, route, {
        params: { [param]: value },
        ...(fields.length === 0 ? {} : { body: bodyOfForm(request, fields) }),
      });
      if (!outcome.ok) return outcome.forbidden ?? page(ctx, request, reply, outcome);
      return seeOther(reply, `/backoffice/queues?done=${done(outcome.result)}#${anchor}`);
    };
  const assigned = (result: unknown): Done =>
    (result as { approval?: { state?: string } | null }).approval?.state === 'pending' ? 'assignPending' : 'assigned';

  router.post(
    '/queues/pix/:e2eid/assign',
    'queues',
    act('POST /admin/v1/pix/received/:e2eid/assign', 'e2eid', ['orderId', 'reason'], assigned, 'pix-unmatched'),
  );
  router.post(
    '/queues/pix/:e2eid/return',
    'queues',
    act('POST /admin/v1/pix/received/:e2eid/return', 'e2eid', ['reason'], () => 'returned', 'pix-unmatched'),
  );
  router.post('/queues/approvals/:approvalId/approve', 'queues', async (ctx, request, reply) => {
    // An approval's reason is optional: an empty field is left out rather than refused.
    const reason = bodyOfForm(request, ['reason']).reason?.trim() ?? '';
    const outcome = await ctx.call(reply, 'POST /admin/v1/approvals/:approvalId/approve', {
      params: { approvalId: (request.params as { approvalId: string }).approvalId },
      body: reason === '' ? {} : { reason },
    });
    if (!outcome.ok) return outcome.forbidden ?? page(ctx, request, reply, outcome);
    return seeOther(reply, '/backoffice/queues?done=approved#approvals');
  });
  router.post(
    '/queues/approvals/:approvalId/reject',
    'queues',
    act('POST /admin/v1/approvals/:approvalId/reject', 'approvalId', ['reason'], () => 'rejected', 'approvals'),
  );
  router.post(
    '/queues/orders/:orderId/rail-query',
    'queues',
    act('POST /admin/v1/orders/:orderId/rail-query', 'orderId', [], () => 'asked', 'in-doubt'),
  );
  router.post(
    '/queues/orders/:orderId/settle-by-hand',
    'queues',
    act(
      'POST /admin/v1/orders/:orderId/settle-by-hand',
      'orderId',
      ['outcome', 'reason', 'confirm'],
      () => 'settled',
      'in-doubt',
    ),
  );
}
