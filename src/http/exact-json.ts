import { Type, type TUnsafe } from '@sinclair/typebox';

/**
 * JSON numbers that must keep every digit. A token amount on BSC has 18 decimals, more than a
 * double holds, and the spec types it as a JSON number: it is written from its decimal text.
 */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

export class ExactNumber {
  constructor(readonly text: string) {
    if (!DECIMAL.test(text)) throw new Error(`not a plain decimal: ${text}`);
  }

  /** Kept tagged when stored as JSON (a create result), so reviveExact restores it. */
  toJSON(): { $exact: string } {
    return { $exact: this.text };
  }
}

/** A JSON number in the schema (and the OpenAPI document) that the route writes as an ExactNumber. */
export function ExactNumberSchema(options: { description?: string } = {}): TUnsafe<ExactNumber> {
  return Type.Unsafe<ExactNumber>({ type: 'number', ...options });
}

function isExactTag(value: object): value is { $exact: string } {
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$exact' && typeof (value as { $exact: unknown }).$exact === 'string';
}

/** Turns the tags of a stored value back into ExactNumber. */
export function reviveExact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reviveExact);
  if (value !== null && typeof value === 'object') {
    if (isExactTag(value)) return new ExactNumber(value.$exact);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reviveExact(v)]));
  }
  return value;
}

/** JSON text of a value, with each ExactNumber written as its decimal text. */
export function stringifyExact(value: unknown): string {
  if (value instanceof ExactNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyExact(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${stringifyExact(v)}`).join(',')}}`;
  }
  // undefined (and functions) have no JSON text; as members they are left out above.
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 'null' : text;
}
