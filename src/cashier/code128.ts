/**
 * Code 128 as one small inline SVG: the symbology of an OXXO voucher's reference, which the store's
 * till scans. An even number of digits is written in code set C (two digits a symbol); anything else
 * (an odd number of digits, or other printable ASCII) in code set B (one character a symbol). A
 * symbol is three bars and three spaces of 1 to 4 modules, 11 modules in all; the stop symbol has a
 * fourth bar (13 modules). The check symbol is the start's value plus each symbol's value times its
 * position, modulo 103.
 */
import { barsSvg, positiveNumber } from './svg.js';

/** Light modules before the start and after the stop symbol (the standard asks at least 10). */
export const CODE128_QUIET_ZONE = 10;

/**
 * The widths of each symbol value 0-106 (bar, space, bar, space, bar, space; the stop adds a bar):
 * 103 Start A, 104 Start B, 105 Start C, 106 Stop.
 */
// prettier-ignore
const PATTERNS: readonly string[] = [
  '212222', '222122', '222221', '121223', '121322', '131222', '122213', '122312', '132212', '221213',
  '221312', '231212', '112232', '122132', '122231', '113222', '123122', '123221', '223211', '221132',
  '221231', '213212', '223112', '312131', '311222', '321122', '321221', '312212', '322112', '322211',
  '212123', '212321', '232121', '111323', '131123', '131321', '112313', '132113', '132311', '211313',
  '231113', '231311', '112133', '112331', '132131', '113123', '113321', '133121', '313121', '211331',
  '231131', '213113', '213311', '213131', '311123', '311321', '331121', '312113', '312311', '332111',
  '314111', '221411', '431111', '111224', '111422', '121124', '121421', '141122', '141221', '112214',
  '112412', '122114', '122411', '142112', '142211', '241211', '221114', '413111', '241112', '134111',
  '111242', '121142', '121241', '114212', '124112', '124211', '411212', '421112', '421211', '212141',
  '214121', '412121', '111143', '111341', '131141', '114113', '114311', '411113', '411311', '113141',
  '114131', '311141', '411131', '211412', '211214', '211232', '2331112',
];

const START_B = 104;
const START_C = 105;
const STOP = 106;

/**
 * The symbol values of `text`, start and check included, stop excluded: code set C for an even,
 * non-zero number of digits, code set B otherwise (printable ASCII, space to tilde).
 */
export function code128Values(text: string): number[] {
  if (text.length === 0) throw new RangeError('Code 128 needs at least one character');
  const values: number[] = [];
  if (/^(\d\d)+$/.test(text)) {
    values.push(START_C);
    for (let i = 0; i < text.length; i += 2) values.push(Number(text.slice(i, i + 2)));
  } else {
    if (!/^[\x20-\x7e]+$/.test(text)) throw new RangeError('Code 128 set B encodes printable ASCII only');
    values.push(START_B);
    for (const char of text) values.push(char.charCodeAt(0) - 32);
  }
  const check = values.reduce((sum, value, position) => sum + value * Math.max(position, 1), 0) % 103;
  values.push(check);
  return values;
}

/** The bar and space widths of `text`, start to stop, in modules (no quiet zones). */
export function code128Widths(text: string): number[] {
  return [...code128Values(text), STOP].flatMap((value) => Array.from(PATTERNS[value] ?? '', Number));
}

/** The symbol as modules from the left edge of the leading quiet zone to the right edge of the trailing one: true = bar. */
export function code128Modules(text: string): boolean[] {
  const modules: boolean[] = new Array<boolean>(CODE128_QUIET_ZONE).fill(false);
  code128Widths(text).forEach((width, k) => {
    for (let n = 0; n < width; n++) modules.push(k % 2 === 0);
  });
  for (let n = 0; n < CODE128_QUIET_ZONE; n++) modules.push(false);
  return modules;
}

export interface Code128Options {
  /** CSS pixels per module; default 2. */
  module?: number;
  /** CSS pixels of bar height; default 60. */
  height?: number;
  /** Accessible name, the SVG's `<title>`; default "Barcode". */
  title?: string;
}

/**
 * `text` as a Code 128 barcode in one inline SVG, drawn as the ITF barcode is (itf-barcode.ts): the
 * viewBox in modules, the bars one black path over a white background with its quiet zones.
 */
export function code128Svg(text: string, options: Code128Options = {}): string {
  return barsSvg(code128Modules(text), {
    module: positiveNumber(options.module ?? 2, 'module'),
    height: positiveNumber(options.height ?? 60, 'height'),
    title: options.title ?? 'Barcode',
  });
}
