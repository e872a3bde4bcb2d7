import { createHmac, timingSafeEqual } from 'node:crypto';

/** The three headers that join the request parameters in the string to sign. */
export interface SigningHeaders {
  access_key: string;
  timestamp: string;
  nonce: string;
}

/** Top-level JSON body members (POST) or query parameters (GET); `null` when there are none. */
export type SignedParams = Readonly<Record<string, unknown>> | null | undefined;

/** The fields a signed request or callback carries in its headers. */
export interface SignatureHeaders extends SigningHeaders {
  sign: string;
}

const SIGN_HEADER = 'sign';

function encodeValue(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  return JSON.stringify(value);
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The string to sign: body members (or query parameters) plus access_key, timestamp and nonce;
 * null and empty values left out, never `sign`; strings as they are, numbers and booleans as JSON
 * text, objects and arrays as compact JSON; sorted by key in byte order; joined as k=v&k=v.
 */
export function stringToSign(params: SignedParams, headers: SigningHeaders): string {
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(params ?? {})) {
    if (key === SIGN_HEADER) continue;
    const encoded = encodeValue(value);
    if (encoded !== undefined) entries.set(key, encoded);
  }
  // The headers win over a body member of the same name: they are what the server authenticates.
  for (const key of ['access_key', 'timestamp', 'nonce'] as const) {
    const encoded = encodeValue(headers[key]);
    if (encoded === undefined) entries.delete(key);
    else entries.set(key, encoded);
  }
  return [...entries.keys()]
    .sort(byteOrder)
    .map((key) => `${key}=${entries.get(key) ?? ''}`)
    .join('&');
}

/** Standard Base64 (with padding) of HMAC-SHA1(secretKey, text). */
export function signString(secretKey: string, text: string): string {
  return createHmac('sha1', secretKey).update(text, 'utf8').digest('base64');
}

/** The `sign` header value for a request or callback. */
export function computeSign(secretKey: string, params: SignedParams, headers: SigningHeaders): string {
  return signString(secretKey, stringToSign(params, headers));
}

/** Constant-time comparison of a received `sign` with the expected one. */
export function signsEqual(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(received, 'utf8');
  if (a.length !== b.length) {
    // Still spend the time of a comparison so length is the only thing a timing probe learns.
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}
