import { detailsOf } from '../orders/details.js';
import type { OrderRow } from '../orders/queries.js';
import type { BoletoPayer } from '../rails/boleto/issuer.js';
import type { DocumentType } from './documents.js';

/** What a paid Brazil order keeps of its settlement (also an aggregate cashier's order paid on a Brazil rail). */
export interface BrazilSettlement {
  endToEndId: string;
  authenticationCode: string;
  settledAt: number;
  voucherToken: string;
}

/** The payer's address, as the cashier page asks it (Inter registers no boleto without one). */
export type PayerAddress = NonNullable<BoletoPayer['address']>;

/** What a Brazil order keeps in its details: payer or payee, payment parameter, and what the rail settled. */
export interface BrazilDetails extends Partial<BrazilSettlement> {
  payParam?: string;
  boletoDueDate?: string;
  linhaFormatted?: string;
  userInfoType?: DocumentType;
  userInfoNo?: string;
  userInfoName?: string;
  personIdType?: string;
  personId?: string;
  personName?: string;
  accountType?: string;
  accountId?: string;
  bankName?: string;
  agency?: string;
  /** An aggregate cashier's USDT order: the TRON deposit address (its payment parameter). */
  addressTo?: string;
  /** A live PSP's Pix: the paying account's holder and CPF/CNPJ, as the PSP reported them. */
  payerName?: string;
  payerDocument?: string;
  /** The PSP's location of the charge (cob) whose BR Code is payParam. */
  pixLocation?: string;
  /** An aggregate cashier's order: where userInfoNo came from. */
  documentSource?: 'saved' | 'entered' | 'generated';
  // A boleto registered at an issuer (BRAZIL_BOLETO_RAIL=efi|inter): what the payer gave, what the issuer made and said.

  payerAddress?: PayerAddress;
  boletoBarcode?: string;
  boletoPixCode?: string;
  boletoNossoNumero?: string;
  /** How it was paid (BOLETO, PIX, UNKNOWN), when, and the issuer's word for the charge at the time. */
  boletoPaidBy?: string;
  boletoPaidAt?: string;
  /** Why the issuer did not register it. */
  boletoFailure?: string;
}

/**
 * The payer's document as the payer (or the merchant) gave it, to show or send as the payer's; never
 * one Cashgate generated for an aggregate cashier without userIdentity: with valid check digits, a
 * generated CPF may belong to a real person.
 */
export function payerDocument(
  d: Pick<BrazilDetails, 'userInfoType' | 'userInfoNo' | 'documentSource'>,
): { type: DocumentType; number: string } | undefined {
  if (d.userInfoNo === undefined || d.userInfoType === undefined || d.documentSource === 'generated') return undefined;
  return { type: d.userInfoType, number: d.userInfoNo };
}

declare module '../orders/details.js' {
  interface OrderDetailsByArea {
    bra: { collection: BrazilDetails; transfer: BrazilDetails };
  }
}

/**
 * The Brazil members of a Brazil order's details, or of an aggregate cashier's order paid on a
 * Brazil rail (the cashier's details carry the same payer and settlement members).
 */
export function brazilDetails(order: Pick<OrderRow, 'id' | 'area' | 'details'>): BrazilDetails {
  return detailsOf(order, 'bra', 'cashier');
}
