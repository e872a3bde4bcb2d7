/**
 * QR codes as one small inline SVG for the hosted cashier pages: no script, no external reference,
 * no raster. The `qrcode` package only builds the module matrix; the SVG is written here so the page
 * carries one `<path>` of horizontal runs instead of one element per module.
 */
import QRCode from 'qrcode';
import { escapeXml } from '../http/html.js';
import { positiveNumber } from './svg.js';

/** Light modules around the symbol on every side; ISO/IEC 18004 asks for 4. */
export const QR_QUIET_ZONE = 4;

/** A QR symbol's modules: `size` × `size`, (0, 0) at the top left, without the quiet zone. */
export interface QrMatrix {
  size: number;
  dark(x: number, y: number): boolean;
}

export interface QrSvgOptions {
  /** Accessible name, the SVG's `<title>`; default "QR code". */
  title?: string;
  /** CSS pixels per module for the width and height attributes; default 4. */
  moduleSize?: number;
}

/**
 * The QR symbol of `text` at error correction level M (about 15% of the symbol can be lost), the
 * smallest version that holds it, with the mask the encoder scores best.
 */
export function qrMatrix(text: string): QrMatrix {
  if (text === '') throw new RangeError('a QR code needs at least one character of text');
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const { size } = modules;
  return {
    size,
    dark: (x, y) => x >= 0 && y >= 0 && x < size && y < size && modules.get(y, x) !== 0,
  };
}

/**
 * The path data for the dark modules: each horizontal run of dark modules is a 1-module-high
 * rectangle `h{run}v1h-{run}z`. After `z` the pen is back at the run's start, so every run after the
 * first moves there with a short relative `m`.
 */
function runsPath(matrix: QrMatrix, offset: number): string {
  const parts: string[] = [];
  let penX = 0;
  let penY = 0;
  let first = true;
  for (let y = 0; y < matrix.size; y++) {
    let x = 0;
    while (x < matrix.size) {
      if (!matrix.dark(x, y)) {
        x++;
        continue;
      }
      const start = x;
      while (x < matrix.size && matrix.dark(x, y)) x++;
      const run = x - start;
      const ax = start + offset;
      const ay = y + offset;
      const dy = ay - penY;
      parts.push(first ? `M${ax} ${ay}` : `m${ax - penX}${dy < 0 ? '' : ' '}${dy}`, `h${run}v1h-${run}z`);
      first = false;
      penX = ax;
      penY = ay;
    }
  }
  return parts.join('');
}

/**
 * `text` as a QR code in one inline SVG: a viewBox in modules with the 4-module quiet zone, a white
 * background and the dark modules as one black path, drawn with crisp edges so no module is
 * anti-aliased into grey.
 */
export function qrSvg(text: string, options: QrSvgOptions = {}): string {
  const moduleSize = positiveNumber(options.moduleSize ?? 4, 'moduleSize');
  const { side, path } = symbolOf(text);
  const pixels = +(side * moduleSize).toFixed(3);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" width="${pixels}" height="${pixels}" shape-rendering="crispEdges" role="img">` +
    `<title>${escapeXml(options.title ?? 'QR code')}</title>` +
    `<rect width="${side}" height="${side}" fill="#fff"/>` +
    `<path fill="#000" d="${path}"/>` +
    `</svg>`
  );
}

/** Encoded symbols kept for the pages read again (a payer's reloads, the status change): the newest this many. */
const SYMBOL_CACHE_SIZE = 512;
const symbols = new Map<string, { side: number; path: string }>();

/** The symbol's side (quiet zone included) and dark path; encoding is most of a page's cost, so recent ones are kept. */
function symbolOf(text: string): { side: number; path: string } {
  const known = symbols.get(text);
  if (known !== undefined) {
    // Most recently used last: the first key is the one to drop.
    symbols.delete(text);
    symbols.set(text, known);
    return known;
  }
  const matrix = qrMatrix(text);
  const made = { side: matrix.size + 2 * QR_QUIET_ZONE, path: runsPath(matrix, QR_QUIET_ZONE) };
  symbols.set(text, made);
  if (symbols.size > SYMBOL_CACHE_SIZE) symbols.delete(symbols.keys().next().value ?? '');
  return made;
}
