import { CashgateError } from './errors.js';

/** How a client sends requests: timeouts and retries. */
export interface TransportOptions {
  /** e.g. `http://127.0.0.1:8080` or `https://pay.example.com/cashgate/` (the path is kept). */
  baseUrl: string;
  /** Per attempt, in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Further attempts after a failure that may be repeated safely (default 2; 0 turns retries off). */
  retries?: number;
  /** First retry delay in milliseconds, doubled for each further retry (default 250); `Retry-After` wins when longer. */
  retryDelayMs?: number;
  /** Longest wait before a retry, `Retry-After` included (default 30000): a longer wait is not made, the error is thrown. */
  maxRetryDelayMs?: number;
  /** Another fetch implementation (tests, proxies). */
  fetch?: typeof fetch;
}

/** One request's description; `headers` is called again for every attempt (a fresh nonce and timestamp). */
export interface Attempt {
  method: string;
  url: URL;
  headers: () => Record<string, string>;
  body?: string;
  /** True when repeating the request cannot do anything twice. */
  repeatable: boolean;
  signal?: AbortSignal | undefined;
}

/** An answer that was read whole and parsed as JSON. */
export interface JsonAnswer {
  status: number;
  body: unknown;
  requestId: string | undefined;
  retryAfter: number | undefined;
}

/** Joins a base URL and an absolute API path, keeping the base URL's own path. */
export function joinUrl(baseUrl: string, path: string): URL {
  const base = new URL(baseUrl);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL(path.replace(/^\/+/, ''), base);
}

function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The network error's own words: `fetch failed` hides them in its cause. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause !== undefined && typeof cause.code === 'string')
    return `${cause.code}${typeof cause.message === 'string' ? ` (${cause.message})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

const delay = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** A failure after which the same request may get through: no answer, or a gateway's non-JSON 5xx page. */
function transient(error: CashgateError): boolean {
  if (error.code === 'network_error' || error.code === 'timeout') return true;
  return error.code === 'invalid_response' && (error.status ?? 0) >= 500;
}

/** Sends requests with a timeout per attempt and retries only what may safely be repeated. */
export class Transport {
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #maxRetryDelayMs: number;
  readonly baseUrl: string;

  constructor(options: TransportOptions) {
    // Fails at once on a malformed base URL rather than on the first call.
    joinUrl(options.baseUrl, '/');
    this.baseUrl = options.baseUrl;
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#retries = options.retries ?? 2;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  }

  url(path: string): URL {
    return joinUrl(this.baseUrl, path);
  }

  /**
   * Sends the request and parses its JSON answer. `retryable(answer)` says whether an answer that
   * came is a temporary refusal (429, 5xx); a transport failure is retried when the request is repeatable.
   */
  async send(attempt: Attempt, retryable: (answer: JsonAnswer) => boolean): Promise<JsonAnswer & { attempts: number }> {
    const label = `${attempt.method} ${attempt.url.pathname}`;
    for (let n = 1; ; n++) {
      let outcome: JsonAnswer | CashgateError;
      try {
        outcome = await this.#once(attempt, label, n);
      } catch (error) {
        if (!(error instanceof CashgateError)) throw error;
        outcome = error;
      }
      const again =
        n <= this.#retries &&
        (outcome instanceof CashgateError
          ? attempt.repeatable && transient(outcome)
          : retryable(outcome) && (attempt.repeatable || outcome.status === 429));
      if (!again) {
        if (outcome instanceof CashgateError) throw outcome;
        return { ...outcome, attempts: n };
      }
      const backoff = this.#retryDelayMs * 2 ** (n - 1);
      const asked = (outcome instanceof CashgateError ? outcome.retryAfter : outcome.retryAfter) ?? 0;
      const wait = Math.max(backoff, asked * 1000);
      if (wait > this.#maxRetryDelayMs) {
        if (outcome instanceof CashgateError) throw outcome;
        return { ...outcome, attempts: n };
      }
      try {
        await delay(wait, attempt.signal);
      } catch (error) {
        // Cancelled while waiting to try again: a CashgateError like any other abort.
        throw new CashgateError({
          code: 'aborted',
          msgEn: 'the request was aborted by the caller while waiting to be retried',
          attempts: n,
          request: label,
          cause: error,
        });
      }
    }
  }

  async #once(attempt: Attempt, label: string, n: number): Promise<JsonAnswer> {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort(new Error('timeout'));
    }, this.#timeoutMs);
    const onAbort = () => {
      controller.abort(attempt.signal?.reason);
    };
    attempt.signal?.addEventListener('abort', onAbort, { once: true });
    const failure = (code: 'network_error' | 'timeout' | 'aborted', msgEn: string, cause?: unknown) =>
      new CashgateError({ code, msgEn, attempts: n, request: label, cause });
    try {
      if (attempt.signal?.aborted === true) throw failure('aborted', 'the request was aborted by the caller');
      let response: Response;
      try {
        response = await this.#fetch(attempt.url, {
          method: attempt.method,
          headers: attempt.headers(),
          ...(attempt.body !== undefined && { body: attempt.body }),
          signal: controller.signal,
          redirect: 'manual',
        });
      } catch (error) {
        throw this.#abortOr(controller, attempt, failure, () =>
          failure('network_error', `could not reach ${attempt.url.origin}: ${networkReason(error)}`, error),
        );
      }
      const requestId = response.headers.get('x-request-id') ?? undefined;
      const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw this.#abortOr(controller, attempt, failure, () =>
          failure('network_error', `the answer from ${attempt.url.origin} was cut off: ${networkReason(error)}`, error),
        );
      }
      try {
        return { status: response.status, body: JSON.parse(text) as unknown, requestId, retryAfter };
      } catch (error) {
        const type = response.headers.get('content-type') ?? 'no content type';
        const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
        throw new CashgateError({
          code: 'invalid_response',
          msgEn: `HTTP ${response.status} answered ${type}, not JSON: ${JSON.stringify(excerpt)} (is baseUrl the Cashgate server?)`,
          status: response.status,
          requestId,
          retryAfter,
          attempts: n,
          request: label,
          cause: error,
        });
      }
    } finally {
      clearTimeout(timer);
      attempt.signal?.removeEventListener('abort', onAbort);
    }
  }

  #abortOr(
    controller: AbortController,
    attempt: Attempt,
    failure: (code: 'timeout' | 'aborted', msgEn: string) => CashgateError,
    otherwise: () => CashgateError,
  ): CashgateError {
    if (attempt.signal?.aborted === true) return failure('aborted', 'the request was aborted by the caller');
    if (controller.signal.aborted) return failure('timeout', `no answer within ${this.#timeoutMs} ms`);
    return otherwise();
  }
}
