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
import { brasiliaTime, formatBrl, maskDocument } from '../brazil/voucher.js';
import { newPdf } from '../pdf/document.js';
import { drawableText, wrapText } from '../pdf/text.js';
import {
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

const LOCAL_DE_PAGAMENTO = 'Pagável em qualquer banco até o vencimento';

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
function brazilianDate(iso: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (match === null) throw new RangeError(`dueDate must be a date in the form YYYY-MM-DD; got "${iso}"`);
  return `${match[3] ?? ''}/${match[2] ?? ''}/${match[1] ?? ''}`;
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
    options: { bold?: boolean; align?: 'left' | 'right'; size?: number } = {},
  ): void {
    this.line(x, top, x, top - h);
    this.line(x, top - h, x + w, top - h);
    this.text(label, x + 2.5, top - 7, { size: 6, width: w - 5, color: MUTED });
    if (value === '') return;
    const right = options.align === 'right';
    this.text(value, right ? x + w - 3 : x + 3, top - h + 4, {
      size: options.size ?? 9,
      bold: options.bold ?? false,
      width: w - 6,
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
  const ops = [pushGraphicsState(), setFillingRgbColor(0, 0, 0)];
  let i = 0;
  while (i < modules.length) {
    if (modules[i] !== true) {
      i++;
      continue;
    }
    const start = i;
    while (modules[i] === true) i++;
    ops.push(rectangle(round(x + start * NARROW), round(y), round((i - start) * NARROW), round(BAR_HEIGHT)));
  }
  ops.push(fill(), popGraphicsState());
  page.pushOperators(...ops);
}

/** The boleto of `facts` as a one-page A4 PDF. Pure: the same facts give the same bytes. */
export async function renderBoletoPdf(facts: BoletoPdfFacts): Promise<Uint8Array> {
  const linha = checkFacts(facts);
  const due = brazilianDate(facts.dueDate);
  const issued = brasiliaTime(facts.issuedAt).local.slice(0, 10);
  const code = bankCodeWithDigit(facts.bankCode);
  const bank = BRAZILIAN_BANKS.find((b) => b.code === facts.bankCode);
  const bankName = bank?.name.replace(/\s+S\.?A\.?$/i, '') ?? `Banco ${facts.bankCode}`;
  const amount = formatBrl(facts.amount);
  const payee = facts.payeeCity.trim() === '' ? facts.payeeName : `${facts.payeeName} — ${facts.payeeCity}`;
  const givenPayer = facts.payerName?.trim() ?? '';
  const payerName = givenPayer === '' ? 'Não informado' : givenPayer;
  const payerDocument =
    facts.payerDocument === undefined
      ? ''
      : `${facts.payerDocument.type} ${maskDocument(facts.payerDocument.type, facts.payerDocument.number)}`;

  const { doc, regular, bold } = await newPdf({
    title: `Boleto ${facts.documentNumber}`,
    subject: `Boleto bancário — ficha de compensação, vencimento ${due}, ${amount}`,
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
  c.field(LEFT, top, SPLIT - LEFT, row, 'Beneficiário', payee);
  c.field(SPLIT, top, COLUMN, row, 'Vencimento', due, { bold: true, align: 'right' });
  top -= row;
  c.field(
    LEFT,
    top,
    SPLIT - LEFT,
    row,
    'Pagador',
    payerDocument === '' ? payerName : `${payerName} — ${payerDocument}`,
  );
  c.field(SPLIT, top, COLUMN, row, 'Valor do documento', amount, { bold: true, align: 'right' });
  top -= row;
  const half = (SPLIT - LEFT) / 2;
  c.field(LEFT, top, half, row, 'Nº do documento', facts.documentNumber);
  c.field(LEFT + half, top, half, row, 'Nosso número', facts.nossoNumero);
  c.field(SPLIT, top, COLUMN, row, 'Data do documento', issued, { align: 'right' });
  c.line(RIGHT, PAGE_HEIGHT - 64, RIGHT, top - row);
  top -= row;
  c.text('Autenticação mecânica', SPLIT + 3, top - 10, { size: 6, color: MUTED });
  c.text('Recibo do Pagador', SPLIT - 6, top - 11, { size: 9, bold: true, align: 'right' });

  // The Ficha de Compensação, at the bottom of the page as FEBRABAN asks on A4: header and boxes of 24 + 3 × 24 +
  // 5 × 20 + 30 pt, then the barcode; about 105 mm from the cut line to the bars' foot (FEBRABAN: 95 to 108 mm).
  const barY = 44;
  const fichaBottom = barY + BAR_HEIGHT + 14;
  const small = 20;
  const payerRow = 30;
  top = fichaBottom + payerRow + 5 * small + 3 * row + 24;

  page.drawLine({
    start: { x: LEFT, y: top + 22 },
    end: { x: RIGHT, y: top + 22 },
    thickness: 0.5,
    color: MUTED,
    dashArray: [3, 2],
  });
  c.text('Corte na linha pontilhada', RIGHT, top + 26, { size: 6, color: MUTED, align: 'right' });

  c.header(top, bankName, code, linha, 10.5);
  const boxTop = top - 24;
  top = boxTop;
  c.field(LEFT, top, SPLIT - LEFT, row, 'Local de pagamento', LOCAL_DE_PAGAMENTO);
  c.field(SPLIT, top, COLUMN, row, 'Vencimento', due, { bold: true, align: 'right' });
  top -= row;
  c.field(LEFT, top, SPLIT - LEFT, row, 'Beneficiário', payee);
  c.field(SPLIT, top, COLUMN, row, 'Nosso número', facts.nossoNumero, { align: 'right' });
  top -= row;
  const left = SPLIT - LEFT;
  c.field(LEFT, top, 72, row, 'Data do documento', issued);
  c.field(LEFT + 72, top, left - 72 - 40 - 72, row, 'Nº do documento', facts.documentNumber);
  c.field(SPLIT - 112, top, 40, row, 'Espécie', 'R$');
  c.field(SPLIT - 72, top, 72, row, 'Data processamento', issued);
  c.field(SPLIT, top, COLUMN, row, '(=) Valor do documento', amount, { bold: true, align: 'right' });
  top -= row;

  // Instruções beside the five value rows of the right column.
  const instructionsHeight = 5 * small;
  c.field(LEFT, top, left, instructionsHeight, 'Instruções (texto de responsabilidade do beneficiário)', '');
  const lines = c.wrap(facts.instructions ?? '', regular, 8, left - 8, 8);
  lines.forEach((l, n) => page.drawText(l, { x: LEFT + 3, y: top - 17 - n * 10, size: 8, font: regular, color: INK }));
  for (const [n, label] of [
    '(-) Desconto / Abatimento',
    '(-) Outras deduções',
    '(+) Mora / Multa',
    '(+) Outros acréscimos',
    '(=) Valor cobrado',
  ].entries()) {
    c.field(SPLIT, top - n * small, COLUMN, small, label, '');
  }
  top -= instructionsHeight;

  c.field(LEFT, top, WIDTH, payerRow, 'Pagador', '');
  c.text(payerName, LEFT + 3, top - 16, { size: 9, width: WIDTH - COLUMN - 10 });
  if (payerDocument !== '') c.text(payerDocument, SPLIT + 3, top - 16, { size: 9, width: COLUMN - 6 });
  top -= payerRow;
  c.line(RIGHT, boxTop, RIGHT, top);
  c.text('Autenticação mecânica — Ficha de Compensação', RIGHT, top - 9, { size: 7, bold: true, align: 'right' });

  drawBarcode(page, facts.barcode, LEFT, barY);
  return doc.save({ useObjectStreams: false });
}
