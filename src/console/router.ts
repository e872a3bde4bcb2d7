/**
 * The console's request pipeline: url-encoded forms only, the session cookie, CSRF on every form,
 * and a context for each page handler that is scoped to the signed-in user's merchant. Handlers
 * look things up by the context's merchant only, so another merchant's id is simply not found.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { formFields } from '../http/body-check.js';
import { ApiError } from '../http/failures.js';
import { html, type Html } from '../http/html.js';
import type { Language } from '../http/language.js';
import type { Merchant, MerchantService } from '../merchants/service.js';
import type { ConsoleAccounts, ConsoleSession } from './accounts.js';
import { translator } from '../i18n/messages.js';
import { languageOfRequest } from './i18n.js';
import { csrfField, sendConsolePage, type NavSection } from './layout.js';

export const SESSION_COOKIE = 'cashgate_session';
/** Double-submit token of the sign-in form, before there is a session to hold one. */
export const SIGN_IN_CSRF_COOKIE = 'cashgate_signin';
/** Forms are small; the signature tool's pasted body is the largest (the API's own 64 KB limit). */
const FORM_LIMIT_BYTES = 80 * 1024;

export interface ConsoleDeps {
  accounts: ConsoleAccounts;
  merchants: MerchantService;
  clock: Clock;
  publicBaseUrl: string;
}

/** What a page handler knows of the request: who is signed in, for which merchant, in which language. */
export interface ConsoleContext {
  session: ConsoleSession;
  merchantId: string;
  merchant: Merchant;
  lang: Language;
  now: number;
  /** The request's path, without its query. */
  path: string;
  csrfToken: string;
  /** Sends a page in the console's frame. */
  page(
    reply: FastifyReply,
    page: { title: string; section: NavSection | undefined; body: Html; status?: number },
  ): FastifyReply;
  /** The 404 page: unknown here, or another merchant's. */
  notFound(reply: FastifyReply): FastifyReply;
  /** The hidden CSRF field of a form. */
  csrf: Html;
}

export type ConsoleHandler = (
  ctx: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply>;

/** The fields of a url-encoded form (empty when there is no body). */
export function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** A query parameter as text ('' when absent or sent twice). */
export function queryParam(request: FastifyRequest, name: string): string {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** A cookie of the console's path: HttpOnly, SameSite=Lax, Secure when the console is served over https. */
export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  secure: boolean,
  maxAgeSeconds?: number,
): void {
  const attributes = [`${name}=${encodeURIComponent(value)}`, 'Path=/console', 'HttpOnly', 'SameSite=Lax'];
  if (secure) attributes.push('Secure');
  if (maxAgeSeconds !== undefined) attributes.push(`Max-Age=${maxAgeSeconds}`);
  void reply.header('set-cookie', [...toArray(reply.getHeader('set-cookie')), attributes.join('; ')]);
}

function toArray(value: unknown): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value as string[];
  return typeof value === 'string' || typeof value === 'number' ? [String(value)] : [];
}

export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a === '') return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Only a path of the console itself may be a redirect target after sign-in or a language change. */
export function consolePath(value: string): string {
  return /^\/console(\/[A-Za-z0-9._~\-/%]*)?(\?[^\s#]*)?$/.test(value) && !value.includes('//') ? value : '/console';
}

/**
 * A form sent from another site: the Origin header, when the browser names one ("null", sent by
 * privacy settings, proves nothing either way: the form's token decides).
 */
export function fromAnotherSite(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined || origin === 'null') return false;
  try {
    return new URL(origin).host !== request.host;
  } catch {
    return true;
  }
}

/** Redirect after a form (303: the browser follows with GET). */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).header('cache-control', 'no-store').send();
}

/** Routes of the console that need a signed-in user. POST routes also need the session's CSRF token. */
export class ConsoleRouter {
  constructor(
    private readonly scope: FastifyInstance,
    private readonly deps: ConsoleDeps,
  ) {}

  /** True when the console is reached over https (directly or through a trusted proxy), or is published as such. */
  secure(request: FastifyRequest): boolean {
    return request.protocol === 'https' || this.deps.publicBaseUrl.startsWith('https:');
  }

  get(path: string, handler: ConsoleHandler): void {
    this.scope.get(path, (request, reply) => this.#run(request, reply, handler, false));
  }

  post(path: string, handler: ConsoleHandler): void {
    this.scope.post(path, (request, reply) => this.#run(request, reply, handler, true));
  }

  /** The session of the request's cookie, or undefined. */
  async sessionOf(request: FastifyRequest): Promise<ConsoleSession | undefined> {
    const token = readCookie(request, SESSION_COOKIE);
    return token === undefined ? undefined : this.deps.accounts.session(token);
  }

  /**
   * A form sent from another site is refused whatever its token: the Origin header, when the browser
   * names one ("null", sent by privacy settings, proves nothing either way: the token decides).
   */
  crossSite(request: FastifyRequest): boolean {
    return fromAnotherSite(request);
  }

  /** A form is refused when it comes from another site or its `_csrf` field is not `expected`. */
  formRefused(request: FastifyRequest, expected: string | undefined): boolean {
    return this.crossSite(request) || !sameToken(formOf(request).get('_csrf') ?? undefined, expected);
  }

  async #run(
    request: FastifyRequest,
    reply: FastifyReply,
    handler: ConsoleHandler,
    isForm: boolean,
  ): Promise<FastifyReply> {
    const session = await this.sessionOf(request);
    const path = request.url.split('?')[0] ?? '/console';
    if (session === undefined) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
      return seeOther(reply, `/console/sign-in${next}`);
    }
    if (session.stage !== 'full') return seeOther(reply, '/console/sign-in/totp');
    const merchant = await this.deps.merchants.getMerchant(session.user.merchantId);
    const lang = languageOfRequest(undefined, undefined, session.user.language);
    const ctx: ConsoleContext = {
      session,
      merchantId: merchant.merchantId,
      merchant,
      lang,
      now: this.deps.clock.now(),
      path,
      csrfToken: session.csrfToken,
      csrf: csrfField(session.csrfToken),
      page: (r, page) =>
        sendConsolePage(r, page.status ?? 200, {
          lang,
          title: page.title,
          body: page.body,
          now: this.deps.clock.now(),
          frame: {
            section: page.section,
            merchantName: merchant.name,
            userName: session.user.name,
            csrfToken: session.csrfToken,
            path: request.url,
            paused: {
              payments: merchant.paused.payments?.since ?? null,
              payouts: merchant.paused.payouts?.since ?? null,
            },
          },
        }),
      notFound: (r) => {
        const t = translator('console.router', lang);
        return ctx.page(r, {
          status: 404,
          title: t('notFound'),
          section: undefined,
          body: notFoundBody(lang, 'panel'),
        });
      },
    };
    if (isForm && this.formRefused(request, session.csrfToken))
      return sendCsrfRefusal(reply, lang, this.deps.clock.now());
    return handler(ctx, request, reply);
  }
}

/** The 404 page's content: unknown here, or another merchant's. */
function notFoundBody(lang: Language, panel: 'panel' | 'panel narrow'): Html {
  const t = translator('console.router', lang);
  return html`<div class="${panel}"><h1>${t('notFound')}</h1><p>${t('notFoundText')}</p><p><a href="/console">${t('backToOverview')}</a></p></div>`;
}

export function sendCsrfRefusal(reply: FastifyReply, lang: Language, now: number): FastifyReply {
  const t = translator('console.router', lang);
  return sendConsolePage(reply, 403, {
    lang,
    now,
    title: t('expired'),
    body: html`<div class="panel narrow"><h1>${t('expired')}</h1><p>${t('expiredText')}</p><p><a href="/console">${t('backToOverview')}</a></p></div>`,
  });
}

/** The console's 404 for a path no route has, before anything about the caller is known. */
export function sendConsoleNotFound(request: FastifyRequest, reply: FastifyReply, now: number): FastifyReply {
  const lang = languageOfRequest(undefined, request.headers['accept-language']);
  const t = translator('console.router', lang);
  return sendConsolePage(reply, 404, {
    lang,
    now,
    title: t('notFound'),
    body: notFoundBody(lang, 'panel narrow'),
  });
}

/** The console's scope: url-encoded forms only (anything else: 415). */
export function useFormParser(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
    (_request, body, done) => {
      const form = formFields(String(body));
      return form instanceof ApiError ? done(form, undefined) : done(null, form);
    },
  );
}
