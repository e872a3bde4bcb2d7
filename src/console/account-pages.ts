/**
 * Signing in and out, the second factor, the user's account page (password, TOTP, language) and
 * the overview a merchant lands on: its figures of today and the last 7 UTC days, a chart of them,
 * balances and failed callbacks, each linked to the matching list.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { qrSvg } from '../cashier/qr-svg.js';
import { html, trusted, type Html } from '../http/html.js';
import { isLanguage, type Language } from '../http/language.js';
import { ConsoleInputError, SESSION_LIFETIME_MS, type ConsoleAccounts } from './accounts.js';
import { DAY_MS, dayOf, dayStart, errorSummary, linkWith, notice, textField, type FieldError } from './forms.js';
import { translator, type Translator } from '../i18n/messages.js';
import { dateTime, decimalText, languageOfRequest, money } from './i18n.js';
import { csrfField, sendConsolePage } from './layout.js';
import { PASSWORD_MIN_LENGTH } from './passwords.js';
import type { ConsoleServices } from './plugin.js';
import { countOrdersWithFailedEvents } from '../callbacks/queries.js';
import { overviewFigures, type OverviewFigure } from './queries.js';
import {
  consolePath,
  formOf,
  queryParam,
  readCookie,
  seeOther,
  sendCsrfRefusal,
  setCookie,
  SESSION_COOKIE,
  SIGN_IN_CSRF_COOKIE,
  type ConsoleContext,
  type ConsoleRouter,
} from './router.js';
import { otpauthUri } from './totp.js';

type T = Translator<'console.account'>;

function signInPage(
  reply: FastifyReply,
  input: {
    lang: Language;
    now: number;
    status: number;
    csrf: string;
    email?: string;
    next: string;
    errors?: FieldError[];
    info?: string;
  },
): FastifyReply {
  const t = translator('console.account', input.lang);
  const errors = input.errors ?? [];
  const summary = errorSummary(input.lang, errors);
  return sendConsolePage(reply, input.status, {
    lang: input.lang,
    now: input.now,
    title: t('signInTitle'),
    languageLinksPath: '/console/sign-in',
    body: html`<div class="panel narrow"><h1>${t('signInTitle')}</h1>${notice(input.info)}${summary}<p class="muted">${t('signInLead')}</p>
<form method="post" action="/console/sign-in" novalidate>${csrfField(input.csrf)}<input type="hidden" name="next" value="${input.next}">
${textField({ name: 'email', label: t('email'), type: 'email', value: input.email, autocomplete: 'username', required: true, errors })}
${textField({ name: 'password', label: t('password'), type: 'password', autocomplete: 'current-password', required: true, errors })}
<button type="submit">${t('signIn')}</button></form></div>`,
  });
}

function totpPage(
  reply: FastifyReply,
  input: { lang: Language; now: number; status: number; csrf: string; errors?: FieldError[] },
): FastifyReply {
  const t = translator('console.account', input.lang);
  const errors = input.errors ?? [];
  return sendConsolePage(reply, input.status, {
    lang: input.lang,
    now: input.now,
    title: t('totpTitle'),
    body: html`<div class="panel narrow"><h1>${t('totpTitle')}</h1>${errorSummary(input.lang, errors)}<p>${t('totpLead')}</p>
<form method="post" action="/console/sign-in/totp" novalidate>${csrfField(input.csrf)}
${textField({ name: 'code', label: t('code'), inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: 7, required: true, errors })}
<button type="submit">${t('verify')}</button></form></div>`,
  });
}

type OverviewT = Translator<'console.overview'>;

/** The overview's rows by area, in the order it lists them: each an area and a kind of order. */
const AREA_ROWS = [
  'ken.collection',
  'ken.transfer',
  'bra.collection',
  'bra.transfer',
  'cashier.collection',
  'exchange.fiat_to_token',
  'exchange.token_to_fiat',
] as const;

/** The figures of the overview cover this many UTC days, today included. */
const OVERVIEW_DAYS = 7;

/** A link into the orders list with these filters. */
const ordersLink = (filters: Record<string, string>): string => linkWith('/console/orders', filters);

/** The callbacks log's failed attempts of the days. */
const callbacksLink = (days: { from: string; to: string }): string =>
  `${linkWith('/console/callbacks', { failed: '1', ...days })}#log`;

interface Tally {
  count: number;
  succeeded: number;
  unsuccessful: number;
  differentAmount: number;
  volume: Map<string, bigint>;
}

function tally(figures: readonly OverviewFigure[]): Tally {
  const total: Tally = { count: 0, succeeded: 0, unsuccessful: 0, differentAmount: 0, volume: new Map() };
  for (const f of figures) {
    total.count += f.count;
    total.succeeded += f.succeeded;
    total.unsuccessful += f.unsuccessful;
    total.differentAmount += f.differentAmount;
    total.volume.set(f.currency, (total.volume.get(f.currency) ?? 0n) + f.volume);
  }
  return total;
}

const percentFormats = new Map<Language, Intl.NumberFormat>();

/** succeeded ÷ ended as a percentage ("97.5%"); a ratio shown, not money. */
function percent(lang: Language, part: number, whole: number): string {
  let format = percentFormats.get(lang);
  if (format === undefined) {
    format = new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 1 });
    percentFormats.set(lang, format);
  }
  return format.format(part / whole);
}

const dayFormats = new Map<Language, Intl.DateTimeFormat>();

/** A UTC day as a short label: "Mon, 23 Nov". */
function dayLabel(lang: Language, ms: number): string {
  let format = dayFormats.get(lang);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(lang, { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
    dayFormats.set(lang, format);
  }
  return format.format(new Date(ms));
}

/** Seven daily bars (orders created, and those that succeeded) as inline SVG, named with its figures. */
function dailyChart(t: OverviewT, days: readonly { label: string; count: number; succeeded: number }[]): Html {
  const width = 560;
  const slot = width / days.length;
  const bar = Math.round(slot * 0.6);
  const top = 24;
  const base = 150;
  const max = Math.max(1, ...days.map((d) => d.count));
  const height = (n: number) => Math.round(((base - top) * n) / max);
  const name = t('chartTitle', {
    days: days.map((d) => t('chartDay', { day: d.label, count: d.count, succeeded: d.succeeded })).join('; '),
  });
  const bars = days.map((d, i) => {
    const x = Math.round(i * slot + (slot - bar) / 2);
    const all = height(d.count);
    const ok = height(d.succeeded);
    const middle = Math.round(i * slot + slot / 2);
    return html`<rect x="${x}" y="${base - all}" width="${bar}" height="${all}" fill="#bfdbfe" stroke="#1d4ed8"
stroke-width="1.5"></rect><rect x="${x}" y="${base - ok}" width="${bar}" height="${ok}" fill="#065f46"></rect><text x="${middle}"
y="${base - all - 6}" text-anchor="middle" font-size="13" fill="#111827">${d.count}</text><text x="${middle}" y="${base + 20}"
text-anchor="middle" font-size="12" fill="#111827">${d.label}</text>`;
  });
  return html`<figure class="chart"><svg id="overview-chart" role="img" aria-labelledby="overview-chart-title"
viewBox="0 0 ${width} ${base + 30}" width="${width}"
height="${base + 30}" xmlns="http://www.w3.org/2000/svg"><title id="overview-chart-title">${name}</title><line x1="0" y1="${base}"
x2="${width}" y2="${base}" stroke="#4b5563"></line>${bars}</svg>
<figcaption class="legend"><span class="swatch all"></span> ${t('legendAll')} <span class="swatch ok"></span> ${t('legendSucceeded')}</figcaption></figure>`;
}

async function overviewPage(ctx: ConsoleContext, deps: ConsoleServices, reply: FastifyReply): Promise<FastifyReply> {
  const t = translator('console.account', ctx.lang);
  const o = translator('console.overview', ctx.lang);
  const lang = ctx.lang;
  const db = deps.store.read;
  const today = dayStart(dayOf(ctx.now)) ?? ctx.now;
  const first = today - (OVERVIEW_DAYS - 1) * DAY_MS;
  const [figures, failedCallbacks, currencies] = await Promise.all([
    overviewFigures(db, ctx.merchantId, { from: first, until: today + DAY_MS, dayMs: DAY_MS }),
    countOrdersWithFailedEvents(db, ctx.merchantId, { from: first, to: today + DAY_MS }),
    deps.ledger.currenciesOf(ctx.merchantId),
  ]);
  const balances = await deps.ledger.balances(db, ctx.merchantId, currencies);
  const todayDay = dayOf(today);
  const weekRange = { from: dayOf(first), to: todayDay };
  const todayRange = { from: todayDay, to: todayDay };
  const todayIndex = OVERVIEW_DAYS - 1;

  const week = tally(figures);
  const todays = tally(figures.filter((f) => f.day === todayIndex));
  const ended = week.succeeded + week.unsuccessful;
  // Each figure's link is described by its label, so it reads "6, Orders in the last 7 days" out of context.
  const stat = (id: string, label: string, value: string, href: string, note?: string) => {
    const noteLine = note !== undefined ? html`<p class="muted">${note}</p>` : '';
    return html`<div class="panel stat" id="${id}"><p class="muted"
id="${id}-label">${label}</p><p class="figure"><a href="${href}" aria-describedby="${id}-label">${value}</a></p>${noteLine}</div>`;
  };
  const stats = html`<div class="cards stats">
${stat('stat-today', o('ordersToday'), String(todays.count), ordersLink(todayRange))}
${stat('stat-week', o('ordersWeek'), String(week.count), ordersLink(weekRange))}
${stat(
  'stat-success',
  o('successRate'),
  ended === 0 ? '—' : percent(lang, week.succeeded, ended),
  ordersLink({ ...weekRange, status: 'success' }),
  ended === 0 ? o('noneEnded') : o('successOf', { succeeded: week.succeeded, ended, open: week.count - ended }),
)}
${stat('stat-differs', o('differentAmount'), String(week.differentAmount), ordersLink({ ...weekRange, differs: '1' }))}
${stat('stat-callbacks', o('failedCallbacks'), String(failedCallbacks), callbacksLink(weekRange), o('failedCallbacksHint'))}
</div>`;

  const days = Array.from({ length: OVERVIEW_DAYS }, (_, i) => {
    const ofDay = tally(figures.filter((f) => f.day === i));
    const start = first + i * DAY_MS;
    return { label: dayLabel(lang, start), iso: dayOf(start), count: ofDay.count, succeeded: ofDay.succeeded };
  });
  const dayTable = html`<div class="table"
tabindex="0"><table id="overview-days"><caption class="muted">${o('daysCaption')}</caption><thead><tr><th>${o('day')}</th><th
class="num">${o('orders')}</th><th class="num">${o('succeeded')}</th></tr></thead><tbody>${days.map((d) => {
    const all = ordersLink({ from: d.iso, to: d.iso });
    const succeeded = ordersLink({ from: d.iso, to: d.iso, status: 'success' });
    return html`<tr data-day="${d.iso}"><td class="date">${d.label}</td><td class="num"><a href="${all}">${d.count}</a></td><td
class="num"><a href="${succeeded}">${d.succeeded}</a></td></tr>`;
  })}</tbody></table></div>`;

  const volumeCell = (volume: Map<string, bigint>, filters: Record<string, string>) =>
    volume.size === 0
      ? '—'
      : html`${[...volume.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(
            ([currency, minor], i) =>
              html`${i > 0 ? html`<br>` : ''}<a href="${ordersLink({ ...filters, status: 'success' })}"
data-volume="${currency}:${decimalText(minor, currency)}">${money(lang, minor, currency)}</a>`,
          )}`;
  const areaRows = AREA_ROWS.flatMap((key) => {
    const [area = '', kind = ''] = key.split('.');
    const ofRow = figures.filter((f) => f.area === area && f.kind === kind);
    if (ofRow.length === 0) return [];
    const w = tally(ofRow);
    const d = tally(ofRow.filter((f) => f.day === todayIndex));
    const rowEnded = w.succeeded + w.unsuccessful;
    const filters = { area, kind };
    const rate =
      rowEnded === 0
        ? '—'
        : html`<a href="${ordersLink({ ...filters, ...weekRange, status: 'success' })}">${percent(lang, w.succeeded, rowEnded)}</a> <span
class="muted">(${w.succeeded}/${rowEnded})</span>`;
    return [
      html`<tr data-area="${key}"><th scope="row">${o(key)}</th>
<td class="num"><a href="${ordersLink({ ...filters, ...todayRange })}" data-count-today="${d.count}">${d.count}</a></td>
<td class="num">${volumeCell(d.volume, { ...filters, ...todayRange })}</td>
<td class="num"><a href="${ordersLink({ ...filters, ...weekRange })}" data-count-week="${w.count}">${w.count}</a></td>
<td class="num">${volumeCell(w.volume, { ...filters, ...weekRange })}</td>
<td class="num">${rate}</td></tr>`,
    ];
  });
  const areaTable =
    areaRows.length === 0
      ? html`<p>${o('noOrders')}</p>`
      : html`<p class="muted">${o('byAreaLead')}</p><div class="table"
tabindex="0"><table id="overview-areas"><thead><tr><th>${o('area')}</th><th class="num">${o('todayOrders')}</th><th
class="num">${o('todayVolume')}</th><th class="num">${o('weekOrders')}</th><th class="num">${o('weekVolume')}</th><th
class="num">${o('weekRate')}</th></tr></thead><tbody>${areaRows}</tbody></table></div>`;

  const balanceTable =
    balances.length === 0
      ? html`<p>${o('noBalances')}</p>`
      : html`<div class="table"
tabindex="0"><table id="overview-balances"><thead><tr><th>${o('currency')}</th><th class="num">${o('available')}</th><th
class="num">${o('frozen')}</th><th class="num">${o('awaitingSettlement')}</th><th>${o('statement')}</th></tr></thead><tbody>${balances.map(
          (b) => {
            const exact = decimalText(b.available, b.currency);
            const available = money(lang, b.available, b.currency);
            return html`<tr data-currency="${b.currency}"><th scope="row">${b.currency}</th><td class="num" data-available="${exact}">${available}</td><td
class="num">${money(lang, b.frozen, b.currency)}</td><td class="num">${money(lang, b.awaitingSettlement, b.currency)}</td><td><a
href="/console/balances?currency=${b.currency}">${o('statement')} ${b.currency}</a></td></tr>`;
          },
        )}</tbody></table></div>`;

  return ctx.page(reply, {
    title: t('overview'),
    section: 'overview',
    body: html`<h1>${ctx.merchant.name}</h1><div class="cards wide">
<div class="panel"><dl><dt>${t('merchantId')}</dt><dd><code id="overview-merchant-id">${ctx.merchantId}</code></dd><dt>${t('callbackAddress')}</dt><dd><span
id="overview-callback-address">${ctx.merchant.callbackUrl ?? t('notSet')}</span></dd></dl></div>
<div class="panel"><h2>${t('gettingStarted')}</h2><ol class="steps"><li><a href="/console/keys">${t('step1')}</a></li><li><a
href="/console/callbacks">${t('step2')}</a></li><li><a href="/console/signature">${t('step3')}</a></li><li><a
href="/console/orders">${t('step4')}</a></li></ol></div></div>
<section id="figures"><h2>${o('figures')}</h2><p class="muted">${o('figuresLead', { today: dayLabel(lang, today) })}</p>${stats}
<div class="panel">${dailyChart(o, days)}${dayTable}</div></section>
<section class="panel" id="areas"><h2>${o('byArea')}</h2>${areaTable}</section>
<section class="panel" id="balances"><h2>${o('balances')}</h2>${balanceTable}</section>`,
  });
}

/**
 * The overview a merchant lands on: who they are, how to start, and the figures of today and the
 * last 7 UTC days with links into the matching lists.
 */
export function registerOverviewPage(router: ConsoleRouter, deps: ConsoleServices): void {
  router.get('/console', (ctx, _request, reply) => overviewPage(ctx, deps, reply));
}

export interface AccountPageDeps {
  accounts: ConsoleAccounts;
  now: () => number;
}

/** The pages before and around the signed-in console: sign-in, second factor, sign-out, language. */
export function registerSignInPages(scope: FastifyInstance, router: ConsoleRouter, deps: AccountPageDeps): void {
  const langOf = (request: FastifyRequest): Language =>
    languageOfRequest(queryParam(request, 'lang'), request.headers['accept-language']);
  /** The sign-in form's double-submit token: a cookie, and the same value in the form. */
  const signInToken = (request: FastifyRequest, reply: FastifyReply): string => {
    const existing = readCookie(request, SIGN_IN_CSRF_COOKIE);
    if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = randomBytes(32).toString('base64url');
    setCookie(reply, SIGN_IN_CSRF_COOKIE, token, router.secure(request));
    return token;
  };

  scope.get('/console/sign-in', async (request, reply) => {
    const session = await router.sessionOf(request);
    if (session?.stage === 'full') return seeOther(reply, consolePath(queryParam(request, 'next')));
    const lang = langOf(request);
    const t = translator('console.account', lang);
    const info =
      queryParam(request, 'signed-out') === '1'
        ? t('signedOut')
        : queryParam(request, 'next') !== ''
          ? t('sessionEnded')
          : undefined;
    return signInPage(reply, {
      lang,
      now: deps.now(),
      status: 200,
      csrf: signInToken(request, reply),
      next: consolePath(queryParam(request, 'next')),
      info,
    });
  });

  scope.post('/console/sign-in', async (request, reply) => {
    const form = formOf(request);
    const lang = languageOfRequest(form.get('lang') ?? queryParam(request, 'lang'), request.headers['accept-language']);
    const t = translator('console.account', lang);
    const cookie = readCookie(request, SIGN_IN_CSRF_COOKIE);
    if (router.formRefused(request, cookie)) return sendCsrfRefusal(reply, lang, deps.now());
    const email = (form.get('email') ?? '').slice(0, 254);
    const next = consolePath(form.get('next') ?? '');
    const result = await deps.accounts.signIn(email, form.get('password') ?? '', request.ip);
    const again = (status: number, message: string) =>
      signInPage(reply, {
        lang,
        now: deps.now(),
        status,
        csrf: signInToken(request, reply),
        email,
        next,
        errors: [{ field: 'email', message }],
      });
    if (result.outcome === 'rate_limited') {
      void reply.header('retry-after', String(Math.ceil(result.retryAfterMs / 1000)));
      return again(429, t('rateLimited', { minutes: Math.ceil(result.retryAfterMs / 60_000) }));
    }
    if (result.outcome === 'wrong_credentials') return again(401, t('wrongCredentials'));
    setCookie(reply, SESSION_COOKIE, result.token, router.secure(request));
    return seeOther(reply, result.session.stage === 'totp' ? '/console/sign-in/totp' : next);
  });

  scope.get('/console/sign-in/totp', async (request, reply) => {
    const session = await router.sessionOf(request);
    if (session === undefined) return seeOther(reply, '/console/sign-in');
    if (session.stage === 'full') return seeOther(reply, '/console');
    return totpPage(reply, { lang: session.user.language, now: deps.now(), status: 200, csrf: session.csrfToken });
  });

  scope.post('/console/sign-in/totp', async (request, reply) => {
    const session = await router.sessionOf(request);
    if (session === undefined) return seeOther(reply, '/console/sign-in');
    const lang = session.user.language;
    const t = translator('console.account', lang);
    const form = formOf(request);
    if (router.formRefused(request, session.csrfToken)) return sendCsrfRefusal(reply, lang, deps.now());
    const result = await deps.accounts.completeSecondFactor(session, form.get('code') ?? '', request.ip);
    if (result.outcome === 'rate_limited') {
      void reply.header('retry-after', String(Math.ceil(result.retryAfterMs / 1000)));
      return signInPage(reply, {
        lang,
        now: deps.now(),
        status: 429,
        csrf: signInToken(request, reply),
        next: '/console',
        errors: [{ field: 'email', message: t('rateLimited', { minutes: Math.ceil(result.retryAfterMs / 60_000) }) }],
      });
    }
    if (result.outcome === 'wrong_credentials') {
      return totpPage(reply, {
        lang,
        now: deps.now(),
        status: 401,
        csrf: session.csrfToken,
        errors: [{ field: 'code', message: t('wrongCode') }],
      });
    }
    setCookie(reply, SESSION_COOKIE, result.token, router.secure(request));
    return seeOther(reply, '/console');
  });

  router.post('/console/sign-out', async (ctx, request, reply) => {
    await deps.accounts.signOut(ctx.session.sessionId);
    setCookie(reply, SESSION_COOKIE, '', router.secure(request), 0);
    return seeOther(reply, '/console/sign-in?signed-out=1');
  });

  router.post('/console/language', async (ctx, request, reply) => {
    const form = formOf(request);
    const lang = form.get('lang');
    if (isLanguage(lang)) await deps.accounts.setLanguage(ctx.session, lang);
    return seeOther(reply, consolePath(form.get('back') ?? ''));
  });
}

/** The account page. */
export function registerAccountPages(router: ConsoleRouter, deps: AccountPageDeps): void {
  router.get('/console/account', async (ctx, request, reply) =>
    accountPage(ctx, reply, { done: queryParam(request, 'done') }),
  );

  router.post('/console/account/password', async (ctx, request, reply) => {
    const form = formOf(request);
    try {
      await deps.accounts.changePassword(
        ctx.session,
        form.get('currentPassword') ?? '',
        form.get('newPassword') ?? '',
        request.ip,
      );
    } catch (error) {
      if (!(error instanceof ConsoleInputError)) throw error;
      return accountPage(ctx, reply, {
        status: error.problem === 'rateLimited' ? 429 : 400,
        errors: [inputError(translator('console.account', ctx.lang), error)],
      });
    }
    return seeOther(reply, '/console/account?done=password');
  });

  router.post('/console/account/totp/start', async (ctx, _request, reply) => {
    await deps.accounts.startTotp(ctx.session);
    return seeOther(reply, '/console/account#totp');
  });

  router.post('/console/account/totp/confirm', async (ctx, request, reply) => {
    try {
      await deps.accounts.confirmTotp(ctx.session, formOf(request).get('code') ?? '');
    } catch (error) {
      if (!(error instanceof ConsoleInputError)) throw error;
      return accountPage(ctx, reply, {
        status: 400,
        errors: [inputError(translator('console.account', ctx.lang), error)],
      });
    }
    return seeOther(reply, '/console/account?done=totp-on');
  });

  router.post('/console/account/totp/disable', async (ctx, request, reply) => {
    try {
      await deps.accounts.disableTotp(ctx.session, formOf(request).get('password') ?? '', request.ip);
    } catch (error) {
      if (!(error instanceof ConsoleInputError)) throw error;
      const t = translator('console.account', ctx.lang);
      const message = error.problem === 'rateLimited' ? t('tooManyTries') : t('wrongPasswordShort');
      return accountPage(ctx, reply, {
        status: error.problem === 'rateLimited' ? 429 : 400,
        errors: [{ field: 'totp-password', message }],
      });
    }
    return seeOther(reply, '/console/account?done=totp-off');
  });
}

function inputError(t: T, error: ConsoleInputError): FieldError {
  const min = { min: PASSWORD_MIN_LENGTH };
  switch (`${error.field}:${error.problem}`) {
    case 'currentPassword:wrong':
      return { field: 'currentPassword', message: t('wrongPassword') };
    case 'currentPassword:rateLimited':
      return { field: 'currentPassword', message: t('tooManyTries') };
    case 'newPassword:tooShort':
      return { field: 'newPassword', message: t('tooShort', min) };
    case 'newPassword:tooLong':
      return { field: 'newPassword', message: t('tooLong') };
    default:
      return { field: 'code', message: t('wrongCode') };
  }
}

function accountPage(
  ctx: ConsoleContext,
  reply: FastifyReply,
  input: { status?: number; errors?: FieldError[]; done?: string },
): FastifyReply {
  const t = translator('console.account', ctx.lang);
  const errors = input.errors ?? [];
  const user = ctx.session.user;
  const done = { password: t('passwordChanged'), 'totp-on': t('totpEnabled'), 'totp-off': t('totpDisabled') }[
    input.done ?? ''
  ];
  const pending = ctx.session.pendingTotpSecret;
  const totp = user.totpEnabled
    ? html`<p>${t('totpOn')}</p><form method="post" action="/console/account/totp/disable" novalidate>${ctx.csrf}
${textField({ name: 'totp-password', label: t('password'), type: 'password', autocomplete: 'current-password', errors })}
<button type="submit" class="danger">${t('totpDisable')}</button></form>`
    : pending !== undefined
      ? html`<p>${t('totpScan')}</p>${trusted(qrSvg(otpauthUri(pending, user.email), { title: t('totpQr'), moduleSize: 4 }))}
<p>${t('totpKey')}: <code id="totp-secret">${pending.replace(/(.{4})/g, '$1 ').trim()}</code></p>
<form method="post" action="/console/account/totp/confirm" novalidate>${ctx.csrf}
${textField({ name: 'code', label: t('code'), inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: 7, errors })}
<button type="submit">${t('totpConfirm')}</button></form>`
      : html`<p>${t('totpOff')}</p><form method="post" action="/console/account/totp/start">${ctx.csrf}<button type="submit">${t('totpStart')}</button></form>`;
  const nameAndEmail = html`<dt>${t('name')}</dt><dd>${user.name}</dd><dt>${t('email')}</dt><dd>${user.email}</dd>`;
  const newPassword = textField({
    name: 'newPassword',
    label: t('newPassword'),
    type: 'password',
    autocomplete: 'new-password',
    hint: t('newPasswordHint', { min: PASSWORD_MIN_LENGTH }),
    errors,
  });
  return ctx.page(reply, {
    status: input.status ?? 200,
    title: t('accountTitle'),
    section: 'account',
    body: html`<h1>${t('accountTitle')}</h1>${notice(done)}${errorSummary(ctx.lang, errors)}
<div class="panel"><dl>${nameAndEmail}<dt>${t('merchantId')}</dt><dd><code>${ctx.merchantId}</code></dd></dl>
<p class="muted">${t('sessionInfo', { time: dateTime(ctx.lang, Math.min(ctx.session.expiresAt, ctx.now + SESSION_LIFETIME_MS)) })}</p></div>
<div class="panel"><h2>${t('changePassword')}</h2><form method="post" action="/console/account/password" novalidate>${ctx.csrf}
<input type="text" name="username" value="${user.email}" autocomplete="username" hidden>
${textField({ name: 'currentPassword', label: t('currentPassword'), type: 'password', autocomplete: 'current-password', errors })}
${newPassword}
<button type="submit">${t('changePassword')}</button></form></div>
<div class="panel" id="totp"><h2>${t('totpSection')}</h2>${totp}</div>`,
  });
}
