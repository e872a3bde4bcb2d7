/**
 * Mexico's collections on the aggregate cashier: SPEI transfers to a CLABE issued for the order
 * (through STP) and OXXO cash vouchers (through Stripe), credited in pesos. What an order keeps of
 * them in its details, and the limits each method takes.
 */
import type { Minor } from '../money.js';

/** The Mexican methods of the aggregate cashier. */
export type MexicoMethod = 'SPEI' | 'OXXO';

/**
 * What a payer may pay by each method, centavos: SPEI from MXN 1.00 (no rail ceiling below the
 * cashier's own), OXXO from MXN 10.00 to 10,000.00 per voucher (the OXXO network's range).
 */
export const MEXICO_LIMITS: Record<MexicoMethod, { min: Minor; max: Minor }> = {
  SPEI: { min: 100n, max: 99_999_999_99n },
  OXXO: { min: 10_00n, max: 10_000_00n },
};

/** The bank SPEI transfers go to: STP (Sistema de Transferencias y Pagos), Banxico participant 90646. */
export const SPEI_BANK = { name: 'STP', code: '90646' } as const;

/**
 * What a Mexican order made on an aggregate cashier keeps in its details (merged into the cashier's
 * own): the CLABE issued for it, or its OXXO voucher; and, once paid, who paid.
 */
export interface MexicoSettlement {
  /** SPEI: the 18-digit CLABE issued for this order (its `rail_ref`, `clabe:<18 digits>`). */
  clabe: string;
  /** OXXO: the voucher's reference number, as the till reads it (digits). */
  oxxoNumber: string;
  /** OXXO: when the voucher stops being payable, epoch ms (23:59:59 in Mexico City of its last day). */
  oxxoExpiresAt: number;
  /** OXXO through Stripe: the hosted voucher's address (none in the sandbox). */
  oxxoVoucherUrl: string;
  /** SPEI, once paid: the sending bank's name and 5-digit Banxico code, the sender's account (CLABE, card or phone) and name, the clave de rastreo. */
  payerBank: string;
  payerBankCode: string;
  payerAccount: string;
  payerName: string;
  claveRastreo: string;
  /** OXXO, once paid: the Stripe PaymentIntent. */
  paymentIntent: string;
}

/** An account number as a page or a callback shows it: its last four characters. */
export function maskAccount(account: string): string {
  return account.length <= 4 ? account : `${'*'.repeat(Math.min(account.length - 4, 14))}${account.slice(-4)}`;
}
