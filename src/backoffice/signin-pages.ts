/**
 * Signing in to the back office, as pages: e-mail address and password, then the second factor
 * (`/backoffice/two-factor`): the authenticator app's code (or a recovery code), or, for an
 * operator whose role must have one and has none yet, its enrolment — a QR code with the same
 * secret as Base32 text beside it, confirmed by a first code, then the recovery codes shown once.
 * The steps are the sign-in service's (`OperatorSignIn`): lock-out, audit and sessions are its.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestOrigin } from '../admin/admin-route.js';
import { qrSvg } from '../cashier/qr-svg.js';
import { dateTime } from '../console/i18n.js';
import { formOf, queryParam, readCookie, sameToken, seeOther } from '../console/router.js';
import { html, trusted, type Html } from '../http/html.js';
import { isLanguage, type Language } from '../http/language.js';
import { translator } from '../i18n/messages.js';
import { SignInError, type SignInErrorCode } from '../operators/signin.js';
import { OPERATOR_SESSION_COOKIE } from '../operators/signin-routes.js';
import { csrfField, sendBackofficePage } from './layout.js';
import { BackofficeRouter, csrfTokenOf, LANGUAGE_COOKIE, SIGN_IN_CSRF_COOKIE, type BackofficeDeps } from './router.js';

const YEAR_SECONDS = 365 * 24 * 3600;

/** Only a path of the back office may be where sign-in leads (never another site). */
export function backofficePath(value: string): string {
  return /^\/backoffice(\/[A-Za-z0-9._~\-/%]*)?(\?[^\s#]*)?$/.test(value) &&
    !value.includes('//') &&
    !value.startsWith('/backoffice/api')
    ? value
    : '/backoffice';
}

/** A refused step as the operator reads it. */
function refusalText(lang: Language, error: SignInError, now: number): string {
  const t = translator('backoffice.signIn', lang);
  const texts: Record<SignInErrorCode, () => string> = {
    invalid_credentials: () => t('invalidCredentials'),
    account_locked: () => t('locked', { until: dateTime(lang, error.unlocksAt ?? now) }),
    invalid_code: () => t('invalidCode'),
    no_pending_enrolment: () => t('noPendingEnrolment'),
    wrong_stage: () => t('wrongStage'),
    session_required: () => t('sessionRequired'),
  };
  return texts[error.code]();
}

/** The Base32 secret in groups of four, as password managers and people type it. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

export function registerSignInPages(scope: FastifyInstance, router: BackofficeRouter, deps: BackofficeDeps): void {
  const { signIn, clock } = deps;
  const setSession = (request: FastifyRequest, reply: FastifyReply, token: string) =>
    router.setCookie(request, reply, OPERATOR_SESSION_COOKIE, token, token === '' ? 0 : undefined);

  const signInPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    input: { email?: string; error?: string; next: string },
  ): FastifyReply => {
    const lang = router.languageOf(request);
    const t = translator('backoffice.signIn', lang);
    let token = readCookie(request, SIGN_IN_CSRF_COOKIE);
    if (token === undefined || token.length < 20) {
      token = randomBytes(24).toString('base64url');
      router.setCookie(request, reply, SIGN_IN_CSRF_COOKIE, token);
    }
    const error =
      input.error === undefined
        ? html``
        : html`<div class="summary" role="alert" tabindex="-1"><p class="error">${input.error}</p></div>`;
    return sendBackofficePage(reply, status, {
      lang,
      now: clock.now(),
      formToken: token,
      title: t('title'),
      body: html`<div class="panel narrow"><h1>${t('title')}</h1><p class="muted">${t('lead')}</p>${error}
<form method="post" action="/backoffice/sign-in">${csrfField(token)}<input type="hidden" name="next" value="${input.next}">
<label for="email">${t('email')}</label><input type="email" id="email" name="email" autocomplete="username" required
value="${input.email ?? ''}"${input.error === undefined ? '' : html` aria-invalid="true"`}>
<label for="password">${t('password')}</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">${t('submit')}</button></form></div>`,
    });
  };

  scope.get('/sign-in', async (request, reply) =>
    signInPage(request, reply, 200, { next: backofficePath(queryParam(request, 'next')) }),
  );

  scope.post('/sign-in', async (request, reply) => {
    const form = formOf(request);
    const next = backofficePath(form.get('next') ?? '');
    if (
      router.crossSite(request) ||
      !sameToken(form.get('_csrf') ?? undefined, readCookie(request, SIGN_IN_CSRF_COOKIE))
    ) {
      return signInPage(request, reply, 403, {
        next,
        error: translator('backoffice.router', router.languageOf(request))('expiredText'),
      });
    }
    const email = form.get('email') ?? '';
    let result: { sessionToken: string; stage: string };
    try {
      result = await signIn.signIn(email, form.get('password') ?? '', requestOrigin(request));
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
      return signInPage(request, reply, error.code === 'account_locked' ? 429 : 401, {
        email,
        next,
        error: refusalText(router.languageOf(request), error, clock.now()),
      });
    }
    setSession(request, reply, result.sessionToken);
    return seeOther(reply, result.stage === 'full' ? next : '/backoffice/two-factor');
  });

  /** The second step's page: the code, or the enrolment, by the session's stage. */
  const twoFactorPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    error?: string,
  ): Promise<FastifyReply> => {
    const token = router.sessionToken(request);
    const session = token === undefined ? undefined : await signIn.session(token);
    if (token === undefined || session === undefined) return seeOther(reply, '/backoffice/sign-in');
    if (session.stage === 'full') return seeOther(reply, '/backoffice');
    const lang = router.languageOf(request);
    const t = translator('backoffice.signIn', lang);
    const csrf = csrfField(csrfTokenOf(token));
    const summary: Html =
      error === undefined
        ? html``
        : html`<div class="summary" role="alert" tabindex="-1"><p class="error">${error}</p></div>`;
    const invalid = error === undefined ? '' : html` aria-invalid="true" aria-describedby="code-error"`;
    const codeField = html`<label for="code">${t('code')}</label><p class="muted" id="code-hint">${t('codeHint')}</p>${
      error === undefined ? '' : html`<p class="error" id="code-error">${error}</p>`
    }<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="8" required${invalid}>`;
    let body: Html;
    if (session.stage === 'enrol') {
      // Shown again after a wrong code: the secret already scanned, not a new one.
      const enrolment = (await signIn.pendingEnrolment(token)) ?? (await signIn.beginEnrolment(token));
      body = html`<div class="panel"><h1>${t('enrolTitle')}</h1>${summary}<p>${t('enrolLead')}</p>
<div class="twocol"><div><h2>${t('scan')}</h2><div class="qr">${trusted(qrSvg(enrolment.otpauthUri, { title: t('qrTitle') }))}</div></div>
<div><h2>${t('orType')}</h2><p class="muted">${t('secretHint')}</p><p class="secret" id="secret">${grouped(enrolment.secret)}</p>
<button type="button" class="secondary" data-copy="secret-raw" data-copied="${t('copied')}" hidden>${t('copy')}</button>
<input type="hidden" id="secret-raw" value="${enrolment.secret}"></div></div>
<form method="post" action="/backoffice/two-factor">${csrf}${codeField}<button type="submit">${t('confirm')}</button></form></div>`;
    } else {
      body = html`<div class="panel narrow"><h1>${t('twoFactorTitle')}</h1>${summary}<p>${t('twoFactorLead', { email: session.email })}</p>
<form method="post" action="/backoffice/two-factor">${csrf}${codeField}<button type="submit">${t('verify')}</button></form>
<details><summary>${t('useRecovery')}</summary><form method="post" action="/backoffice/two-factor">${csrf}
<label for="recoveryCode">${t('recoveryCode')}</label><input type="text" id="recoveryCode" name="recoveryCode" autocomplete="off" maxlength="40" required>
<button type="submit" class="secondary">${t('verify')}</button></form></details>
<form method="post" action="/backoffice/sign-out">${csrf}<button type="submit" class="secondary">${t('cancel')}</button></form></div>`;
    }
    return sendBackofficePage(reply, status, {
      lang,
      now: clock.now(),
      formToken: csrfTokenOf(token),
      back: '/backoffice/two-factor',
      title: t('twoFactorTitle'),
      body,
    });
  };

  scope.get('/two-factor', async (request, reply) => twoFactorPage(request, reply, 200));

  scope.post('/two-factor', async (request, reply) => {
    const token = router.sessionToken(request);
    if (token === undefined) return seeOther(reply, '/backoffice/sign-in');
    if (router.formRefused(request, csrfTokenOf(token))) return seeOther(reply, '/backoffice/two-factor');
    const form = formOf(request);
    const lang = router.languageOf(request);
    const t = translator('backoffice.signIn', lang);
    const session = await signIn.session(token);
    if (session === undefined) return seeOther(reply, '/backoffice/sign-in');
    let done: { sessionToken: string; recoveryCodes?: string[] };
    try {
      if (session.stage === 'enrol') {
        done = await signIn.confirmEnrolment(token, form.get('code') ?? '', requestOrigin(request));
      } else {
        const recoveryCode = form.get('recoveryCode');
        const factor =
          recoveryCode !== null && recoveryCode !== '' ? { recoveryCode } : { code: form.get('code') ?? '' };
        done = await signIn.verifySecondFactor(token, factor, requestOrigin(request));
      }
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      if (error.code === 'session_required' || error.code === 'account_locked') {
        setSession(request, reply, '');
        return signInPage(request, reply, error.code === 'account_locked' ? 429 : 401, {
          next: '/backoffice',
          error: refusalText(lang, error, clock.now()),
        });
      }
      return twoFactorPage(request, reply, 401, refusalText(lang, error, clock.now()));
    }
    setSession(request, reply, done.sessionToken);
    if (done.recoveryCodes === undefined) return seeOther(reply, '/backoffice');
    return sendBackofficePage(reply, 200, {
      lang,
      now: clock.now(),
      formToken: csrfTokenOf(done.sessionToken),
      back: '/backoffice',
      title: t('recoveryTitle'),
      body: html`<div class="panel narrow"><h1>${t('recoveryTitle')}</h1><p>${t('recoveryLead')}</p>
<ul class="secret" id="recovery-codes">${done.recoveryCodes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a class="button" href="/backoffice">${t('continue')}</a></p></div>`,
    });
  });

  scope.post('/sign-out', async (request, reply) => {
    const token = router.sessionToken(request);
    if (token !== undefined && !router.formRefused(request, csrfTokenOf(token))) {
      await signIn.signOut(token, requestOrigin(request));
      setSession(request, reply, '');
    }
    return seeOther(reply, '/backoffice/sign-in');
  });

  scope.post('/language', async (request, reply) => {
    const form = formOf(request);
    const token = router.sessionToken(request);
    // The form carries the session's token, or before a session the sign-in form's own.
    const sent = form.get('_csrf') ?? undefined;
    const refused =
      router.crossSite(request) ||
      !(
        (token !== undefined && sameToken(sent, csrfTokenOf(token))) ||
        sameToken(sent, readCookie(request, SIGN_IN_CSRF_COOKIE))
      );
    const lang = form.get('lang');
    if (!refused && isLanguage(lang)) router.setCookie(request, reply, LANGUAGE_COOKIE, lang, YEAR_SECONDS);
    const back = backofficePath(form.get('back') ?? '');
    return seeOther(reply, back.startsWith('/backoffice/sign-in') ? '/backoffice/sign-in' : back);
  });
}
