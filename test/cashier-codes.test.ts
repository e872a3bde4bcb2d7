import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import bwipjs from 'bwip-js';
import fc from 'fast-check';
import jsQR from 'jsqr';
import { ITF_QUIET_ZONE, itfBarcodeSvg, itfModules } from '../src/cashier/itf-barcode.js';
import { QR_QUIET_ZONE, qrMatrix, qrSvg } from '../src/cashier/qr-svg.js';
import { dynamicBrCode, staticBrCode } from '../src/rails/pix/br-code.js';

// ---------------------------------------------------------------------------------------------
// A tiny SVG reader, written independently of the renderers: it knows nothing about runs or bars,
// only SVG path syntax and the nonzero fill rule.

interface Point {
  x: number;
  y: number;
}

interface ParsedSvg {
  viewBox: [number, number, number, number];
  width: number;
  height: number;
  title: string;
  /** Closed polygons of the single path, in viewBox units. */
  subpaths: Point[][];
}

function attribute(tag: string, name: string): string {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  assert.ok(match?.[1] !== undefined, `attribute ${name} missing in ${tag.slice(0, 80)}`);
  return match[1];
}

/** Path data with M m L l H h V v Z z (implicit repeats included) into closed polygons. */
function parsePathData(d: string): Point[][] {
  const tokens = d.match(/[MmLlHhVvZz]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g) ?? [];
  assert.equal(
    tokens.join('').replace(/[\s,]/g, ''),
    d.replace(/[\s,]/g, ''),
    'path data has only the commands this reader knows',
  );
  const subpaths: Point[][] = [];
  let current: Point[] = [];
  let pen: Point = { x: 0, y: 0 };
  let start: Point = { x: 0, y: 0 };
  let command = '';
  let i = 0;
  const number = (): number => {
    const token = tokens[i++];
    assert.ok(token !== undefined && /^[-+.\d]/.test(token), `number expected at token ${i - 1}`);
    return Number(token);
  };
  const close = (): void => {
    if (current.length > 0) subpaths.push(current);
    current = [];
    pen = start;
  };
  while (i < tokens.length) {
    const token = tokens[i] ?? '';
    if (/^[A-Za-z]$/.test(token)) {
      command = token;
      i++;
    } else if (command === 'M') command = 'L';
    else if (command === 'm') command = 'l';
    const relative = command === command.toLowerCase();
    switch (command.toUpperCase()) {
      case 'M': {
        if (current.length > 0) subpaths.push(current);
        const x = number();
        const y = number();
        pen = relative ? { x: pen.x + x, y: pen.y + y } : { x, y };
        start = pen;
        current = [pen];
        break;
      }
      case 'L': {
        const x = number();
        const y = number();
        pen = relative ? { x: pen.x + x, y: pen.y + y } : { x, y };
        current.push(pen);
        break;
      }
      case 'H': {
        const x = number();
        pen = { x: relative ? pen.x + x : x, y: pen.y };
        current.push(pen);
        break;
      }
      case 'V': {
        const y = number();
        pen = { x: pen.x, y: relative ? pen.y + y : y };
        current.push(pen);
        break;
      }
      case 'Z':
        close();
        break;
      default:
        assert.fail(`unexpected path command "${command}"`);
    }
  }
  if (current.length > 0) subpaths.push(current);
  return subpaths;
}

function parseSvg(svg: string): ParsedSvg {
  assert.match(svg, /^<svg [^>]*>.*<\/svg>$/s);
  const root = /^<svg [^>]*>/.exec(svg)?.[0] ?? '';
  assert.equal(attribute(root, 'xmlns'), 'http://www.w3.org/2000/svg');
  assert.equal(attribute(root, 'shape-rendering'), 'crispEdges');
  assert.equal(attribute(root, 'role'), 'img');
  const viewBox = attribute(root, 'viewBox').split(' ').map(Number);
  assert.equal(viewBox.length, 4);
  const [vx = NaN, vy = NaN, vw = NaN, vh = NaN] = viewBox;
  assert.deepEqual([vx, vy], [0, 0]);

  // Nothing that runs, loads or links: no script, handlers, styles, hrefs or URLs beyond the namespace.
  assert.doesNotMatch(svg, /<script|<style|<image|<use|<foreignObject|href|url\(|\son\w+=|\sstyle=/i);
  assert.doesNotMatch(svg.replace(' xmlns="http://www.w3.org/2000/svg"', ''), /http|\/\//i);

  const elements = [...svg.matchAll(/<([a-zA-Z]+)/g)].map((m) => m[1]);
  assert.deepEqual(elements, ['svg', 'title', 'rect', 'path'], 'exactly a title, one background rect and one path');
  const rect = /<rect [^>]*\/>/.exec(svg)?.[0] ?? '';
  assert.equal(attribute(rect, 'fill'), '#fff');
  assert.equal(rect.includes(' x=') || rect.includes(' y='), false, 'the background starts at the origin');
  assert.equal(Number(attribute(rect, 'width')), vw, 'the background covers the whole viewBox');
  assert.equal(Number(attribute(rect, 'height')), vh);
  const path = /<path [^>]*\/>/.exec(svg)?.[0] ?? '';
  assert.equal(attribute(path, 'fill'), '#000');
  const titleText = /<title>([^<]*)<\/title>/.exec(svg)?.[1] ?? '';
  const title = titleText.replace(
    /&(lt|gt|quot|#39|amp);/g,
    (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e] ?? '',
  );
  return {
    viewBox: [vx, vy, vw, vh],
    width: Number(attribute(root, 'width')),
    height: Number(attribute(root, 'height')),
    title,
    subpaths: parsePathData(attribute(path, 'd')),
  };
}

/** Winding number of a closed polygon around a point (counts signed crossings of a ray to +x). */
function winding(polygon: readonly Point[], p: Point): number {
  let w = 0;
  for (let k = 0; k < polygon.length; k++) {
    const a = polygon[k] as Point;
    const b = polygon[(k + 1) % polygon.length] as Point;
    if (a.y <= p.y) {
      if (b.y > p.y && (b.x - a.x) * (p.y - a.y) - (p.x - a.x) * (b.y - a.y) > 0) w++;
    } else if (b.y <= p.y && (b.x - a.x) * (p.y - a.y) - (p.x - a.x) * (b.y - a.y) < 0) w--;
  }
  return w;
}

/** Whether the path paints the point, by the nonzero rule (SVG's default) over all subpaths. */
function painted(subpaths: readonly (readonly Point[])[], p: Point): boolean {
  let w = 0;
  for (const polygon of subpaths) {
    let minX = Infinity;
    let maxX = -Infinity;
    let minY = Infinity;
    let maxY = -Infinity;
    for (const q of polygon) {
      minX = Math.min(minX, q.x);
      maxX = Math.max(maxX, q.x);
      minY = Math.min(minY, q.y);
      maxY = Math.max(maxY, q.y);
    }
    if (p.x < minX || p.x > maxX || p.y < minY || p.y > maxY) continue;
    w += winding(polygon, p);
  }
  return w !== 0;
}

// ---------------------------------------------------------------------------------------------
// QR

/** The SVG as a grid of cells of one viewBox unit, sampled at cell centres: true = dark. */
function qrGrid(svg: string): boolean[][] {
  const parsed = parseSvg(svg);
  const [, , vw, vh] = parsed.viewBox;
  assert.equal(vw, vh, 'a QR code is square');
  assert.ok(Number.isInteger(vw));
  for (const polygon of parsed.subpaths) {
    for (const q of polygon)
      assert.ok(Number.isInteger(q.x) && Number.isInteger(q.y), 'every corner on the module grid');
  }
  const grid: boolean[][] = [];
  for (let y = 0; y < vh; y++) {
    const row: boolean[] = [];
    for (let x = 0; x < vw; x++) row.push(painted(parsed.subpaths, { x: x + 0.5, y: y + 0.5 }));
    grid.push(row);
  }
  return grid;
}

/** The grid as an RGBA image, `scale` pixels per cell, black on white. */
function rasterize(
  grid: readonly (readonly boolean[])[],
  scale: number,
): { data: Uint8ClampedArray; width: number; height: number } {
  const cells = grid.length;
  const side = cells * scale;
  const data = new Uint8ClampedArray(side * side * 4).fill(255);
  for (let py = 0; py < side; py++) {
    for (let px = 0; px < side; px++) {
      if (grid[Math.floor(py / scale)]?.[Math.floor(px / scale)] === true) {
        const o = (py * side + px) * 4;
        data[o] = data[o + 1] = data[o + 2] = 0;
      }
    }
  }
  return { data, width: side, height: side };
}

/** Renders `text`, reads the SVG back into pixels and decodes them with jsQR. */
function decodeQrSvg(svg: string): string | undefined {
  const image = rasterize(qrGrid(svg), 4);
  // jsqr is CommonJS with an `export default` declaration: from ESM its function is `.default`.
  return jsQR.default(image.data, image.width, image.height, { inversionAttempts: 'dontInvert' })?.data;
}

const RAILS_BR_CODES = [
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
  '00020101021226720014br.gov.bcb.pix2550bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd4415204000053039865406123.455802BR5913Fulano de Tal6008BRASILIA62190515RP12345678-2019630445C8',
  '00020126650014br.gov.bcb.pix0119nubank@thalesog.com0220Gerado por Pix-Utils52040000530398654041.005802BR5914Thales Ogliari6009Sao Paulo62070503***63046069',
  '00020126540014br.gov.bcb.pix2532https://pix.thalesogliari.com.br5204000053039865802BR5914Thales Ogliari6009SAO PAULO62070503***63043FD3',
  '00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a995204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB',
  '00020126330014br.gov.bcb.pix011112345678909520400005303986540510.005802BR5912LOJA EXEMPLO6009SAO PAULO62130509PEDIDO1236304BB55',
  '00020126490014br.gov.bcb.pix0114+55119999988880209Pedido 4252040000530398654071234.565802BR5912LOJA EXEMPLO6009SAO PAULO62080504TX4263042999',
  '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5912LOJA EXEMPLO6009SAO PAULO62070503***6304FEA4',
];

/** A typical static code of about 150 characters: e-mail key, amount and txid. */
const TYPICAL_BR_CODE = staticBrCode({
  pixKey: 'financeiro@lojaexemplo.com.br',
  amount: '1234.56',
  merchantName: 'Loja Exemplo Ltda',
  merchantCity: 'São Paulo',
  txid: 'PEDIDO123',
});

/** The same with a description, near the longest a static code with an e-mail key gets. */
const LONG_BR_CODE = staticBrCode({
  pixKey: 'financeiro@lojaexemplo.com.br',
  description: 'Pedido 123456 Cashgate Loja Exemplo',
  amount: '1234567.89',
  merchantName: 'Loja Exemplo Comercio Ltda',
  merchantCity: 'Sao Jose dos Campos',
  txid: 'CASHGATE0123456789ABCDEFG',
});

describe('qrSvg', () => {
  it('renders the rails.md BR Codes so that jsQR reads back exactly the same text', () => {
    for (const code of RAILS_BR_CODES) assert.equal(decodeQrSvg(qrSvg(code)), code);
  });

  it('renders BR Codes built by br-code.ts, static and dynamic, readable by jsQR', () => {
    const dynamic = dynamicBrCode({
      locationUrl: 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25',
      merchantName: 'Loja Exemplo',
      merchantCity: 'Rio de Janeiro',
      amount: '99.90',
    });
    for (const code of [TYPICAL_BR_CODE, LONG_BR_CODE, dynamic]) assert.equal(decodeQrSvg(qrSvg(code)), code);
  });

  it('draws exactly the matrix inside a light 4-module quiet zone, on integer module coordinates', () => {
    const matrix = qrMatrix(TYPICAL_BR_CODE);
    const grid = qrGrid(qrSvg(TYPICAL_BR_CODE));
    // ISO/IEC 18004's quiet zone is 4 modules: spelled out here rather than read from the module.
    const quiet = 4;
    assert.equal(QR_QUIET_ZONE, quiet);
    assert.equal(grid.length, matrix.size + 2 * quiet);
    assert.equal(grid[quiet]?.[quiet], true, 'the top-left finder pattern starts right after the quiet zone');
    for (let y = 0; y < grid.length; y++) {
      for (let x = 0; x < grid.length; x++) {
        const expected = matrix.dark(x - quiet, y - quiet);
        assert.equal(grid[y]?.[x], expected, `cell ${x},${y}`);
      }
    }
    // Finder pattern corners: dark at the matrix's three corners, light at the fourth's quiet zone.
    assert.equal(matrix.dark(0, 0) && matrix.dark(matrix.size - 1, 0) && matrix.dark(0, matrix.size - 1), true);
    assert.equal(matrix.dark(-1, 0) || matrix.dark(0, matrix.size), false, 'outside the matrix is light');
  });

  it('sizes width and height from moduleSize and escapes the title', () => {
    const code = RAILS_BR_CODES[0] ?? '';
    const size = qrMatrix(code).size + 8;
    const plain = parseSvg(qrSvg(code));
    assert.equal(plain.title, 'QR code');
    assert.deepEqual([plain.width, plain.height], [size * 4, size * 4]);
    const titled = qrSvg(code, { title: 'Pix <copia & cola> "R$ 10,00" \u0000\u0007ok', moduleSize: 3 });
    assert.match(titled, /<title>Pix &lt;copia &amp; cola&gt; &quot;R\$ 10,00&quot; ok<\/title>/);
    const parsed = parseSvg(titled);
    assert.deepEqual([parsed.width, parsed.height], [size * 3, size * 3]);
    assert.equal(parseSvg(qrSvg(code, { moduleSize: 2.5 })).width, size * 2.5);
    for (const moduleSize of [0, -1, NaN, Infinity]) assert.throws(() => qrSvg(code, { moduleSize }), RangeError);
    assert.throws(() => qrSvg(''), RangeError);
  });

  it('keeps a typical ~150-character BR Code small', (t) => {
    const svg = qrSvg(TYPICAL_BR_CODE);
    const bytes = Buffer.byteLength(svg);
    t.diagnostic(
      `BR Code of ${TYPICAL_BR_CODE.length} characters: version ${(qrMatrix(TYPICAL_BR_CODE).size - 17) / 4}, SVG ${bytes} bytes`,
    );
    assert.ok(
      TYPICAL_BR_CODE.length >= 140 && TYPICAL_BR_CODE.length <= 160,
      `typical code is ${TYPICAL_BR_CODE.length} characters`,
    );
    assert.ok(bytes < 12_000, `SVG is ${bytes} bytes`);
    t.diagnostic(`gzip: ${gzipSync(svg).length} bytes`);
    // pixCopiaECola may be up to 512 characters; lowercase letters force byte mode, the densest case.
    const longestText = Array.from({ length: 512 }, (_, k) => String.fromCharCode(97 + ((k * 7 + (k >> 3)) % 26))).join(
      '',
    );
    const longest = qrSvg(longestText);
    t.diagnostic(
      `512 lowercase letters: version ${(qrMatrix(longestText).size - 17) / 4}, SVG ${Buffer.byteLength(longest)} bytes`,
    );
    assert.ok(Buffer.byteLength(longest) < 30_000);
    assert.equal(decodeQrSvg(longest), longestText);
  });

  it('round-trips random ASCII texts of 1 to 300 characters through jsQR', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 300 }), (text) => {
        assert.equal(decodeQrSvg(qrSvg(text)), text);
      }),
      { numRuns: 30 },
    );
  });

  it('round-trips UTF-8 text (accented names) through jsQR', () => {
    const text = 'Açaí & Pão de Queijo — São João del-Rei';
    assert.equal(decodeQrSvg(qrSvg(text)), text);
  });
});

// ---------------------------------------------------------------------------------------------
// ITF

/** The SVG's narrow-module columns, sampled across the bar height: true = bar. */
function itfColumns(svg: string): { columns: boolean[]; parsed: ParsedSvg } {
  const parsed = parseSvg(svg);
  const [, , vw, vh] = parsed.viewBox;
  assert.ok(Number.isInteger(vw));
  const columns: boolean[] = [];
  for (let x = 0; x < vw; x++) {
    const samples = [0.02, 0.5, 0.98].map((f) => painted(parsed.subpaths, { x: x + 0.5, y: f * vh }));
    assert.ok(
      samples.every((s) => s === samples[0]),
      `column ${x} is one colour over the whole height`,
    );
    columns.push(samples[0] === true);
  }
  return { columns, parsed };
}

/**
 * Decodes ITF from bar/space columns without the encoder's pattern table: the classic ITF digit
 * weights 1, 2, 4, 7, 0 over the two wide elements, with 11 meaning 0.
 */
function decodeItf(columns: readonly boolean[]): string {
  const runs: { bar: boolean; width: number }[] = [];
  for (const c of columns) {
    const last = runs[runs.length - 1];
    if (last?.bar === c) last.width++;
    else runs.push({ bar: c, width: 1 });
  }
  const leading = runs.shift();
  const trailing = runs.pop();
  assert.ok(leading?.bar === false && trailing?.bar === false, 'light margins at both ends');
  const narrow = Math.min(...runs.map((r) => r.width));
  assert.ok(leading.width >= 10 * narrow && trailing.width >= 10 * narrow, 'quiet zones of at least 10 narrow modules');
  const wide = runs.map((r) => {
    assert.ok(
      r.width === narrow || r.width === 3 * narrow,
      `element of ${r.width} columns is neither narrow nor wide (3×)`,
    );
    return r.width > 2 * narrow;
  });
  assert.deepEqual(wide.slice(0, 4), [false, false, false, false], 'start pattern: four narrow elements');
  assert.deepEqual(wide.slice(-3), [true, false, false], 'stop pattern: wide bar, narrow space, narrow bar');
  const body = wide.slice(4, -3);
  assert.equal(body.length % 10, 0, 'whole pairs of digits');
  const weights = [1, 2, 4, 7, 0];
  const digit = (elements: readonly boolean[]): string => {
    assert.equal(elements.filter(Boolean).length, 2, 'two wide elements per digit');
    const sum = elements.reduce((s, w, k) => s + (w ? (weights[k] ?? NaN) : 0), 0);
    assert.ok(sum <= 9 || sum === 11, `no digit has weight ${sum}`);
    return String(sum === 11 ? 0 : sum);
  };
  let digits = '';
  for (let k = 0; k < body.length; k += 10) {
    const group = body.slice(k, k + 10);
    digits += digit(group.filter((_, j) => j % 2 === 0)) + digit(group.filter((_, j) => j % 2 === 1));
  }
  return digits;
}

/** bwip-js's encoding as narrow modules, quiet zones added: its raw widths are 1 (narrow) and 2 (wide). */
function bwipModules(digits: string): boolean[] {
  // The default export's raw() is bwip-js's toRaw; the ESM build's named `raw` is the BWIPP "raw" symbology.
  const symbols = bwipjs.raw('interleaved2of5', digits, { includetext: false });
  const first = symbols[0];
  assert.ok(first !== undefined && 'sbs' in first, 'bwip-js returns a linear encoding');
  const sbs = [...first.sbs];
  // BWIPP's stop character is 2111: wide bar, narrow space, narrow bar and a trailing narrow space
  // that belongs to the margin.
  assert.equal(sbs.length % 2, 0);
  assert.equal(sbs.pop(), 1);
  const modules: boolean[] = new Array<boolean>(ITF_QUIET_ZONE).fill(false);
  sbs.forEach((w, k) => {
    assert.ok(w === 1 || w === 2, `bwip-js width ${w}`);
    for (let n = w === 2 ? 3 : 1; n > 0; n--) modules.push(k % 2 === 0);
  });
  for (let n = 0; n < ITF_QUIET_ZONE; n++) modules.push(false);
  return modules;
}

const BOLETO_BARCODES = [
  '00196758600001026560000001149718606852452211',
  '34191131200000150001091234567880057123451000',
  '23794138600001234563381234567890123456789012',
];

/** rails.md §3.2: linha digitável to barcode. */
const lineToBarcode = (l: string): string =>
  l.slice(0, 4) + l.slice(32, 33) + l.slice(33, 47) + l.slice(4, 9) + l.slice(10, 20) + l.slice(21, 31);

describe('itfBarcodeSvg', () => {
  it('derives the boleto fixtures from their linhas digitáveis (rails.md §3.5)', () => {
    assert.equal(lineToBarcode('00190000090114971860168524522114675860000102656'), BOLETO_BARCODES[0]);
    assert.equal(lineToBarcode('34191091233456788005871234510007113120000015000'), BOLETO_BARCODES[1]);
    assert.equal(lineToBarcode('23793381283456789012334567890123413860000123456'), BOLETO_BARCODES[2]);
  });

  it('encodes the boleto barcodes module for module as bwip-js does', () => {
    const second = lineToBarcode('00190500954014481606906809350314337370000000100');
    for (const digits of [...BOLETO_BARCODES, second]) {
      assert.equal(digits.length, 44);
      assert.deepEqual(itfModules(digits), bwipModules(digits), digits);
    }
  });

  it('encodes random even-length digit strings as bwip-js does', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^(?:\d\d){1,30}$/), (digits) => {
        assert.deepEqual(itfModules(digits), bwipModules(digits));
      }),
      { numRuns: 100 },
    );
  });

  it('draws SVGs that decode back to the same digits', () => {
    for (const digits of BOLETO_BARCODES) {
      const { columns } = itfColumns(itfBarcodeSvg(digits));
      assert.deepEqual(columns, itfModules(digits));
      assert.equal(decodeItf(columns), digits);
    }
    fc.assert(
      fc.property(fc.stringMatching(/^(?:\d\d){1,25}$/), (digits) => {
        assert.equal(decodeItf(itfColumns(itfBarcodeSvg(digits)).columns), digits);
      }),
      { numRuns: 50 },
    );
  });

  it('sizes a 44-digit boleto barcode from narrow and height and keeps it small', (t) => {
    const digits = BOLETO_BARCODES[1] ?? '';
    const svg = itfBarcodeSvg(digits);
    const parsed = parseSvg(svg);
    const modules = 10 + 4 + 22 * 18 + 5 + 10;
    assert.equal(itfModules(digits).length, modules);
    assert.deepEqual([parsed.width, parsed.height], [modules * 2, 60]);
    assert.deepEqual(parsed.viewBox, [0, 0, modules, 30], 'viewBox keeps the rendered aspect ratio');
    assert.equal(parsed.title, 'Barcode');
    const bytes = Buffer.byteLength(svg);
    t.diagnostic(`44-digit boleto barcode: ${modules} modules, ${modules * 2}×60 px, SVG ${bytes} bytes`);
    assert.ok(bytes < 2_500, `SVG is ${bytes} bytes`);

    const custom = parseSvg(itfBarcodeSvg(digits, { narrow: 3, height: 50, title: 'Boleto <Itaú> & co' }));
    assert.deepEqual([custom.width, custom.height], [modules * 3, 50]);
    assert.equal(custom.title, 'Boleto <Itaú> & co');
    assert.equal(decodeItf(itfColumns(itfBarcodeSvg(digits, { narrow: 3, height: 50 })).columns), digits);
  });

  it('rejects odd lengths, non-digits, empty input and bad sizes', () => {
    for (const bad of [
      '',
      '1',
      '123',
      '0019675860000102656000000114971860685245221',
      '12a4',
      '١٢',
      '12 34',
      '1.',
      '+12',
    ]) {
      assert.throws(() => itfModules(bad), RangeError, JSON.stringify(bad));
      assert.throws(() => itfBarcodeSvg(bad), RangeError, JSON.stringify(bad));
    }
    for (const narrow of [0, -2, NaN, Infinity]) assert.throws(() => itfBarcodeSvg('12', { narrow }), RangeError);
    for (const height of [0, -60, NaN]) assert.throws(() => itfBarcodeSvg('12', { height }), RangeError);
  });
});
