import { orderDetails } from '../orders/details.js';
import type { OrderRow } from '../orders/queries.js';

/** What a Brazil order keeps in its details: payer or payee, payment parameter, and what the rail settled. */
export interface BrazilDetails {
  payParam?: string;
  boletoDueDate?: string;
  linhaFormatted?: string;
  userInfoType?: string;
  userInfoNo?: string;
  userInfoName?: string;
  personIdType?: string;
  personId?: string;
  personName?: string;
  accountType?: string;
  accountId?: string;
  bankName?: string;
  agency?: string;
  endToEndId?: string;
  authenticationCode?: string;
  settledAt?: number;
  voucherToken?: string;
  /** An aggregate cashier's USDT order: the TRON deposit address (its payment parameter). */
  addressTo?: string;
  /** An aggregate cashier's order: where userInfoNo came from. */
  documentSource?: 'saved' | 'entered' | 'generated';
}

export function brazilDetails(order: Pick<OrderRow, 'details'>): BrazilDetails {
  return orderDetails<BrazilDetails>(order);
}
