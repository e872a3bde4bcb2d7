import { constants, createPublicKey, publicEncrypt, type KeyObject } from 'node:crypto';
import { Agent, request } from 'undici';
import type { Registry } from 'prom-client';
import { isConnectError, providerCallMetrics, TokenCache } from '../network.js';

/** What Cashgate needs to call Safaricom's Daraja for one deployment (see docs/going-live-kenya.md). */
export interface DarajaConfig {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  stk: {
    shortcode: string;
    passkey: string;
    transactionType: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
    partyB: string;
  };
  b2c: {
    shortcode: string;
    initiatorName: string;
    initiatorPassword: string;
    /** The PEM certificate (or public key) whose key encrypts the initiator password. */
    certificatePem: string;
    commandId: 'BusinessPayment' | 'SalaryPayment' | 'PromotionPayment';
  };
  /** How long one call may take before its outcome counts as unknown. */
  timeoutMs: number;
}

/** Daraja's endpoints, by the name metrics and records give them. */
export const DARAJA_PATHS = {
  oauth: '/oauth/v1/generate',
  stk: '/mpesa/stkpush/v1/processrequest',
  'stk-query': '/mpesa/stkpushquery/v1/query',
  b2c: '/mpesa/b2c/v3/paymentrequest',
  status: '/mpesa/transactionstatus/v1/query',
} as const;
export type DarajaEndpoint = keyof typeof DARAJA_PATHS;

/** One call as it happened, for the order's record: the body sent and the answer (both still unredacted). */
export interface DarajaExchange {
  endpoint: DarajaEndpoint;
  request: Record<string, unknown>;
  httpStatus: number | null;
  response: unknown;
  /** ResponseCode, or the gateway's errorCode, or the failure's kind (timeout, network). */
  code: string;
  durationMs: number;
}

/**
 * A call that failed. `sent` says whether Daraja may have acted on it: false when the request
 * never left (a refused connection) or Daraja answered with an error (it did nothing); true when
 * the answer was lost (a timeout, a reset after sending): then only a query can tell.
 */
export class DarajaError extends Error {
  /**
   * The call as it happened. It holds the request as sent (the STK Password, the SecurityCredential,
   * phone numbers), so it is private to the error: a logged error never carries it.
   */
  readonly #exchange: DarajaExchange;

  constructor(
    readonly endpoint: DarajaEndpoint,
    readonly kind: 'refused' | 'busy' | 'invalid' | 'unknown' | 'network',
    readonly code: string,
    message: string,
    exchange: DarajaExchange,
  ) {
    super(`Daraja ${endpoint}: ${code} ${message}`);
    this.name = 'DarajaError';
    this.#exchange = exchange;
  }

  get exchange(): DarajaExchange {
    return this.#exchange;
  }

  /** Whether Daraja may have acted on the request although no answer says so. */
  get outcomeUnknown(): boolean {
    return this.kind === 'unknown';
  }
}

/** Gateway error codes that mean "slow down": spike arrest, quota. */
const BUSY_CODES = new Set(['500.003.02', '500.003.03']);
/** An access token Daraja no longer takes (expired early, revoked): fetched again once. */
const INVALID_TOKEN_CODES = new Set(['404.001.03', '400.003.01']);

/** `yyyyMMddHHmmss` in Africa/Nairobi (UTC+3 all year, no daylight saving), as Daraja's Timestamp. */
export function nairobiTimestamp(now: number): string {
  return new Date(now + 3 * 3_600_000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** The STK Push password: Base64 of shortcode + passkey + timestamp. */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`).toString('base64');
}

/** SecurityCredential: the initiator password encrypted with the certificate's RSA key (PKCS#1 v1.5), in Base64. */
export function securityCredential(key: KeyObject, initiatorPassword: string): string {
  return publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(initiatorPassword)).toString(
    'base64',
  );
}

/** The public key of a PEM certificate (or public key); throws when it is not RSA. */
export function certificateKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'rsa') throw new Error('the Daraja certificate must hold an RSA public key');
  return key;
}

/**
 * A Daraja API client: the OAuth token cached until shortly before it expires and fetched once
 * however many calls wait for it; every call with a timeout; gateway errors sorted into what the
 * caller does next (DarajaError.kind); calls counted and timed by endpoint and code.
 */
export class DarajaClient {
  readonly #agent: Agent;
  readonly #key: KeyObject;
  readonly #tokens: TokenCache;
  readonly #record: (called: string, outcome: string, durationMs: number) => void;

  constructor(
    readonly config: DarajaConfig,
    private readonly now: () => number,
    registry?: Registry,
  ) {
    this.#tokens = new TokenCache(() => this.#fetchToken(), now);
    this.#agent = new Agent({ connections: 32, keepAliveTimeout: 10_000 });
    this.#key = certificateKey(config.b2c.certificatePem);
    this.#record = providerCallMetrics(registry, {
      prefix: 'cashgate_daraja',
      provider: 'Daraja',
      labels: ['endpoint', 'code'],
      outcomes: 'ResponseCode, errorCode, or timeout/network',
    });
  }

  /** The STK password and timestamp for a call made now. */
  stkCredentials(): { Password: string; Timestamp: string } {
    const timestamp = nairobiTimestamp(this.now());
    return {
      Password: stkPassword(this.config.stk.shortcode, this.config.stk.passkey, timestamp),
      Timestamp: timestamp,
    };
  }

  /** A fresh SecurityCredential (RSA with random padding: a new value each time, all valid). */
  securityCredential(): string {
    return securityCredential(this.#key, this.config.b2c.initiatorPassword);
  }

  /** POSTs `body` to the endpoint with the current token; a token Daraja refuses is fetched again once. */
  async call(endpoint: Exclude<DarajaEndpoint, 'oauth'>, body: Record<string, unknown>): Promise<DarajaExchange> {
    try {
      return await this.#post(endpoint, body, await this.#tokens.get());
    } catch (error) {
      if (!(error instanceof DarajaError) || !INVALID_TOKEN_CODES.has(error.code)) throw error;
      this.#tokens.drop();
      return this.#post(endpoint, body, await this.#tokens.get());
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #fetchToken(): Promise<{ value: string; expiresInSeconds: number }> {
    const basic = Buffer.from(`${this.config.consumerKey}:${this.config.consumerSecret}`).toString('base64');
    const exchange = await this.#send('oauth', 'GET', `${DARAJA_PATHS.oauth}?grant_type=client_credentials`, {
      authorization: `Basic ${basic}`,
    });
    const answer = exchange.response as { access_token?: unknown; expires_in?: unknown } | undefined;
    const value = answer?.access_token;
    const seconds = Number(answer?.expires_in);
    if (typeof value !== 'string' || value === '' || !Number.isFinite(seconds) || seconds <= 0) {
      throw new DarajaError('oauth', 'invalid', 'bad-token', 'the OAuth answer holds no access token', exchange);
    }
    return { value, expiresInSeconds: seconds };
  }

  #post(endpoint: Exclude<DarajaEndpoint, 'oauth'>, body: Record<string, unknown>, token: string) {
    return this.#send(
      endpoint,
      'POST',
      DARAJA_PATHS[endpoint],
      { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    );
  }

  async #send(
    endpoint: DarajaEndpoint,
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: Record<string, unknown>,
  ): Promise<DarajaExchange> {
    const started = performance.now();
    const done = (httpStatus: number | null, response: unknown, code: string): DarajaExchange => {
      const durationMs = Math.round(performance.now() - started);
      this.#record(endpoint, code, durationMs);
      return { endpoint, request: body ?? {}, httpStatus, response, code, durationMs };
    };
    let status: number;
    let text: string;
    try {
      const answer = await request(new URL(path, this.config.baseUrl), {
        method,
        headers,
        ...(body !== undefined && { body: JSON.stringify(body) }),
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
      const exchange = done(null, null, code);
      throw new DarajaError(
        endpoint,
        neverSent ? 'network' : 'unknown',
        code,
        error instanceof Error ? error.message : String(error),
        exchange,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text.slice(0, 500);
    }
    const answer = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
    const errorCode = typeof answer.errorCode === 'string' ? answer.errorCode : undefined;
    if (status >= 200 && status < 300 && errorCode === undefined) {
      const code = endpoint === 'oauth' ? 'ok' : (str(answer.ResponseCode) ?? 'ok');
      return done(status, parsed, code);
    }
    const code = errorCode ?? `http-${status}`;
    const exchange = done(status, parsed, code);
    const message = typeof answer.errorMessage === 'string' ? answer.errorMessage : `HTTP ${status}`;
    // A 5xx with no gateway error code may come from anything between us and M-Pesa: unknown.
    const kind = BUSY_CODES.has(code)
      ? 'busy'
      : errorCode === undefined && status >= 500
        ? 'unknown'
        : errorCode?.startsWith('400.') === true
          ? 'invalid'
          : 'refused';
    throw new DarajaError(endpoint, kind, code, message, exchange);
  }
}

/** A member of a Daraja body as text: Daraja sends the same codes as strings or as numbers. */
export const str = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
