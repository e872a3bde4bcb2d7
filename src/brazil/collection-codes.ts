import { createHash } from 'node:crypto';
import { formatMoney, type Minor } from '../money.js';
import { boletoBarcode, formatLinhaDigitavel, linhaDigitavel } from '../rails/boleto/boleto.js';
import { dynamicBrCode, staticBrCode } from '../rails/pix/br-code.js';
import { boletoDueDate } from './business-days.js';
import { locationUrl, newLocationId } from './pix-location.js';

export type BrazilCollectionChannel = 'PIX' | 'PIX_DYNAMIC' | 'BOLETO';

const BRASILIA_OFFSET_MS = -3 * 3_600_000;

export interface BrazilRails {
  pix: { key: string; merchantName: string; merchantCity: string };
  boletoBankCode: string;
  /** BRAZIL_RAIL=apipix: Pix collections are charges (cob) at the PSP, whose code the PSP issues. */
  live?: boolean;
  /**
   * BOLETO_DUE_DAYS, and the issuer that registers boletos (BRAZIL_BOLETO_RAIL), if one does: its
   * boletos are issued after the order is written, their due dates moved to business days.
   */
  boleto: { dueDays: number; issuer?: 'efi' | 'inter' | undefined };
}

/**
 * The reference of an order's boleto at its issuer (Inter's seuNumero, at most 15 characters): 15
 * letters and digits derived from the order id, the same on every attempt.
 */
export function boletoReference(orderId: string): string {
  return createHash('sha256').update(`boleto:${orderId}`).digest('hex').slice(0, 15).toUpperCase();
}

/**
 * The txid of a collection's charge (cob) at the PSP: 32 letters and digits derived from the order
 * id (the API Pix wants 26 to 35), the same on every attempt, so the charge is never made twice.
 */
export function cobTxid(orderId: string): string {
  const digest = createHash('sha256').update(`cob:${orderId}`).digest('hex');
  return `${orderId.replace(/[^a-zA-Z0-9]/g, '')}${digest}`.slice(0, 32);
}

/** 25 digits for the boleto's campo livre, from the order id (Cashgate's sandbox layout, not a bank's). */
function boletoFreeField(orderId: string): string {
  const digest = BigInt(`0x${createHash('sha256').update(orderId).digest('hex')}`);
  return (digest % 10n ** 25n).toString().padStart(25, '0');
}

/** The sandbox boleto's due date (in Brasília) and the end of that day, from now: `days` calendar days on. */
function boletoDue(now: number, days: number): { dueDate: string; endOfDay: number } {
  const local = new Date(now + BRASILIA_OFFSET_MS);
  const due = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + days));
  return { dueDate: due.toISOString().slice(0, 10), endOfDay: due.getTime() + 86_400_000 - 1 - BRASILIA_OFFSET_MS };
}

/** A Brazil collection's payment code as order fields: the details that show it, what its rail knows it by, the cashier's end. */
export interface CollectionCode {
  /** payParam: the BR Code (copy and paste) or the 47-digit linha digitável; boletos add their due date (in Brasília) and formatted line. */
  details: { payParam: string; boletoDueDate?: string; linhaFormatted?: string };
  railRef: string;
  /** The merchant's cashier lifetime; a boleto's cashier stays open to the end of its due date. */
  cashierExpiry: { lifetimeMs: number } | { at: number };
}

/**
 * The payment code of a Brazil collection (a static or dynamic BR Code, or a boleto), made from
 * the order id before the order is written: a static BR Code carries the id as its txid, a
 * boleto's campo livre is derived from it.
 */
export function brazilCollectionCode(input: {
  orderId: string;
  channelType: BrazilCollectionChannel;
  amount: Minor;
  cashierLifetimeMs: number;
  now: number;
  rails: BrazilRails;
  publicBaseUrl: string;
}): CollectionCode {
  const { rails, amount, orderId } = input;
  const lifetime = { lifetimeMs: input.cashierLifetimeMs };
  if (input.channelType === 'BOLETO' && rails.boleto.issuer !== undefined) {
    // The issuer makes the linha digitável once the boleto is registered (the order's hand-over).
    const due = boletoDueDate(input.now, rails.boleto.dueDays);
    return {
      details: { payParam: '', boletoDueDate: due.dueDate },
      railRef: `${rails.boleto.issuer}:${boletoReference(orderId)}`,
      cashierExpiry: { at: due.endOfDay },
    };
  }
  if (input.channelType === 'BOLETO') {
    const due = boletoDue(input.now, rails.boleto.dueDays);
    const barcode = boletoBarcode({
      bankCode: rails.boletoBankCode,
      dueDate: due.dueDate,
      amountCents: amount,
      freeField: boletoFreeField(orderId),
    });
    const payParam = linhaDigitavel(barcode);
    return {
      details: { payParam, boletoDueDate: due.dueDate, linhaFormatted: formatLinhaDigitavel(payParam) },
      railRef: `boleto:${barcode}`,
      cashierExpiry: { at: due.endOfDay },
    };
  }
  if (rails.live === true) {
    // The PSP issues the code once the charge is made (the order's hand-over to its rail).
    return { details: { payParam: '' }, railRef: `cob:${cobTxid(orderId)}`, cashierExpiry: lifetime };
  }
  if (input.channelType === 'PIX_DYNAMIC') {
    const locationId = newLocationId();
    return {
      details: { payParam: dynamicBrCode({ locationUrl: locationUrl(input.publicBaseUrl, locationId), ...rails.pix }) },
      railRef: `loc:${locationId}`,
      cashierExpiry: lifetime,
    };
  }
  const txid = orderId.slice(0, 25);
  const payParam = staticBrCode({
    pixKey: rails.pix.key,
    merchantName: rails.pix.merchantName,
    merchantCity: rails.pix.merchantCity,
    amount: formatMoney(amount, 'BRL'),
    txid,
  });
  return { details: { payParam }, railRef: `txid:${txid}`, cashierExpiry: lifetime };
}
