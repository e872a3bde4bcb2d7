import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { actorName } from '../access/actor.js';
import { Reason, registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { OperatorError } from '../admin/failures.js';
import { StringEnum } from '../http/validation.js';
import type { Store } from '../store/store.js';
import { findOrder, findSettledByHand, type SettledByHandRow } from './queries.js';
import type { OrderSandbox } from './sandbox.js';
import { orderKindOf, type OrderService } from './service.js';
import { statusText } from './state-machine.js';

/** How an operator settled a payout in doubt by hand: who, when, why; null when nobody did. */
export const SettledByHandView = Type.Union(
  [
    Type.Object({
      outcome: StringEnum(['paid', 'failed'] as const),
      settledBy: Type.String({ description: "the operator's e-mail, or root-token" }),
      operatorId: Type.Union([Type.String(), Type.Null()]),
      reason: Type.String(),
      fromStatus: Type.Integer({ description: 'the status the payout was in (1 accepted, 2 processing)' }),
      settledAt: Type.String({ description: 'ISO 8601, UTC' }),
    }),
    Type.Null(),
  ],
  { description: 'set when an operator settled the payout by hand; null otherwise' },
);

export function settledByHandView(row: SettledByHandRow | undefined) {
  if (row === undefined) return null;
  return {
    outcome: row.outcome,
    settledBy: row.settled_by,
    operatorId: row.operator_id,
    reason: row.reason,
    fromStatus: row.from_status,
    settledAt: new Date(row.settled_at).toISOString(),
  };
}

/**
 * Operator routes for orders: the sandbox's one-step driver, one order's personal data revealed, and
 * a payout in doubt settled by hand.
 */
export function registerOrderAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { sandbox: OrderSandbox; store: Store; orders: OrderService },
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
      settledByHand: SettledByHandView,
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
        settledByHand: settledByHandView(await findSettledByHand(deps.store.read, order.id)),
      };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/orders/:orderId/settle-by-hand',
    tag: 'Admin: orders',
    summary: 'Settle a payout in doubt by hand as paid or failed, after checking with the provider (admin)',
    description:
      'For a payout (transfer) whose rail outcome is unknown: a hand-over that keeps failing, or a result that ' +
      'never came. The order moves to its final state as the rail’s own result would move it, in one unit of ' +
      'work: paid → 8 SUCCESS (the frozen amount and fee are taken), failed → 16 FAILED (they go back to the ' +
      'merchant’s available balance), and the merchant’s callback. Its hand-overs end (it is never sent ' +
      'again), a later report of the rail is recorded and changes nothing, and the order is flagged as settled ' +
      'by hand (who, when, why) here, in the personal-data read and in the merchant console. confirm must repeat ' +
      'the order id. 409 not_a_payout for another kind of order, 409 payout_final for a payout that ended.',
    body: Type.Object({
      outcome: StringEnum(['paid', 'failed'] as const, {
        description: 'what the provider says became of the payout',
      }),
      reason: Reason,
      confirm: Type.String({ maxLength: 64, description: 'the order id again: the typed confirmation' }),
    }),
    response: Type.Object({
      orderId: Type.String(),
      merchantId: Type.String(),
      externalOrderId: Type.String(),
      kind: Type.String({ description: 'area.kind, e.g. ken.transfer' }),
      orderStatus: Type.Integer(),
      orderStatusText: Type.String(),
      settledByHand: SettledByHandView,
    }),
    handle: async ({ params, body, actor }) => {
      const orderId = params.orderId ?? '';
      if (body.confirm !== orderId) {
        throw new OperatorError({ kind: 'confirmation_mismatch', field: 'confirm', expected: 'the order id' });
      }
      const { order, settled } = await deps.orders.settleByHand(orderId, {
        outcome: body.outcome,
        reason: body.reason,
        by: actorName(actor),
        operatorId: actor.type === 'operator' ? actor.operatorId : null,
      });
      return {
        orderId: order.id,
        merchantId: order.merchant_id,
        externalOrderId: order.external_order_id,
        kind: orderKindOf(order),
        orderStatus: order.status,
        orderStatusText: statusText(order.kind, order.status),
        settledByHand: settledByHandView(settled),
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
