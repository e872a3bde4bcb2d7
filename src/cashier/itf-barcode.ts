/**
 * Interleaved 2 of 5 (ITF) as one small inline SVG: the symbology of the Brazilian boleto's 44-digit
 * barcode (FEBRABAN). Each pair of digits is one group of five bars (the first digit) interleaved with
 * five spaces (the second); a digit is five elements of which two are wide.
 */
import { barsSvg, positiveNumber } from './svg.js';

/** Narrow modules per wide element: FEBRABAN's boleto uses wide = 3 × narrow. */
export const ITF_WIDE = 3;

/** Light narrow modules before the start and after the stop pattern. */
export const ITF_QUIET_ZONE = 10;

/** Per digit 0-9, its five elements: true = wide. */
const DIGIT_PATTERNS: readonly (readonly boolean[])[] = [
  'NNWWN',
  'WNNNW',
  'NWNNW',
  'WWNNN',
  'NNWNW',
  'WNWNN',
  'NWWNN',
  'NNNWW',
  'WNNWN',
  'NWNWN',
].map((p) => Array.from(p, (c) => c === 'W'));

export interface ItfBarcodeOptions {
  /** CSS pixels per narrow module; default 2. */
  narrow?: number;
  /** CSS pixels of bar height; default 60. */
  height?: number;
  /** Accessible name, the SVG's `<title>`; default "Barcode". */
  title?: string;
}

function patternOf(digit: string): readonly boolean[] {
  const pattern = DIGIT_PATTERNS[digit.charCodeAt(0) - 48];
  if (pattern === undefined) throw new RangeError(`not a digit: "${digit}"`);
  return pattern;
}

/**
 * The symbol as narrow modules from the left edge of the leading quiet zone to the right edge of the
 * trailing one: true = bar. Start: narrow bar, narrow space, narrow bar, narrow space; then each pair
 * of digits; stop: wide bar, narrow space, narrow bar.
 */
export function itfModules(digits: string): boolean[] {
  if (!/^\d*$/.test(digits)) throw new RangeError('ITF encodes only the digits 0-9');
  if (digits.length === 0 || digits.length % 2 !== 0) {
    throw new RangeError(`ITF encodes an even, non-zero number of digits; got ${digits.length}`);
  }
  const modules: boolean[] = [];
  const push = (bar: boolean, wide: boolean): void => {
    for (let i = wide ? ITF_WIDE : 1; i > 0; i--) modules.push(bar);
  };
  for (let i = 0; i < ITF_QUIET_ZONE; i++) modules.push(false);
  push(true, false);
  push(false, false);
  push(true, false);
  push(false, false);
  for (let i = 0; i < digits.length; i += 2) {
    const bars = patternOf(digits.charAt(i));
    const spaces = patternOf(digits.charAt(i + 1));
    for (let j = 0; j < 5; j++) {
      push(true, bars[j] === true);
      push(false, spaces[j] === true);
    }
  }
  push(true, true);
  push(false, false);
  push(true, false);
  for (let i = 0; i < ITF_QUIET_ZONE; i++) modules.push(false);
  return modules;
}

/**
 * `digits` as an ITF barcode in one inline SVG. The viewBox is in narrow modules across and the same
 * unit down, so the bars keep their proportions when the page scales the SVG; the bars are one black
 * path over a white background (quiet zones included), drawn with crisp edges.
 */
export function itfBarcodeSvg(digits: string, options: ItfBarcodeOptions = {}): string {
  return barsSvg(itfModules(digits), {
    module: positiveNumber(options.narrow ?? 2, 'narrow'),
    height: positiveNumber(options.height ?? 60, 'height'),
    title: options.title ?? 'Barcode',
  });
}
