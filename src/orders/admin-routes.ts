import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { OrderSandbox } from './sandbox.js';
import { allowedEvents, statusText } from './state-machine.js';

/** Operator routes for orders: the sandbox's one-step driver. */
export function registerOrderAdminRoutes(scope: FastifyInstance, catalog: RouteCatalog, sandbox: OrderSandbox): void {
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/sandbox/orders/:orderId/events',
    tag: 'Admin: sandbox',
    summary: 'Drive an order one step, as its simulated rail would',
    description:
      'Collections: paid (optional amount: what the payer actually paid; default the order amount), expired. ' +
      'Transfers: processing (→2), succeeded (→8), bank_rejected (→4), failed (→16). An event the state does not allow is a 409 listing allowedEvents.',
    body: Type.Object({
      event: Type.String({ maxLength: 32 }),
      amount: Type.Optional(Type.Union([Type.String(), Type.Number()])),
    }),
    response: Type.Object({
      orderId: Type.String(),
      orderStatus: Type.Integer(),
      orderStatusText: Type.String(),
      allowedEvents: Type.Array(Type.String()),
    }),
    handle: async ({ params, body }) => {
      const order = await sandbox.apply(params.orderId ?? '', body.event, { amount: body.amount, source: 'sandbox:admin' });
      return {
        orderId: order.id,
        orderStatus: order.status,
        orderStatusText: statusText(order.kind, order.status),
        allowedEvents: allowedEvents(order.kind, order.status),
      };
    },
  });
}
