/**
 * The payment methods of the aggregate cashier (endpoint 19) and the spec's payType code each
 * carries. The aggregate cashier takes payments in reais; USDT is priced in reais at the operator's
 * buy rate and paid on TRON to a deposit address derived for the order. The method names belong to
 * the merchant's settings (merchants/cashier-methods.ts).
 */
import type { CashierMethod } from '../merchants/cashier-methods.js';

export { isCashierMethod, type CashierMethod } from '../merchants/cashier-methods.js';

export interface CashierMethodSpec {
  /** The spec's payType code: 101 PIX, 103 PIX_DYNAMIC, 109 BOLETO, 112 WALLET (a crypto wallet). */
  payType: number;
  /** Paid in fiat through a Brazilian rail (payment callback), or in a token on a chain (cryptocurrency payment callback). */
  rail: 'brazil' | 'chain';
  /** The payer's CPF or CNPJ is asked for (a boleto and a Pix charge name their payer). */
  needsDocument: boolean;
}

export const CASHIER_METHOD_SPECS: Record<CashierMethod, CashierMethodSpec> = {
  PIX: { payType: 101, rail: 'brazil', needsDocument: true },
  PIX_DYNAMIC: { payType: 103, rail: 'brazil', needsDocument: true },
  BOLETO: { payType: 109, rail: 'brazil', needsDocument: true },
  USDT_TRC20: { payType: 112, rail: 'chain', needsDocument: false },
};

/** The currency the aggregate cashier takes the amount in, and credits the merchant in. */
export const CASHIER_CURRENCY = 'BRL' as const;
