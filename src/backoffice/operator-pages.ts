/**
 * Operators: the people who run Cashgate, their roles, state and personal tokens, for the role that
 * manages them (`operators.write`: admin). Creating, changing a role, disabling, enabling and
 * revoking a token are the admin routes of the same name.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ROLES } from '../access/permissions.js';
import { dateTime } from '../console/i18n.js';
import { formOf, seeOther } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import { translator } from '../i18n/messages.js';
import type { OperatorView, TokenView } from '../operators/service.js';
import { doneNotice, errorSummary, readFailed, type PageFailure } from './view.js';
import { bodyOfForm, type BackofficeContext, type BackofficeRouter } from './router.js';

const DONE = ['created', 'role', 'disabled', 'enabled', 'revoked'] as const;
const ms = (iso: string | null): number | undefined => (iso === null ? undefined : Date.parse(iso));

export function registerOperatorPages(router: BackofficeRouter): void {
  const listPage = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    failure?: PageFailure & { form: URLSearchParams },
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.operators', ctx.lang);
    const listed = await ctx.call(reply, 'GET /admin/v1/operators', {});
    if (!listed.ok) return readFailed(ctx, reply, listed);
    const operators = (listed.result as { operators: OperatorView[] }).operators;
    const write = ctx.can('POST /admin/v1/operators');
    const create = write
      ? html`<section class="panel" aria-labelledby="new-operator"><h2 id="new-operator">${t('create')}</h2>
<form method="post" action="/backoffice/operators">${ctx.csrf}<div class="filters">
<div><label for="op-email">${t('email')}</label><input type="email" id="op-email" name="email" required value="${failure?.form.get('email') ?? ''}"></div>
<div><label for="op-name">${t('name')}</label><input type="text" id="op-name" name="name" value="${failure?.form.get('name') ?? ''}"></div>
<div><label for="op-role">${t('role')}</label><select id="op-role" name="role">${ROLES.map(
          (r) => html`<option value="${r}"${failure?.form.get('role') === r ? html` selected` : ''}>${r}</option>`,
        )}</select></div>
<div><label for="op-password">${t('password')}</label>
<input type="password" id="op-password" name="password" autocomplete="new-password" required minlength="12"></div>
</div><p class="muted">${t('passwordHint')}</p><button type="submit">${t('createButton')}</button></form></section>`
      : html``;
    const rows = operators.map(
      (
        o,
      ) => html`<tr><td><a href="/backoffice/operators/${o.operatorId}">${o.name || o.email}</a><br><span class="muted">${o.email}</span></td>
<td>${o.role}</td><td><span class="badge${o.state === 'active' ? ' ok' : ' bad'}">${t(o.state === 'active' ? 'active' : 'disabled')}</span>${
        o.lockedUntil !== null ? html` <span class="badge wait">${t('locked')}</span>` : ''
      }</td><td>${o.twoFactor ? t('yes') : t('no')}</td><td class="date">${dateTime(ctx.lang, ms(o.lastSignInAt))}</td></tr>`,
    );
    return ctx.page(reply, {
      status: failure?.status ?? 200,
      title: t('title'),
      section: 'operators',
      body: html`<h1>${t('title')}</h1>${doneNotice(request, DONE, (k) => t(`done_${k}`))}${
        failure === undefined ? '' : errorSummary(failure.message)
      }<div class="panel"><div class="table" tabindex="0"><table><caption class="muted">${t('caption', { count: operators.length })}</caption>
<thead><tr><th scope="col">${t('operator')}</th><th scope="col">${t('role')}</th><th scope="col">${t('state')}</th><th scope="col">${t('twoFactor')}</th>
<th scope="col">${t('lastSignIn')}</th></tr></thead>
<tbody>${rows}</tbody></table></div></div>${create}`,
    });
  };

  router.get('/operators', 'operators', (ctx, request, reply) => listPage(ctx, request, reply));

  router.post('/operators', 'operators', async (ctx, request, reply) => {
    const form = formOf(request);
    const outcome = await ctx.call(reply, 'POST /admin/v1/operators', {
      body: bodyOfForm(request, ['email', 'role', 'password', ...(form.get('name') ? ['name'] : [])]),
    });
    if (!outcome.ok) return outcome.forbidden ?? listPage(ctx, request, reply, { ...outcome, form });
    return seeOther(reply, '/backoffice/operators?done=created');
  });

  const detailPage = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    operatorId: string,
    failure?: PageFailure,
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.operators', ctx.lang);
    const listed = await ctx.call(reply, 'GET /admin/v1/operators', {});
    if (!listed.ok) return readFailed(ctx, reply, listed);
    const operator = (listed.result as { operators: OperatorView[] }).operators.find(
      (o) => o.operatorId === operatorId,
    );
    if (operator === undefined) return ctx.notFound(reply);
    const tokens = await ctx.call(reply, 'GET /admin/v1/operators/:operatorId/tokens', { params: { operatorId } });
    if (!tokens.ok) return readFailed(ctx, reply, tokens);
    const tokenRows = (tokens.result as { tokens: TokenView[] }).tokens;
    const self = operatorId === ctx.session.operatorId;
    const reasonField = (id: string): Html =>
      html`<label for="${id}">${t('reason')}</label><input type="text" id="${id}" name="reason" required maxlength="500">`;
    const actions: Html[] = [];
    if (ctx.can('PUT /admin/v1/operators/:operatorId/role')) {
      actions.push(html`<form method="post" action="/backoffice/operators/${operatorId}/role">${ctx.csrf}
<label for="new-role">${t('newRole')}</label><select id="new-role" name="role">${ROLES.map(
        (r) => html`<option value="${r}"${r === operator.role ? html` selected` : ''}>${r}</option>`,
      )}</select>${reasonField('role-reason')}<button type="submit">${t('changeRole')}</button></form>`);
    }
    const toggle = operator.state === 'active' ? 'disable' : 'enable';
    if (ctx.can(`POST /admin/v1/operators/:operatorId/${toggle}`) && !self) {
      actions.push(html`<form method="post" action="/backoffice/operators/${operatorId}/${toggle}">${ctx.csrf}
${reasonField(`${toggle}-reason`)}<button type="submit" class="${toggle === 'disable' ? 'danger' : ''}">${t(toggle)}</button></form>`);
    }
    const canRevoke = ctx.can('POST /admin/v1/operators/:operatorId/tokens/:tokenId/revoke');
    const tokenTable = html`<div class="table" tabindex="0"><table><caption class="muted">${t('tokensCaption', { count: tokenRows.length })}</caption>
<thead><tr><th scope="col">${t('tokenName')}</th><th scope="col">${t('created')}</th><th scope="col">${t('expires')}</th>
<th scope="col">${t('lastUsed')}</th><th scope="col">${t('state')}</th></tr></thead>
<tbody>${tokenRows.map(
      (
        k,
      ) => html`<tr><td>${k.name}<br><code>${k.tokenId}</code></td><td class="date">${dateTime(ctx.lang, ms(k.createdAt))}</td>
<td class="date">${dateTime(ctx.lang, ms(k.expiresAt))}</td><td class="date">${dateTime(ctx.lang, ms(k.lastUsedAt))}</td><td>${
        k.revokedAt !== null
          ? html`<span class="badge bad">${t('revoked')}</span>`
          : canRevoke
            ? html`<form method="post" action="/backoffice/operators/${operatorId}/tokens/${k.tokenId}/revoke">${ctx.csrf}
<label for="revoke-${k.tokenId}">${t('reason')}</label><input type="text" id="revoke-${k.tokenId}" name="reason" required maxlength="500">
<button type="submit" class="danger">${t('revoke')}</button></form>`
            : html`<span class="badge ok">${t('active')}</span>`
      }</td></tr>`,
    )}</tbody></table></div>`;
    return ctx.page(reply, {
      status: failure?.status ?? 200,
      title: operator.name || operator.email,
      section: 'operators',
      body: html`<p><a href="/backoffice/operators">${t('back')}</a></p><h1>${operator.name || operator.email}</h1>${doneNotice(
        request,
        DONE,
        (k) => t(`done_${k}`),
      )}${failure === undefined ? '' : errorSummary(failure.message)}
<div class="panel"><dl><dt>${t('email')}</dt><dd>${operator.email}</dd><dt>${t('role')}</dt><dd>${operator.role}</dd>
<dt>${t('state')}</dt><dd>${t(operator.state === 'active' ? 'active' : 'disabled')}</dd><dt>${t('twoFactor')}</dt>
<dd>${operator.twoFactor ? t('yes') : t('no')}</dd>
<dt>${t('lastSignIn')}</dt><dd>${dateTime(ctx.lang, ms(operator.lastSignInAt))}</dd><dt>${t('created')}</dt>
<dd>${dateTime(ctx.lang, ms(operator.createdAt))}</dd></dl>
<p><a href="/backoffice/audit?actor=${encodeURIComponent(operator.email)}">${t('theirActions')}</a></p></div>
${actions.length === 0 ? '' : html`<section class="panel actions" aria-labelledby="op-actions"><h2 id="op-actions">${t('actions')}</h2>${actions}</section>`}
<section class="panel" aria-labelledby="op-tokens"><h2 id="op-tokens">${t('tokens')}</h2>${tokenTable}</section>`,
    });
  };

  router.get('/operators/:operatorId', 'operators', (ctx, request, reply) =>
    detailPage(ctx, request, reply, (request.params as { operatorId: string }).operatorId),
  );

  const act =
    (
      route:
        'PUT /admin/v1/operators/:operatorId/role' | `POST /admin/v1/operators/:operatorId/${'disable' | 'enable'}`,
      done: (typeof DONE)[number],
      fields: string[],
    ) =>
    async (ctx: BackofficeContext, request: FastifyRequest, reply: FastifyReply) => {
      const { operatorId } = request.params as { operatorId: string };
      const outcome = await ctx.call(reply, route, { params: { operatorId }, body: bodyOfForm(request, fields) });
      if (!outcome.ok) return outcome.forbidden ?? detailPage(ctx, request, reply, operatorId, outcome);
      return seeOther(reply, `/backoffice/operators/${encodeURIComponent(operatorId)}?done=${done}`);
    };
  router.post(
    '/operators/:operatorId/role',
    'operators',
    act('PUT /admin/v1/operators/:operatorId/role', 'role', ['role', 'reason']),
  );
  router.post(
    '/operators/:operatorId/disable',
    'operators',
    act('POST /admin/v1/operators/:operatorId/disable', 'disabled', ['reason']),
  );
  router.post(
    '/operators/:operatorId/enable',
    'operators',
    act('POST /admin/v1/operators/:operatorId/enable', 'enabled', ['reason']),
  );
  router.post('/operators/:operatorId/tokens/:tokenId/revoke', 'operators', async (ctx, request, reply) => {
    const { operatorId, tokenId } = request.params as { operatorId: string; tokenId: string };
    const outcome = await ctx.call(reply, 'POST /admin/v1/operators/:operatorId/tokens/:tokenId/revoke', {
      params: { operatorId, tokenId },
      body: bodyOfForm(request, ['reason']),
    });
    if (!outcome.ok) return outcome.forbidden ?? detailPage(ctx, request, reply, operatorId, outcome);
    return seeOther(reply, `/backoffice/operators/${encodeURIComponent(operatorId)}?done=revoked`);
  });
}
