import { createHash } from 'node:crypto';
import { formatMoney, type Minor } from '../ledger/money.js';
import { boletoBarcode, formatLinhaDigitavel, linhaDigitavel } from '../rails/boleto/boleto.js';
import { dynamicBrCode, staticBrCode } from '../rails/pix/br-code.js';
import { locationUrl, newLocationId } from './pix-location.js';

export type BrazilCollectionChannel = 'PIX' | 'PIX_DYNAMIC' | 'BOLETO';

/** A boleto is due three days after it is issued; its cashier stays open to the end of that day in Brasília. */
export const BOLETO_DUE_DAYS = 3;
const BRASILIA_OFFSET_MS = -3 * 3_600_000;

export interface BrazilRails {
  pix: { key: string; merchantName: string; merchantCity: string };
  boletoBankCode: string;
}

/** 25 digits for the boleto's campo livre, from the order id (Cashgate's sandbox layout, not a bank's). */
function boletoFreeField(orderId: string): string {
  const digest = BigInt(`0x${createHash('sha256').update(orderId).digest('hex')}`);
  return (digest % 10n ** 25n).toString().padStart(25, '0');
}

/** The boleto's due date (in Brasília) and the end of that day, from now. */
function boletoDue(now: number): { dueDate: string; endOfDay: number } {
  const local = new Date(now + BRASILIA_OFFSET_MS);
  const due = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + BOLETO_DUE_DAYS));
  return { dueDate: due.toISOString().slice(0, 10), endOfDay: due.getTime() + 86_400_000 - 1 - BRASILIA_OFFSET_MS };
}

/** A Brazil collection's payment code, what its rail knows it by, and the details that show it. */
export interface CollectionCode {
  /** The BR Code (copy and paste) or the 47-digit linha digitável. */
  payParam: string;
  railRef: string;
  /** Boletos: the due date (in Brasília), the formatted linha digitável, and the cashier's end. */
  boleto?: { boletoDueDate: string; linhaFormatted: string; expiresAt: number };
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
  now: number;
  rails: BrazilRails;
  publicBaseUrl: string;
}): CollectionCode {
  const { rails, amount, orderId } = input;
  if (input.channelType === 'BOLETO') {
    const due = boletoDue(input.now);
    const barcode = boletoBarcode({
      bankCode: rails.boletoBankCode,
      dueDate: due.dueDate,
      amountCents: amount,
      freeField: boletoFreeField(orderId),
    });
    const payParam = linhaDigitavel(barcode);
    return {
      payParam,
      railRef: `boleto:${barcode}`,
      boleto: { boletoDueDate: due.dueDate, linhaFormatted: formatLinhaDigitavel(payParam), expiresAt: due.endOfDay },
    };
  }
  if (input.channelType === 'PIX_DYNAMIC') {
    const locationId = newLocationId();
    return {
      payParam: dynamicBrCode({ locationUrl: locationUrl(input.publicBaseUrl, locationId), ...rails.pix }),
      railRef: `loc:${locationId}`,
    };
  }
  const txid = orderId.slice(0, 25);
  return {
    payParam: staticBrCode({
      pixKey: rails.pix.key,
      merchantName: rails.pix.merchantName,
      merchantCity: rails.pix.merchantCity,
      amount: formatMoney(amount, 'BRL'),
      txid,
    }),
    railRef: `txid:${txid}`,
  };
}

/** The order fields of a collection code: its details, rail reference and cashier expiry. */
export function collectionCodeFields(
  code: CollectionCode,
  cashierLifetimeMs: number,
): {
  details: { payParam: string; boletoDueDate?: string; linhaFormatted?: string };
  railRef: string;
  cashierExpiry: { lifetimeMs: number } | { at: number };
} {
  const { boleto } = code;
  return {
    details: {
      payParam: code.payParam,
      ...(boleto !== undefined && { boletoDueDate: boleto.boletoDueDate, linhaFormatted: boleto.linhaFormatted }),
    },
    railRef: code.railRef,
    cashierExpiry: boleto === undefined ? { lifetimeMs: cashierLifetimeMs } : { at: boleto.expiresAt },
  };
}
