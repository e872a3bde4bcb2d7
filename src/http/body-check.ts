import { ApiError, type ApiFailure } from './failures.js';

/**
 * How deep a request body's values may nest. No member of the merchant API or the admin API nests
 * more than two levels below the body; eight leaves room for any future member and still keeps
 * every walk over a body (the string to sign, validation, logging) far from the stack's limit.
 */
export const MAX_BODY_DEPTH = 8;

/**
 * What makes a parsed JSON body unfit to be read further, or undefined: a value nested deeper than
 * `limit` levels below the body (the body's members are level 1), or a string (value or member
 * name) holding a lone UTF-16 surrogate, which JSON's \u escapes allow but no UTF-8 text can keep.
 * It walks with an explicit stack, so a value nested a million levels deep is measured without
 * recursion, and it stops at the first problem, naming the member by its path (`a.b.0`).
 */
export function bodyProblem(body: unknown, limit = MAX_BODY_DEPTH): ApiFailure | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: body, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof value === 'string') {
      if (hasLoneSurrogate(value)) return { kind: 'text_not_unicode', member: path || '(body)' };
      if (value.includes(NUL)) return { kind: 'text_has_nul', member: path || '(body)' };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > limit) return { kind: 'body_too_deep', member: topMember(path), limit };
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((item, index) => [String(index), item])
      : Object.entries(value);
    for (const [key, child] of entries) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (hasLoneSurrogate(key)) return { kind: 'text_not_unicode', member: childPath };
      if (key.includes(NUL)) return { kind: 'text_has_nul', member: childPath };
      stack.push({ value: child, depth: depth + 1, path: childPath });
    }
  }
  return undefined;
}

/** U+0000: no text column keeps it (PostgreSQL refuses it), so no request may carry it. */
const NUL = '\u0000';

/** Whether any of `texts` (form fields, query values) holds a NUL. */
export function holdsNul(texts: Iterable<string>): boolean {
  for (const text of texts) if (text.includes(NUL)) return true;
  return false;
}

/** A url-encoded form body's fields, or the 300 refusing one that holds a NUL. */
export function formFields(body: string): URLSearchParams | ApiError {
  const form = new URLSearchParams(body);
  const nul = holdsNul(form.keys()) || holdsNul(form.values());
  return nul ? new ApiError({ kind: 'malformed_request', problem: 'nul_character' }) : form;
}

/** A path parameter as the router decoded it may not hold a control character (%00–%1F, %7F–%9F). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

const CONTROL = /\p{Cc}/u;

/** Read with the u flag, a paired surrogate is one code point: only a lone one is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** The top-level member of a path: the one the merchant sent, whatever lies below it. */
function topMember(path: string): string {
  const dot = path.indexOf('.');
  return dot === -1 ? path : path.slice(0, dot);
}
