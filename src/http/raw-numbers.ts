import type { TSchema } from '@sinclair/typebox';

/**
 * JSON numbers as the merchant wrote them. JSON.parse turns 1e3 into 1000 and 10.0 into 10, so an
 * amount rule ("plain decimal notation, at most N places") could not see what was sent; the raw
 * text of each top-level number member is read from the body instead.
 */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]:,]|true|false|null/g;

/** The raw text of every top-level member whose value is a number, by member name. */
export function topLevelNumberTexts(json: string): Map<string, string> {
  const found = new Map<string, string>();
  let depth = 0;
  let key: string | undefined;
  let expectValue = false;
  for (const [token] of json.matchAll(TOKENS)) {
    const first = token.charAt(0);
    if (first === '{' || first === '[') {
      depth += 1;
      expectValue = false;
    } else if (first === '}' || first === ']') {
      depth -= 1;
    } else if (first === ':') {
      expectValue = depth === 1 && key !== undefined;
    } else if (first === ',') {
      key = undefined;
      expectValue = false;
    } else if (first === '"') {
      if (depth === 1 && !expectValue) key = JSON.parse(token) as string;
      expectValue = false;
    } else {
      if (expectValue && key !== undefined && (first === '-' || (first >= '0' && first <= '9'))) found.set(key, token);
      expectValue = false;
    }
  }
  return found;
}

/** Members of an object schema that take a string or a number alike: the amounts. */
export function amountMembers(schema: TSchema | undefined): ReadonlySet<string> {
  const properties =
    (schema as { properties?: Record<string, { anyOf?: { type?: unknown }[] }> } | undefined)?.properties ?? {};
  return new Set(
    Object.entries(properties)
      .filter(([, member]) => {
        const types = (member.anyOf ?? []).map((variant) => variant.type);
        return types.includes('string') && types.includes('number');
      })
      .map(([name]) => name),
  );
}

/** The body with each number in an amount member replaced by its text as sent. */
export function withNumbersAsSent(body: unknown, raw: string | undefined, amounts: ReadonlySet<string>): unknown {
  if (raw === undefined || amounts.size === 0 || body === null || typeof body !== 'object' || Array.isArray(body))
    return body;
  const texts = topLevelNumberTexts(raw);
  return Object.fromEntries(
    Object.entries(body).map(([k, v]) => [
      k,
      typeof v === 'number' && amounts.has(k) && texts.has(k) ? texts.get(k) : v,
    ]),
  );
}
