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

/**
 * Whether a merchant's balance answer carries its pesos: its aggregate cashiers take MXN, or it
 * holds MXN (collected before it changed currency, or bought back from the exchange).
 */
export type HoldsPesos = (merchantId: string) => Promise<boolean>;

function balanceRoute(
  area: 'ken' | 'bra',
  currency: Currency,
  ledger: LedgerService,
  holdsPesos?: HoldsPesos,
): SignedRouteDef {
  return signedRoute({
    method: 'GET',
    path: `/api/v3/${area}/query/balance`,
    permission: 'balance',
    tag: area === 'ken' ? 'Kenya' : 'Brazil',
    summary: holdsPesos === undefined ? `${currency} balance` : `${currency} balance, and MXN for a Mexican merchant`,
    description:
      `One record per currency (${currency}${holdsPesos === undefined ? '' : ', then MXN'}). Amounts are decimal strings: ` +
      `${currency === 'KES' ? 'whole shillings' : 'two decimal places'}.` +
      (holdsPesos === undefined
        ? ''
        : ' A merchant whose aggregate cashiers take pesos (or that holds any) also gets its MXN record: the ' +
          'aggregate cashier has no balance endpoint of its own, and Latin America’s fiat is answered here.'),
    data: Type.Array(BalanceRecord),
    handle: async ({ caller }) => {
      const currencies: Currency[] =
        holdsPesos !== undefined && (await holdsPesos(caller.merchantId)) ? [currency, 'MXN'] : [currency];
      const balances = await ledger.balances(ledger.reader, caller.merchantId, currencies);
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

/** Endpoints 10 and 16 (16 also answers a Mexican merchant's pesos). */
export function balanceRoutes(ledger: LedgerService, holdsPesos: HoldsPesos): SignedRouteDef[] {
  return [balanceRoute('ken', 'KES', ledger), balanceRoute('bra', 'BRL', ledger, holdsPesos)];
}
