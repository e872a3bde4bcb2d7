import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Reason, registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { formatMoney } from '../money.js';
import { maskDocument, PixReturnRefusal, type ApiPixBrazil } from './api-pix.js';
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
    updatedAt: row.updated_at,
  };
}

/** Operator routes for Brazil on API Pix: the Pix not credited to an order, and their return. */
export function registerPixAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { pix: ApiPixBrazil },
): void {
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
}
