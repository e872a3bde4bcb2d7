/**
 * Four eyes on large money actions: at or above APPROVAL_THRESHOLD (per currency) a balance
 * adjustment, or the assignment of an unmatched incoming payment to an order, is created pending
 * and carried out only when a different operator approves it. One mechanism, one table: each
 * approval has a kind. Balance adjustments are carried out here; another kind by the carrier its
 * module registers (`carry`), which runs the decision in the unit of work that carries it out.
 */
import { actorId, actorName, type Actor } from '../access/actor.js';
import { noteAudit } from '../access/audit-log.js';
import type { AuditAction } from '../access/permissions.js';
import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { formatMoney, fromDb, toDbMinor, type Currency, type Minor } from '../money.js';
import { newId } from '../store/ids.js';
import type { ApprovalKind } from '../store/schema.js';
import type { Store, Tx } from '../store/store.js';
import * as q from './queries.js';
import type { Balance, LedgerService } from './service.js';

export type { ApprovalKind };
export const APPROVAL_KINDS = ['balance_adjustment', 'payment_assignment'] as const satisfies readonly ApprovalKind[];

export interface AdjustmentRequestView {
  approvalId: string;
  /** balance_adjustment or payment_assignment. */
  kind: ApprovalKind;
  /** What approving it does, in words. */
  action: string;
  merchantId: string;
  currency: Currency;
  amount: string;
  /** payment_assignment: the received payment (a Pix's end-to-end id) and the order it pays. */
  e2eid: string | null;
  orderId: string | null;
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

/**
 * Carries out (or releases) the approvals of one kind other than a balance adjustment. `record`
 * writes the decision (and its audit note): `approve` must call it inside the unit of work that
 * carries the request out, so that both commit together or neither does.
 */
export interface ApprovalCarrier {
  approve(row: q.AdjustmentRequestRow, record: (tx: Tx) => Promise<void>): Promise<void>;
  /** What the pending request held is let go, in the rejecting unit of work. */
  reject(tx: Tx, row: q.AdjustmentRequestRow): Promise<void>;
}

/** A request of a kind other than a balance adjustment, as its module asks for it. */
export interface ApprovalRequest {
  kind: Exclude<ApprovalKind, 'balance_adjustment'>;
  /** Its audit action (e.g. payment.assign.request). */
  action: AuditAction;
  merchantId: string;
  currency: Currency;
  amount: Minor;
  reason: string;
  e2eid: string | null;
  orderId: string | null;
}

function action(row: q.AdjustmentRequestRow): string {
  const amount = fromDb(row.amount);
  const money = `${formatMoney(amount < 0n ? -amount : amount, row.currency)} ${row.currency}`;
  if (row.kind === 'payment_assignment')
    return `assign the received payment ${row.e2eid ?? '?'} (${money}) to order ${row.order_id ?? '?'} of merchant ${row.merchant_id}, which it pays`;
  return amount < 0n
    ? `debit ${money} from the available balance of merchant ${row.merchant_id}`
    : `credit ${money} to the available balance of merchant ${row.merchant_id}`;
}

export function approvalView(row: q.AdjustmentRequestRow): AdjustmentRequestView {
  return {
    approvalId: row.id,
    kind: row.kind,
    action: action(row),
    merchantId: row.merchant_id,
    currency: row.currency,
    amount: formatMoney(fromDb(row.amount), row.currency),
    e2eid: row.e2eid,
    orderId: row.order_id,
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
  readonly #carriers = new Map<ApprovalKind, ApprovalCarrier>();

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

  /** Whether a money action of `amount` (either sign) needs a second operator. */
  needsApproval(currency: Currency, amount: Minor): boolean {
    const threshold = this.threshold(currency);
    return threshold !== undefined && abs(amount) >= threshold;
  }

  /** The module that carries out the approvals of `kind` (a payment assignment: the Pix connector). */
  carry(kind: Exclude<ApprovalKind, 'balance_adjustment'>, carrier: ApprovalCarrier): void {
    this.#carriers.set(kind, carrier);
  }

  /** Adjusts at once below the threshold; at or above it, creates a request for another operator. */
  async adjust(
    actor: Actor,
    merchantId: string,
    input: { currency: Currency; amount: unknown; reason: string },
  ): Promise<AdjustmentOutcome> {
    const amount = this.ledger.adjustmentAmount(input.currency, input.amount);
    const change = { currency: input.currency, amount: formatMoney(amount, input.currency) };
    if (!this.needsApproval(input.currency, amount)) {
      return this.store.transact(async (tx) => {
        const applied = await this.ledger.adjustIn(tx, merchantId, { ...input, amount });
        noteAudit({ after: { ...change, journalId: applied.journalId } });
        return { state: 'applied' as const, ...applied };
      });
    }
    const row = this.#newRow(actor, {
      kind: 'balance_adjustment',
      merchantId,
      currency: input.currency,
      amount,
      reason: input.reason,
      e2eid: null,
      orderId: null,
    });
    await this.store.transact(async (tx) => {
      await q.insertAdjustmentRequest(tx, row);
      noteAudit({
        action: 'balance.adjust.request',
        after: { ...change, approvalId: row.id, state: 'pending' },
      });
    });
    return { state: 'pending', approval: approvalView(row) };
  }

  /**
   * Creates a pending request of another kind; `hold` marks, in the same unit of work, what the
   * request will move (so nothing else moves it meanwhile), and throws when it cannot.
   */
  async request(
    actor: Actor,
    input: ApprovalRequest,
    hold: (tx: Tx, approvalId: string) => Promise<void>,
  ): Promise<AdjustmentRequestView> {
    const row = this.#newRow(actor, input);
    await this.store.transact(async (tx) => {
      await q.insertAdjustmentRequest(tx, row);
      await hold(tx, row.id);
      noteAudit({
        action: input.action,
        after: {
          kind: row.kind,
          currency: row.currency,
          amount: formatMoney(input.amount, row.currency),
          merchantId: row.merchant_id,
          ...(row.e2eid !== null && { e2eid: row.e2eid }),
          ...(row.order_id !== null && { orderId: row.order_id }),
          approvalId: row.id,
          state: 'pending',
        },
      });
    });
    return approvalView(row);
  }

  #newRow(
    actor: Actor,
    input: Omit<ApprovalRequest, 'kind' | 'action'> & { kind: ApprovalKind },
  ): q.AdjustmentRequestRow {
    return {
      id: newId('apr'),
      kind: input.kind,
      e2eid: input.e2eid,
      order_id: input.orderId,
      merchant_id: input.merchantId,
      currency: input.currency,
      amount: toDbMinor(input.amount),
      reason: input.reason,
      state: 'pending',
      requested_by: actorId(actor),
      requested_by_email: actorName(actor),
      decided_by: null,
      decided_by_email: null,
      decision_reason: null,
      journal_id: null,
      created_at: this.clock.now(),
      decided_at: null,
    };
  }

  /**
   * Decides a pending request. Approving a balance adjustment posts it in the same unit of work; a
   * debit that would now overdraw is refused and the request stays pending. Approving another kind
   * has its carrier carry it out with the decision in one unit of work; when it cannot be carried
   * out now, the refusal is answered and the request stays pending (to be rejected). The operator
   * who asked cannot decide. The audit record keeps the approval's kind in its changes.
   */
  async decide(
    actor: Actor,
    approvalId: string,
    decision: 'approve' | 'reject',
    reason: string | undefined,
  ): Promise<{ approval: AdjustmentRequestView; balance?: Balance }> {
    const known = await q.adjustmentRequest(this.store.read, approvalId);
    if (known !== undefined && known.kind !== 'balance_adjustment')
      return this.#decideCarried(actor, known, decision, reason);
    return this.store.transact(async (tx) => {
      const row = await q.lockAdjustmentRequest(tx, approvalId);
      if (row === undefined) throw new OperatorError({ kind: 'approval_not_found', approvalId });
      this.#mayDecide(actor, row);
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
      const outcome = this.#outcome(actor, decision, reason, journalId);
      await q.decideAdjustmentRequest(tx, approvalId, outcome);
      const decided: q.AdjustmentRequestRow = { ...row, ...outcome };
      noteAudit({
        before: { state: row.state },
        after: { state: decided.state, kind: row.kind, merchantId: row.merchant_id, journalId },
      });
      return { approval: approvalView(decided), ...(balance !== undefined && { balance }) };
    });
  }

  #mayDecide(actor: Actor, row: q.AdjustmentRequestRow): void {
    if (row.state !== 'pending')
      throw new OperatorError({ kind: 'approval_decided', approvalId: row.id, state: row.state });
    if (row.requested_by === actorId(actor)) throw new OperatorError({ kind: 'approval_own', approvalId: row.id });
  }

  #outcome(actor: Actor, decision: 'approve' | 'reject', reason: string | undefined, journalId: string | null) {
    return {
      state: decision === 'approve' ? ('approved' as const) : ('rejected' as const),
      decided_by: actorId(actor),
      decided_by_email: actorName(actor),
      decision_reason: reason ?? null,
      journal_id: journalId,
      decided_at: this.clock.now(),
    };
  }

  async #decideCarried(
    actor: Actor,
    row: q.AdjustmentRequestRow,
    decision: 'approve' | 'reject',
    reason: string | undefined,
  ): Promise<{ approval: AdjustmentRequestView }> {
    this.#mayDecide(actor, row);
    const carrier = this.#carriers.get(row.kind);
    if (carrier === undefined)
      throw new OperatorError({
        kind: 'approval_kind_unavailable',
        approvalId: row.id,
        approvalKind: row.kind,
        detail: 'payment assignments are carried out by the live Pix rail (BRAZIL_RAIL=apipix), which is off',
      });
    const outcome = this.#outcome(actor, decision, reason, null);
    const record = async (tx: Tx) => {
      // Only a request still pending moves: of two deciders at once, the second changes nothing.
      if (!(await q.decideAdjustmentRequest(tx, row.id, outcome))) {
        const now = await q.adjustmentRequest(tx, row.id);
        throw new OperatorError({ kind: 'approval_decided', approvalId: row.id, state: now?.state ?? 'decided' });
      }
      noteAudit({
        before: { state: row.state },
        after: {
          state: outcome.state,
          kind: row.kind,
          merchantId: row.merchant_id,
          ...(row.e2eid !== null && { e2eid: row.e2eid }),
          ...(row.order_id !== null && { orderId: row.order_id }),
        },
      });
    };
    if (decision === 'approve') await carrier.approve(row, record);
    else
      await this.store.transact(async (tx) => {
        await record(tx);
        await carrier.reject(tx, row);
      });
    return { approval: approvalView({ ...row, ...outcome }) };
  }

  async list(state: AdjustmentRequestView['state'] | undefined, kind?: ApprovalKind): Promise<AdjustmentRequestView[]> {
    return (await q.listAdjustmentRequests(this.store.read, state, 100, kind)).map(approvalView);
  }
}
