import { Agent, request } from 'undici';
import type { Registry } from 'prom-client';
import { isConnectError, providerCallMetrics, TokenCache } from '../network.js';

/** What Cashgate needs to call a PSP's API Pix and its Pix-send extension (see docs/going-live-brazil.md). */
export interface ApiPixConfig {
  /** The API Pix base, e.g. `https://pix.example.com/v2` (no trailing slash). */
  baseUrl: string;
  /** Where the send extension's paths (`/v3/gn/pix/…`, `/v2/gn/pix/enviados/…`) are resolved: the base's origin unless set. */
  sendBaseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM client certificate and key for mutual TLS; a private CA when the PSP's certificate is not publicly trusted. */
  certPem: string;
  keyPem: string;
  caPem: string | undefined;
  /** How long one call may take before its outcome counts as unknown. */
  timeoutMs: number;
}

/** The PSP operations Cashgate uses, by the name metrics and records give them. */
export type PixEndpoint =
  | 'oauth'
  | 'cob-put'
  | 'cob-get'
  | 'cob-patch'
  | 'pix-get'
  | 'pix-list'
  | 'devolucao-put'
  | 'devolucao-get'
  | 'webhook-put'
  | 'send-put'
  | 'send-get';

/** One call as it happened, for the order's record: the body sent and the answer. */
export interface PixExchange {
  endpoint: PixEndpoint;
  method: string;
  path: string;
  request: unknown;
  httpStatus: number | null;
  response: unknown;
  /** `ok`, the problem's name (the last part of its `type`), `http-<status>`, `timeout` or `network`. */
  code: string;
  durationMs: number;
}

/**
 * What a failed call means for the caller:
 * - `invalid`: the PSP refused the request for what it is (RFC 7807 with `violacoes`): trying again would not help;
 * - `not-found`: the PSP knows no such charge, Pix, refund or send;
 * - `busy`: the PSP asked to slow down or is unavailable (429, 503): nothing was done, try later;
 * - `network`: the request never left (connection refused, TLS refused): nothing was done;
 * - `unknown`: the answer was lost (timeout, reset, a 5xx): the PSP may have acted; ask before sending again.
 */
export type PixErrorKind = 'invalid' | 'not-found' | 'busy' | 'network' | 'unknown';

export class PixError extends Error {
  readonly #exchange: PixExchange;

  constructor(
    readonly endpoint: PixEndpoint,
    readonly kind: PixErrorKind,
    readonly code: string,
    message: string,
    exchange: PixExchange,
  ) {
    super(`PSP ${endpoint}: ${code} ${message}`);
    this.name = 'PixError';
    this.#exchange = exchange;
  }

  /** The call as it happened (private to the error, so a logged error never carries a payer's data). */
  get exchange(): PixExchange {
    return this.#exchange;
  }
}

/** An RFC 7807 problem as the API Pix sends it. */
interface Problem {
  type?: unknown;
  title?: unknown;
  detail?: unknown;
  violacoes?: unknown;
  nome?: unknown;
  mensagem?: unknown;
}

/** A problem's text for logs and the order's rail history: title, detail and every violation by property. */
export function problemText(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const problem = body as Problem;
  const parts: string[] = [];
  if (typeof problem.title === 'string') parts.push(problem.title);
  if (typeof problem.detail === 'string') parts.push(problem.detail);
  if (typeof problem.nome === 'string') parts.push(problem.nome);
  if (typeof problem.mensagem === 'string') parts.push(problem.mensagem);
  if (Array.isArray(problem.violacoes)) {
    for (const v of problem.violacoes as { razao?: unknown; propriedade?: unknown; valor?: unknown }[]) {
      const where = typeof v.propriedade === 'string' ? `${v.propriedade}: ` : '';
      if (typeof v.razao === 'string') parts.push(`${where}${v.razao}`);
    }
  }
  return parts.length === 0 ? undefined : parts.join('; ');
}

/** A problem's name: the last part of its `type` URI (`CobOperacaoInvalida`), or Efí's `nome`. */
function problemName(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const problem = body as Problem;
  if (typeof problem.type === 'string') return problem.type.split('/').pop() || undefined;
  return typeof problem.nome === 'string' ? problem.nome : undefined;
}

/**
 * A client of a PSP's API Pix over mutual TLS: OAuth2 client-credentials tokens cached until
 * shortly before they expire and fetched once however many calls wait; a token the PSP refuses is
 * fetched again once; every call with a timeout; RFC 7807 problems sorted into what the caller
 * does next (PixError.kind); calls counted by operation and outcome, and timed.
 */
export class ApiPixClient {
  readonly #agent: Agent;
  readonly #tokens: TokenCache;
  readonly #record: (called: string, outcome: string, durationMs: number) => void;

  constructor(
    readonly config: ApiPixConfig,
    private readonly now: () => number,
    registry?: Registry,
  ) {
    this.#tokens = new TokenCache(() => this.#fetchToken(), now);
    this.#agent = new Agent({
      connections: 32,
      keepAliveTimeout: 10_000,
      connect: {
        cert: config.certPem,
        key: config.keyPem,
        ...(config.caPem !== undefined && { ca: config.caPem }),
      },
    });
    this.#record = providerCallMetrics(registry, {
      prefix: 'cashgate_pix_psp',
      provider: 'the Pix PSP',
      labels: ['operation', 'outcome'],
      outcomes: 'ok, the problem name, http-<status>, timeout, network',
    });
  }

  /** Calls an API Pix path (relative to the base URL). */
  api(endpoint: Exclude<PixEndpoint, 'oauth'>, method: string, path: string, body?: unknown): Promise<PixExchange> {
    return this.#authorised(endpoint, method, `${this.config.baseUrl}${path}`, body);
  }

  /** Calls a path of the send extension (relative to the send base URL). */
  send(endpoint: 'send-put' | 'send-get', method: string, path: string, body?: unknown): Promise<PixExchange> {
    return this.#authorised(endpoint, method, `${this.config.sendBaseUrl}${path}`, body);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #authorised(endpoint: PixEndpoint, method: string, url: string, body: unknown): Promise<PixExchange> {
    try {
      return await this.#send(endpoint, method, url, { authorization: `Bearer ${await this.#tokens.get()}` }, body);
    } catch (error) {
      if (!(error instanceof PixError) || error.exchange.httpStatus !== 401) throw error;
      // A token the PSP no longer takes (revoked, expired early): fetched again once.
      this.#tokens.drop();
      return this.#send(endpoint, method, url, { authorization: `Bearer ${await this.#tokens.get()}` }, body);
    }
  }

  async #fetchToken(): Promise<{ value: string; expiresInSeconds: number }> {
    const basic = Buffer.from(`${this.config.clientId}:${this.config.clientSecret}`).toString('base64');
    const exchange = await this.#send(
      'oauth',
      'POST',
      this.config.tokenUrl,
      { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      'grant_type=client_credentials',
    );
    const answer = exchange.response as { access_token?: unknown; expires_in?: unknown } | undefined;
    const value = answer?.access_token;
    const seconds = Number(answer?.expires_in ?? 3600);
    if (typeof value !== 'string' || value === '' || !Number.isFinite(seconds) || seconds <= 0) {
      throw new PixError('oauth', 'invalid', 'bad-token', 'the OAuth answer holds no access token', exchange);
    }
    return { value, expiresInSeconds: seconds };
  }

  async #send(
    endpoint: PixEndpoint,
    method: string,
    url: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<PixExchange> {
    const started = performance.now();
    const path = new URL(url).pathname;
    const shown = endpoint === 'oauth' ? null : (body ?? null);
    const done = (httpStatus: number | null, response: unknown, code: string): PixExchange => {
      const durationMs = Math.round(performance.now() - started);
      this.#record(endpoint, code, durationMs);
      return { endpoint, method, path, request: shown, httpStatus, response, code, durationMs };
    };
    let status: number;
    let text: string;
    try {
      const answer = await request(url, {
        method: method as 'GET',
        headers: {
          accept: 'application/json',
          ...headers,
          ...(body !== undefined && typeof body !== 'string' && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        dispatcher: this.#agent,
        headersTimeout: this.config.timeoutMs,
        bodyTimeout: this.config.timeoutMs,
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      status = answer.statusCode;
      text = await answer.body.text();
    } catch (error) {
      const neverSent = isConnectError(error);
      const code = neverSent ? 'network' : 'timeout';
      throw new PixError(
        endpoint,
        neverSent ? 'network' : 'unknown',
        code,
        error instanceof Error ? error.message : String(error),
        done(null, null, code),
      );
    }
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text.slice(0, 500);
      }
    }
    if (status >= 200 && status < 300) return done(status, parsed, 'ok');
    const code = problemName(parsed) ?? `http-${status}`;
    const exchange = done(status, parsed, code);
    const message = problemText(parsed) ?? `HTTP ${status}`;
    const kind: PixErrorKind =
      status === 404 ? 'not-found' : status === 429 || status === 503 ? 'busy' : status >= 500 ? 'unknown' : 'invalid';
    throw new PixError(endpoint, kind, code, message, exchange);
  }
}
