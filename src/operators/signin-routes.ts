/**
 * The JSON surface of operators' sign-in under /backoffice/api: sign in, give or set up the second
 * factor, read the session, sign out. The session travels in an HttpOnly, SameSite=Strict cookie of
 * the /backoffice path; every POST must be JSON (a browser cannot send that cross-site without a CORS
 * preflight, which nothing here answers) and is refused when its Origin names another site.
 * Answers and errors are in the admin API's format: `{ "error": { "code", "message", … } }`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestOrigin } from '../admin/admin-route.js';
import { sendAdminError } from '../admin/plugin.js';
import { PASSWORD_MAX_LENGTH } from '../console/passwords.js';
import { readCookie } from '../console/router.js';
import { ApiError, describeFailure } from '../http/failures.js';
import { validateInput } from '../http/validation.js';
import { SignInError, type OperatorSignIn, type SignInErrorCode } from './signin.js';

export const OPERATOR_SESSION_COOKIE = 'cashgate_operator_session';
export const SIGN_IN_API_PREFIX = '/backoffice/api';
const COOKIE_PATH = '/backoffice';

/** The HTTP status of each refusal; a locked account answers 429 with Retry-After. */
const STATUS: Readonly<Record<SignInErrorCode, number>> = {
  invalid_credentials: 401,
  account_locked: 429,
  invalid_code: 401,
  no_pending_enrolment: 409,
  wrong_stage: 409,
  session_required: 401,
};

const SignInBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
});
const SecondFactorBody = Type.Object({
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  recoveryCode: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
});
const ConfirmBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 20 }) });
const EmptyBody = Type.Object({});

export interface OperatorSignInRouteDeps {
  signIn: OperatorSignIn;
  /** PUBLIC_BASE_URL: when it is https, the cookie is Secure whatever the hop before says. */
  publicBaseUrl?: string | undefined;
}

/** The body, checked against its schema (a broken rule is answered 400 naming the field and rule). */
function bodyOf<S extends TSchema>(schema: S, request: FastifyRequest): Static<S> {
  const error = validateInput(schema, request.body);
  if (error !== undefined) throw error;
  return request.body;
}

function sessionTokenOf(request: FastifyRequest): string {
  const token = readCookie(request, OPERATOR_SESSION_COOKIE);
  if (token === undefined || token === '') {
    throw new SignInError(
      'session_required',
      OPERATOR_SESSION_COOKIE,
      `${OPERATOR_SESSION_COOKIE}: no session cookie was sent; sign in first`,
    );
  }
  return token;
}

/** An Origin that names another host than the request's ("null" is an opaque origin: another site too). */
function crossSite(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== request.host;
  } catch {
    return true;
  }
}

function isJson(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/** Registers the sign-in routes under /backoffice/api, in a scope of their own (error and not-found formats). */
export function registerOperatorSignInRoutes(app: FastifyInstance, deps: OperatorSignInRouteDeps): void {
  const { signIn } = deps;
  const secure = (request: FastifyRequest): boolean =>
    request.protocol === 'https' || (deps.publicBaseUrl?.startsWith('https:') ?? false);
  const setSessionCookie = (request: FastifyRequest, reply: FastifyReply, token: string): void => {
    const attributes = [
      `${OPERATOR_SESSION_COOKIE}=${token}`,
      `Path=${COOKIE_PATH}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(token === '' ? ['Max-Age=0'] : []),
      ...(secure(request) ? ['Secure'] : []),
    ];
    void reply.header('set-cookie', attributes.join('; '));
  };

  void app.register(
    async (scope) => {
      scope.addHook('onRequest', async (request, reply) => {
        // Answers carry session state and secrets shown once: never stored by a cache.
        void reply.header('cache-control', 'no-store');
        if (request.method !== 'POST') return undefined;
        if (crossSite(request)) {
          return sendAdminError(reply, 403, 'cross_site_request', 'Origin: requests from another site are refused');
        }
        if (!isJson(request.headers['content-type'])) {
          return sendAdminError(
            reply,
            415,
            'unsupported_media_type',
            'Content-Type: send application/json with a JSON object body ({} when there is nothing to send)',
          );
        }
        return undefined;
      });

      scope.setErrorHandler((error: FastifyError, request, reply) => {
        if (error instanceof SignInError) {
          if (error.code === 'session_required') setSessionCookie(request, reply, '');
          if (error.retryAfterSeconds !== undefined) {
            void reply.header('retry-after', String(error.retryAfterSeconds));
          }
          return sendAdminError(reply, STATUS[error.code], error.code, error.message, {
            field: error.field,
            ...(error.unlocksAt !== undefined && {
              unlocksAt: new Date(error.unlocksAt).toISOString(),
              retryAfter: error.retryAfterSeconds,
            }),
          });
        }
        if (error instanceof ApiError) {
          return sendAdminError(reply, 400, 'invalid_request', describeFailure(error.failure, 'en').text);
        }
        if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
          return sendAdminError(
            reply,
            400,
            'invalid_request',
            'body: send a JSON object ({} when there is nothing to send)',
          );
        }
        if (error.statusCode !== undefined && error.statusCode < 500) {
          return sendAdminError(reply, error.statusCode, 'invalid_request', error.message);
        }
        request.log.error({ err: error }, 'operator sign-in request failed');
        return sendAdminError(reply, 500, 'internal_error', `internal error; request id ${request.id}`);
      });

      scope.setNotFoundHandler((request, reply) =>
        sendAdminError(reply, 404, 'not_found', `no route ${request.method} ${request.url.split('?')[0] ?? '/'}`),
      );

      scope.post('/sign-in', async (request, reply) => {
        const body = bodyOf(SignInBody, request);
        const result = await signIn.signIn(body.email, body.password, requestOrigin(request));
        setSessionCookie(request, reply, result.sessionToken);
        return reply.code(200).send({ stage: result.stage });
      });

      scope.post('/two-factor', async (request, reply) => {
        const body = bodyOf(SecondFactorBody, request);
        if ((body.code === undefined) === (body.recoveryCode === undefined)) {
          return sendAdminError(reply, 400, 'invalid_request', 'code, recoveryCode: send exactly one of them');
        }
        const factor = body.code !== undefined ? { code: body.code } : { recoveryCode: body.recoveryCode ?? '' };
        const result = await signIn.verifySecondFactor(sessionTokenOf(request), factor, requestOrigin(request));
        setSessionCookie(request, reply, result.sessionToken);
        return reply.code(200).send({ stage: result.stage });
      });

      scope.post('/two-factor/enrol', async (request, reply) => {
        bodyOf(EmptyBody, request);
        const result = await signIn.beginEnrolment(sessionTokenOf(request));
        return reply.code(200).send({ secret: result.secret, otpauthUri: result.otpauthUri });
      });

      scope.post('/two-factor/enrol/confirm', async (request, reply) => {
        const body = bodyOf(ConfirmBody, request);
        const token = sessionTokenOf(request);
        const result = await signIn.confirmEnrolment(token, body.code, requestOrigin(request));
        if (result.sessionToken !== token) setSessionCookie(request, reply, result.sessionToken);
        return reply.code(200).send({ recoveryCodes: result.recoveryCodes, stage: result.stage });
      });

      scope.get('/session', async (request, reply) => {
        const session = await signIn.session(sessionTokenOf(request));
        if (session === undefined) {
          setSessionCookie(request, reply, '');
          return sendAdminError(
            reply,
            401,
            'session_required',
            'session: sign in first (no session, or it has ended)',
            {
              field: 'session',
            },
          );
        }
        return reply.code(200).send(session);
      });

      scope.post('/sign-out', async (request, reply) => {
        bodyOf(EmptyBody, request);
        const token = readCookie(request, OPERATOR_SESSION_COOKIE);
        if (token !== undefined && token !== '') await signIn.signOut(token, requestOrigin(request));
        setSessionCookie(request, reply, '');
        return reply.code(204).send();
      });
    },
    { prefix: SIGN_IN_API_PREFIX },
  );
}
