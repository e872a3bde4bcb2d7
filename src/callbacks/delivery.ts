import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { computeSign } from '@cashgate/sdk';
import { Agent, request } from 'undici';
import { JSON_UTF8 } from '../http/envelope.js';
import type { CallbackAttemptOutcome } from '../store/schema.js';
import { SERVICE_VERSION } from '../version.js';
import { ForbiddenTargetError, forbiddenAddressReason, guardedLookup } from './address-guard.js';

/** The first bytes of a response body kept in the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 4096;

export const USER_AGENT = `Cashgate/${SERVICE_VERSION} (order-result callbacks)`;

export interface CallbackRequest {
  url: string;
  /** The JSON body, exactly as stored in the outbox. */
  payload: string;
  notifyId: string;
  accessKey: string;
  secretKey: string;
}

export interface DeliveryResult {
  outcome: CallbackAttemptOutcome;
  httpStatus: number | null;
  error: string | null;
  responseExcerpt: string | null;
  latencyMs: number;
}

export interface DeliveryOptions {
  /** Success is HTTP 200 within this time (DESIGN §1.11: 10 s). */
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  now: () => number;
}

/** The callback's headers: access_key, timestamp, nonce and sign over the body, plus notify_id. */
export function callbackHeaders(
  call: CallbackRequest,
  now: number,
  nonce: string = randomUUID(),
): Record<string, string> {
  const signing = { access_key: call.accessKey, timestamp: String(now), nonce };
  const body = JSON.parse(call.payload) as Record<string, unknown>;
  return {
    ...signing,
    sign: computeSign(call.secretKey, body, signing),
    notify_id: call.notifyId,
    'content-type': JSON_UTF8,
    'user-agent': USER_AGENT,
  };
}

function describeError(error: unknown, timeoutMs: number): { outcome: CallbackAttemptOutcome; text: string } {
  if (error instanceof ForbiddenTargetError) return { outcome: 'refused', text: error.message };
  const cause = error instanceof Error && error.cause instanceof ForbiddenTargetError ? error.cause : undefined;
  if (cause !== undefined) return { outcome: 'refused', text: cause.message };
  if (
    error instanceof Error &&
    (error.name === 'TimeoutError' || error.name === 'AbortError' || /timeout/i.test(error.name))
  ) {
    return { outcome: 'failed', text: `no HTTP 200 within ${timeoutMs} ms (timeout)` };
  }
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return { outcome: 'failed', text: typeof code === 'string' ? `${code}: ${message}` : message };
}

/** Reads at most `limit` bytes of a body, then drops the rest. */
async function excerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // A body cut short still leaves what arrived.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** Sends callbacks: one POST per attempt, no redirects, refused private targets, a hard time limit. */
export class CallbackSender {
  readonly #agent: Agent;

  constructor(private readonly options: DeliveryOptions) {
    this.#agent = new Agent({
      connect: {
        timeout: options.timeoutMs,
        ...(!options.allowPrivateNetworks && { lookup: guardedLookup }),
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  /** Why the URL can never be a target (scheme, or a literal forbidden address), or undefined. */
  targetProblem(url: URL): string | undefined {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return `target refused: only http and https callback addresses are allowed, not ${url.protocol}`;
    if (this.options.allowPrivateNetworks) return undefined;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) === 0) return undefined;
    const reason = forbiddenAddressReason(host);
    return reason === undefined ? undefined : new ForbiddenTargetError(host, host, reason).message;
  }

  async send(call: CallbackRequest): Promise<DeliveryResult> {
    const started = this.options.now();
    const clockStart = performance.now();
    const latency = () => Math.round(performance.now() - clockStart);
    let url: URL;
    try {
      url = new URL(call.url);
    } catch {
      return {
        outcome: 'refused',
        httpStatus: null,
        error: `target refused: ${call.url} is not a URL`,
        responseExcerpt: null,
        latencyMs: 0,
      };
    }
    const problem = this.targetProblem(url);
    if (problem !== undefined) {
      return { outcome: 'refused', httpStatus: null, error: problem, responseExcerpt: null, latencyMs: 0 };
    }
    // Credentials in the address (https://user:pass@host/…) protect the merchant's endpoint: Basic auth.
    const basic =
      url.username === '' && url.password === ''
        ? undefined
        : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: { ...callbackHeaders(call, started), ...(basic !== undefined && { authorization: basic }) },
        body: call.payload,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const latencyMs = latency();
      const responseExcerpt = await excerpt(response.body, RESPONSE_EXCERPT_BYTES);
      const delivered = response.statusCode === 200;
      return {
        outcome: delivered ? 'delivered' : 'failed',
        httpStatus: response.statusCode,
        error: delivered ? null : `HTTP ${response.statusCode}: only 200 acknowledges a callback`,
        responseExcerpt,
        latencyMs,
      };
    } catch (error) {
      const { outcome, text } = describeError(error, this.options.timeoutMs);
      return { outcome, httpStatus: null, error: text, responseExcerpt: null, latencyMs: latency() };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
