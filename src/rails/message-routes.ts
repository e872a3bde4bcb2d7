import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { Store } from '../store/store.js';
import * as q from './queries.js';

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

export function railMessageView(row: q.RailMessageRow) {
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

/** A live rail that can be asked again about one order (Daraja, API Pix, a boleto issuer). */
export interface RailAsker {
  rail: string;
  /** Makes the order's waiting business at the rail due and asks now; how many things were waiting. */
  askAgain(orderId: string): Promise<number>;
}

/** Operator routes: an order's rail traffic, asking its rail again, and callbacks that named nothing Cashgate knows. */
export function registerRailMessageAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { store: Store; askers: readonly RailAsker[] },
): void {
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/orders/:orderId/rail-query',
    tag: 'Admin: rails',
    summary: 'Ask the order’s live rail again now, as its reconciliation would (never a second request)',
    description:
      'For an order whose answer from Daraja or the PSP is late: its waiting requests are made due and the ' +
      'reconciliation asks at once (Daraja’s status query, the PSP’s payout and received-Pix lists). What comes ' +
      'back moves the order as a callback confirmed by the rail would. 409 nothing_to_ask when no live rail is ' +
      'waiting on the order (a sandbox order, or one that ended).',
    response: Type.Object({
      orderId: Type.String(),
      asked: Type.Array(Type.Object({ rail: Type.String(), waiting: Type.Integer() })),
    }),
    handle: async ({ params }) => {
      const orderId = params.orderId ?? '';
      if (!(await q.orderExists(deps.store.read, orderId)))
        throw new OperatorError({ kind: 'order_not_found', orderId });
      const asked: { rail: string; waiting: number }[] = [];
      for (const asker of deps.askers) {
        const waiting = await asker.askAgain(orderId);
        if (waiting > 0) asked.push({ rail: asker.rail, waiting });
      }
      if (asked.length === 0) throw new OperatorError({ kind: 'nothing_to_ask', orderId });
      return { orderId, asked };
    },
  });
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/orders/:orderId/rail-messages',
    tag: 'Admin: rails',
    summary: 'What went to the order’s rail and came back, oldest first (redacted)',
    response: Type.Object({ orderId: Type.String(), messages: Type.Array(RailMessage) }),
    handle: async ({ params }) => {
      const orderId = params.orderId ?? '';
      if (!(await q.orderExists(deps.store.read, orderId)))
        throw new OperatorError({ kind: 'order_not_found', orderId });
      const rows = await q.railMessagesOfOrder(deps.store.read, orderId);
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
      messages: (await q.unmatchedRailMessages(deps.store.read, 100)).map(railMessageView),
    }),
  });
}
