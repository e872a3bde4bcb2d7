import { timingSafeEqual, createHash } from 'node:crypto';
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

function bearerMatches(request: FastifyRequest, expected: string): boolean {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  // Hashing first gives equal-length inputs, so the comparison is constant-time whatever is sent.
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(expected));
}

/** Bearer authentication and the error format of every route in the admin scope. */
export function registerAdminAuth(scope: FastifyInstance, adminToken: string | undefined): void {
  scope.addHook('onRequest', async (request, reply) => {
    if (adminToken === undefined) {
      return sendAdminError(
        reply,
        403,
        'admin_api_disabled',
        'the admin API is disabled: set CASHGATE_ADMIN_TOKEN to enable it',
      );
    }
    if (!bearerMatches(request, adminToken)) {
      void reply.header('www-authenticate', 'Bearer realm="cashgate-admin"');
      return sendAdminError(reply, 401, 'unauthorized', 'send Authorization: Bearer <CASHGATE_ADMIN_TOKEN>');
    }
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
