import { escapeXml } from '../http/html.js';

/** What the cashier's inline SVG renderers share. */

/** A size option: a positive finite number, else a RangeError naming it. */
export function positiveNumber(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive finite number; got ${value}`);
  return value;
}

/** A number for an SVG attribute, at most three decimals and no trailing zeros. */
export const svgNumber = (n: number): string => String(+n.toFixed(3));

/**
 * A linear barcode's modules (true: a bar) as one inline SVG. The viewBox is in modules across and
 * the same unit down, so the bars keep their proportions when the page scales the SVG; the bars are
 * one black path over a white background (quiet zones included), drawn with crisp edges. The
 * sizes are the caller's, checked with `positiveNumber`.
 */
export function barsSvg(
  modules: readonly boolean[],
  options: { module: number; height: number; title: string },
): string {
  const { module, height } = options;
  const barHeight = svgNumber(height / module);
  const parts: string[] = [];
  let penX = 0;
  let x = 0;
  while (x < modules.length) {
    if (!modules[x]) {
      x++;
      continue;
    }
    const start = x;
    while (modules[x] === true) x++;
    const width = x - start;
    // After `z` the pen is back at the bar's top left corner, so the next bar is a relative move.
    parts.push(parts.length === 0 ? `M${start} 0` : `m${start - penX} 0`, `h${width}v${barHeight}h-${width}z`);
    penX = start;
  }
  const total = modules.length;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${barHeight}" ` +
    `width="${svgNumber(total * module)}" height="${svgNumber(height)}" shape-rendering="crispEdges" role="img">` +
    `<title>${escapeXml(options.title)}</title>` +
    `<rect width="${total}" height="${barHeight}" fill="#fff"/>` +
    `<path fill="#000" d="${parts.join('')}"/>` +
    `</svg>`
  );
}
