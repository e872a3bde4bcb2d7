import { timingSafeEqual, createHash } from 'node:crypto';
import type { Actor } from '../access/actor.js';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, describeFailure } from '../http/failures.js';
import { OperatorError } from './failures.js';

/** Operator API errors: `{ "error": { "code", "message", … } }` with a plain HTTP status. */
export function sendAdminError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply.code(status).send(adminErrorBody(code, message, extra));
}

/** The admin API's error format: `{ "error": { "code", "message", … } }`. */
export function adminErrorBody(
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): { error: Record<string, unknown> } {
  return { error: { code, message, ...extra } };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return undefined;
  const token = header.slice('Bearer '.length).trim();
  return token === '' ? undefined : token;
}

/** Constant-time whatever is sent: both sides are hashed to equal lengths first. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** What the admin scope needs to know who calls and to record what they do. */
export interface AdminAccess {
  /** CASHGATE_ADMIN_TOKEN, the break-glass root; undefined when unset. */
  rootToken: string | undefined;
  /** ADMIN_ROOT_TOKEN_DISABLED: the root token is refused even when set. */
  rootTokenDisabled: boolean;
  /** The operator a personal token stands for, or undefined (unknown, revoked, expired, disabled). */
  authenticate(token: string): Promise<Actor | undefined>;
  store: Store;
  clock: Clock;
}

const ACTORS = new WeakMap<FastifyRequest, Actor>();
const ACCESS = new WeakMap<FastifyInstance, AdminAccess>();

/** Who made an admin request (set by the scope's authentication before any handler runs). */
export function actorOf(request: FastifyRequest): Actor {
  const actor = ACTORS.get(request);
  if (actor === undefined) throw new Error('admin request without an authenticated actor');
  return actor;
}

/** The access settings of an admin scope (registerAdminAuth must come before its routes). */
export function adminAccessOf(scope: FastifyInstance): AdminAccess {
  const access = ACCESS.get(scope);
  if (access === undefined) throw new Error('registerAdminAuth must be called on the scope before its routes');
  return access;
}

/** Bearer authentication (root token or personal token) and the error format of every route in the admin scope. */
export function registerAdminAuth(scope: FastifyInstance, access: AdminAccess): void {
  ACCESS.set(scope, access);
  const root = access.rootTokenDisabled ? undefined : access.rootToken;
  scope.addHook('onRequest', async (request, reply) => {
    const token = bearerOf(request);
    if (token === undefined && root === undefined) {
      return sendAdminError(
        reply,
        403,
        'admin_api_disabled',
        access.rootTokenDisabled
          ? 'the root token is disabled (ADMIN_ROOT_TOKEN_DISABLED=true): send Authorization: Bearer <personal token>'
          : 'the admin API takes a personal token (cashgate operator token create) or CASHGATE_ADMIN_TOKEN; neither was sent',
      );
    }
    let actor: Actor | undefined;
    if (token !== undefined && root !== undefined && sameSecret(token, root)) actor = { type: 'root-token' };
    else if (token !== undefined) actor = await access.authenticate(token);
    if (actor === undefined) {
      void reply.header('www-authenticate', 'Bearer realm="cashgate-admin"');
      return sendAdminError(
        reply,
        401,
        'unauthorized',
        'send Authorization: Bearer <personal token> (unknown, revoked and expired tokens are refused)',
      );
    }
    ACTORS.set(request, actor);
    return undefined;
  });

  scope.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      return sendAdminError(reply, 400, 'invalid_request', describeFailure(error.failure, 'en').text);
    }
    if (error instanceof OperatorError) {
      const extra = error.failure.kind === 'event_not_allowed' ? { allowedEvents: error.failure.allowedEvents } : {};
      return sendAdminError(reply, error.status, error.failure.kind, error.message, extra);
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || (error.statusCode !== undefined && error.statusCode < 500)) {
      return sendAdminError(reply, error.statusCode ?? 400, 'invalid_request', error.message);
    }
    request.log.error({ err: error }, 'admin request failed');
    return sendAdminError(reply, 500, 'internal_error', `internal error; request id ${request.id}`);
  });
}
