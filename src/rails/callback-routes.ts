import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** Whether the token in a callback's path is the deployment's (compared in constant time). */
export const sameToken = (given: string, token: string) =>
  given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token));

/**
 * Where a rail calls back: `/rails/<rail>/<token>/<path>`, the token unguessable and the same on
 * every node of a deployment (derived from the master key). Any body is taken as JSON (a form as
 * its fields, or as nothing when it is neither); the rail is always answered `answer` once its handler ran, whatever
 * the body said: an unknown id is the operator's to look at, and no body is ever trusted alone
 * (each handler confirms what it says with the rail's own query before an order changes). A
 * handler that fails is logged: the rail's reconciliation asks about everything not yet settled.
 */
export async function registerRailCallbacks(
  app: FastifyInstance,
  deps: {
    rail: string;
    token: string;
    logger: Logger;
    handlers: Record<string, (body: unknown) => Promise<void>>;
    answer: unknown;
  },
): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (request, text, done) => {
      // A form (Efí posts its notification token as one) is taken as an object of its fields.
      if ((request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        done(null, Object.fromEntries(new URLSearchParams(typeof text === 'string' ? text : text.toString('utf8'))));
        return;
      }
      try {
        done(null, JSON.parse(String(text)) as unknown);
      } catch {
        done(null, undefined);
      }
    });
    for (const [path, handle] of Object.entries(deps.handlers)) {
      scope.post<{ Params: { token: string } }>(`/rails/${deps.rail}/:token/${path}`, async (request, reply) => {
        if (!sameToken(request.params.token, deps.token)) return reply.code(404).send({ error: 'not found' });
        try {
          await handle(request.body);
        } catch (error) {
          deps.logger.error(
            { err: error, rail: deps.rail, callback: path },
            'a rail callback could not be handled now',
          );
        }
        return reply.code(200).send(deps.answer);
      });
    }
  });
}
