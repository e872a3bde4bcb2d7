import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Reason, registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { StringEnum } from '../http/validation.js';
import type { MerchantService } from '../merchants/service.js';
import { FEE_CHANNELS } from './fees.js';
import { CURRENCY_CODES, formatMoney } from '../money.js';
import { APPROVAL_KINDS, type AdjustmentApprovals, type ApprovalKind } from './approvals.js';
import type { Balance, LedgerService } from './service.js';

const TAG = 'Admin: balances and fees';
const CurrencyCode = StringEnum(CURRENCY_CODES);
const Amount = Type.Union([Type.String(), Type.Number()], {
  description: 'decimal, as a string (preferred) or a number',
});

export const ApprovalView = Type.Object({
  approvalId: Type.String(),
  kind: Type.Union(
    APPROVAL_KINDS.map((k) => Type.Literal(k)),
    {
      description:
        'balance_adjustment (POST …/balance-adjustments) or payment_assignment (POST /admin/v1/pix/received/{e2eid}/assign)',
    },
  ),
  action: Type.String({ description: 'what approving it does, in words' }),
  merchantId: Type.String({ description: 'the merchant credited or debited; for an assignment, the order’s' }),
  currency: Type.String(),
  amount: Type.String({ description: 'signed decimal: negative for a debit; for an assignment, the payment’s amount' }),
  e2eid: Type.Union([Type.String(), Type.Null()], {
    description: 'payment_assignment: the received Pix’s end-to-end id; null otherwise',
  }),
  orderId: Type.Union([Type.String(), Type.Null()], {
    description: 'payment_assignment: the order the payment pays once approved; null otherwise',
  }),
  reason: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')]),
  requestedBy: Type.String({ description: 'the e-mail of the operator who asked (root-token, cli:<user>)' }),
  decidedBy: Type.Union([Type.String(), Type.Null()]),
  decisionReason: Type.Union([Type.String(), Type.Null()]),
  journalId: Type.Union([Type.String(), Type.Null()], { description: 'the ledger journal once approved' }),
  createdAt: Type.String(),
  decidedAt: Type.Union([Type.String(), Type.Null()]),
});

export const BalanceView = Type.Object({
  currency: Type.String(),
  available: Type.String(),
  frozen: Type.String(),
  awaitingSettlement: Type.String(),
});

export const FeeView = Type.Object({
  channel: Type.String(),
  currency: Type.String(),
  percentBps: Type.Integer({ description: 'basis points: 150 = 1.50 %' }),
  fixed: Type.String(),
  minimum: Type.String(),
});

/** The body of PUT /admin/v1/merchants/{merchantId}/fees/{channel} (the CLI's `fee set` checks its input with it too). */
export const SetFeeBody = Type.Object({
  percentBps: Type.Integer({ minimum: 0, maximum: 10_000 }),
  fixed: Type.Optional(Amount),
  minimum: Type.Optional(Amount),
  reason: Reason,
});

function balanceView(b: Balance) {
  return {
    currency: b.currency,
    available: formatMoney(b.available, b.currency),
    frozen: formatMoney(b.frozen, b.currency),
    awaitingSettlement: formatMoney(b.awaitingSettlement, b.currency),
  };
}

/** Operator routes: balances, adjustments, fee schedules and the settlement delay. */
export function registerLedgerAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { ledger: LedgerService; merchants: MerchantService; approvals: AdjustmentApprovals },
): void {
  const { ledger, merchants, approvals } = deps;

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/merchants/:merchantId/balances',
    tag: TAG,
    summary: "A merchant's balances in every currency it has used",
    response: Type.Object({ merchantId: Type.String(), balances: Type.Array(BalanceView) }),
    handle: async ({ params }) => {
      const merchantId = (await merchants.getMerchant(params.merchantId ?? '')).merchantId;
      const balances = await ledger.balances(ledger.reader, merchantId, await ledger.currenciesOf(merchantId));
      return { merchantId, balances: balances.map(balanceView) };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/balance-adjustments',
    tag: TAG,
    summary: 'Credit (or debit, with a negative amount) the available balance, as a ledger entry',
    description:
      'A debit that would take the available balance below zero is refused with 409 insufficient_balance. At or ' +
      'above APPROVAL_THRESHOLD for its currency (either sign), the adjustment is created pending (state ' +
      '"pending", with its approval) and moves money only when another operator with finance or admin approves it.',
    body: Type.Object({
      currency: CurrencyCode,
      amount: Amount,
      reason: Reason,
    }),
    response: Type.Object({
      state: Type.Union([Type.Literal('applied'), Type.Literal('pending')]),
      journalId: Type.Optional(Type.String()),
      balance: Type.Optional(BalanceView),
      approval: Type.Optional(ApprovalView),
    }),
    handle: async ({ params, body, actor }) => {
      const merchantId = (await merchants.getMerchant(params.merchantId ?? '')).merchantId;
      const outcome = await approvals.adjust(actor, merchantId, body);
      return outcome.state === 'applied'
        ? { state: outcome.state, journalId: outcome.journalId, balance: balanceView(outcome.balance) }
        : outcome;
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/approvals',
    tag: TAG,
    summary:
      'Money actions waiting for a second operator (and those decided), newest first, the latest 100: balance ' +
      'adjustments and payment assignments',
    description:
      'Each approval has a kind and says in `action` what approving it does; a payment assignment names the ' +
      'received Pix (`e2eid`) and the order it pays (`orderId`).',
    query: Type.Object(
      {
        state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')])),
        kind: Type.Optional(Type.Union(APPROVAL_KINDS.map((k) => Type.Literal(k)))),
      },
      { additionalProperties: false },
    ),
    response: Type.Object({ approvals: Type.Array(ApprovalView) }),
    handle: async ({ query }) => ({
      approvals: await approvals.list(
        query.state as 'pending' | 'approved' | 'rejected' | undefined,
        query.kind as ApprovalKind | undefined,
      ),
    }),
  });

  for (const decision of ['approve', 'reject'] as const) {
    registerAdminRoute(scope, catalog, {
      method: 'POST',
      path: `/admin/v1/approvals/:approvalId/${decision}`,
      tag: TAG,
      summary:
        decision === 'approve'
          ? 'Approve a pending money action (balance adjustment, payment assignment): it is carried out now, in the same unit of work'
          : 'Reject a pending money action: no money moves (a payment assignment’s Pix is unmatched again)',
      description:
        'Only an operator other than the one who asked, with finance or admin (403 approval_own otherwise). 409 ' +
        'approval_decided when it was decided already; an approved debit that would now overdraw is refused with ' +
        '409 insufficient_balance and stays pending; so does an assignment whose order or Pix can no longer take ' +
        'it (409 pix_not_assignable). Audited as balance.adjust.approve / balance.adjust.reject for every kind, ' +
        'the kind in the record’s changes.',
      body: Type.Object(decision === 'approve' ? { reason: Type.Optional(Reason) } : { reason: Reason }, {
        additionalProperties: false,
      }),
      response: Type.Object({ approval: ApprovalView, balance: Type.Optional(BalanceView) }),
      handle: async ({ params, body, actor }) => {
        const decided = await approvals.decide(actor, params.approvalId ?? '', decision, body.reason);
        return {
          approval: decided.approval,
          ...(decided.balance !== undefined && { balance: balanceView(decided.balance) }),
        };
      },
    });
  }

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/merchants/:merchantId/fees',
    tag: TAG,
    summary: "A merchant's fee schedules (channels without one charge no fee)",
    response: Type.Object({ fees: Type.Array(FeeView) }),
    handle: async ({ params }) => ({
      fees: await ledger.fees((await merchants.getMerchant(params.merchantId ?? '')).merchantId),
    }),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/merchants/:merchantId/fees/:channel',
    tag: TAG,
    summary: 'Set the fee of one channel: percent (basis points) + fixed, at least a minimum, never above the amount',
    description: `Channels: ${Object.entries(FEE_CHANNELS)
      .map(([c, cur]) => `${c} (${cur})`)
      .join(', ')}. Applies to orders created from now on.`,
    body: SetFeeBody,
    response: FeeView,
    handle: async ({ params, body }) =>
      ledger.setFee((await merchants.getMerchant(params.merchantId ?? '')).merchantId, params.channel ?? '', body),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/merchants/:merchantId/settlement',
    tag: TAG,
    summary: 'Set how long collected money waits before it becomes available (default one day)',
    description: 'Applies to money collected from now on.',
    body: Type.Object({ delayMs: Type.Integer({ minimum: 0, maximum: 90 * 86_400_000 }) }),
    response: Type.Object({ merchantId: Type.String(), settlementDelayMs: Type.Integer() }),
    handle: async ({ params, body }) => {
      const merchant = await merchants.setSettlementDelay(params.merchantId ?? '', body.delayMs);
      return { merchantId: merchant.merchantId, settlementDelayMs: merchant.settlementDelayMs };
    },
  });
}
