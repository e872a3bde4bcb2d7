/**
 * The payment methods of the aggregate cashier (endpoint 19) a merchant may offer, as its settings
 * name them; what each method is (payType, rail, document) is the cashier's (cashier/methods.ts).
 */
export const CASHIER_METHODS = ['PIX', 'PIX_DYNAMIC', 'BOLETO', 'USDT_TRC20'] as const;
export type CashierMethod = (typeof CASHIER_METHODS)[number];

export function isCashierMethod(value: unknown): value is CashierMethod {
  return typeof value === 'string' && (CASHIER_METHODS as readonly string[]).includes(value);
}

/** The methods a merchant offers: its stored list (JSON), or every method when it never chose. */
export function offeredMethods(stored: string | null): CashierMethod[] {
  if (stored === null) return [...CASHIER_METHODS];
  return (JSON.parse(stored) as unknown[]).filter(isCashierMethod);
}
