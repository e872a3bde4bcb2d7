/**
 * The payment methods of the aggregate cashier (endpoint 19) and the spec's payType code each
 * carries. A merchant's aggregate cashier takes reais (Pix, Pix dynamic, boleto) or pesos (SPEI,
 * OXXO); USDT is priced in the cashier's currency at the operator's buy rate and paid on TRON to a
 * deposit address derived for the order. The method names belong to the merchant's settings
 * (merchants/cashier-methods.ts).
 */
import type { CashierMethod } from '../merchants/cashier-methods.js';

export {
  DEFAULT_CASHIER_CURRENCY,
  isCashierMethod,
  isCashierCurrency,
  METHODS_OF_CURRENCY,
  type CashierMethod,
  type CashierCurrency,
} from '../merchants/cashier-methods.js';

export interface CashierMethodSpec {
  /** The spec's payType code: 101 PIX, 102 BANK (SPEI), 103 PIX_DYNAMIC, 109 BOLETO, 110 OXXO, 112 WALLET (a crypto wallet). */
  payType: number;
  /** Paid in fiat through a Brazilian or Mexican rail (payment callback), or in a token on a chain (cryptocurrency payment callback). */
  rail: 'brazil' | 'mexico' | 'chain';
  /** The payer's CPF or CNPJ is asked for (a boleto and a Pix charge name their payer). */
  needsDocument: boolean;
}

export const CASHIER_METHOD_SPECS: Record<CashierMethod, CashierMethodSpec> = {
  PIX: { payType: 101, rail: 'brazil', needsDocument: true },
  PIX_DYNAMIC: { payType: 103, rail: 'brazil', needsDocument: true },
  BOLETO: { payType: 109, rail: 'brazil', needsDocument: true },
  SPEI: { payType: 102, rail: 'mexico', needsDocument: false },
  OXXO: { payType: 110, rail: 'mexico', needsDocument: false },
  USDT_TRC20: { payType: 112, rail: 'chain', needsDocument: false },
};
