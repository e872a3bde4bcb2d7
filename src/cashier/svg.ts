/** What the cashier's inline SVG renderers share. */

/** A size option: a positive finite number, else a RangeError naming it. */
export function positiveNumber(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive finite number; got ${value}`);
  return value;
}
