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

/** Whether a merchant's aggregate cashiers take pesos (MXN). */
export type TakesPesos = (merchantId: string) => Promise<boolean>;

function balanceRoute(
  area: 'ken' | 'bra',
  currency: Currency,
  ledger: LedgerService,
  takesPesos?: TakesPesos,
): SignedRouteDef {
  return signedRoute({
    method: 'GET',
    path: `/api/v3/${area}/query/balance`,
    permission: 'balance',
    tag: area === 'ken' ? 'Kenya' : 'Brazil',
    summary: takesPesos === undefined ? `${currency} balance` : `${currency} balance, and MXN for a Mexican merchant`,
    description:
      `One record per currency (${currency}${takesPesos === undefined ? '' : ', then MXN'}). Amounts are decimal strings: ` +
      `${currency === 'KES' ? 'whole shillings' : 'two decimal places'}.` +
      (takesPesos === undefined
        ? ''
        : ' A merchant whose aggregate cashiers take pesos (or that holds any) also gets its MXN record: the ' +
          'aggregate cashier has no balance endpoint of its own, and Latin America’s fiat is answered here.'),
    data: Type.Array(BalanceRecord),
    handle: async ({ caller }) => {
      // One read of the merchant's accounts; its pesos shown when it holds any (collected before it
      // changed currency, bought back from the exchange) or its cashiers take them.
      const read = await ledger.balances(
        ledger.reader,
        caller.merchantId,
        takesPesos === undefined ? [currency] : [currency, 'MXN'],
      );
      const holds = (b: (typeof read)[number]) => b.available !== 0n || b.frozen !== 0n || b.awaitingSettlement !== 0n;
      const pesos = read.find((b) => b.currency === 'MXN');
      const showPesos =
        pesos !== undefined && (holds(pesos) || (takesPesos !== undefined && (await takesPesos(caller.merchantId))));
      const balances = read.filter((b) => b.currency !== 'MXN' || showPesos);
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
export function balanceRoutes(ledger: LedgerService, takesPesos: TakesPesos): SignedRouteDef[] {
  return [balanceRoute('ken', 'KES', ledger), balanceRoute('bra', 'BRL', ledger, takesPesos)];
}
