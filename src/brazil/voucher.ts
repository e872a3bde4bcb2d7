import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PageSizes, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import { BRAZILIAN_BANKS, type Bank } from '../banks/bank-list.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../http/failures.js';
import { translator, type PlainKey } from '../i18n/messages.js';
import { signedRoute, type SignedRouteDef } from '../auth/signed-route.js';
import { formatMinor, fromDb, type Minor } from '../money.js';
import type { MerchantService } from '../merchants/service.js';
import type { OrderRow } from '../orders/queries.js';
import type { OrderService } from '../orders/service.js';
import { COLLECTION_STATUS, statusText, TRANSFER_STATUS } from '../orders/state-machine.js';
import { newPdf } from '../pdf/document.js';
import { drawableText, wrapText } from '../pdf/text.js';
import type { Store } from '../store/store.js';
import { brazilDetails, payerDocument } from './details.js';
import { insertVoucher, orderOfVoucher, voucherTokenOfOrder } from './queries.js';

/** A voucher token: 24 random bytes in base64url, the capability carried by the public link. */
const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const TIME_ZONE = 'America/Sao_Paulo';

export type VoucherKind = 'pix_received' | 'boleto_paid' | 'pix_sent' | 'bank_transfer';

/** Who paid or was paid: a name and the lines that identify them (document, account, merchant id). */
export interface VoucherParty {
  name: string;
  lines: readonly string[];
}

/** Everything a voucher shows; built from an order, rendered by renderVoucher. */
export interface VoucherFacts {
  kind: VoucherKind;
  /** Centavos (BRL minor units). */
  amount: Minor;
  /** Unix milliseconds. */
  settledAt: number;
  payer: VoucherParty;
  payee: VoucherParty;
  /** The Pix end-to-end id (Pix and bank transfers); a boleto's voucher shows none, whatever this says. */
  endToEndId: string;
  /** The voucher's own authentication code, which Cashgate gives each settled payment (no bank issues it). */
  authenticationCode: string;
  /** A paid boleto: what identifies it instead of an end-to-end id. */
  boleto?: BoletoVoucherFacts | undefined;
  orderId: string;
  externalOrderId: string;
  remark?: string | undefined;
}

/** What a boleto's voucher shows of the boleto paid. */
export interface BoletoVoucherFacts {
  /** The linha digitável, formatted (AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE). */
  linhaDigitavel: string;
  /** 'YYYY-MM-DD', in Brasília. */
  dueDate: string;
  /** The issuing bank (the linha digitável's first three digits), when it is on the bank list. */
  bank?: Bank | undefined;
  /** A boleto at an issuer: the bank's nosso número, and when (as the issuer wrote it) and how it was paid. */
  nossoNumero?: string | undefined;
  paidAt?: string | undefined;
  paidBy?: string | undefined;
}

const PAID_BY: Record<string, PlainKey<'document.voucher'>> = { BOLETO: 'paidByBoleto', PIX: 'paidByPix' };

const pt = translator('document.voucher', 'pt-BR');
const en = translator('document.voucher', 'en');
/** A label as the receipt writes it: Portuguese, then English ("Data e hora / Date and time"). */
const both = (key: PlainKey<'document.voucher'>): string => `${pt(key)} / ${en(key)}`;

/** "R$ 1.234,56": the Brazilian way of writing an amount of reais. */
export function formatBrl(amount: Minor): string {
  const plain = formatMinor(amount < 0n ? -amount : amount, 2);
  const [whole = '0', cents = '00'] = plain.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${amount < 0n ? '-' : ''}R$ ${grouped},${cents}`;
}

/** The settlement time in Brasília: ISO 8601 with its offset, and as a Brazilian reads it. */
export function brasiliaTime(ms: number): { iso: string; local: string; offset: string } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: TIME_ZONE,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const offset = part('timeZoneName').replace('GMT', '') || '+00:00';
  const [y, mo, d, h, mi, s] = [part('year'), part('month'), part('day'), part('hour'), part('minute'), part('second')];
  return { iso: `${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`, local: `${d}/${mo}/${y} ${h}:${mi}:${s}`, offset };
}

/** A CPF as receipts show it, the middle six digits only (***.982.247-**); a CNPJ in full, formatted. */
export function maskDocument(type: string | undefined, value: string): string {
  const compact = value.replace(/[.\-/\s]/g, '').toUpperCase();
  if (type === 'CPF' && /^\d{11}$/.test(compact)) return `***.${compact.slice(3, 6)}.${compact.slice(6, 9)}-**`;
  if (type === 'CNPJ' && /^[0-9A-Z]{12}\d{2}$/.test(compact)) {
    return `${compact.slice(0, 2)}.${compact.slice(2, 5)}.${compact.slice(5, 8)}/${compact.slice(8, 12)}-${compact.slice(12)}`;
  }
  return value;
}

const INK = rgb(0.1, 0.1, 0.12);
const MUTED = rgb(0.42, 0.42, 0.46);
const RULE = rgb(0.82, 0.82, 0.85);
const ACCENT = rgb(0.05, 0.45, 0.36);

/** Draws lines of text top down on one page, wrapping to the margins. */
class Writer {
  y: number;
  readonly #charset: ReadonlySet<number>;

  constructor(
    private readonly page: PDFPage,
    private readonly regular: PDFFont,
    private readonly bold: PDFFont,
    private readonly margin: number,
  ) {
    this.y = page.getHeight() - margin;
    this.#charset = new Set(regular.getCharacterSet());
  }

  get width(): number {
    return this.page.getWidth() - 2 * this.margin;
  }

  text(
    text: string,
    options: {
      size?: number;
      bold?: boolean;
      color?: ReturnType<typeof rgb>;
      x?: number;
      width?: number;
      gap?: number;
    } = {},
  ): void {
    const size = options.size ?? 10;
    const font = options.bold === true ? this.bold : this.regular;
    const x = this.margin + (options.x ?? 0);
    for (const line of wrapText(
      drawableText(text, this.#charset),
      (line) => font.widthOfTextAtSize(line, size) <= (options.width ?? this.width - (options.x ?? 0)),
    )) {
      this.y -= size * 1.25;
      this.page.drawText(line, { x, y: this.y, size, font, color: options.color ?? INK });
    }
    this.y -= options.gap ?? 0;
  }

  /** A label in the left column and its value, wrapped, in the right one. */
  row(label: string, value: string): void {
    const top = this.y;
    this.text(label, { size: 9, color: MUTED, width: 150 });
    const afterLabel = this.y;
    this.y = top;
    this.text(value, { size: 10, x: 160 });
    this.y = Math.min(this.y, afterLabel) - 4;
  }

  heading(text: string): void {
    this.y -= 10;
    this.text(text, { size: 11, bold: true, color: ACCENT, gap: 3 });
    this.rule();
  }

  rule(): void {
    this.y -= 4;
    this.page.drawLine({
      start: { x: this.margin, y: this.y },
      end: { x: this.margin + this.width, y: this.y },
      thickness: 0.6,
      color: RULE,
    });
    this.y -= 2;
  }
}

/** The voucher as a one-page A4 PDF in the standard Helvetica fonts. Pure: the same facts give the same bytes. */
export async function renderVoucher(facts: VoucherFacts): Promise<Uint8Array> {
  const { doc, regular, bold } = await newPdf({
    title: `${both('title')} ${facts.orderId}`,
    subject: both(`kind.${facts.kind}`),
    at: facts.settledAt,
  });
  const page = doc.addPage(PageSizes.A4);
  const w = new Writer(page, regular, bold, 56);

  w.text(both('title'), { size: 18, bold: true });
  w.text(both(`kind.${facts.kind}`), { size: 12, color: ACCENT, gap: 12 });
  w.text(formatBrl(facts.amount), { size: 26, bold: true, gap: 2 });
  w.text(`BRL ${formatMinor(facts.amount, 2)}`, { size: 10, color: MUTED, gap: 6 });
  w.rule();
  const time = brasiliaTime(facts.settledAt);
  w.row(both('dateTime'), `${time.local} (${pt('brasiliaTime')} / ${TIME_ZONE}, UTC${time.offset})`);
  w.row('ISO 8601', time.iso);

  const party = (title: string, p: VoucherParty) => {
    w.heading(title);
    w.row(both('name'), p.name);
    for (const line of p.lines) {
      const split = line.indexOf(': ');
      if (split > 0) w.row(line.slice(0, split), line.slice(split + 2));
      else w.row('', line);
    }
  };
  party(both('payer'), facts.payer);
  party(both('payee'), facts.payee);

  w.heading(both('identification'));
  if (facts.kind === 'boleto_paid') {
    // A boleto is settled through the banks' clearing, not by Pix: it has no end-to-end id.
    const boleto = facts.boleto;
    if (boleto !== undefined) {
      w.row(both('boletoNumber'), boleto.linhaDigitavel);
      w.row(both('dueDate'), brazilianDate(boleto.dueDate));
      if (boleto.bank !== undefined) w.row(both('issuingBank'), bankLine(boleto.bank));
      // A boleto registered at an issuer: the bank's own number for it, and when and how the issuer says it was paid.
      if (boleto.nossoNumero !== undefined) w.row(both('nossoNumero'), boleto.nossoNumero);
      if (boleto.paidAt !== undefined) w.row(both('paidOn'), boleto.paidAt);
      if (boleto.paidBy !== undefined) w.row(both('paidBy'), both(PAID_BY[boleto.paidBy] ?? 'paidByUnknown'));
    }
  } else {
    w.row(both('endToEndId'), facts.endToEndId);
  }
  w.row(both('authenticationCode'), facts.authenticationCode);
  w.row(both('orderId'), facts.orderId);
  w.row(both('externalOrderId'), facts.externalOrderId);
  if (facts.remark !== undefined && facts.remark !== '') w.row(both('description'), facts.remark);

  const footer = both('issuedBy');
  const size = 9;
  page.drawLine({ start: { x: 56, y: 72 }, end: { x: page.getWidth() - 56, y: 72 }, thickness: 0.6, color: RULE });
  page.drawText(footer, { x: 56, y: 56, size, font: regular, color: MUTED });
  const note = both('settled');
  page.drawText(drawableText(note, new Set(regular.getCharacterSet())), {
    x: 56,
    y: 44,
    size: 7,
    font: regular,
    color: MUTED,
  });
  return doc.save();
}

/** 'YYYY-MM-DD' as a Brazilian writes it; anything else as it is. */
export function brazilianDate(iso: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return match === null ? iso : `${match[3] ?? ''}/${match[2] ?? ''}/${match[1] ?? ''}`;
}

/** "341 — Itaú Unibanco S.A.": a bank's COMPE code and name. */
function bankLine(bank: Bank): string {
  return `${bank.code} — ${bank.name}`;
}

/** A bank on the shipped list by its name, as a bank transfer's bankName gives it. */
function bankNamed(name: string | undefined): Bank | undefined {
  return BRAZILIAN_BANKS.find((bank) => bank.name === name);
}

/**
 * The participant that sent a Pix or a transfer, as its end-to-end id names it: E, the sender's
 * ISPB (8 digits), then the time and a sequence (BCB's format), when that ISPB is on the bank list.
 */
export function senderBankOf(endToEndId: string | undefined): Bank | undefined {
  const match = /^E(\d{8})\d{12}[A-Za-z0-9]{11}$/.exec(endToEndId ?? '');
  return match === null ? undefined : BRAZILIAN_BANKS.find((bank) => bank.ispb === match[1]);
}

/** A party's bank as voucher lines: the name, the COMPE code (3 digits) and the ISPB (8 digits). */
function bankLines(bank: Bank | undefined, name?: string): string[] {
  return [
    `Banco / Bank: ${bank?.name ?? name ?? 'Não informado / Not informed'}`,
    `Código do banco / Bank code: ${bank?.code ?? 'Não informado / Not informed'}`,
    `ISPB: ${bank?.ispb ?? 'Não informado / Not informed'}`,
  ];
}

const ACCOUNT_TYPES: Record<string, string> = { CC: 'conta corrente / checking', CP: 'conta poupança / savings' };

/** A Brazil order: made through the Brazil endpoints, or on an aggregate cashier and paid through a Brazilian rail (not USDT). */
function isBrazilOrder(order: OrderRow): boolean {
  return order.area === 'bra' || (order.area === 'cashier' && order.channel_type !== 'USDT_TRC20');
}

/** Whether the order is a successful Brazil order (a collection paid, a transfer succeeded). */
export function hasVoucher(order: OrderRow): boolean {
  return (
    isBrazilOrder(order) &&
    (order.kind === 'collection' ? order.status === COLLECTION_STATUS.paid : order.status === TRANSFER_STATUS.succeeded)
  );
}

/** The facts of a successful Brazil order's voucher. */
export function voucherFacts(
  order: OrderRow,
  context: { merchantName: string; pixMerchantName: string },
): VoucherFacts {
  const d = brazilDetails(order);
  const merchantLine = `Lojista / Merchant ID: ${order.merchant_id}`;
  const common = {
    settledAt: d.settledAt ?? order.complete_time ?? order.pay_time ?? order.updated_at,
    endToEndId: d.endToEndId ?? '',
    authenticationCode: d.authenticationCode ?? '',
    orderId: order.id,
    externalOrderId: order.external_order_id,
    remark: order.remark ?? undefined,
  };
  if (order.kind === 'collection') {
    const payer = payerDocument(d);
    const payerLines = payer === undefined ? [] : [`${payer.type}: ${maskDocument(payer.type, payer.number)}`];
    const collection = {
      ...common,
      amount: fromDb(order.actual_amount ?? order.amount),
      payer: { name: d.userInfoName ?? 'Não informado / Not informed', lines: payerLines },
      payee: { name: context.pixMerchantName, lines: [`Lojista / Merchant: ${context.merchantName}`, merchantLine] },
    };
    if (order.channel_type !== 'BOLETO') return { ...collection, kind: 'pix_received' };
    // A boleto is identified by its linha digitável; the id its settlement keeps is not a Pix's and is not shown.
    const linha = d.payParam ?? '';
    return {
      ...collection,
      kind: 'boleto_paid',
      endToEndId: '',
      boleto: {
        linhaDigitavel: d.linhaFormatted ?? linha,
        dueDate: d.boletoDueDate ?? '',
        nossoNumero: d.boletoNossoNumero,
        paidAt: d.boletoPaidAt,
        paidBy: d.boletoPaidBy,
        bank: BRAZILIAN_BANKS.find((bank) => bank.code === linha.slice(0, 3)),
      },
    };
  }
  const payeeLines = [`${d.personIdType ?? 'Documento / Document'}: ${maskDocument(d.personIdType, d.personId ?? '')}`];
  const payerLines = [merchantLine, `Via: ${context.pixMerchantName}`];
  if (order.channel_type === 'BANK') {
    payerLines.push(...bankLines(senderBankOf(d.endToEndId)));
    payeeLines.push(
      ...bankLines(bankNamed(d.bankName), d.bankName),
      `Agência / Branch: ${d.agency ?? ''}`,
      `Conta / Account: ${d.accountId ?? ''} (${ACCOUNT_TYPES[d.accountType ?? ''] ?? d.accountType ?? ''})`,
    );
  } else {
    const key =
      d.accountType === 'CPF' || d.accountType === 'CNPJ'
        ? maskDocument(d.accountType, d.accountId ?? '')
        : (d.accountId ?? '');
    payeeLines.push(`Chave Pix / Pix key (${d.accountType ?? ''}): ${key}`);
  }
  return {
    ...common,
    kind: order.channel_type === 'BANK' ? 'bank_transfer' : 'pix_sent',
    amount: fromDb(order.amount),
    payer: { name: context.merchantName, lines: payerLines },
    payee: { name: d.personName ?? '', lines: payeeLines },
  };
}

/**
 * The order's voucher token, recorded on first request: the token settled with the order (so the
 * link never changes), or a new one for an order that has none. Concurrent first requests, on any
 * node, all return the one row that was stored.
 */
async function voucherToken(store: Store, order: OrderRow, now: number): Promise<string> {
  const existing = await voucherTokenOfOrder(store.read, order.id);
  if (existing !== undefined) return existing;
  const settled = brazilDetails(order).voucherToken;
  const token = settled !== undefined && TOKEN.test(settled) ? settled : randomBytes(24).toString('base64url');
  await store.transact(async (tx) => {
    await insertVoucher(tx, { token, order_id: order.id, created_at: now });
  });
  const stored = await voucherTokenOfOrder(store.read, order.id);
  if (stored === undefined) throw new Error(`voucher of order ${order.id} was not stored`);
  return stored;
}

/**
 * The link to a successful Brazil order's voucher (endpoint 17 and the console): the token is
 * recorded on first request and the same link is returned on every later one.
 */
export async function voucherLink(
  deps: { store: Store; publicBaseUrl: string; clock: Clock },
  order: OrderRow,
): Promise<string> {
  const token = await voucherToken(deps.store, order, deps.clock.now());
  return `${deps.publicBaseUrl}/vouchers/${token}.pdf`;
}

export const VoucherBody = Type.Object({ orderId: Type.String({ minLength: 1, maxLength: 64 }) });

/** Endpoint 17: the link to the PDF voucher of a successful Brazil order of the caller. */
export function voucherRoute(deps: {
  store: Store;
  orders: OrderService;
  publicBaseUrl: string;
  clock: Clock;
}): SignedRouteDef {
  return signedRoute({
    method: 'POST',
    path: '/api/v3/bra/query/voucher',
    permission: 'query',
    tag: 'Brazil',
    summary:
      'Link to the PDF payment voucher of a successful Brazil collection or transfer (also a Pix or boleto paid on an aggregate cashier)',
    description:
      'data is an unguessable link, the same on every call, to a one-page PDF receipt that anyone holding it can open. ' +
      'An order that has not succeeded (collection status 2, transfer status 8) has no voucher: code 300 says its status.',
    body: VoucherBody,
    data: Type.String({ description: 'absolute link to the voucher PDF' }),
    handle: async ({ body, caller }) => {
      const order = await deps.orders.find(body.orderId);
      if (order?.merchant_id !== caller.merchantId || !isBrazilOrder(order))
        throw new ApiError({ kind: 'order_not_found' });
      if (!hasVoucher(order))
        throw new ApiError({ kind: 'voucher_unavailable', orderStatus: statusText(order.kind, order.status) });
      return voucherLink(deps, order);
    },
  });
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .type('text/plain; charset=utf-8')
    .send('voucher not found');
}

/** GET /vouchers/{token}.pdf: public, the token being the capability. */
export function registerVoucherRoutes(
  app: FastifyInstance,
  deps: { store: Store; orders: OrderService; merchants: MerchantService; pixMerchantName: string },
): void {
  app.get<{ Params: { file: string } }>('/vouchers/:file', async (request, reply) => {
    const token = request.params.file.endsWith('.pdf') ? request.params.file.slice(0, -4) : '';
    if (!TOKEN.test(token)) return notFound(reply);
    const orderId = await orderOfVoucher(deps.store.read, token);
    const order = orderId === undefined ? undefined : await deps.orders.find(orderId);
    if (order === undefined || !hasVoucher(order)) return notFound(reply);
    const merchant = await deps.merchants.getMerchant(order.merchant_id);
    const pdf = await renderVoucher(
      voucherFacts(order, { merchantName: merchant.name, pixMerchantName: deps.pixMerchantName }),
    );
    return reply
      .header('content-disposition', `inline; filename="cashgate-voucher-${order.id}.pdf"`)
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('application/pdf')
      .send(Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength));
  });
}
