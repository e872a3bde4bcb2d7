import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { MerchantService } from '../merchants/service.js';
import { CallbackUrl } from '../merchants/schemas.js';
import type { CallbackDispatcher } from './dispatcher.js';
import { toAttemptView, toEventView, type CallbackOutbox } from './service.js';
import type { TestCallbacks } from './test-callbacks.js';

const TAG = 'Admin: callbacks';

export const CallbackAttempt = Type.Object({
  attemptId: Type.String(),
  eventId: Type.String(),
  notifyId: Type.String({ description: 'the notify_id header sent' }),
  trigger: Type.Union([Type.Literal('automatic'), Type.Literal('manual')]),
  attemptNo: Type.Integer({ description: '1 for the first attempt of the event, then its retries' }),
  url: Type.String(),
  startedAt: Type.Integer({ description: 'Unix milliseconds' }),
  latencyMs: Type.Integer(),
  httpStatus: Type.Union([Type.Integer(), Type.Null()]),
  outcome: Type.Union(
    ['delivered', 'failed', 'refused', 'interrupted'].map((o) => Type.Literal(o)),
    {
      description:
        'refused: the target is not allowed; interrupted: the worker stopped mid-delivery and the event was sent again',
    },
  ),
  error: Type.Union([Type.String(), Type.Null()]),
  responseExcerpt: Type.Union([Type.String(), Type.Null()], { description: 'the first 4 KB of the response body' }),
});

export const CallbackEvent = Type.Object({
  eventId: Type.String(),
  notifyId: Type.String(),
  orderId: Type.String(),
  orderKind: Type.String(),
  trigger: Type.Union([Type.Literal('automatic'), Type.Literal('manual')]),
  state: Type.Union(
    ['pending', 'delivering', 'delivered', 'failed', 'no_target'].map((s) => Type.Literal(s)),
    {
      description:
        'pending (waiting for its next attempt), delivering, delivered, failed (retries exhausted) or no_target',
    },
  ),
  targetUrl: Type.Union([Type.String(), Type.Null()]),
  accessKey: Type.String({ description: 'the key whose secret signs the callback' }),
  payload: Type.Unknown({ description: 'the JSON body sent' }),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Type.Integer(),
});

export const Delivery = Type.Object({
  event: CallbackEvent,
  attempt: Type.Union([CallbackAttempt, Type.Null()], {
    description: 'the attempt made at once; null when there is no target or another worker holds the event',
  }),
});

/** Operator routes: an order's callback log, the manual re-trigger and test callbacks. */
export function registerCallbackAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { outbox: CallbackOutbox; dispatcher: CallbackDispatcher; tests: TestCallbacks; merchants: MerchantService },
): void {
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/orders/:orderId/callbacks',
    tag: TAG,
    summary: "An order's callback events and every delivery attempt, newest last",
    response: Type.Object({
      orderId: Type.String(),
      events: Type.Array(CallbackEvent),
      attempts: Type.Array(CallbackAttempt),
    }),
    handle: ({ params }) => deps.outbox.history(params.orderId ?? ''),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/orders/:orderId/callbacks',
    tag: TAG,
    summary: "Re-trigger an order's callback now, with its current state",
    description:
      'The payload is rebuilt from the order as it is now and the target resolved again (order notifyUrl, else the ' +
      "unified address). The notify_id is the one of the order's latest callback. One attempt, made before the answer; it is not retried.",
    response: Delivery,
    handle: async ({ params }) => {
      const { event, attempt } = await deps.dispatcher.createAndDeliver((tx) =>
        deps.outbox.retrigger(tx, params.orderId ?? ''),
      );
      return { event: toEventView(event), attempt: attempt === undefined ? null : toAttemptView(attempt, event) };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/callback/test',
    tag: TAG,
    summary: 'Queue a signed test callback to an address (default: the unified callback address)',
    description:
      'The test callback goes through the outbox like an order callback (same headers, signing, retries and log); ' +
      'read its attempts at GET /admin/v1/orders/{orderId}/callbacks.',
    body: Type.Object({
      url: Type.Optional(Type.Union([CallbackUrl, Type.Null()])),
      accessKey: Type.Optional(Type.String({ maxLength: 64, description: "default: the merchant's newest key" })),
    }),
    response: CallbackEvent,
    handle: async ({ params, body }) => {
      const merchantId = params.merchantId ?? '';
      await deps.merchants.getMerchant(merchantId);
      return toEventView(await deps.tests.send(merchantId, body));
    },
  });
}
