import { Type } from '@sinclair/typebox';
import { signedRoute, type SignedRouteDef } from '../auth/signed-route.js';
import { formatMoney, type Currency } from '../money.js';
import type { LedgerService } from './service.js';

/** accountStatusId and accountStatus: the only state a merchant account has today. */
export const ACCOUNT_STATUS = { id: 1, text: 'NORMAL' } as const;

export const BalanceRecord = Type.Object({
  accountBalance: Type.String({ description: 'available balance' }),
  accountFreezeAmount: Type.String({ description: 'frozen for transfers in progress (amount + fee)' }),
  accountStatusId: Type.Integer({ description: '1 = NORMAL' }),
  accountWaitSettledAmount: Type.String({ description: 'collected, waiting for its settlement time' }),
  currencyType: Type.String(),
  accountStatus: Type.String({ description: 'NORMAL' }),
});

function balanceRoute(area: 'ken' | 'bra', currency: Currency, ledger: LedgerService): SignedRouteDef {
  return signedRoute({
    method: 'GET',
    path: `/api/v3/${area}/query/balance`,
    permission: 'balance',
    tag: area === 'ken' ? 'Kenya' : 'Brazil',
    summary: `${currency} balance`,
    description: `One record per currency (${currency}). Amounts are decimal strings: ${currency === 'KES' ? 'whole shillings' : 'two decimal places'}.`,
    data: Type.Array(BalanceRecord),
    handle: async ({ caller }) => {
      const balances = await ledger.balances(ledger.reader, caller.merchantId, [currency]);
      return balances.map((b) => ({
        accountBalance: formatMoney(b.available, b.currency),
        accountFreezeAmount: formatMoney(b.frozen, b.currency),
        accountStatusId: ACCOUNT_STATUS.id,
        accountWaitSettledAmount: formatMoney(b.awaitingSettlement, b.currency),
        currencyType: b.currency,
        accountStatus: ACCOUNT_STATUS.text,
      }));
    },
  });
}

/** Endpoints 10 and 16. */
export function balanceRoutes(ledger: LedgerService): SignedRouteDef[] {
  return [balanceRoute('ken', 'KES', ledger), balanceRoute('bra', 'BRL', ledger)];
}
