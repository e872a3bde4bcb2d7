import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Reason, registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { ApprovalView } from '../ledger/admin-routes.js';
import type { AdjustmentApprovals } from '../ledger/approvals.js';
import { formatMoney } from '../money.js';
import { maskDocument, PixReturnRefusal, type ApiPixBrazil } from './api-pix.js';
import { PixAssignments } from './pix-assignments.js';
import type { PixReceivedRow } from './queries.js';

const TAG = 'Admin: Pix';
const UNCREDITED = ['unmatched', 'returning', 'returned', 'return_failed'] as const;

const ReceivedPix = Type.Object({
  e2eid: Type.String({ description: 'the Pix’s end-to-end id' }),
  txid: Type.Union([Type.String(), Type.Null()], { description: 'the charge it named; null for a Pix to the key' }),
  orderId: Type.Union([Type.String(), Type.Null()], { description: 'the order of that charge; null when unmatched' }),
  amount: Type.String({ description: 'reais, e.g. "12.50"' }),
  paidAt: Type.String({ description: 'when the PSP received it (its horario)' }),
  payerName: Type.Union([Type.String(), Type.Null()]),
  payerDocument: Type.Union([Type.String(), Type.Null()], { description: 'masked: the first three and last two' }),
  disposition: Type.Union(
    [...UNCREDITED, 'credited'].map((d) => Type.Literal(d)),
    {
      description:
        'unmatched (no charge of Cashgate’s asked for it), returning (its return is asked for or under way), returned, return_failed, credited',
    },
  ),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'why it is returned, or why its return failed' }),
  refundId: Type.Union([Type.String(), Type.Null()], { description: 'the id of its return (devolução)' }),
  refundStatus: Type.Union([Type.String(), Type.Null()], {
    description: 'what the PSP says of the return: EM_PROCESSAMENTO, DEVOLVIDO, NAO_REALIZADO',
  }),
  approvalId: Type.Union([Type.String(), Type.Null()], {
    description:
      'the approval of its assignment to an order: while it waits (the Pix is then neither returned nor assigned ' +
      'otherwise), or the one that carried it out; null when none',
  }),
  assignedBy: Type.Union([Type.String(), Type.Null()], {
    description: 'credited by an operator’s assignment (orderId is that order): who asked for it',
  }),
  assignedReason: Type.Union([Type.String(), Type.Null()], { description: 'why it was assigned' }),
  assignedAt: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix milliseconds' }),
  updatedAt: Type.Integer({ description: 'Unix milliseconds' }),
});

function receivedView(row: PixReceivedRow) {
  return {
    e2eid: row.e2eid,
    txid: row.txid,
    orderId: row.order_id,
    amount: formatMoney(BigInt(row.amount), 'BRL').replace(/,/g, ''),
    paidAt: row.paid_at,
    payerName: row.payer_name,
    payerDocument: row.payer_document === null ? null : maskDocument(row.payer_document),
    disposition: row.disposition,
    reason: row.reason,
    refundId: row.refund_id,
    refundStatus: row.refund_status,
    approvalId: row.approval_id,
    assignedBy: row.assigned_by,
    assignedReason: row.assigned_reason,
    assignedAt: row.assigned_at,
    updatedAt: row.updated_at,
  };
}

/** Operator routes for Brazil on API Pix: the Pix not credited to an order, their return and their assignment. */
export function registerPixAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { pix: ApiPixBrazil; approvals: AdjustmentApprovals },
): void {
  // The carrier of the approvals of kind payment_assignment.
  const assignments = new PixAssignments(deps.pix, deps.approvals);
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/pix/received',
    tag: TAG,
    summary: 'Pix received that were not credited to an order, newest first (the latest 100)',
    description:
      'Unmatched Pix (no charge of Cashgate’s asked for them: the operator’s to return), and Pix returned or being ' +
      'returned to their payers (late, a second payment, or refused by the order’s rules).',
    query: Type.Object(
      { disposition: Type.Optional(Type.Union(UNCREDITED.map((d) => Type.Literal(d)))) },
      { additionalProperties: false },
    ),
    response: Type.Object({ pix: Type.Array(ReceivedPix) }),
    handle: async ({ query }) => ({
      pix: (await deps.pix.receivedList(query.disposition as (typeof UNCREDITED)[number] | undefined, 100)).map(
        receivedView,
      ),
    }),
  });
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/pix/received/:e2eid/return',
    tag: TAG,
    summary: 'Return a Pix to its payer: one that no charge asked for, or one whose return failed',
    description:
      'The return (PUT /pix/{e2eid}/devolucao/{id}) is asked for at once and followed by reconciliation. An ' +
      'unmatched Pix’s money moves from system/BRL/pix_unmatched to system/BRL/pix_returns; a failed return is ' +
      'asked for again under a new id. 409 for a Pix credited to an order, returned, or being returned.',
    body: Type.Object({ reason: Reason }, { additionalProperties: false }),
    response: ReceivedPix,
    handle: async ({ params }) => {
      const e2eid = params.e2eid ?? '';
      try {
        return receivedView(await deps.pix.returnReceived(e2eid));
      } catch (error) {
        if (!(error instanceof PixReturnRefusal)) throw error;
        throw new OperatorError(
          error.kind === 'not_found'
            ? { kind: 'pix_not_found', e2eid }
            : { kind: 'pix_not_returnable', e2eid, detail: error.message },
        );
      }
    },
  });
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/pix/received/:e2eid/assign',
    tag: TAG,
    summary: 'Assign a Pix that no order took to a merchant’s Pix collection order still waiting for its payment',
    description:
      'For a payer who paid the right order with a wrong txid, or a little late. The Pix must be unmatched or its ' +
      'return must have failed, and not be held by another assignment waiting for approval (409 ' +
      'pix_assignment_pending, naming it); the order (any merchant’s) must be a Brazilian Pix collection waiting ' +
      'for its payment (status 1), of exactly the Pix’s amount (409 pix_not_assignable naming the field and the ' +
      'rule: return the Pix instead). The order is paid as a matched Pix pays it, in one unit of work: its status, ' +
      'ledger entries and callback; the Pix’s money moves from system/BRL/pix_unmatched (or pix_returns) through ' +
      'rail_clearing to the merchant. At or above APPROVAL_THRESHOLD for BRL it is created as a pending approval ' +
      '(kind payment_assignment, audited payment.assign.request) carried out when another operator approves it ' +
      '(POST /admin/v1/approvals/{approvalId}/approve); a rejection leaves the Pix as it was.',
    body: Type.Object(
      { orderId: Type.String({ minLength: 1, maxLength: 64 }), reason: Reason },
      { additionalProperties: false },
    ),
    response: Type.Object({
      ...ReceivedPix.properties,
      approval: Type.Union([ApprovalView, Type.Null()], {
        description: 'the pending approval at or above APPROVAL_THRESHOLD; null when done at once',
      }),
      orderStatus: Type.Integer({ description: 'the order’s status now: 2 when paid at once, 1 while pending' }),
    }),
    handle: async ({ params, body, actor }) => {
      const outcome = await assignments.assign(actor, params.e2eid ?? '', body.orderId, body.reason);
      return { ...receivedView(outcome.pix), approval: outcome.approval, orderStatus: outcome.orderStatus };
    },
  });
}
