import { createHash } from 'node:crypto';
import { formatMoney, type Minor } from '../ledger/money.js';
import type { OrderRow } from '../orders/queries.js';
import type { NewOrder } from '../orders/service.js';
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

interface PayParam {
  payParam: string;
  railRef: string;
  boletoDueDate?: string;
}

/**
 * The payment code of a Brazil collection (a static or dynamic BR Code, or a boleto) and what its
 * rail knows it by, as hooks of the order's creation: both need the order id, and are made once.
 */
export function brazilCollectionCodes(input: {
  channelType: BrazilCollectionChannel;
  amount: Minor;
  now: number;
  rails: BrazilRails;
  publicBaseUrl: string;
}): { orderHooks(cashierLifetimeMs: number): Pick<NewOrder, 'cashierExpiry' | 'railRef' | 'detailsFor'> } {
  const { rails, amount } = input;
  const boleto = input.channelType === 'BOLETO' ? boletoDue(input.now) : undefined;
  const locationId = input.channelType === 'PIX_DYNAMIC' ? newLocationId() : undefined;
  const made = new Map<string, PayParam>();
  const make = (orderId: string): PayParam => {
    if (boleto !== undefined) {
      const barcode = boletoBarcode({
        bankCode: rails.boletoBankCode,
        dueDate: boleto.dueDate,
        amountCents: amount,
        freeField: boletoFreeField(orderId),
      });
      return { payParam: linhaDigitavel(barcode), railRef: `boleto:${barcode}`, boletoDueDate: boleto.dueDate };
    }
    if (locationId !== undefined) {
      return {
        payParam: dynamicBrCode({ locationUrl: locationUrl(input.publicBaseUrl, locationId), ...rails.pix }),
        railRef: `loc:${locationId}`,
      };
    }
    const txid = orderId.slice(0, 25);
    const amountText = formatMoney(amount, 'BRL');
    return {
      payParam: staticBrCode({
        pixKey: rails.pix.key,
        merchantName: rails.pix.merchantName,
        merchantCity: rails.pix.merchantCity,
        amount: amountText,
        txid,
      }),
      railRef: `txid:${txid}`,
    };
  };
  const payParamFor = (orderId: string): PayParam => {
    const known = made.get(orderId) ?? make(orderId);
    made.set(orderId, known);
    return known;
  };
  return {
    orderHooks: (cashierLifetimeMs) => ({
      cashierExpiry: boleto === undefined ? { lifetimeMs: cashierLifetimeMs } : { at: boleto.endOfDay },
      railRef: (orderId: string) => payParamFor(orderId).railRef,
      detailsFor: (order: OrderRow) => {
        const { payParam, boletoDueDate } = payParamFor(order.id);
        return {
          payParam,
          ...(boletoDueDate !== undefined && { boletoDueDate, linhaFormatted: formatLinhaDigitavel(payParam) }),
        };
      },
    }),
  };
}
