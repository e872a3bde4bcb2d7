import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import { PDFArray, PDFDocument, PDFName, PDFRawStream, type PDFObject } from 'pdf-lib';
import { pdfText } from './support/pdf.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { boletoPdfFactsOf, renderBoletoPdf, type BoletoPdfFacts } from '../src/cashier/boleto-pdf.js';
import { barcodeFromLinha, boletoBarcode, formatLinhaDigitavel, linhaDigitavel } from '../src/rails/boleto/boleto.js';

// ---------------------------------------------------------------------------------------------
// A tiny reader of PDF page content, written independently of the renderer: it knows content
// stream syntax (numbers, names, strings, arrays, operators), the graphics state stack and `cm`,
// and which operators fill a path; nothing about boletos or bars.

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface PageContent {
  /** Rectangles (`re`) of paths that were filled (f, F, f*, B, B*, b, b*), in page space. */
  filled: Rect[];
  /** Every string shown by Tj, TJ, ' and ", decoded as WinAnsi. */
  texts: string[];
}

/** The page's content streams, decoded and joined, from a PDF loaded by pdf-lib. */
async function pageContentBytes(bytes: Uint8Array): Promise<Buffer> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const [page] = doc.getPages();
  assert.ok(page !== undefined, 'the PDF has a page');
  const contents = page.node.Contents();
  assert.ok(contents !== undefined, 'the page has content');
  const streams: PDFObject[] =
    contents instanceof PDFArray ? contents.asArray().map((ref) => doc.context.lookup(ref) ?? ref) : [contents];
  const parts = streams.map((stream) => {
    assert.ok(stream instanceof PDFRawStream, 'each content stream is a raw stream');
    const filter = stream.dict.get(PDFName.of('Filter'));
    const filters = filter instanceof PDFArray ? filter.asArray() : filter === undefined ? [] : [filter];
    let data = Buffer.from(stream.contents);
    for (const f of filters) {
      assert.equal(String(f), '/FlateDecode', 'only FlateDecode is expected');
      data = inflateSync(data);
    }
    return data;
  });
  return Buffer.concat(parts.flatMap((p) => [p, Buffer.from('\n')]));
}

type Operand = number | string | Operand[] | { name: string } | { bytes: Buffer };

/** WinAnsiEncoding (PDF 32000-1, annex D): Latin-1, except 0x80-0x9F. */
const WINANSI_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
const winAnsi = (bytes: Buffer): string =>
  Array.from(bytes, (b) => (b >= 0x80 && b <= 0x9f ? WINANSI_HIGH.charAt(b - 0x80) : String.fromCharCode(b))).join('');
const DELIMITERS = '()<>[]{}/%';
const isSpace = (c: string) => c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === '\f' || c === '\0';

function readContent(source: Buffer): PageContent {
  const s = source.toString('latin1');
  const filled: Rect[] = [];
  const texts: string[] = [];
  let pending: Rect[] = [];
  // The current transformation matrix [a b c d e f] and its saved copies.
  let ctm = [1, 0, 0, 1, 0, 0];
  const saved: number[][] = [];
  const stack: Operand[][] = [[]];
  const operands = () => stack[stack.length - 1] ?? [];
  const num = (o: Operand | undefined): number => {
    assert.equal(typeof o, 'number', `number operand expected, got ${JSON.stringify(o)}`);
    return o as number;
  };
  const show = (o: Operand | undefined) => {
    if (typeof o === 'object' && 'bytes' in o) texts.push(winAnsi(o.bytes));
    else if (Array.isArray(o)) for (const item of o) show(item);
  };
  const operator = (op: string) => {
    const args = operands();
    stack[stack.length - 1] = [];
    switch (op) {
      case 'q':
        saved.push(ctm);
        break;
      case 'Q':
        ctm = saved.pop() ?? [1, 0, 0, 1, 0, 0];
        break;
      case 'cm': {
        const [a, b, c, d, e, f] = args.map(num) as [number, number, number, number, number, number];
        const [A, B, C, D, E, F] = ctm as [number, number, number, number, number, number];
        ctm = [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F];
        break;
      }
      case 're': {
        const [x, y, w, h] = args.map(num) as [number, number, number, number];
        const [a, b, c, d, e, f] = ctm as [number, number, number, number, number, number];
        assert.ok(b === 0 && c === 0, 'rectangles are not rotated');
        const x0 = a * x + e;
        const y0 = d * y + f;
        const x1 = a * (x + w) + e;
        const y1 = d * (y + h) + f;
        pending.push({ x: Math.min(x0, x1), y: Math.min(y0, y1), w: Math.abs(x1 - x0), h: Math.abs(y1 - y0) });
        break;
      }
      case 'f':
      case 'F':
      case 'f*':
      case 'B':
      case 'B*':
      case 'b':
      case 'b*':
        filled.push(...pending);
        pending = [];
        break;
      case 'n':
      case 'S':
      case 's':
        pending = [];
        break;
      case 'Tj':
      case "'":
        show(args[0]);
        break;
      case '"':
        show(args[2]);
        break;
      case 'TJ':
        show(args[0]);
        break;
      default:
        break;
    }
  };
  let i = 0;
  while (i < s.length) {
    const c = s.charAt(i);
    if (isSpace(c)) {
      i++;
    } else if (c === '%') {
      while (i < s.length && s[i] !== '\n' && s[i] !== '\r') i++;
    } else if (s.startsWith('<<', i) || s.startsWith('>>', i)) {
      i += 2; // dictionaries (inline image or marked-content properties) are not expected here
    } else if (c === '<') {
      const end = s.indexOf('>', i);
      assert.ok(end > i, 'unterminated hex string');
      let hex = s.slice(i + 1, end).replace(/\s/g, '');
      if (hex.length % 2 === 1) hex += '0';
      operands().push({ bytes: Buffer.from(hex, 'hex') });
      i = end + 1;
    } else if (c === '(') {
      const out: number[] = [];
      let depth = 1;
      i++;
      while (i < s.length && depth > 0) {
        const ch = s.charAt(i++);
        if (ch === '\\') {
          const next = s.charAt(i++);
          const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12, '(': 40, ')': 41, '\\': 92 };
          if (/[0-7]/.test(next)) {
            let oct = next;
            while (oct.length < 3 && /[0-7]/.test(s.charAt(i))) oct += s.charAt(i++);
            out.push(parseInt(oct, 8) & 0xff);
          } else if (next === '\r' || next === '\n') {
            if (next === '\r' && s.charAt(i) === '\n') i++;
          } else out.push(escapes[next] ?? next.charCodeAt(0));
        } else {
          if (ch === '(') depth++;
          if (ch === ')') depth--;
          if (depth > 0) out.push(ch.charCodeAt(0));
        }
      }
      operands().push({ bytes: Buffer.from(out) });
    } else if (c === '[') {
      stack.push([]);
      i++;
    } else if (c === ']') {
      const array = stack.pop() ?? [];
      operands().push(array);
      i++;
    } else if (c === '/') {
      let j = i + 1;
      while (j < s.length && !isSpace(s.charAt(j)) && !DELIMITERS.includes(s.charAt(j))) j++;
      operands().push({ name: s.slice(i + 1, j) });
      i = j;
    } else {
      let j = i;
      while (j < s.length && !isSpace(s.charAt(j)) && !DELIMITERS.includes(s.charAt(j))) j++;
      assert.ok(j > i, `unexpected character ${JSON.stringify(c)} at ${i}`);
      const token = s.slice(i, j);
      if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(token)) operands().push(Number(token));
      else operator(token);
      i = j;
    }
  }
  return { filled, texts };
}

// ---------------------------------------------------------------------------------------------
// Interleaved 2 of 5, decoded from the standard (not from itfModules): a digit is five elements
// of which exactly two are wide, read with the weights 1, 2, 4, 7, 0 (a sum of 11 is 0); a pair of
// digits is five bars (the first digit) interleaved with five spaces (the second). The symbol is
// the start pattern (narrow bar, narrow space, narrow bar, narrow space), the pairs, and the stop
// pattern (wide bar, narrow space, narrow bar).

const WEIGHTS = [1, 2, 4, 7, 0];

function itfDigit(wide: readonly boolean[]): string {
  assert.equal(wide.length, 5);
  assert.equal(wide.filter(Boolean).length, 2, 'a digit has exactly two wide elements of five');
  const sum = wide.reduce((acc, w, k) => acc + (w ? (WEIGHTS[k] ?? 0) : 0), 0);
  assert.ok(sum <= 9 || sum === 11, `no digit has the weight ${sum}`);
  return String(sum === 11 ? 0 : sum);
}

/** Digits from the widths of alternating elements, bar first: narrow or wide by their ratio to the narrowest. */
function decodeItf(widths: readonly number[]): string {
  assert.ok(widths.length > 7 && widths.length % 2 === 1, 'a symbol begins and ends with a bar');
  const narrow = Math.min(...widths);
  assert.ok(narrow > 0, 'elements have a width');
  const wide = widths.map((w) => {
    const ratio = w / narrow;
    assert.ok(
      ratio < 1.25 || (ratio > 2 && ratio < 3.5),
      `element of ${ratio.toFixed(2)} narrow modules is neither narrow nor wide`,
    );
    return ratio > 2;
  });
  assert.deepEqual(wide.slice(0, 4), [false, false, false, false], 'start pattern: narrow bar, space, bar, space');
  assert.deepEqual(wide.slice(-3), [true, false, false], 'stop pattern: wide bar, narrow space, narrow bar');
  const data = wide.slice(4, -3);
  assert.equal(data.length % 10, 0, 'pairs of digits are ten elements each');
  let digits = '';
  for (let k = 0; k < data.length; k += 10) {
    const group = data.slice(k, k + 10);
    digits += itfDigit(group.filter((_, n) => n % 2 === 0)) + itfDigit(group.filter((_, n) => n % 2 === 1));
  }
  return digits;
}

const MM = 72 / 25.4;

/** The barcode drawn on the page: the filled rectangles 13 mm tall, as bars and the gaps between them. */
function barcodeOf(content: PageContent): { digits: string; widthMm: number; heightMm: number } {
  const bars = content.filled.filter((r) => Math.abs(r.h - 13 * MM) < 1.5 * MM).sort((a, b) => a.x - b.x);
  assert.ok(bars.length > 0, 'no bars 13 mm tall on the page');
  const first = bars[0];
  const last = bars[bars.length - 1];
  assert.ok(first !== undefined && last !== undefined, 'bars found');
  for (const bar of bars) {
    assert.ok(
      Math.abs(bar.y - first.y) < 0.01 && Math.abs(bar.h - first.h) < 0.01,
      'the bars stand on one line with one height',
    );
  }
  const widths: number[] = [];
  bars.forEach((bar, k) => {
    const next = bars[k + 1];
    widths.push(bar.w);
    if (next !== undefined) {
      const gap = next.x - (bar.x + bar.w);
      assert.ok(gap > 0.01, 'bars do not touch or overlap');
      widths.push(gap);
    }
  });
  return { digits: decodeItf(widths), widthMm: (last.x + last.w - first.x) / MM, heightMm: first.h / MM };
}

/**
 * Asserts that one shown string is `expected`. (Every assertion in this file carries a message:
 * without one, node:assert re-reads the source to describe the failure, which hangs under tsx.)
 */
function shows(texts: readonly string[], expected: string): void {
  assert.ok(texts.includes(expected), `page shows "${expected}"; it shows ${JSON.stringify(texts)}`);
}

/** Asserts that `expected` is shown exactly `times` times (in the recibo and again in the ficha: twice). */
function showsTimes(texts: readonly string[], expected: string, times: number): void {
  const count = texts.filter((t) => t === expected).length;
  assert.equal(
    count,
    times,
    `page shows "${expected}" ${times} times, not ${count}; it shows ${JSON.stringify(texts)}`,
  );
}

// ---------------------------------------------------------------------------------------------

function factsFor(
  input: { bankCode: string; amount: bigint; dueDate: string; freeField: string },
  extra: Partial<BoletoPdfFacts> = {},
): BoletoPdfFacts {
  const barcode = boletoBarcode({
    bankCode: input.bankCode,
    dueDate: input.dueDate,
    amountCents: input.amount,
    freeField: input.freeField,
  });
  return {
    bankCode: input.bankCode,
    barcode,
    linhaFormatted: formatLinhaDigitavel(linhaDigitavel(barcode)),
    amount: input.amount,
    dueDate: input.dueDate,
    issuedAt: Date.UTC(2026, 2, 7, 13, 4, 5),
    payeeName: 'CASHGATE SANDBOX (Loja São João)',
    payeeCity: 'São Paulo',
    beneficiaryCnpj: '11444777000161',
    beneficiaryCode: '1234/0012345-6',
    wallet: '17',
    payerName: 'Maria da Conceição',
    payerDocument: { type: 'CPF', number: '52998224725' },
    documentNumber: 'BC0123456789ABCDEF01234567',
    nossoNumero: 'RAIL-000123456',
    instructions: 'Pedido nº 42 – café. Não receber após o vencimento.',
    ...extra,
  };
}

const FACTS = factsFor({
  bankCode: '001',
  amount: 123_456n,
  dueDate: '2026-03-10',
  freeField: '0000001234567890123456789',
});

describe('boleto PDF', () => {
  it('renders a one-page PDF with its metadata, the same bytes for the same facts', async () => {
    const bytes = await renderBoletoPdf(FACTS);
    assert.equal(Buffer.from(bytes.subarray(0, 5)).toString('latin1'), '%PDF-');
    assert.deepEqual(await renderBoletoPdf(FACTS), bytes, 'deterministic');
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    assert.equal(doc.getPageCount(), 1);
    const [page] = doc.getPages();
    assert.deepEqual([Math.round(page?.getWidth() ?? 0), Math.round(page?.getHeight() ?? 0)], [595, 842], 'A4');
    assert.equal(doc.getTitle(), `Boleto ${FACTS.documentNumber}`);
    assert.equal(doc.getCreator(), 'Cashgate');
    assert.equal(doc.getCreationDate()?.getTime(), FACTS.issuedAt);
  });

  it('draws the 44-digit barcode as Interleaved 2 of 5 bars, 103 mm by 13 mm', async () => {
    const content = readContent(await pageContentBytes(await renderBoletoPdf(FACTS)));
    const barcode = barcodeOf(content);
    assert.equal(barcode.digits, FACTS.barcode);
    assert.ok(Math.abs(barcode.widthMm - 103) < 1, `symbol ${barcode.widthMm.toFixed(1)} mm wide`);
    assert.ok(Math.abs(barcode.heightMm - 13) < 0.5, `bars ${barcode.heightMm.toFixed(1)} mm tall`);
    assert.ok(barcode.heightMm >= 13, `bars at least 13 mm tall, not ${barcode.heightMm.toFixed(5)} mm`);
  });

  it('decodes another bank, amount and due date to their own barcode', async () => {
    const facts = factsFor(
      { bankCode: '104', amount: 5n, dueDate: '2049-10-13', freeField: '9876543210987654321098765' },
      { payerDocument: undefined },
    );
    const content = readContent(await pageContentBytes(await renderBoletoPdf(facts)));
    assert.notEqual(facts.barcode, FACTS.barcode);
    assert.equal(barcodeOf(content).digits, facts.barcode);
    assert.ok(content.texts.includes('104-0'), 'the Caixa prints 104-0');
    shows(content.texts, 'R$ 0,05');
    shows(content.texts, '13/10/2049');
  });

  it('prints the linha digitável, the bank code with its digit and every box of the ficha', async () => {
    const bytes = await renderBoletoPdf(FACTS);
    const { texts } = readContent(await pageContentBytes(bytes));
    const linhaDigits = linhaDigitavel(FACTS.barcode);
    assert.equal(texts.filter((t) => t === FACTS.linhaFormatted).length, 2, 'in the recibo and the ficha headers');
    assert.ok(texts.some((t) => t.replace(/[.\s]/g, '') === linhaDigits));
    assert.equal(texts.filter((t) => t === '001-9').length, 2);
    for (const expected of [
      'Local de pagamento',
      'Pagável em qualquer banco até o vencimento',
      'Vencimento',
      '10/03/2026',
      'Beneficiário',
      'CASHGATE SANDBOX (Loja São João) — São Paulo',
      'Data do documento',
      '07/03/2026',
      'Nº do documento',
      FACTS.documentNumber,
      'Nosso número',
      FACTS.nossoNumero,
      '(=) Valor do documento',
      'R$ 1.234,56',
      'Instruções (texto de responsabilidade do beneficiário)',
      'Pedido nº 42 – café. Não receber após o vencimento.',
      'Pagador',
      'Maria da Conceição',
      'CPF ***.982.247-**',
      'Recibo do Pagador',
      'Autenticação mecânica — Ficha de Compensação',
      'Banco do Brasil',
    ]) {
      shows(texts, expected);
    }
    assert.ok(!texts.some((t) => t.includes('52998224725')), 'the CPF is masked');
    const extracted = await pdfText(bytes);
    assert.ok(extracted.includes('Pagável em qualquer banco até o vencimento'), 'a PDF reader extracts the text');
    assert.ok(extracted.includes(FACTS.linhaFormatted), 'a PDF reader extracts the linha digitável');
  });

  it("prints the beneficiary's CNPJ, agência/código, carteira, espécie, espécie doc. and aceite in both parts", async () => {
    const { texts } = readContent(await pageContentBytes(await renderBoletoPdf(FACTS)));
    for (const label of [
      'Agência/Código do Beneficiário',
      'Carteira',
      'Espécie',
      'Espécie Doc.',
      'Aceite',
      'Beneficiário',
      'Nosso número',
      'Nº do documento',
      'Data do documento',
    ]) {
      showsTimes(texts, label, 2);
    }
    for (const label of ['Uso do banco', 'Quantidade', '(x) Valor', 'Data processamento']) showsTimes(texts, label, 1);
    // The beneficiary's CNPJ, formatted, beside its name; the payer's is another CNPJ line.
    showsTimes(texts, 'CNPJ 11.444.777/0001-61', 2);
    showsTimes(texts, 'CASHGATE SANDBOX (Loja São João) — São Paulo', 2);
    showsTimes(texts, '1234/0012345-6', 2);
    showsTimes(texts, '17', 2);
    showsTimes(texts, 'R$', 2);
    showsTimes(texts, 'DM', 2);
    showsTimes(texts, 'N', 2);
    assert.ok(!texts.includes('Não informado'), 'every value is informed');
    const extracted = await pdfText(await renderBoletoPdf(FACTS));
    for (const expected of [
      'Agência/Código do Beneficiário',
      '1234/0012345-6',
      'CNPJ 11.444.777/0001-61',
      'Espécie Doc.',
    ]) {
      assert.ok(extracted.includes(expected), `a PDF reader extracts "${expected}":\n${extracted}`);
    }
  });

  it('says which beneficiary facts are not informed instead of inventing them', async () => {
    const { texts } = readContent(
      await pageContentBytes(
        await renderBoletoPdf({ ...FACTS, beneficiaryCnpj: undefined, beneficiaryCode: undefined, wallet: ' ' }),
      ),
    );
    showsTimes(texts, 'CNPJ não informado', 2);
    // Agência/Código and Carteira, in the recibo and in the ficha; the payer is informed.
    showsTimes(texts, 'Não informado', 4);
    assert.ok(!texts.some((t) => t.includes('11.444.777')), 'no CNPJ is made up');
    // Espécie, Espécie Doc. and Aceite do not depend on the beneficiary.
    showsTimes(texts, 'R$', 2);
    showsTimes(texts, 'DM', 2);
    showsTimes(texts, 'N', 2);
  });

  it('keeps a long beneficiary name from covering its CNPJ', async () => {
    const { texts } = readContent(
      await pageContentBytes(await renderBoletoPdf({ ...FACTS, payeeName: 'Beneficiário de nome longo '.repeat(8) })),
    );
    showsTimes(texts, 'CNPJ 11.444.777/0001-61', 2);
    assert.equal(
      texts.filter((t) => t.startsWith('Beneficiário de nome longo') && t.endsWith('…')).length,
      2,
      'the name is cut to the room the CNPJ leaves',
    );
  });

  it('draws names with characters outside WinAnsi instead of throwing', async () => {
    const facts = {
      ...FACTS,
      payerName: 'Zhāng 李 Wěi',
      payeeName: 'Loja 😀 Łódź',
      instructions: 'Linha um\nLinha dois\t李',
    };
    const { texts } = readContent(await pageContentBytes(await renderBoletoPdf(facts)));
    shows(texts, 'Zhang ? Wei');
    shows(texts, 'Loja ? Lódz — São Paulo');
    shows(texts, 'Linha um');
    shows(texts, 'Linha dois ?');
  });

  it('shows the payer as not informed when there is none, and a CNPJ in full', async () => {
    const none = readContent(
      await pageContentBytes(
        await renderBoletoPdf({ ...FACTS, payerName: undefined, payerDocument: undefined, instructions: undefined }),
      ),
    );
    assert.equal(none.texts.filter((t) => t === 'Não informado').length, 2, 'in the recibo and the ficha');
    const company = readContent(
      await pageContentBytes(
        await renderBoletoPdf({
          ...FACTS,
          payerName: 'Empresa Ltda',
          payerDocument: { type: 'CNPJ', number: '11222333000181' },
        }),
      ),
    );
    shows(company.texts, 'CNPJ 11.222.333/0001-81');
  });

  it('cuts long values to their box instead of overflowing', async () => {
    const long = 'Nome muito comprido '.repeat(20);
    const { texts } = readContent(
      await pageContentBytes(await renderBoletoPdf({ ...FACTS, payerName: long, instructions: long.repeat(10) })),
    );
    assert.ok(
      texts.some((t) => t.startsWith('Nome muito comprido') && t.endsWith('…')),
      'a long name ends in an ellipsis',
    );
  });

  it('refuses facts whose printed values disagree with the barcode', async () => {
    const other = factsFor({
      bankCode: '001',
      amount: 999n,
      dueDate: '2026-03-10',
      freeField: '0000001234567890123456789',
    });
    const wrongDac =
      FACTS.barcode.slice(0, 4) + String((Number(FACTS.barcode.charAt(4)) + 1) % 10) + FACTS.barcode.slice(5);
    await assert.rejects(renderBoletoPdf({ ...FACTS, barcode: wrongDac }), RangeError);
    await assert.rejects(renderBoletoPdf({ ...FACTS, linhaFormatted: other.linhaFormatted }), RangeError);
    await assert.rejects(renderBoletoPdf({ ...FACTS, bankCode: '341' }), RangeError);
    await assert.rejects(renderBoletoPdf({ ...FACTS, amount: 999n }), RangeError);
    await assert.rejects(renderBoletoPdf({ ...FACTS, dueDate: '2026-03-11' }), RangeError);
    await assert.rejects(renderBoletoPdf({ ...FACTS, dueDate: '' }), RangeError);
    // Bare digits are accepted and printed formatted.
    const { texts } = readContent(
      await pageContentBytes(await renderBoletoPdf({ ...FACTS, linhaFormatted: linhaDigitavel(FACTS.barcode) })),
    );
    shows(texts, FACTS.linhaFormatted);
  });
});

describe(`the boleto PDF of an order (${databaseLabel})`, () => {
  const CNPJ_KEY = '11444777000161';
  let gw: TestGateway;
  let merchant: Awaited<ReturnType<TestGateway['merchantWithKey']>>;

  before(async () => {
    gw = await startTestGateway({ env: { PIX_KEY: CNPJ_KEY, BOLETO_BANK_CODE: '237' } });
    merchant = await gw.merchantWithKey();
  });
  after(async () => {
    await gw.close();
  });

  const boletoOrder = async () => {
    const response = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: '/api/v3/bra/createCollectingOrder',
        body: {
          amount: '99.90',
          channelType: 'BOLETO',
          externalOrderId: `bp-${Date.now()}-${Math.random().toString(36).slice(2)}`,
          userInfoType: 'CPF',
          userInfoNo: '52998224725',
          userInfoName: 'Maria da Conceição',
          remark: 'Pedido 7',
        },
      },
      gw.clock.now(),
    );
    assert.equal(response.body.code, '200', response.body.msgEn);
    const order = await gw.gateway.orders.find(response.body.data.currencyOrderVo.orderId as string);
    assert.ok(order !== undefined, 'the order was made');
    return order;
  };
  const pix = (key: string) => ({ key, merchantName: 'CASHGATE SANDBOX', merchantCity: 'SAO PAULO' });

  it('takes the bank, barcode, beneficiary and payer from the order, the CNPJ from a CNPJ Pix key', async () => {
    const order = await boletoOrder();
    const details = JSON.parse(order.details) as { payParam: string; boletoDueDate: string };
    const facts = boletoPdfFactsOf(order, { bankCode: '237', pix: pix(CNPJ_KEY), merchantName: 'Loja Azul' });
    assert.equal(facts.barcode, barcodeFromLinha(details.payParam), 'the barcode of the linha digitável');
    assert.equal(facts.dueDate, details.boletoDueDate, 'the due date the code was made with');
    assert.equal(facts.amount, 9_990n, 'the amount in centavos');
    assert.equal(facts.beneficiaryCnpj, CNPJ_KEY, "the beneficiary's CNPJ is the CNPJ Pix key");
    assert.equal(facts.payeeName, 'CASHGATE SANDBOX (Loja Azul)', 'the beneficiary');
    assert.deepEqual(facts.payerDocument, { type: 'CPF', number: '52998224725' }, 'the payer as given');
    assert.equal(facts.nossoNumero, order.channel_order_id, "the rail's reference");
    assert.equal(facts.documentNumber, order.id, 'the order id');

    const content = readContent(await pageContentBytes(await renderBoletoPdf(facts)));
    assert.equal(barcodeOf(content).digits, facts.barcode, 'the bars carry the barcode');
    showsTimes(content.texts, 'CNPJ 11.444.777/0001-61', 2);
    showsTimes(content.texts, '237-2', 2);
    showsTimes(content.texts, 'R$', 2);
    shows(content.texts, 'CPF ***.982.247-**');
  });

  it("serves the order's boleto PDF with the same facts, the beneficiary's CNPJ among them", async () => {
    const order = await boletoOrder();
    assert.ok(order.cashier_id !== null, 'the order has a cashier page');
    const response = await fetch(new URL(`/cashier/${order.cashier_id}/boleto.pdf`, gw.url));
    assert.equal(response.status, 200, 'the PDF is served');
    const merchantName = (await gw.gateway.merchants.getMerchant(order.merchant_id)).name;
    const served = readContent(await pageContentBytes(new Uint8Array(await response.arrayBuffer())));
    const expected = readContent(
      await pageContentBytes(
        await renderBoletoPdf(
          boletoPdfFactsOf(order, {
            bankCode: '237',
            pix: { key: CNPJ_KEY, merchantName: 'CASHGATE SANDBOX', merchantCity: 'SAO PAULO' },
            merchantName,
          }),
        ),
      ),
    );
    showsTimes(served.texts, 'CNPJ 11.444.777/0001-61', 2);
    assert.equal(barcodeOf(served).digits, barcodeOf(expected).digits, 'the same bars');
  });

  it('prints no CNPJ when the Pix key is not one: a random key, or a CPF', async () => {
    const order = await boletoOrder();
    for (const key of ['5f8e3a1c-7b2d-4e6f-9a0b-1c2d3e4f5a6b', '52998224725']) {
      const facts = boletoPdfFactsOf(order, { bankCode: '237', pix: pix(key), merchantName: 'Loja Azul' });
      assert.equal(facts.beneficiaryCnpj, undefined, `no CNPJ from the key ${key}`);
      const { texts } = readContent(await pageContentBytes(await renderBoletoPdf(facts)));
      showsTimes(texts, 'CNPJ não informado', 2);
    }
  });
});

describe('the test ITF decoder', () => {
  it('reads a hand-made symbol from the standard and rejects a broken one', () => {
    // "12": bars of 1 (W N N N W), spaces of 2 (N W N N W), in units of one narrow module.
    const n = 1;
    const w = 3;
    const start = [n, n, n, n];
    const stop = [w, n, n];
    const pair = [w, n, n, w, n, n, n, n, w, w];
    assert.equal(decodeItf([...start, ...pair, ...stop]), '12');
    assert.throws(() => decodeItf([...start, w, n, w, w, n, n, n, n, w, w, ...stop]), /two wide/);
  });
});
