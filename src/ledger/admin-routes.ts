import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { StringEnum } from '../http/validation.js';
import type { MerchantService } from '../merchants/service.js';
import { FEE_CHANNELS } from './fees.js';
import { CURRENCY_CODES, formatMoney } from '../money.js';
import type { Balance, LedgerService } from './service.js';

const TAG = 'Admin: balances and fees';
const CurrencyCode = StringEnum(CURRENCY_CODES);
const Amount = Type.Union([Type.String(), Type.Number()], {
  description: 'decimal, as a string (preferred) or a number',
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
  deps: { ledger: LedgerService; merchants: MerchantService },
): void {
  const { ledger, merchants } = deps;

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
    description: 'A debit that would take the available balance below zero is refused with 409 insufficient_balance.',
    body: Type.Object({
      currency: CurrencyCode,
      amount: Amount,
      reason: Type.String({ minLength: 1, maxLength: 500 }),
    }),
    response: Type.Object({ journalId: Type.String(), balance: BalanceView }),
    handle: async ({ params, body }) => {
      const merchantId = (await merchants.getMerchant(params.merchantId ?? '')).merchantId;
      const { journalId, balance } = await ledger.adjust(merchantId, body);
      return { journalId, balance: balanceView(balance) };
    },
  });

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
