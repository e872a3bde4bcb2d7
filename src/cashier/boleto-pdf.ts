/**
 * The boleto as a one-page A4 PDF in the FEBRABAN layout: the Recibo do Pagador at the top, and at
 * the bottom of the page, below a cut line, the Ficha de Compensação with its Interleaved 2 of 5
 * barcode drawn as filled rectangles. Standard Helvetica fonts (WinAnsi), so the file embeds no font.
 */
import {
  PageSizes,
  fill,
  popGraphicsState,
  pushGraphicsState,
  rectangle,
  rgb,
  setFillingRgbColor,
  type PDFFont,
  type PDFPage,
} from 'pdf-lib';
import { BRAZILIAN_BANKS } from '../banks/bank-list.js';
import { brazilDetails, payerDocument } from '../brazil/details.js';
import { pixKeyProblem } from '../brazil/pix-keys.js';
import { brasiliaTime, brazilianDate, formatBrl, maskDocument } from '../brazil/voucher.js';
import { translator } from '../i18n/messages.js';
import { fromDb } from '../money.js';
import type { OrderRow } from '../orders/queries.js';
import { newPdf } from '../pdf/document.js';
import { drawableText, wrapText } from '../pdf/text.js';
import {
  barcodeFromLinha,
  boletoBarcodeFields,
  dueFactor,
  formatLinhaDigitavel,
  isValidBarcode,
  linhaDigitavel,
} from '../rails/boleto/boleto.js';
import { itfModules } from './itf-barcode.js';

export interface BoletoPdfFacts {
  /** Three-digit COMPE code of the issuing bank, e.g. '001'; the barcode's first three digits. */
  bankCode: string;
  /** The 44-digit boleto barcode (valid: currency 9, matching DAC). */
  barcode: string;
  /** The linha digitável of that barcode, formatted (formatLinhaDigitavel) or as bare digits. */
  linhaFormatted: string;
  /** Centavos. */
  amount: bigint;
  /** 'YYYY-MM-DD'. */
  dueDate: string;
  /** Unix milliseconds: the Data do documento, and the PDF's creation date. */
  issuedAt: number;
  payeeName: string;
  payeeCity: string;
  /** The beneficiary's CNPJ (14 characters, no mask), printed formatted beside its name; absent, "CNPJ não informado". */
  beneficiaryCnpj?: string | undefined;
  /**
   * Agência/Código do Beneficiário and Carteira, as the issuing bank assigns them with the
   * beneficiary's collection agreement (convênio); absent, "Não informado".
   */
  beneficiaryCode?: string | undefined;
  wallet?: string | undefined;
  payerName?: string | undefined;
  /** CPF or CNPJ digits; the boleto shows them masked (maskDocument). */
  payerDocument?: { type: string; number: string } | undefined;
  /** Cashgate's order id. */
  documentNumber: string;
  /** The rail's reference. */
  nossoNumero: string;
  /** The merchant's remark, printed under Instruções. */
  instructions?: string | undefined;
}

const PT_PER_MM = 72 / 25.4;
/** Narrow module: 0.254 mm, so that with wide = 3 × narrow the 44-digit symbol (405 modules, quiet zones aside) is 103 mm wide. */
const NARROW = 0.254 * PT_PER_MM;
/** Bar height: 13 mm. */
const BAR_HEIGHT = 13 * PT_PER_MM;

const [PAGE_WIDTH, PAGE_HEIGHT] = PageSizes.A4;
const LEFT = 36;
const RIGHT = PAGE_WIDTH - 36;
const WIDTH = RIGHT - LEFT;
/** The right-hand column (Vencimento, Nosso número, values). */
const COLUMN = 150;
const SPLIT = RIGHT - COLUMN;

const INK = rgb(0, 0, 0);
const MUTED = rgb(0.3, 0.3, 0.33);
const LINE = 0.6;
const HEAVY = 1.4;

/**
 * Espécie Doc.: DM, duplicata mercantil, the kind of title a sale of goods or services on credit
 * is, as shops' boletos name it. Aceite: N, the payer has not signed (accepted) the title, as on
 * every boleto issued for an order paid online.
 */
/** The boleto's words: FEBRABAN's Portuguese field names, the same on every bank's boleto. */
const label = translator('document.boleto', 'pt-BR');

const ESPECIE_DOC = 'DM';
const ACEITE = 'N';
/** Espécie (the currency) by the barcode's currency digit: 9 is the real, the only one in use. */
const ESPECIE: Record<string, string> = { '9': 'R$' };

/**
 * The bank code's check digit as printed beside it (001-9, 341-7, 237-2): módulo 11 with weights
 * 2, 3, 4 from the right; a result of 11 prints 0 and one of 10 prints X (748-X), except at the
 * Caixa, which prints 104-0.
 */
function bankCodeWithDigit(code: string): string {
  let sum = 0;
  for (let i = 0; i < 3; i++) sum += Number(code.charAt(2 - i)) * (i + 2);
  const dv = 11 - (sum % 11);
  const digit = dv === 11 || (dv === 10 && code === '104') ? '0' : dv === 10 ? 'X' : String(dv);
  return `${code}-${digit}`;
}

/** 'YYYY-MM-DD' as a Brazilian writes it. */
function dueDateText(iso: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(iso))
    throw new RangeError(`dueDate must be a date in the form YYYY-MM-DD; got "${iso}"`);
  return brazilianDate(iso);
}

/** A value the facts give, or "Não informado". */
function given(value: string | undefined): string {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? label('notInformed') : trimmed;
}

/** Rejects facts whose printed values would disagree with the barcode a bank reads. */
function checkFacts(facts: BoletoPdfFacts): string {
  if (!isValidBarcode(facts.barcode))
    throw new RangeError('barcode must be 44 digits in reais (currency 9) with a matching mod-11 DAC');
  const fields = boletoBarcodeFields(facts.barcode);
  if (facts.bankCode !== fields.bankCode)
    throw new RangeError(`bankCode ${facts.bankCode} is not the barcode's bank ${fields.bankCode}`);
  const line = linhaDigitavel(facts.barcode);
  if (facts.linhaFormatted.replace(/[.\s]/g, '') !== line)
    throw new RangeError("linhaFormatted is not the barcode's linha digitável");
  if (fields.amountCents !== 0n && fields.amountCents !== facts.amount) {
    throw new RangeError(`amount ${facts.amount} centavos is not the barcode's ${fields.amountCents}`);
  }
  if (fields.dueFactor !== 0 && dueFactor(facts.dueDate) !== fields.dueFactor)
    throw new RangeError(`dueDate ${facts.dueDate} is not the barcode's due date`);
  return formatLinhaDigitavel(line);
}

/** Draws text on one page in the two Helvetica weights, made drawable first. */
class Canvas {
  readonly #charset: ReadonlySet<number>;

  constructor(
    readonly page: PDFPage,
    readonly regular: PDFFont,
    readonly bold: PDFFont,
  ) {
    this.#charset = new Set(regular.getCharacterSet());
  }

  /** Text the font can encode, cut with an ellipsis to `width` if it is wider. */
  fit(text: string, font: PDFFont, size: number, width: number): string {
    const drawable = drawableText(text, this.#charset).trim();
    if (font.widthOfTextAtSize(drawable, size) <= width) return drawable;
    const chars = Array.from(drawable);
    while (chars.length > 0 && font.widthOfTextAtSize(`${chars.join('').trimEnd()}…`, size) > width) chars.pop();
    return `${chars.join('').trimEnd()}…`;
  }

  /** Splits text the font can encode into at most `max` lines no wider than `width`, at spaces where it can. */
  wrap(text: string, font: PDFFont, size: number, width: number, max: number): string[] {
    const lines: string[] = [];
    const fits = (candidate: string) => font.widthOfTextAtSize(candidate, size) <= width;
    for (const paragraph of text.split(/\r\n|\r|\n/)) {
      const words = drawableText(paragraph, this.#charset)
        .split(' ')
        .filter((w) => w !== '');
      if (words.length > 0) lines.push(...wrapText(words.join(' '), fits));
    }
    if (lines.length <= max) return lines;
    const kept = lines.slice(0, max);
    kept[max - 1] = this.fit(`${kept[max - 1] ?? ''}…`, font, size, width);
    return kept;
  }

  text(
    text: string,
    x: number,
    y: number,
    options: {
      size?: number;
      bold?: boolean;
      width?: number;
      align?: 'left' | 'right';
      color?: ReturnType<typeof rgb>;
    },
  ): void {
    const size = options.size ?? 9;
    const font = options.bold === true ? this.bold : this.regular;
    const line = this.fit(text, font, size, options.width ?? (options.align === 'right' ? x - LEFT : RIGHT - x));
    const left = options.align === 'right' ? x - font.widthOfTextAtSize(line, size) : x;
    this.page.drawText(line, { x: left, y, size, font, color: options.color ?? INK });
  }

  line(x1: number, y1: number, x2: number, y2: number, thickness = LINE): void {
    this.page.drawLine({ start: { x: x1, y: y1 }, end: { x: x2, y: y2 }, thickness, color: INK });
  }

  /**
   * A FEBRABAN field: a small label at the top left of the box from `x` to `x + w` and from `top`
   * down `h`, and its value on the box's last line, left or right aligned; the box's left and bottom rules.
   */
  field(
    x: number,
    top: number,
    w: number,
    h: number,
    label: string,
    value: string,
    options: { bold?: boolean; align?: 'left' | 'right'; size?: number; aside?: string } = {},
  ): void {
    this.line(x, top, x, top - h);
    this.line(x, top - h, x + w, top - h);
    this.text(label, x + 2.5, top - 7, { size: 6, width: w - 5, color: MUTED });
    const size = options.size ?? 9;
    // A second value at the right of the box (the beneficiary's CNPJ beside its name), drawn whole.
    let width = w - 6;
    if (options.aside !== undefined && options.aside !== '') {
      const aside = this.fit(options.aside, this.regular, size, width);
      this.text(aside, x + w - 3, top - h + 4, { size, width, align: 'right' });
      width -= this.regular.widthOfTextAtSize(aside, size) + 12;
    }
    if (value === '') return;
    const right = options.align === 'right';
    this.text(value, right ? x + w - 3 : x + 3, top - h + 4, {
      size,
      bold: options.bold ?? false,
      width,
      align: right ? 'right' : 'left',
    });
  }

  /** The header both parts share: bank name, bank code with its digit between heavy rules, and text at the right. */
  header(top: number, bankName: string, code: string, right: string, rightSize: number): void {
    const h = 24;
    const base = top - h + 6;
    this.text(bankName, LEFT, base, { size: 10, bold: true, width: 128 });
    const codeX = LEFT + 132;
    const codeW = 58;
    this.line(codeX, top - h, codeX, top - 4, HEAVY);
    this.line(codeX + codeW, top - h, codeX + codeW, top - 4, HEAVY);
    this.text(code, codeX + codeW / 2 - this.bold.widthOfTextAtSize(code, 14) / 2, base - 1, {
      size: 14,
      bold: true,
      width: codeW,
    });
    this.text(right, RIGHT, base, { size: rightSize, bold: true, width: RIGHT - codeX - codeW - 8, align: 'right' });
    this.line(LEFT, top - h, RIGHT, top - h, HEAVY);
  }
}

/**
 * The symbol's modules as filled rectangles, one per bar (runs of bar modules merged), all in one
 * path and one fill, with `x` the left edge of the leading quiet zone and `y` the bars' bottom.
 */
function drawBarcode(page: PDFPage, digits: string, x: number, y: number): void {
  const modules = itfModules(digits);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  // Rounded up, so that the bars are never shorter than 13 mm.
  const height = Math.ceil(BAR_HEIGHT * 1000) / 1000;
  const ops = [pushGraphicsState(), setFillingRgbColor(0, 0, 0)];
  let i = 0;
  while (i < modules.length) {
    if (modules[i] !== true) {
      i++;
      continue;
    }
    const start = i;
    while (modules[i] === true) i++;
    ops.push(rectangle(round(x + start * NARROW), round(y), round((i - start) * NARROW), height));
  }
  ops.push(fill(), popGraphicsState());
  page.pushOperators(...ops);
}

/** The boleto of `facts` as a one-page A4 PDF. Pure: the same facts give the same bytes. */
export async function renderBoletoPdf(facts: BoletoPdfFacts): Promise<Uint8Array> {
  const linha = checkFacts(facts);
  const due = dueDateText(facts.dueDate);
  const issued = brasiliaTime(facts.issuedAt).local.slice(0, 10);
  const code = bankCodeWithDigit(facts.bankCode);
  const bank = BRAZILIAN_BANKS.find((b) => b.code === facts.bankCode);
  const bankName = bank?.name.replace(/\s+S\.?A\.?$/i, '') ?? `Banco ${facts.bankCode}`;
  const amount = formatBrl(facts.amount);
  const payee = facts.payeeCity.trim() === '' ? facts.payeeName : `${facts.payeeName} — ${facts.payeeCity}`;
  const givenPayer = facts.payerName?.trim() ?? '';
  const payerName = givenPayer === '' ? label('notInformed') : givenPayer;
  const payerDocument =
    facts.payerDocument === undefined
      ? ''
      : `${facts.payerDocument.type} ${maskDocument(facts.payerDocument.type, facts.payerDocument.number)}`;
  const beneficiaryCnpj =
    facts.beneficiaryCnpj === undefined || facts.beneficiaryCnpj === ''
      ? `CNPJ ${label('notInformed').toLowerCase()}`
      : `CNPJ ${maskDocument('CNPJ', facts.beneficiaryCnpj)}`;
  const beneficiaryCode = given(facts.beneficiaryCode);
  const wallet = given(facts.wallet);
  const especie = ESPECIE[facts.barcode.charAt(3)] ?? '';

  const { doc, regular, bold } = await newPdf({
    title: `Boleto ${facts.documentNumber}`,
    subject: label('subject', { due, amount }),
    at: facts.issuedAt,
    language: 'pt-BR',
  });
  const page = doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
  const c = new Canvas(page, regular, bold);

  // Recibo do Pagador, at the top of the page.
  let top = PAGE_HEIGHT - 40;
  c.header(top, bankName, code, linha, 10);
  top -= 24;
  const row = 24;
  const left = SPLIT - LEFT;
  c.field(LEFT, top, left, row, label('beneficiary'), payee, { aside: beneficiaryCnpj });
  c.field(SPLIT, top, COLUMN, row, label('dueDate'), due, { bold: true, align: 'right' });
  top -= row;
  c.field(LEFT, top, left, row, label('payer'), payerDocument === '' ? payerName : `${payerName} — ${payerDocument}`);
  c.field(SPLIT, top, COLUMN, row, label('documentAmount'), amount, { bold: true, align: 'right' });
  top -= row;
  const half = left / 2;
  c.field(LEFT, top, half, row, label('documentNumber'), facts.documentNumber);
  c.field(LEFT + half, top, half, row, label('nossoNumero'), facts.nossoNumero);
  c.field(SPLIT, top, COLUMN, row, label('agencyCode'), beneficiaryCode, { align: 'right' });
  top -= row;
  const quarter = left / 4;
  c.field(LEFT, top, quarter, row, label('documentKind'), ESPECIE_DOC);
  c.field(LEFT + quarter, top, quarter, row, label('accepted'), ACEITE);
  c.field(LEFT + 2 * quarter, top, quarter, row, label('currencyKind'), especie);
  c.field(LEFT + 3 * quarter, top, quarter, row, label('wallet'), wallet);
  c.field(SPLIT, top, COLUMN, row, label('documentDate'), issued, { align: 'right' });
  c.line(RIGHT, PAGE_HEIGHT - 64, RIGHT, top - row);
  top -= row;
  c.text(label('mechanicalAuth'), SPLIT + 3, top - 10, { size: 6, color: MUTED });
  c.text(label('payerReceipt'), SPLIT - 6, top - 11, { size: 9, bold: true, align: 'right' });

  // The Ficha de Compensação, at the bottom of the page as FEBRABAN asks on A4: header and boxes of 24 + 4 × 21 +
  // 5 × 18 + 30 pt, then the barcode; about 106 mm from the cut line to the bars' foot (FEBRABAN: 95 to 108 mm).
  const barY = 44;
  const fichaBottom = barY + BAR_HEIGHT + 14;
  const fichaRow = 21;
  const small = 18;
  const payerRow = 30;
  top = fichaBottom + payerRow + 5 * small + 4 * fichaRow + 24;

  page.drawLine({
    start: { x: LEFT, y: top + 22 },
    end: { x: RIGHT, y: top + 22 },
    thickness: 0.5,
    color: MUTED,
    dashArray: [3, 2],
  });
  c.text(label('cutHere'), RIGHT, top + 26, { size: 6, color: MUTED, align: 'right' });

  c.header(top, bankName, code, linha, 10.5);
  const boxTop = top - 24;
  top = boxTop;
  c.field(LEFT, top, left, fichaRow, label('paymentPlace'), label('payAnyBank'));
  c.field(SPLIT, top, COLUMN, fichaRow, label('dueDate'), due, { bold: true, align: 'right' });
  top -= fichaRow;
  c.field(LEFT, top, left, fichaRow, label('beneficiary'), payee, { aside: beneficiaryCnpj });
  c.field(SPLIT, top, COLUMN, fichaRow, label('agencyCode'), beneficiaryCode, { align: 'right' });
  top -= fichaRow;
  // Data do documento | Nº do documento | Espécie Doc. | Aceite | Data processamento || Nosso número
  const numberWidth = left - 72 - 44 - 32 - 72;
  c.field(LEFT, top, 72, fichaRow, label('documentDate'), issued);
  c.field(LEFT + 72, top, numberWidth, fichaRow, label('documentNumber'), facts.documentNumber);
  c.field(SPLIT - 148, top, 44, fichaRow, label('documentKind'), ESPECIE_DOC);
  c.field(SPLIT - 104, top, 32, fichaRow, label('accepted'), ACEITE);
  c.field(SPLIT - 72, top, 72, fichaRow, label('processingDate'), issued);
  c.field(SPLIT, top, COLUMN, fichaRow, label('nossoNumero'), facts.nossoNumero, { align: 'right' });
  top -= fichaRow;
  // Uso do banco | Carteira | Espécie | Quantidade | (x) Valor || (=) Valor do documento
  c.field(LEFT, top, 72, fichaRow, label('bankUse'), '');
  c.field(LEFT + 72, top, 72, fichaRow, label('wallet'), wallet);
  c.field(LEFT + 144, top, 44, fichaRow, label('currencyKind'), especie);
  c.field(LEFT + 188, top, 72, fichaRow, label('quantity'), '');
  c.field(LEFT + 260, top, left - 260, fichaRow, label('timesValue'), '');
  c.field(SPLIT, top, COLUMN, fichaRow, label('documentAmountTotal'), amount, { bold: true, align: 'right' });
  top -= fichaRow;

  // Instruções beside the five value rows of the right column.
  const instructionsHeight = 5 * small;
  c.field(LEFT, top, left, instructionsHeight, label('instructions'), '');
  const lines = c.wrap(facts.instructions ?? '', regular, 8, left - 8, 7);
  lines.forEach((l, n) => page.drawText(l, { x: LEFT + 3, y: top - 17 - n * 10, size: 8, font: regular, color: INK }));
  for (const [n, name] of [
    label('discount'),
    label('deductions'),
    label('lateFee'),
    label('additions'),
    label('amountCharged'),
  ].entries()) {
    c.field(SPLIT, top - n * small, COLUMN, small, name, '');
  }
  top -= instructionsHeight;

  c.field(LEFT, top, WIDTH, payerRow, label('payer'), '');
  c.text(payerName, LEFT + 3, top - 16, { size: 9, width: WIDTH - COLUMN - 10 });
  if (payerDocument !== '') c.text(payerDocument, SPLIT + 3, top - 16, { size: 9, width: COLUMN - 6 });
  top -= payerRow;
  c.line(RIGHT, boxTop, RIGHT, top);
  c.text(label('compensationAuth'), RIGHT, top - 9, { size: 7, bold: true, align: 'right' });

  drawBarcode(page, facts.barcode, LEFT, barY);
  return doc.save({ useObjectStreams: false });
}

/**
 * The boleto PDF's facts of a Brazil order paid by boleto (also an aggregate cashier's): the bank,
 * barcode and due date its payment code was made with; the operator's Pix receiving account as the
 * beneficiary (PIX_MERCHANT_NAME, the merchant's name, PIX_MERCHANT_CITY), with its CNPJ when
 * PIX_KEY is a CNPJ key (the DICT registers a CNPJ key only to an account of that CNPJ); the payer
 * as the payer gave it (never a generated document); the order id and the rail's reference.
 * Agência/Código do Beneficiário and Carteira are left out: boletos come from the sandbox, which
 * has no collection agreement with a bank to take them from.
 */
export function boletoPdfFactsOf(
  order: OrderRow,
  context: {
    bankCode: string;
    pix: { key?: string | undefined; merchantName: string; merchantCity: string };
    merchantName: string;
  },
): BoletoPdfFacts {
  const d = brazilDetails(order);
  const key = context.pix.key ?? '';
  return {
    bankCode: context.bankCode,
    barcode: barcodeFromLinha(d.payParam ?? ''),
    linhaFormatted: d.linhaFormatted ?? d.payParam ?? '',
    amount: fromDb(order.amount),
    dueDate: d.boletoDueDate ?? '',
    issuedAt: order.created_at,
    payeeName: `${context.pix.merchantName} (${context.merchantName})`,
    payeeCity: context.pix.merchantCity,
    beneficiaryCnpj: pixKeyProblem('CNPJ', key) === undefined ? key : undefined,
    payerName: d.userInfoName,
    payerDocument: payerDocument(d),
    documentNumber: order.id,
    nossoNumero: order.channel_order_id ?? '',
    instructions: order.remark ?? undefined,
  };
}
