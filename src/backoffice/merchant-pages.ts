/**
 * Merchants: the list (search by id or by a part of the name, newest first, a page at a time, a
 * badge on every paused merchant) with the creation form, and a merchant's page: its pauses first,
 * then what it is set up with (callback address and its latest failures, settlement delay, fees),
 * its balances, API keys with their last use, and its console users. Pausing and resuming its
 * payments or payouts, and creating a merchant, are the admin routes of the same name, offered only
 * to a role that may call them (adjusting its balance too, for a role that may). Reads of the
 * merchant, balances, fees and users go through the admin routes (masked for the role already); the
 * keys with their last use come from the merchant service (which knows this node's unwritten uses);
 * the list and the callback failures are the back office's own queries.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dateTime, money } from '../console/i18n.js';
import { formOf, queryParam, seeOther } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import { LANGUAGES, type Language } from '../http/language.js';
import { translator, type Translator } from '../i18n/messages.js';
import { PAUSABLE, type MerchantPause, type Pausable } from '../merchants/pause.js';
import type { ApiKeyView } from '../merchants/service.js';
import { CURRENCIES, CURRENCY_CODES, parseDecimal } from '../money.js';
import * as q from './queries.js';
import { bodyOfForm, type BackofficeContext, type BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';
import { doneNotice, errorSummary, readFailed, type PageFailure as Failure } from './view.js';

const PAGE_SIZE = 50;
const DONE = ['created', 'paused', 'resumed', 'adjusted', 'adjustPending'] as const;

interface MerchantView {
  merchantId: string;
  name: string;
  language: string;
  callbackUrl: string | null;
  settlementDelayMs: number;
  cashierCurrency: string;
  createdAt: number;
  paused: Record<Pausable, MerchantPause | null>;
}

interface BalanceRow {
  currency: string;
  available: string;
  frozen: string;
  awaitingSettlement: string;
}

interface FeeRow {
  channel: string;
  currency: string;
  percentBps: number;
  fixed: string;
  minimum: string;
}

interface ConsoleUserRow {
  userId: string;
  email: string;
  name: string;
  totpEnabled: boolean;
  createdAt: number;
}

/** A decimal amount of the admin API ("1500.00") as the language writes it. */
export function decimalMoney(lang: Language, decimal: string, currency: string): string {
  const minor = parseDecimal(decimal, (CURRENCIES as Record<string, number>)[currency] ?? 2, { signed: true });
  return minor === undefined ? decimal : money(lang, minor, currency);
}

/** A cursor of the list's next page: `<createdAt>.<id>`. */
function cursorOf(text: string): q.MerchantCursor | undefined {
  const dot = text.indexOf('.');
  const createdAt = Number(text.slice(0, dot));
  const id = text.slice(dot + 1);
  return dot <= 0 || !Number.isSafeInteger(createdAt) || id === '' ? undefined : { createdAt, id };
}

/** The settlement delay in the largest whole unit that states it exactly. */
function delayText(t: Translator<'backoffice.merchants'>, ms: number): string {
  if (ms % 86_400_000 === 0) return t('delayDays', { count: ms / 86_400_000 });
  if (ms % 3_600_000 === 0) return t('delayHours', { count: ms / 3_600_000 });
  return t('delayMinutes', { count: Math.round(ms / 60_000) });
}

export function registerMerchantPages(router: BackofficeRouter, deps: BackofficeServices): void {
  const listPage = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    failure?: Failure,
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.merchants', ctx.lang);
    const search = queryParam(request, 'q').trim().slice(0, 200);
    const before = cursorOf(queryParam(request, 'before'));
    const rows = await q.searchMerchants(deps.store.read, { q: search, before, limit: PAGE_SIZE + 1 });
    const page = rows.slice(0, PAGE_SIZE);
    const last = page.at(-1);
    const next =
      rows.length > PAGE_SIZE && last !== undefined
        ? `/backoffice/merchants?${new URLSearchParams({ ...(search !== '' && { q: search }), before: `${last.created_at}.${last.id}` }).toString()}`
        : undefined;
    const badges = (m: q.MerchantListRow): Html =>
      html`${m.paused_payments_at !== null ? html` <span class="badge bad">${t('pausedPaymentsBadge')}</span>` : ''}${
        m.paused_payouts_at !== null ? html` <span class="badge bad">${t('pausedPayoutsBadge')}</span>` : ''
      }`;
    const table =
      page.length === 0
        ? html`<p class="muted">${search === '' ? t('none') : t('noMatch')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('caption', { count: page.length })}</caption>
<thead><tr><th scope="col">${t('merchant')}</th><th scope="col">${t('state')}</th><th scope="col">${t('callback')}</th>
<th scope="col">${t('created')}</th></tr></thead>
<tbody>${page.map(
            (m) => html`<tr><td><a href="/backoffice/merchants/${m.id}">${m.name}</a><br><code>${m.id}</code></td>
<td>${m.paused_payments_at === null && m.paused_payouts_at === null ? html`<span class="badge ok">${t('running')}</span>` : badges(m)}</td>
<td>${m.callback_url === null ? html`<span class="muted">${t('noCallback')}</span>` : t('callbackSet')}</td>
<td class="date">${dateTime(ctx.lang, m.created_at)}</td></tr>`,
          )}</tbody></table></div>`;
    const create = ctx.can('POST /admin/v1/merchants')
      ? html`<section class="panel" aria-labelledby="new-merchant"><h2 id="new-merchant">${t('create')}</h2>
<form method="post" action="/backoffice/merchants">${ctx.csrf}<div class="filters">
<div><label for="m-name">${t('name')}</label>
<input type="text" id="m-name" name="name" required maxlength="200" value="${failure?.form?.get('name') ?? ''}"></div>
<div><label for="m-language">${t('language')}</label><select id="m-language" name="language">${LANGUAGES.map(
          (l) => html`<option value="${l}"${failure?.form?.get('language') === l ? html` selected` : ''}>${l}</option>`,
        )}</select></div></div><button type="submit">${t('createButton')}</button></form></section>`
      : html``;
    return ctx.page(reply, {
      status: failure?.status ?? 200,
      title: t('title'),
      section: 'merchants',
      body: html`<h1>${t('title')}</h1>${failure === undefined ? '' : errorSummary(failure.message)}
<form method="get" action="/backoffice/merchants" class="panel" role="search"><div class="filters">
<div><label for="m-q">${t('search')}</label><input type="search" id="m-q" name="q" value="${search}" maxlength="200"></div></div>
<p class="muted">${t('searchHint')}</p><button type="submit">${t('searchButton')}</button></form>
<div class="panel">${table}${next === undefined ? '' : html`<p><a href="${next}">${t('nextPage')}</a></p>`}</div>${create}`,
    });
  };

  router.get('/merchants', 'merchants', (ctx, request, reply) => listPage(ctx, request, reply));

  router.post('/merchants', 'merchants', async (ctx, request, reply) => {
    const form = formOf(request);
    const outcome = await ctx.call(reply, 'POST /admin/v1/merchants', {
      body: bodyOfForm(request, ['name', 'language']),
    });
    if (!outcome.ok) return outcome.forbidden ?? listPage(ctx, request, reply, { ...outcome, form });
    const { merchantId } = outcome.result as { merchantId: string };
    return seeOther(reply, `/backoffice/merchants/${encodeURIComponent(merchantId)}?done=created`);
  });

  const detailPage = async (
    ctx: BackofficeContext,
    request: FastifyRequest,
    reply: FastifyReply,
    merchantId: string,
    failure?: Failure,
  ): Promise<FastifyReply> => {
    const t = translator('backoffice.merchants', ctx.lang);
    const params = { merchantId };
    const shown = await ctx.call(reply, 'GET /admin/v1/merchants/:merchantId', { params });
    if (!shown.ok)
      return shown.status === 404 && shown.forbidden === undefined
        ? ctx.notFound(reply)
        : readFailed(ctx, reply, shown);
    const merchant = shown.result as MerchantView;
    const [balances, fees, users] = await Promise.all([
      ctx.call(reply, 'GET /admin/v1/merchants/:merchantId/balances', { params }),
      ctx.call(reply, 'GET /admin/v1/merchants/:merchantId/fees', { params }),
      ctx.call(reply, 'GET /admin/v1/merchants/:merchantId/users', { params }),
    ]);
    if (!balances.ok) return readFailed(ctx, reply, balances);
    if (!fees.ok) return readFailed(ctx, reply, fees);
    if (!users.ok) return readFailed(ctx, reply, users);
    // The service's view of the keys: their last use includes the uses this node has not written yet.
    const [allKeys, failures] = await Promise.all([
      deps.merchants.listApiKeys(merchantId),
      q.recentCallbackFailures(deps.store.read, merchantId, 10),
    ]);
    const canPause = ctx.can('POST /admin/v1/merchants/:merchantId/pause');
    const canResume = ctx.can('POST /admin/v1/merchants/:merchantId/resume');
    const what = (w: Pausable) => t(w === 'payments' ? 'payments' : 'payouts');

    const pauses = PAUSABLE.map((w) => {
      const pause = merchant.paused[w];
      if (pause === null) return html``;
      const resume = canResume
        ? html`<form method="post" action="/backoffice/merchants/${merchantId}/resume" class="actions">${ctx.csrf}
<input type="hidden" name="what" value="${w}"><label for="resume-${w}">${t('reason')}</label>
<input type="text" id="resume-${w}" name="reason" required maxlength="500"> <button type="submit">${t('resume', { what: what(w) })}</button></form>`
        : '';
      return html`<div class="paused" id="paused-${w}"><p><strong>${t(w === 'payments' ? 'pausedPayments' : 'pausedPayouts')}</strong></p>
<p>${t('pausedSince', { since: dateTime(ctx.lang, pause.since), by: pause.by })}</p><p>${t('pausedReason')}: ${pause.reason}</p>${resume}</div>`;
    });

    const notPaused = PAUSABLE.filter((w) => merchant.paused[w] === null);
    const pauseForm =
      canPause && notPaused.length > 0
        ? html`<section class="panel" aria-labelledby="m-pause"><h2 id="m-pause">${t('pauseTitle')}</h2><p class="muted">${t('pauseHint')}</p>
<form method="post" action="/backoffice/merchants/${merchantId}/pause">${ctx.csrf}<div class="filters">
<div><label for="pause-what">${t('pauseWhat')}</label><select id="pause-what" name="what">${notPaused.map(
            (w) => html`<option value="${w}">${what(w)}</option>`,
          )}</select></div>
<div><label for="pause-reason">${t('reason')}</label><input type="text" id="pause-reason" name="reason" required maxlength="500"></div></div>
<button type="submit" class="danger">${t('pauseButton')}</button></form></section>`
        : html``;

    const balanceRows = (balances.result as { balances: BalanceRow[] }).balances;
    const balanceTable =
      balanceRows.length === 0
        ? html`<p class="muted">${t('noBalances')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('balancesCaption')}</caption>
<thead><tr><th scope="col">${t('currency')}</th><th scope="col" class="num">${t('available')}</th><th scope="col" class="num">${t('frozen')}</th>
<th scope="col" class="num">${t('awaiting')}</th></tr></thead>
<tbody>${balanceRows.map(
            (
              b,
            ) => html`<tr><th scope="row">${b.currency}</th><td class="num">${decimalMoney(ctx.lang, b.available, b.currency)}</td>
<td class="num">${decimalMoney(ctx.lang, b.frozen, b.currency)}</td><td class="num">${decimalMoney(ctx.lang, b.awaitingSettlement, b.currency)}</td></tr>`,
          )}</tbody></table></div>`;
    const adjustForm = ctx.can('POST /admin/v1/merchants/:merchantId/balance-adjustments')
      ? html`<form method="post" action="/backoffice/merchants/${merchantId}/adjust">${ctx.csrf}<h3>${t('adjustLink')}</h3><div class="filters">
<div><label for="adj-currency">${t('currency')}</label><select id="adj-currency" name="currency">${CURRENCY_CODES.map(
          (c) => html`<option value="${c}"${failure?.form?.get('currency') === c ? html` selected` : ''}>${c}</option>`,
        )}</select></div>
<div><label for="adj-amount">${t('adjustAmount')}</label>
<input type="text" id="adj-amount" name="amount" required inputmode="decimal" maxlength="32" value="${failure?.form?.get('amount') ?? ''}"></div>
<div><label for="adj-reason">${t('reason')}</label>
<input type="text" id="adj-reason" name="reason" required maxlength="500" value="${failure?.form?.get('reason') ?? ''}"></div>
</div><button type="submit">${t('adjustButton')}</button></form>`
      : '';

    const feeRows = (fees.result as { fees: FeeRow[] }).fees;
    const feeTable =
      feeRows.length === 0
        ? html`<p class="muted">${t('noFees')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('feesCaption')}</caption>
<thead><tr><th scope="col">${t('channel')}</th><th scope="col" class="num">${t('percent')}</th><th scope="col" class="num">${t('fixed')}</th>
<th scope="col" class="num">${t('minimum')}</th></tr></thead>
<tbody>${feeRows.map(
            (
              f,
            ) => html`<tr><th scope="row"><code>${f.channel}</code></th><td class="num">${t('percentValue', { percent: (f.percentBps / 100).toFixed(2) })}</td>
<td class="num">${decimalMoney(ctx.lang, f.fixed, f.currency)}</td><td class="num">${decimalMoney(ctx.lang, f.minimum, f.currency)}</td></tr>`,
          )}</tbody></table></div>`;

    const keyStatus = (k: ApiKeyView): string =>
      k.status === 'disabled' ? t('keyDisabled') : k.activeAt > ctx.now ? t('keyPending') : t('keyActive');
    const keys = allKeys.filter((k) => k.status !== 'deleted').reverse();
    const keyTable =
      keys.length === 0
        ? html`<p class="muted">${t('noKeys')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('keysCaption', { count: keys.length })}</caption>
<thead><tr><th scope="col">${t('accessKey')}</th><th scope="col">${t('permissions')}</th><th scope="col">${t('state')}</th>
<th scope="col">${t('lastUsed')}</th><th scope="col">${t('created')}</th></tr></thead>
<tbody>${keys.map(
            (k) => html`<tr><td>
<code>${k.accessKey}</code>${k.label === '' ? '' : html`<br>${k.label}`}${k.debug ? html` <span class="badge wait">${t('debug')}</span>` : ''}</td>
<td>${k.permissions.join(', ')}</td><td>${keyStatus(k)}</td>
<td class="date">${k.lastUsedAt === null ? t('neverUsed') : dateTime(ctx.lang, k.lastUsedAt)}</td>
<td class="date">${dateTime(ctx.lang, k.createdAt)}</td></tr>`,
          )}</tbody></table></div>`;

    const failureTable =
      failures.length === 0
        ? html`<p class="muted">${t('noCallbackFailures')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('failuresCaption', { count: failures.length })}</caption>
<thead><tr><th scope="col">${t('when')}</th><th scope="col">${t('outcome')}</th><th scope="col">${t('error')}</th>
<th scope="col">${t('address')}</th></tr></thead>
<tbody>${failures.map(
            (f) => html`<tr><td class="date">${dateTime(ctx.lang, f.started_at)}</td>
<td>${f.outcome}${f.http_status === null ? '' : html` (HTTP ${f.http_status})`}</td>
<td>${f.error ?? '—'}</td><td><code>${f.url}</code></td></tr>`,
          )}</tbody></table></div>`;

    const userRows = (users.result as { users: ConsoleUserRow[] }).users;
    const userTable =
      userRows.length === 0
        ? html`<p class="muted">${t('noUsers')}</p>`
        : html`<div class="table" tabindex="0"><table><caption class="muted">${t('usersCaption', { count: userRows.length })}</caption>
<thead><tr><th scope="col">${t('name')}</th><th scope="col">${t('email')}</th><th scope="col">${t('twoStep')}</th>
<th scope="col">${t('created')}</th></tr></thead>
<tbody>${userRows.map(
            (u) =>
              html`<tr><td>${u.name}</td><td>${u.email}</td><td>${u.totpEnabled ? t('yes') : t('no')}</td>
<td class="date">${dateTime(ctx.lang, u.createdAt)}</td></tr>`,
          )}</tbody></table></div>`;

    const anyPause = merchant.paused.payments !== null || merchant.paused.payouts !== null;
    return ctx.page(reply, {
      status: failure?.status ?? 200,
      title: merchant.name,
      section: 'merchants',
      body: html`<p><a href="/backoffice/merchants">${t('back')}</a></p><h1>${merchant.name}</h1>${doneNotice(request, DONE, (k) => t(`done_${k}`))}${
        failure === undefined ? '' : errorSummary(failure.message)
      }${anyPause ? pauses : ''}
<div class="twocol"><section class="panel" aria-labelledby="m-about"><h2 id="m-about">${t('about')}</h2><dl>
<dt>${t('merchantId')}</dt><dd><code>${merchant.merchantId}</code></dd><dt>${t('language')}</dt><dd>${merchant.language}</dd>
<dt>${t('settlementDelay')}</dt><dd>${delayText(t, merchant.settlementDelayMs)}</dd><dt>${t('cashierCurrency')}</dt><dd>${merchant.cashierCurrency}</dd>
<dt>${t('created')}</dt><dd>${dateTime(ctx.lang, merchant.createdAt)}</dd>
<dt>${t('callback')}</dt><dd>${merchant.callbackUrl === null ? t('noCallback') : html`<code>${merchant.callbackUrl}</code>`}</dd></dl>
<p><a href="/backoffice/orders?merchant=${encodeURIComponent(merchantId)}">${t('theirOrders')}</a>${
        ctx.holds('audit.read')
          ? html` · <a href="/backoffice/audit?targetType=merchant&amp;targetId=${encodeURIComponent(merchantId)}">${t('theirAudit')}</a>`
          : ''
      }</p></section>
<section class="panel" aria-labelledby="m-balances"><h2 id="m-balances">${t('balances')}</h2>${balanceTable}${adjustForm}</section></div>
${pauseForm}
<section class="panel" aria-labelledby="m-keys"><h2 id="m-keys">${t('keys')}</h2>${keyTable}</section>
<section class="panel" aria-labelledby="m-callbacks"><h2 id="m-callbacks">${t('callbackFailures')}</h2>${failureTable}</section>
<section class="panel" aria-labelledby="m-fees"><h2 id="m-fees">${t('fees')}</h2>${feeTable}</section>
<section class="panel" aria-labelledby="m-users"><h2 id="m-users">${t('users')}</h2>${userTable}</section>`,
    });
  };

  router.get('/merchants/:merchantId', 'merchants', (ctx, request, reply) =>
    detailPage(ctx, request, reply, (request.params as { merchantId: string }).merchantId),
  );

  router.post('/merchants/:merchantId/adjust', 'merchants', async (ctx, request, reply) => {
    const { merchantId } = request.params as { merchantId: string };
    const form = formOf(request);
    const outcome = await ctx.call(reply, 'POST /admin/v1/merchants/:merchantId/balance-adjustments', {
      params: { merchantId },
      body: bodyOfForm(request, ['currency', 'amount', 'reason']),
    });
    if (!outcome.ok) return outcome.forbidden ?? detailPage(ctx, request, reply, merchantId, { ...outcome, form });
    const state = (outcome.result as { state: 'applied' | 'pending' }).state;
    return seeOther(
      reply,
      `/backoffice/merchants/${encodeURIComponent(merchantId)}?done=${state === 'applied' ? 'adjusted' : 'adjustPending'}`,
    );
  });

  for (const action of ['pause', 'resume'] as const) {
    router.post(`/merchants/:merchantId/${action}`, 'merchants', async (ctx, request, reply) => {
      const { merchantId } = request.params as { merchantId: string };
      const outcome = await ctx.call(reply, `POST /admin/v1/merchants/:merchantId/${action}`, {
        params: { merchantId },
        body: bodyOfForm(request, ['what', 'reason']),
      });
      if (!outcome.ok) return outcome.forbidden ?? detailPage(ctx, request, reply, merchantId, outcome);
      return seeOther(
        reply,
        `/backoffice/merchants/${encodeURIComponent(merchantId)}?done=${action === 'pause' ? 'paused' : 'resumed'}`,
      );
    });
  }
}
