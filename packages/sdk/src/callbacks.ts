import { computeSign, signsEqual, type SignatureHeaders, type SignedParams } from './signing.js';
import type { CallbackPayload } from './types.js';

/** A request's headers as a server framework gives them: Node's IncomingHttpHeaders, a plain object (any case), or a Headers instance. */
export type HeadersLike =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Why a callback was refused. */
export type CallbackRefusal = 'missing_header' | 'invalid_body' | 'bad_signature' | 'stale' | 'replayed';

export class CallbackVerificationError extends Error {
  override readonly name = 'CallbackVerificationError';
  constructor(
    readonly reason: CallbackRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyCallbackOptions {
  /** The secret of the key that placed the order. */
  secretKey: string;
  /** How far the callback's timestamp may be from now, either way (default 300000, the API's own window). */
  toleranceMs?: number;
  /** The current time in Unix milliseconds (default Date.now()). */
  now?: number;
  /**
   * Replay hook, called only for a callback whose signature and timestamp are good: remember the
   * nonce and answer true when it was seen before (the callback is then refused as a replay). Keep
   * nonces at least 2 × toleranceMs. A Promise-returning hook makes verifyCallback return a Promise.
   */
  seen?: (nonce: string, timestamp: number) => boolean | Promise<boolean>;
}

const HEADER_NAMES = ['access_key', 'timestamp', 'nonce', 'sign'] as const;

/** How far a callback's timestamp may be from now, by default. */
export const DEFAULT_TOLERANCE_MS = 300_000;

/** One header's value, whatever the case of its name; the first of repeated values. */
export function headerValue(headers: HeadersLike, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    // A Headers object joins repeated values with ", ": the first is taken, as from a record.
    const joined = (headers as { get(name: string): string | null }).get(name);
    return joined === null ? undefined : (joined.split(',')[0] ?? '').trim();
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : value[0];
  }
  return undefined;
}

function refuse(reason: CallbackRefusal, message: string): never {
  throw new CallbackVerificationError(reason, message);
}

function checked(rawBody: string | Uint8Array, headers: HeadersLike, options: VerifyCallbackOptions) {
  const values = HEADER_NAMES.map((name) => [name, headerValue(headers, name)] as const);
  const missing = values.filter(([, value]) => value === undefined || value === '').map(([name]) => name);
  if (missing.length > 0) refuse('missing_header', `callback without the ${missing.join(', ')} header(s)`);
  const signature = Object.fromEntries(values) as unknown as SignatureHeaders;
  const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    refuse('invalid_body', 'the callback body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    refuse('invalid_body', 'the callback body is not a JSON object');
  if (!signsEqual(computeSign(options.secretKey, body as SignedParams, signature), signature.sign))
    refuse('bad_signature', 'the sign header does not match the body signed with this secret key');
  const timestamp = /^\d{13}$/.test(signature.timestamp) ? Number(signature.timestamp) : Number.NaN;
  const tolerance = options.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  const now = options.now ?? Date.now();
  if (!(Math.abs(now - timestamp) <= tolerance))
    refuse('stale', `the callback's timestamp ${signature.timestamp} is more than ${tolerance} ms from now (${now})`);
  return { body, nonce: signature.nonce, timestamp };
}

/**
 * Verifies a callback: the four signature headers (any case), the `sign` over the raw JSON body,
 * the timestamp's freshness and, with `seen`, that its nonce is new. Returns the parsed payload;
 * throws a {@link CallbackVerificationError} saying why a callback is refused.
 */
export function verifyCallback<T extends object = CallbackPayload>(
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  options: VerifyCallbackOptions & { seen: (nonce: string, timestamp: number) => Promise<boolean> },
): Promise<T>;
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the payload it expects
export function verifyCallback<T extends object = CallbackPayload>(
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  options: VerifyCallbackOptions & { seen?: (nonce: string, timestamp: number) => boolean },
): T;
/**
 * The first form (kept for existing code): true when `sign` matches the body members and the
 * access_key, timestamp and nonce headers. It checks neither freshness nor replay.
 */
export function verifyCallback(secretKey: string, body: SignedParams, headers: SignatureHeaders): boolean;
export function verifyCallback(
  first: string | Uint8Array,
  second: HeadersLike | SignedParams,
  third: VerifyCallbackOptions | SignatureHeaders,
): unknown {
  if ('sign' in third) {
    if (typeof first !== 'string')
      throw new TypeError('verifyCallback(secretKey, body, headers): secretKey is a string');
    return signsEqual(computeSign(first, second, third), third.sign);
  }
  const options: VerifyCallbackOptions = third;
  const { body, nonce, timestamp } = checked(first, second as HeadersLike, options);
  if (options.seen === undefined) return body;
  const replayed = options.seen(nonce, timestamp);
  const verdict = (was: boolean) => {
    if (was) refuse('replayed', `nonce ${nonce} was seen before: a replayed callback`);
    return body;
  };
  return typeof replayed === 'boolean' ? verdict(replayed) : replayed.then(verdict);
}

/**
 * An in-memory replay hook for one process: `seen: nonces.seen`. Several processes need a shared
 * store instead. Give it the toleranceMs verifyCallback uses: a nonce is kept 2 × toleranceMs from
 * when it was seen, as long as its callback could still pass the freshness check.
 */
export class NonceMemory {
  /** Nonce → when it was seen; a Map keeps insertion order, so the oldest come first. */
  readonly #nonces = new Map<string, number>();
  readonly keepMs: number;
  constructor(toleranceMs = DEFAULT_TOLERANCE_MS) {
    this.keepMs = 2 * toleranceMs;
  }

  readonly seen = (nonce: string): boolean => {
    const now = Date.now();
    // Only the expired head of the map is swept: each nonce is looked at about once.
    for (const [key, at] of this.#nonces) {
      if (at >= now - this.keepMs) break;
      this.#nonces.delete(key);
    }
    if (this.#nonces.has(nonce)) return true;
    this.#nonces.set(nonce, now);
    return false;
  };
}
