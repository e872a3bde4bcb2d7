import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { OrderSandbox } from './sandbox.js';
import { statusText } from './state-machine.js';

/** Operator routes for orders: the sandbox's one-step driver. */
export function registerOrderAdminRoutes(scope: FastifyInstance, catalog: RouteCatalog, sandbox: OrderSandbox): void {
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/sandbox/orders/:orderId/events',
    tag: 'Admin: sandbox',
    summary: 'Drive an order one step, as its simulated rail would',
    description:
      'Collections: paid (optional amount: what the payer actually paid; default the order amount), expired. ' +
      'Transfers: processing (→2), succeeded (→8), bank_rejected (→4), failed (→16). ' +
      'Fiat → token exchanges: paid or currency_received (→2, the fiat is taken), token_sent (→4, optional tradeHash), token_received (→8), failed (→32), complete (the remaining steps to 8). ' +
      'Token → fiat exchanges: token_received (a confirmed deposit: optional amount in tokens, default the quoted amount; optional from, default addressFrom; optional tradeHash) → 8, or → 32 when it is short or from another address; expired and failed (→32); complete. ' +
      'An event the state does not allow is a 409 listing allowedEvents.',
    body: Type.Object({
      event: Type.String({ maxLength: 32 }),
      amount: Type.Optional(Type.Union([Type.String(), Type.Number()])),
      tradeHash: Type.Optional(
        Type.String({
          maxLength: 80,
          description: 'exchange: the transaction hash, in the chain’s format; random when omitted',
        }),
      ),
      from: Type.Optional(
        Type.String({ maxLength: 64, description: 'token → fiat: the address the deposit came from' }),
      ),
    }),
    response: Type.Object({
      orderId: Type.String(),
      orderStatus: Type.Integer(),
      orderStatusText: Type.String(),
      allowedEvents: Type.Array(Type.String()),
    }),
    handle: async ({ params, body }) => {
      const order = await sandbox.apply(params.orderId ?? '', body.event, {
        amount: body.amount,
        tradeHash: body.tradeHash,
        from: body.from,
        source: 'sandbox:admin',
      });
      return {
        orderId: order.id,
        orderStatus: order.status,
        orderStatusText: statusText(order.kind, order.status),
        allowedEvents: sandbox.allowed(order),
      };
    },
  });
}
