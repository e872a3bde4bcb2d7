import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { OperatorError } from '../admin/failures.js';
import type { Store } from '../store/store.js';
import { findOrder } from './queries.js';
import type { OrderSandbox } from './sandbox.js';
import { statusText } from './state-machine.js';

/** Operator routes for orders: the sandbox's one-step driver, and one order's personal data revealed. */
export function registerOrderAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { sandbox: OrderSandbox; store: Store },
): void {
  const { sandbox } = deps;
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/orders/:orderId/personal-data',
    tag: 'Admin: orders',
    summary: "Reveal one order's personal data unmasked (every call is an audited pii.reveal)",
    description:
      'Everywhere else, a role without personal_data.read sees phones, documents, account numbers and payer names ' +
      'masked. This route shows one order’s as the merchant sent them, and records who looked.',
    response: Type.Object({
      orderId: Type.String(),
      merchantId: Type.String(),
      externalOrderId: Type.String(),
      area: Type.String(),
      kind: Type.String(),
      details: Type.Unknown({ description: 'the order’s payer or payee fields, unmasked' }),
    }),
    handle: async ({ params }) => {
      const orderId = params.orderId ?? '';
      const order = await findOrder(deps.store.read, orderId);
      if (order === undefined) throw new OperatorError({ kind: 'order_not_found', orderId });
      return {
        orderId: order.id,
        merchantId: order.merchant_id,
        externalOrderId: order.external_order_id,
        area: order.area,
        kind: order.kind,
        details: JSON.parse(order.details) as unknown,
      };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/sandbox/orders/:orderId/events',
    tag: 'Admin: sandbox',
    summary: 'Drive an order one step, as its simulated rail would',
    description:
      'Collections: paid (optional amount: what the payer actually paid; default the order amount), expired. ' +
      'Transfers: processing (→2), succeeded (→8), bank_rejected (→4), failed (→16). ' +
      'Fiat → token exchanges: paid or currency_received (→2, the fiat is taken), token_sent (→4, optional ' +
      'tradeHash), token_received (→8), failed (→32), complete (the remaining steps to 8). ' +
      'Token → fiat exchanges: token_received (a confirmed deposit: optional amount in tokens, default the quoted ' +
      'amount; optional from, default addressFrom; optional tradeHash) → 8, or → 32 when it is short or from ' +
      'another address; expired and failed (→32); complete. ' +
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
