/**
 * The payment methods of the aggregate cashier (endpoint 19) a merchant may offer, as its settings
 * name them, and the currency its cashiers take: reais (Brazil's methods) or pesos (Mexico's); what
 * each method is (payType, rail, document) is the cashier's (cashier/methods.ts).
 */
export const CASHIER_METHODS = ['PIX', 'PIX_DYNAMIC', 'BOLETO', 'SPEI', 'OXXO', 'USDT_TRC20'] as const;
export type CashierMethod = (typeof CASHIER_METHODS)[number];

/** The currencies an aggregate cashier takes; BRL unless the operator chose otherwise. */
export const CASHIER_CURRENCIES = ['BRL', 'MXN'] as const;
export type CashierCurrency = (typeof CASHIER_CURRENCIES)[number];
export const DEFAULT_CASHIER_CURRENCY: CashierCurrency = 'BRL';

/** The methods of each cashier currency, in the order a page lists them (USDT is priced in either). */
export const METHODS_OF_CURRENCY: Record<CashierCurrency, readonly CashierMethod[]> = {
  BRL: ['PIX', 'PIX_DYNAMIC', 'BOLETO', 'USDT_TRC20'],
  MXN: ['SPEI', 'OXXO', 'USDT_TRC20'],
};

export function isCashierMethod(value: unknown): value is CashierMethod {
  return typeof value === 'string' && (CASHIER_METHODS as readonly string[]).includes(value);
}

export function isCashierCurrency(value: unknown): value is CashierCurrency {
  return typeof value === 'string' && (CASHIER_CURRENCIES as readonly string[]).includes(value);
}

/** The methods a merchant offers in its cashier currency: its stored list (JSON), or every method of the currency when it never chose. */
export function offeredMethods(stored: string | null, currency: CashierCurrency): CashierMethod[] {
  const ofCurrency = METHODS_OF_CURRENCY[currency];
  if (stored === null) return [...ofCurrency];
  return (JSON.parse(stored) as unknown[]).filter(isCashierMethod).filter((m) => ofCurrency.includes(m));
}
