/**
 * Four eyes on large balance adjustments: at or above APPROVAL_THRESHOLD (per currency) an
 * adjustment is created pending and moves money only when a different operator approves it.
 */
import { actorId, actorName, type Actor } from '../access/actor.js';
import { noteAudit } from '../access/audit-log.js';
import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { formatMoney, fromDb, toDbMinor, type Currency, type Minor } from '../money.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/store.js';
import * as q from './queries.js';
import type { Balance, LedgerService } from './service.js';

export interface AdjustmentRequestView {
  approvalId: string;
  merchantId: string;
  currency: Currency;
  amount: string;
  reason: string;
  state: 'pending' | 'approved' | 'rejected';
  requestedBy: string;
  decidedBy: string | null;
  decisionReason: string | null;
  journalId: string | null;
  createdAt: string;
  decidedAt: string | null;
}

export type AdjustmentOutcome =
  { state: 'applied'; journalId: string; balance: Balance } | { state: 'pending'; approval: AdjustmentRequestView };

function view(row: q.AdjustmentRequestRow): AdjustmentRequestView {
  return {
    approvalId: row.id,
    merchantId: row.merchant_id,
    currency: row.currency,
    amount: formatMoney(fromDb(row.amount), row.currency),
    reason: row.reason,
    state: row.state,
    requestedBy: row.requested_by_email ?? row.requested_by,
    decidedBy: row.decided_by === null ? null : (row.decided_by_email ?? row.decided_by),
    decisionReason: row.decision_reason,
    journalId: row.journal_id,
    createdAt: new Date(row.created_at).toISOString(),
    decidedAt: row.decided_at === null ? null : new Date(row.decided_at).toISOString(),
  };
}

function abs(amount: Minor): Minor {
  return amount < 0n ? -amount : amount;
}

export class AdjustmentApprovals {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ledger: LedgerService,
    /** Minor units per currency; a currency without one needs no approval. */
    private readonly thresholds: Readonly<Record<string, bigint>>,
  ) {}

  /** The threshold of a currency in minor units, if one is set. */
  threshold(currency: Currency): Minor | undefined {
    return this.thresholds[currency];
  }

  /** Adjusts at once below the threshold; at or above it, creates a request for another operator. */
  async adjust(
    actor: Actor,
    merchantId: string,
    input: { currency: Currency; amount: unknown; reason: string },
  ): Promise<AdjustmentOutcome> {
    const amount = this.ledger.adjustmentAmount(input.currency, input.amount);
    const threshold = this.threshold(input.currency);
    const change = { currency: input.currency, amount: formatMoney(amount, input.currency) };
    if (threshold === undefined || abs(amount) < threshold) {
      return this.store.transact(async (tx) => {
        const applied = await this.ledger.adjustIn(tx, merchantId, { ...input, amount });
        noteAudit({ after: { ...change, journalId: applied.journalId } });
        return { state: 'applied' as const, ...applied };
      });
    }
    const now = this.clock.now();
    const row: q.AdjustmentRequestRow = {
      id: newId('apr'),
      merchant_id: merchantId,
      currency: input.currency,
      amount: toDbMinor(amount),
      reason: input.reason,
      state: 'pending',
      requested_by: actorId(actor),
      requested_by_email: actorName(actor),
      decided_by: null,
      decided_by_email: null,
      decision_reason: null,
      journal_id: null,
      created_at: now,
      decided_at: null,
    };
    await this.store.transact(async (tx) => {
      await q.insertAdjustmentRequest(tx, row);
      noteAudit({
        action: 'balance.adjust.request',
        after: { ...change, approvalId: row.id, state: 'pending' },
      });
    });
    return { state: 'pending', approval: view(row) };
  }

  /**
   * Decides a pending request: approving posts the adjustment in the same unit of work. The operator
   * who asked cannot decide; a debit that would now overdraw is refused and the request stays pending.
   */
  async decide(
    actor: Actor,
    approvalId: string,
    decision: 'approve' | 'reject',
    reason: string | undefined,
  ): Promise<{ approval: AdjustmentRequestView; balance?: Balance }> {
    return this.store.transact(async (tx) => {
      const row = await q.lockAdjustmentRequest(tx, approvalId);
      if (row === undefined) throw new OperatorError({ kind: 'approval_not_found', approvalId });
      if (row.state !== 'pending') throw new OperatorError({ kind: 'approval_decided', approvalId, state: row.state });
      if (row.requested_by === actorId(actor)) throw new OperatorError({ kind: 'approval_own', approvalId });
      let journalId: string | null = null;
      let balance: Balance | undefined;
      if (decision === 'approve') {
        const applied = await this.ledger.adjustIn(tx, row.merchant_id, {
          currency: row.currency,
          amount: fromDb(row.amount),
          reason: row.reason,
        });
        journalId = applied.journalId;
        balance = applied.balance;
      }
      const outcome = {
        state: decision === 'approve' ? ('approved' as const) : ('rejected' as const),
        decided_by: actorId(actor),
        decided_by_email: actorName(actor),
        decision_reason: reason ?? null,
        journal_id: journalId,
        decided_at: this.clock.now(),
      };
      await q.decideAdjustmentRequest(tx, approvalId, outcome);
      const decided: q.AdjustmentRequestRow = { ...row, ...outcome };
      noteAudit({
        before: { state: row.state },
        after: { state: decided.state, merchantId: row.merchant_id, journalId },
      });
      return { approval: view(decided), ...(balance !== undefined && { balance }) };
    });
  }

  async list(state: AdjustmentRequestView['state'] | undefined): Promise<AdjustmentRequestView[]> {
    return (await q.listAdjustmentRequests(this.store.read, state, 100)).map(view);
  }
}
