/**
 * An operator assigns a received Pix that no order took (unmatched, or whose return failed) to a
 * merchant's Pix collection order still waiting for it: below APPROVAL_THRESHOLD for BRL at once
 * (audited `payment.assign`), at or above it as a request (`payment.assign.request`) that another
 * operator approves through the approvals routes, which are the balance adjustments' own: this is
 * their carrier of kind `payment_assignment`.
 */
import { actorName, type Actor } from '../access/actor.js';
import { noteAudit } from '../access/audit-log.js';
import type { AdjustmentApprovals, AdjustmentRequestView, ApprovalCarrier } from '../ledger/approvals.js';
import type { AdjustmentRequestRow } from '../ledger/queries.js';
import { formatMoney } from '../money.js';
import type { Tx } from '../store/store.js';
import type { ApiPixBrazil } from './api-pix.js';
import type { PixReceivedRow } from './queries.js';

export interface AssignOutcome {
  pix: PixReceivedRow;
  /** The order's status after the request: paid (2) when done at once, still 1 while pending. */
  orderStatus: number;
  /** The pending approval; null when the assignment was carried out at once. */
  approval: AdjustmentRequestView | null;
}

export class PixAssignments implements ApprovalCarrier {
  constructor(
    private readonly pix: ApiPixBrazil,
    private readonly approvals: AdjustmentApprovals,
  ) {
    approvals.carry('payment_assignment', this);
  }

  async assign(actor: Actor, e2eid: string, orderId: string, reason: string): Promise<AssignOutcome> {
    const { pix, order } = await this.pix.assignable(e2eid, orderId);
    const amount = BigInt(pix.amount);
    const change = {
      e2eid,
      orderId,
      merchantId: order.merchant_id,
      currency: 'BRL',
      amount: formatMoney(amount, 'BRL'),
    };
    if (!this.approvals.needsApproval('BRL', amount)) {
      const done = await this.pix.assignReceived(
        e2eid,
        orderId,
        { by: actorName(actor), reason, approvalId: null },
        (_tx, was) => {
          noteAudit({
            before: { disposition: pix.disposition, orderId: pix.order_id },
            after: { ...change, disposition: was.disposition },
          });
          return Promise.resolve();
        },
      );
      return { pix: done.pix, orderStatus: done.order.status, approval: null };
    }
    const approval = await this.approvals.request(
      actor,
      {
        kind: 'payment_assignment',
        action: 'payment.assign.request',
        merchantId: order.merchant_id,
        currency: 'BRL',
        amount,
        reason,
        e2eid,
        orderId,
      },
      (tx, approvalId) => this.pix.holdForAssignment(tx, pix, approvalId),
    );
    return {
      pix: { ...pix, approval_id: approval.approvalId },
      orderStatus: order.status,
      approval,
    };
  }

  /** Carries out an approved assignment: the decision is recorded in the unit of work that pays the order. */
  async approve(row: AdjustmentRequestRow, record: (tx: Tx) => Promise<void>): Promise<void> {
    await this.pix.assignReceived(
      row.e2eid ?? '',
      row.order_id ?? '',
      { by: row.requested_by_email ?? row.requested_by, reason: row.reason, approvalId: row.id },
      (tx) => record(tx),
    );
  }

  /** A rejected assignment lets go of its Pix: unmatched (or its return failed) again, returnable and assignable. */
  reject(tx: Tx, row: AdjustmentRequestRow): Promise<void> {
    return this.pix.releaseAssignment(tx, row.e2eid ?? '', row.id);
  }
}
