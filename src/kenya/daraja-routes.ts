import { timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { OrderService } from '../orders/service.js';
import type { DarajaKenya } from './daraja.js';
import type { RailMessageRow } from './queries.js';

/** Daraja's callback paths under `/rails/daraja/<token>/`, and what handles each. */
const CALLBACKS = {
  stk: (daraja: DarajaKenya, body: unknown) => daraja.stkCallback(body),
  'b2c/result': (daraja: DarajaKenya, body: unknown) => daraja.b2cResult(body, 'b2c-result'),
  'b2c/timeout': (daraja: DarajaKenya, body: unknown) => daraja.b2cResult(body, 'b2c-timeout'),
  'status/result': (daraja: DarajaKenya, body: unknown) => daraja.statusResult(body, 'status-result'),
  'status/timeout': (daraja: DarajaKenya, body: unknown) => daraja.statusResult(body, 'status-timeout'),
} as const;

const sameToken = (given: string, token: string) =>
  given.length === token.length && timingSafeEqual(Buffer.from(given), Buffer.from(token));

/**
 * Where Daraja calls back: `/rails/daraja/<token>/…`, the token unguessable and the same on every
 * node of a deployment. Daraja is always answered 200 `{"ResultCode":0,…}` once the callback is
 * recorded, whatever it said: an unknown id is the operator's to look at, and a body is never
 * trusted alone (each is confirmed with Daraja's own query before an order changes).
 */
export async function registerDarajaCallbacks(
  app: FastifyInstance,
  deps: { daraja: DarajaKenya; token: string; logger: Logger },
): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, text, done) => {
      try {
        done(null, JSON.parse(String(text)) as unknown);
      } catch {
        done(null, undefined);
      }
    });
    for (const [path, handle] of Object.entries(CALLBACKS)) {
      scope.post<{ Params: { token: string } }>(`/rails/daraja/:token/${path}`, async (request, reply) => {
        if (!sameToken(request.params.token, deps.token)) return reply.code(404).send({ error: 'not found' });
        try {
          await handle(deps.daraja, request.body);
        } catch (error) {
          // Recorded or not, the reconciliation worker asks Daraja about every late request.
          deps.logger.error({ err: error, callback: path }, 'a Daraja callback could not be handled now');
        }
        return reply.code(200).send({ ResultCode: 0, ResultDesc: 'Accepted' });
      });
    }
  });
}

const RailMessage = Type.Object({
  id: Type.String(),
  orderId: Type.Union([Type.String(), Type.Null()]),
  rail: Type.String(),
  direction: Type.String({ description: 'out: Cashgate asked; in: the rail called back' }),
  endpoint: Type.String(),
  ref: Type.Union([Type.String(), Type.Null()], { description: 'the rail’s id the message concerns' }),
  httpStatus: Type.Union([Type.Integer(), Type.Null()]),
  code: Type.Union([Type.String(), Type.Null()]),
  request: Type.Unknown({ description: 'what was sent, redacted: no credentials, phone numbers masked' }),
  response: Type.Unknown({ description: 'what came back (or the callback’s body), redacted' }),
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
  disposition: Type.Union([Type.String(), Type.Null()], {
    description: 'callbacks: matched, unmatched (no order known by its id) or refused (its query said otherwise)',
  }),
  at: Type.Integer(),
});

export function railMessageView(row: RailMessageRow) {
  return {
    id: row.id,
    orderId: row.order_id,
    rail: row.rail,
    direction: row.direction,
    endpoint: row.endpoint,
    ref: row.ref,
    httpStatus: row.http_status,
    code: row.code,
    request: row.request === null ? null : (JSON.parse(row.request) as unknown),
    response: row.response === null ? null : (JSON.parse(row.response) as unknown),
    durationMs: row.duration_ms,
    disposition: row.disposition,
    at: row.at,
  };
}

/** Operator routes: an order's rail traffic, and callbacks that named nothing Cashgate knows. */
export function registerRailMessageAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { orders: OrderService; daraja: DarajaKenya | undefined },
): void {
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/orders/:orderId/rail-messages',
    tag: 'Admin: rails',
    summary: 'What went to the order’s rail and came back, oldest first (redacted)',
    response: Type.Object({ orderId: Type.String(), messages: Type.Array(RailMessage) }),
    handle: async ({ params }) => {
      const orderId = params.orderId ?? '';
      if ((await deps.orders.find(orderId)) === undefined)
        throw new OperatorError({ kind: 'order_not_found', orderId });
      const rows = deps.daraja === undefined ? [] : await deps.daraja.messagesOf(orderId);
      return { orderId, messages: rows.map(railMessageView) };
    },
  });
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/rail-messages/unmatched',
    tag: 'Admin: rails',
    summary: 'Rail callbacks that named no order Cashgate knows, newest first (the latest 100)',
    response: Type.Object({ messages: Type.Array(RailMessage) }),
    handle: async () => ({
      messages: (deps.daraja === undefined ? [] : await deps.daraja.unmatched()).map(railMessageView),
    }),
  });
}
