/**
 * The back office's request pipeline: the operator's session (the sign-in service's cookie, stage
 * `full` only), url-encoded forms with a CSRF token on every one, the page's permission from the one
 * table, and the actions: each is the admin route of the same name called in-process as the
 * operator, so the back office can do exactly what the operator's token could, and is audited alike.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorCan, type Actor } from '../access/actor.js';
import { recordAuditAlone, type AuditEntry } from '../access/audit-log.js';
import {
  ADMIN_ROUTE_ACCESS,
  BACKOFFICE_ACTION_ACCESS,
  BACKOFFICE_PAGE_ACCESS,
  type BackofficeAction,
  type BackofficePage,
  type Permission,
} from '../access/permissions.js';
import {
  AdminForbidden,
  callAdminRoute,
  requestOrigin,
  routeAccess,
  type AdminCallInput,
} from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { AdminAccess } from '../admin/plugin.js';
import type { Clock } from '../clock.js';
import { languageOfRequest } from '../console/i18n.js';
import { formOf, fromAnotherSite, queryParam, readCookie, sameToken, seeOther } from '../console/router.js';
import { ApiError, describeFailure } from '../http/failures.js';
import { html, type Html } from '../http/html.js';
import { isLanguage, type Language } from '../http/language.js';
import { translator } from '../i18n/messages.js';
import type { OperatorSessionView, OperatorSignIn } from '../operators/signin.js';
import { OPERATOR_SESSION_COOKIE } from '../operators/signin-routes.js';
import { csrfField, sendBackofficePage } from './layout.js';

export const LANGUAGE_COOKIE = 'cashgate_backoffice_lang';
/** Double-submit token of the sign-in form, before there is a session to hold one. */
export const SIGN_IN_CSRF_COOKIE = 'cashgate_backoffice_signin';
export const COOKIE_PATH = '/backoffice';

export type AdminRouteKey = keyof typeof ADMIN_ROUTE_ACCESS;

export interface BackofficeDeps {
  signIn: OperatorSignIn;
  admin: AdminAccess;
  clock: Clock;
  publicBaseUrl: string;
}

/** The page's CSRF token: derived from the session token, which only the operator's browser holds. */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`cashgate-backoffice-csrf\0${sessionToken}`).digest('base64url');
}

/** What a page handler knows: who is signed in, in which language, and what they may do. */
export interface BackofficeContext {
  session: OperatorSessionView;
  actor: Actor;
  lang: Language;
  now: number;
  csrf: Html;
  /** Whether the operator may call this admin route (a button is shown only then). */
  can(route: AdminRouteKey): boolean;
  /** Whether the operator holds a permission. */
  holds(permission: Permission): boolean;
  /** Sends a page in the back office's frame. */
  page(
    reply: FastifyReply,
    page: { title: string; section: BackofficePage | undefined; body: Html; status?: number },
  ): FastifyReply;
  /**
   * Calls an admin route as the operator: its result, or its refusal. When the role lacks the
   * permission the 403 page is already sent (`forbidden`, the refusal recorded); otherwise the page
   * shows `message` (the route's own, naming the field and the rule) with `status`.
   */
  call(reply: FastifyReply, route: AdminRouteKey, input: AdminCallInput): Promise<CallOutcome>;
  /**
   * Checks the permission of a back-office action that is not an admin route (an export, the audit
   * chain's check) and records it when it is audited; a refusal is recorded and answered 403.
   */
  record(action: BackofficeAction, entry: Omit<AuditEntry, 'actor' | 'action' | 'origin'>): Promise<void>;
  notFound(reply: FastifyReply): FastifyReply;
}

export type CallOutcome =
  { ok: true; result: unknown } | { ok: false; status: number; message: string; forbidden?: FastifyReply };

export type BackofficeHandler = (
  ctx: BackofficeContext,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply>;

/** A page's message: the admin route's refusal as the operator reads it. */
function messageOf(error: unknown, lang: Language): string | undefined {
  if (error instanceof ApiError) return describeFailure(error.failure, lang).text;
  if (error instanceof OperatorError) return error.message;
  return undefined;
}

export class BackofficeRouter {
  constructor(
    private readonly scope: FastifyInstance,
    private readonly deps: BackofficeDeps,
  ) {}

  secure(request: FastifyRequest): boolean {
    return request.protocol === 'https' || this.deps.publicBaseUrl.startsWith('https:');
  }

  /** A cookie of the back office's path: HttpOnly, SameSite=Strict, Secure over https. */
  setCookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAgeSeconds?: number): void {
    const attributes = [`${name}=${encodeURIComponent(value)}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Strict'];
    if (this.secure(request)) attributes.push('Secure');
    if (maxAgeSeconds !== undefined) attributes.push(`Max-Age=${maxAgeSeconds}`);
    const before = reply.getHeader('set-cookie');
    const list = Array.isArray(before) ? before : typeof before === 'string' ? [before] : [];
    void reply.header('set-cookie', [...list, attributes.join('; ')]);
  }

  /** The language: the operator's choice (cookie), else the browser's. */
  languageOf(request: FastifyRequest): Language {
    const chosen = readCookie(request, LANGUAGE_COOKIE);
    return languageOfRequest(
      queryParam(request, 'lang'),
      request.headers['accept-language'],
      isLanguage(chosen) ? chosen : undefined,
    );
  }

  sessionToken(request: FastifyRequest): string | undefined {
    const token = readCookie(request, OPERATOR_SESSION_COOKIE);
    return token === undefined || token === '' ? undefined : token;
  }

  /** A form from another site is refused whatever it carries. */
  crossSite(request: FastifyRequest): boolean {
    return fromAnotherSite(request);
  }

  formRefused(request: FastifyRequest, expected: string | undefined): boolean {
    return this.crossSite(request) || !sameToken(formOf(request).get('_csrf') ?? undefined, expected);
  }

  get(path: string, section: BackofficePage, handler: BackofficeHandler): void {
    this.scope.get(path, (request, reply) => this.#run(request, reply, section, handler, false));
  }

  post(path: string, section: BackofficePage, handler: BackofficeHandler): void {
    this.scope.post(path, (request, reply) => this.#run(request, reply, section, handler, true));
  }

  async #run(
    request: FastifyRequest,
    reply: FastifyReply,
    section: BackofficePage,
    handler: BackofficeHandler,
    isForm: boolean,
  ): Promise<FastifyReply> {
    const token = this.sessionToken(request);
    const session = token === undefined ? undefined : await this.deps.signIn.session(token);
    if (token === undefined || session === undefined) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
      return seeOther(reply, `/backoffice/sign-in${next}`);
    }
    if (session.stage !== 'full') return seeOther(reply, '/backoffice/two-factor');
    const lang = this.languageOf(request);
    const actor: Actor = { type: 'operator', operatorId: session.operatorId, email: session.email, role: session.role };
    const csrfToken = csrfTokenOf(token);
    const origin = requestOrigin(request);
    const { clock, admin } = this.deps;
    /** A refusal, recorded as the admin API records one: who tried what, lacking which permission. */
    const denied = (permission: string) =>
      recordAuditAlone(admin.store, clock, {
        actor,
        action: 'access.denied',
        targetType: 'route',
        targetId: `${request.method} ${request.url.split('?')[0] ?? ''}`,
        changes: { request: { permission } },
        origin,
      });
    const ctx: BackofficeContext = {
      session,
      actor,
      lang,
      now: clock.now(),
      csrf: csrfField(csrfToken),
      can: (route) => actorCan(actor, routeAccess(...(route.split(' ') as [string, string])).permission),
      holds: (permission) => actorCan(actor, permission),
      page: (r, page) =>
        sendBackofficePage(r, page.status ?? 200, {
          lang,
          title: page.title,
          body: page.body,
          now: clock.now(),
          frame: {
            section: page.section,
            operatorName: session.name || session.email,
            role: session.role,
            csrfToken,
            path: request.url,
          },
        }),
      call: async (r, route, input) => {
        try {
          return { ok: true, result: await callAdminRoute(admin, route, actor, input, origin) };
        } catch (error) {
          if (error instanceof AdminForbidden) {
            return { ok: false, status: 403, message: error.message, forbidden: forbidden(ctx, r, error.permission) };
          }
          const message = messageOf(error, lang);
          if (message === undefined) throw error;
          return { ok: false, status: error instanceof OperatorError ? error.status : 400, message };
        }
      },
      record: async (action, entry) => {
        const access = BACKOFFICE_ACTION_ACCESS[action];
        if (!actorCan(actor, access.permission)) {
          await denied(access.permission);
          throw new AdminForbidden(session.role, access.permission, `${session.email} lacks ${access.permission}`);
        }
        const audited = 'action' in access ? access.action : undefined;
        if (audited !== undefined)
          await recordAuditAlone(admin.store, clock, { ...entry, actor, action: audited, origin });
      },
      notFound: (r) => {
        const t = translator('backoffice.router', lang);
        return ctx.page(r, {
          status: 404,
          title: t('notFound'),
          section: undefined,
          body: html`<div class="panel"><h1>${t('notFound')}</h1><p>${t('notFoundText')}</p><p><a href="/backoffice">${t('backToToday')}</a></p></div>`,
        });
      },
    };
    if (isForm && this.formRefused(request, csrfToken)) {
      const t = translator('backoffice.router', lang);
      return ctx.page(reply, {
        status: 403,
        title: t('expired'),
        section: undefined,
        body: html`<div class="panel narrow"><h1>${t('expired')}</h1><p>${t('expiredText')}</p><p><a href="/backoffice">${t('backToToday')}</a></p></div>`,
      });
    }
    const needed = BACKOFFICE_PAGE_ACCESS[section].permission;
    if (!ctx.holds(needed)) {
      // Seeing a page the role may not see is refused like the admin route behind it, and recorded.
      await denied(needed);
      return forbidden(ctx, reply, needed);
    }
    try {
      return await handler(ctx, request, reply);
    } catch (error) {
      if (error instanceof AdminForbidden) return forbidden(ctx, reply, error.permission);
      throw error;
    }
  }
}

/** The page a refused action or page answers: 403, naming the permission the role lacks. */
export function forbidden(ctx: BackofficeContext, reply: FastifyReply, permission: string): FastifyReply {
  const t = translator('backoffice.router', ctx.lang);
  return ctx.page(reply, {
    status: 403,
    title: t('forbidden'),
    section: undefined,
    body: html`<div class="panel narrow"><h1>${t('forbidden')}</h1><p>${t('forbiddenText', { role: ctx.session.role, permission })}</p><p>
<a href="/backoffice">${t('backToToday')}</a></p></div>`,
  });
}

/** The back office's 404 for a path no route has, before anything about the caller is known. */
export function sendBackofficeNotFound(request: FastifyRequest, reply: FastifyReply, now: number): FastifyReply {
  const chosen = readCookie(request, LANGUAGE_COOKIE);
  const lang = languageOfRequest(
    undefined,
    request.headers['accept-language'],
    isLanguage(chosen) ? chosen : undefined,
  );
  const t = translator('backoffice.router', lang);
  return sendBackofficePage(reply, 404, {
    lang,
    now,
    title: t('notFound'),
    body: html`<div class="panel narrow"><h1>${t('notFound')}</h1><p>${t('notFoundText')}</p><p><a href="/backoffice">${t('backToToday')}</a></p></div>`,
  });
}

/** The fields of the form that are the admin route's body: every field but the CSRF token. */
export function bodyOfForm(request: FastifyRequest, fields: readonly string[]): Record<string, string> {
  const form = formOf(request);
  const body: Record<string, string> = {};
  for (const field of fields) {
    const value = form.get(field);
    if (value !== null) body[field] = value;
  }
  return body;
}
