import { Counter, Histogram, type Registry } from 'prom-client';
import { errors as undiciErrors } from 'undici';

/**
 * Whether a failed call never reached the provider (refused connection, unknown host, failed TLS
 * handshake): then nothing was sent, so nothing can have started. Any other failure (a timeout, a
 * reset once sent) leaves the outcome unknown.
 */
export function isConnectError(error: unknown): boolean {
  if (error instanceof undiciErrors.ConnectTimeoutError) return true;
  const failure = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } };
  const raw = failure.code ?? failure.cause?.code;
  const code = typeof raw === 'string' ? raw : '';
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN'
  );
}

/**
 * One call to a provider as it happened, for an order's rail messages (redacted by the caller): what
 * was called, the body sent and the answer, how it ended (`ok`, the provider's error code,
 * `http-<status>`, `timeout`, `network`, `bad-answer`) and how long it took.
 */
export interface ProviderExchange<Operation extends string = string> {
  operation: Operation;
  method: string;
  path: string;
  request: unknown;
  httpStatus: number | null;
  response: unknown;
  code: string;
  durationMs: number;
}

/** The exchange of an error that follows no call of its own (an answer that could not be read). */
export function lostExchange<Operation extends string>(operation: Operation): ProviderExchange<Operation> {
  return {
    operation,
    method: '',
    path: '',
    request: null,
    httpStatus: null,
    response: null,
    code: 'bad-answer',
    durationMs: 0,
  };
}

/**
 * An OAuth access token kept until a minute before it expires, fetched once however many calls
 * wait for it (no stampede on the provider's token endpoint), and dropped when the provider
 * refuses it so the next call fetches a new one.
 */
export class TokenCache {
  #token: { value: string; refreshAt: number } | undefined;
  #fetching: Promise<string> | undefined;

  constructor(
    private readonly fetchToken: () => Promise<{ value: string; expiresInSeconds: number }>,
    private readonly now: () => number,
  ) {}

  async get(): Promise<string> {
    const token = this.#token;
    if (token !== undefined && token.refreshAt > this.now()) return token.value;
    this.#fetching ??= this.fetchToken()
      .then(({ value, expiresInSeconds }) => {
        this.#token = { value, refreshAt: this.now() + Math.max(0, expiresInSeconds - 60) * 1000 };
        return value;
      })
      .finally(() => (this.#fetching = undefined));
    return this.#fetching;
  }

  /** The provider refused the token: the next call fetches a new one. */
  drop(): void {
    this.#token = undefined;
  }
}

/**
 * The metrics of a provider's client: calls counted by what was called and how it ended, and
 * timed by what was called. Returns what records one call (nothing without a registry).
 */
export function providerCallMetrics(
  registry: Registry | undefined,
  metrics: {
    /** `cashgate_<provider>_requests_total` and `cashgate_<provider>_request_duration_seconds`. */
    prefix: string;
    provider: string;
    /** The label of what was called, and of how it ended. */
    labels: readonly [string, string];
    outcomes: string;
  },
): (called: string, outcome: string, durationMs: number) => void {
  if (registry === undefined) return () => undefined;
  const [what, how] = metrics.labels;
  const calls = new Counter({
    name: `${metrics.prefix}_requests_total`,
    help: `Calls to ${metrics.provider} by ${what} and ${how} (${metrics.outcomes})`,
    labelNames: [what, how],
    registers: [registry],
  });
  const latency = new Histogram({
    name: `${metrics.prefix}_request_duration_seconds`,
    help: `Time ${metrics.provider} took to answer, by ${what}`,
    labelNames: [what],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return (called, outcome, durationMs) => {
    calls.inc({ [what]: called, [how]: outcome });
    latency.observe({ [what]: called }, durationMs / 1000);
  };
}
