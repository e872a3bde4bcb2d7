/**
 * Stripe's API as Cashgate uses it for OXXO cash vouchers: a PaymentIntent created and confirmed
 * with the `oxxo` method, read back, cancelled and listed; and the signature of Stripe's webhook
 * events (`Stripe-Signature: t=…,v1=HMAC-SHA256(secret, "t.body")`). Form-encoded requests with
 * Stripe's bracket notation, a Bearer secret key, an `Idempotency-Key` on every create.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import type { Minor } from '../../money.js';
import { isConnectError, providerCallMetrics, type ProviderExchange } from '../network.js';

/**
 * The API version every request pins (`Stripe-Version`), so that Stripe answers in the shapes read
 * here whatever the account's default: 2024-06-20, a published dated version whose PaymentIntent
 * carries `next_action.oxxo_display_details` and `payment_method_options.oxxo.expires_after_days`.
 */
export const STRIPE_API_VERSION = '2024-06-20';

export const STRIPE_BASE_URL = 'https://api.stripe.com';

export interface StripeConfig {
  /** Default `https://api.stripe.com`; a trailing slash is dropped. */
  baseUrl?: string;
  secretKey: string;
  /** How long one call may take before its outcome counts as unknown. */
  timeoutMs: number;
  dispatcher?: Dispatcher;
  registry?: Registry;
}

export type StripeOperation = 'create' | 'retrieve' | 'cancel' | 'list';

/**
 * A PaymentIntent in Cashgate's words (docs.stripe.com/payments/oxxo/accept-a-payment: a confirmed
 * OXXO intent is `requires_action` with `next_action.oxxo_display_details`; it becomes `succeeded`
 * once the cash is paid; an expired voucher "returns to a status of `requires_payment_method`"):
 * - `awaiting`: `requires_action` (the voucher is issued and payable);
 * - `processing`: `processing` (Stripe is confirming a payment);
 * - `paid`: `succeeded` (`amount_received` is what was taken);
 * - `expired`: `requires_payment_method` after a voucher was issued: a `last_payment_error`, or a
 *   `payment_method` still attached, shows an attempt was made (the voucher expired unpaid);
 * - `canceled`: `canceled`;
 * - `other`: anything else (`requires_confirmation`, `requires_payment_method` before any attempt…).
 */
export type StripeIntentState = 'awaiting' | 'processing' | 'paid' | 'expired' | 'canceled' | 'other';

export interface StripeIntent {
  id: string;
  status: string;
  state: StripeIntentState;
  /** Centavos. */
  amount: Minor;
  amountReceived: Minor;
  currency: string;
  /** `metadata.order_id`: the Cashgate order it was made for. */
  orderId: string | undefined;
  /** Unix seconds. */
  created: number;
  voucher: { number: string; expiresAfter: number; hostedVoucherUrl: string } | undefined;
  lastError: string | undefined;
}

export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: unknown };
}

/** One call as it happened (`code`: `ok`, Stripe's `error.code` or `error.type`, `http-<status>`, `timeout`, `network`). */
export type StripeExchange = ProviderExchange<StripeOperation>;

export interface StripeCalled<T> {
  value: T;
  exchanges: StripeExchange[];
}

/**
 * What a failed call means:
 * - `invalid`: Stripe refused the request for what it is (400, 402, 403, a 404 other than
 *   `resource_missing`, an `idempotency_error`; a 401 with the code `authentication_error`):
 *   another attempt would not help;
 * - `not-found`: 404 `resource_missing`;
 * - `busy`: 429, 503, or 409 (another request with the same Idempotency-Key is in progress):
 *   nothing was done, try later;
 * - `network`: never sent (refused connection, unknown host, TLS);
 * - `unknown`: a timeout, a reset, another 5xx, an answer that is not Stripe's: Stripe may have
 *   acted; the same Idempotency-Key replays its answer.
 */
export type StripeErrorKind = 'invalid' | 'not-found' | 'busy' | 'network' | 'unknown';

export class StripeError extends Error {
  readonly #exchange: StripeExchange;
  /** Stripe's `error.type` (`invalid_request_error`, `card_error`, `idempotency_error`, `api_error`). */
  readonly type: string | undefined;
  /** Stripe's `error.param`: the parameter refused. */
  readonly param: string | undefined;
  /** Stripe's `error.message` (or what failed when Stripe did not answer). */
  readonly stripeMessage: string;

  constructor(
    readonly kind: StripeErrorKind,
    readonly code: string,
    message: string,
    exchange: StripeExchange,
    details: { type?: string | undefined; param?: string | undefined } = {},
  ) {
    super(`stripe ${exchange.operation}: ${code} ${message}`);
    this.name = 'StripeError';
    this.#exchange = exchange;
    this.type = details.type;
    this.param = details.param;
    this.stripeMessage = message;
  }

  get httpStatus(): number | null {
    return this.#exchange.httpStatus;
  }

  /** The call as sent and answered (for the order's redacted rail messages). */
  get exchange(): StripeExchange {
    return this.#exchange;
  }
}

/** What a non-2xx answer means, from its HTTP status and Stripe's `error.type`/`error.code`. */
export function stripeErrorKind(status: number, code: string | undefined): StripeErrorKind {
  if (status === 404) return code === 'resource_missing' ? 'not-found' : 'invalid';
  if (status === 409 || status === 429 || status === 503) return 'busy';
  if (status >= 400 && status < 500) return 'invalid';
  return 'unknown';
}

/** Stripe's bracket notation: `{a: {b: 1}, c: ['x']}` → `a[b]=1&c[]=x`. */
export function formEncode(value: Record<string, unknown>): string {
  const pairs: [string, string][] = [];
  const walk = (prefix: string, v: unknown) => {
    if (v === undefined || v === null) return;
    if (Array.isArray(v)) v.forEach((item) => walk(`${prefix}[]`, item));
    else if (typeof v === 'object') for (const [k, inner] of Object.entries(v)) walk(`${prefix}[${k}]`, inner);
    else pairs.push([prefix, typeof v === 'string' ? v : JSON.stringify(v)]);
  };
  for (const [k, v] of Object.entries(value)) walk(k, v);
  return new URLSearchParams(pairs).toString();
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' ? (v as Json) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): bigint => (typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : 0n);

/** A PaymentIntent as Stripe answers it, normalised. */
export function intentOf(body: unknown): StripeIntent | undefined {
  const pi = obj(body);
  const id = str(pi?.id);
  if (pi === undefined || id === undefined || pi.object !== 'payment_intent') return undefined;
  const status = str(pi.status) ?? '';
  const details = obj(obj(pi.next_action)?.oxxo_display_details);
  const voucher =
    details === undefined
      ? undefined
      : {
          number: str(details.number) ?? (typeof details.number === 'number' ? String(details.number) : ''),
          expiresAfter: Number(details.expires_after ?? 0),
          hostedVoucherUrl: str(details.hosted_voucher_url) ?? '',
        };
  const lastError = obj(pi.last_payment_error);
  const hadVoucher = lastError !== undefined || str(pi.payment_method) !== undefined;
  const state: StripeIntentState =
    status === 'succeeded'
      ? 'paid'
      : status === 'requires_action'
        ? 'awaiting'
        : status === 'processing'
          ? 'processing'
          : status === 'canceled'
            ? 'canceled'
            : status === 'requires_payment_method' && hadVoucher
              ? 'expired'
              : 'other';
  return {
    id,
    status,
    state,
    amount: int(pi.amount),
    amountReceived: int(pi.amount_received),
    currency: str(pi.currency) ?? '',
    orderId: str(obj(pi.metadata)?.order_id),
    created: Number(pi.created ?? 0),
    voucher,
    lastError: str(lastError?.message) ?? str(lastError?.code),
  };
}

export class StripeClient {
  readonly #dispatcher: Dispatcher;
  readonly #ownAgent: Agent | undefined;
  readonly #record: (called: string, outcome: string, durationMs: number) => void;

  readonly #baseUrl: string;

  constructor(readonly config: StripeConfig) {
    this.#baseUrl = (config.baseUrl ?? STRIPE_BASE_URL).replace(/\/+$/, '');
    const agent =
      config.dispatcher === undefined ? new Agent({ connections: 16, keepAliveTimeout: 10_000 }) : undefined;
    this.#ownAgent = agent;
    this.#dispatcher = config.dispatcher ?? (agent as Agent);
    this.#record = providerCallMetrics(config.registry, {
      prefix: 'cashgate_stripe',
      provider: 'Stripe',
      labels: ['operation', 'outcome'],
      outcomes:
        "ok, Stripe's error code (or type), authentication_error, http-<status>, timeout, reset, network, bad-answer",
    });
  }

  /**
   * One OXXO PaymentIntent, created and confirmed in one `POST /v1/payment_intents`: Stripe answers
   * it `requires_action` with its voucher. `amount` in centavos; `expiresAfterDays` 1 to 7 (the
   * voucher expires at 23:59 Mexico City time on that calendar day); the Idempotency-Key makes a
   * repeated attempt get Stripe's first answer.
   */
  async createOxxoIntent(req: {
    /** Centavos. */
    amount: Minor;
    idempotencyKey: string;
    expiresAfterDays: number;
    name: string;
    email: string;
    orderId: string;
    description?: string;
  }): Promise<StripeCalled<StripeIntent>> {
    const form = {
      amount: req.amount.toString(),
      currency: 'mxn',
      payment_method_types: ['oxxo'],
      confirm: 'true',
      payment_method_data: { type: 'oxxo', billing_details: { name: req.name, email: req.email } },
      payment_method_options: { oxxo: { expires_after_days: String(req.expiresAfterDays) } },
      metadata: { order_id: req.orderId },
      // Stripe publishes no length for `description`; 1000 characters is Cashgate's own cap.
      ...(req.description !== undefined && { description: req.description.slice(0, 1000) }),
    };
    return this.#intent('create', 'POST', '/v1/payment_intents', form, req.idempotencyKey);
  }

  retrieve(id: string): Promise<StripeCalled<StripeIntent>> {
    return this.#intent('retrieve', 'GET', `/v1/payment_intents/${encodeURIComponent(id)}`);
  }

  cancel(id: string): Promise<StripeCalled<StripeIntent>> {
    return this.#intent('cancel', 'POST', `/v1/payment_intents/${encodeURIComponent(id)}/cancel`, {});
  }

  /** Every PaymentIntent created between the two instants (Unix seconds, both included), every page. */
  async listCreatedBetween(fromSec: number, toSec: number): Promise<StripeCalled<StripeIntent[]>> {
    const exchanges: StripeExchange[] = [];
    const intents: StripeIntent[] = [];
    let after: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const query = formEncode({
        created: { gte: String(fromSec), lte: String(toSec) },
        limit: '100',
        ...(after !== undefined && { starting_after: after }),
      });
      const body = obj(
        await this.#call('list', 'GET', `/v1/payment_intents?${query}`, undefined, undefined, exchanges),
      );
      if (body?.object !== 'list' || !Array.isArray(body.data))
        throw this.#badAnswer(exchanges, 'the answer is not a list');
      const data = body.data as unknown[];
      for (const item of data) {
        const intent = intentOf(item);
        if (intent !== undefined) intents.push(intent);
      }
      if (body.has_more !== true || data.length === 0) break;
      after = str(obj(data[data.length - 1])?.id);
    }
    return { value: intents, exchanges };
  }

  async close(): Promise<void> {
    await this.#ownAgent?.close();
  }

  async #intent(
    operation: StripeOperation,
    method: 'GET' | 'POST',
    path: string,
    form?: Record<string, unknown>,
    idempotencyKey?: string,
  ): Promise<StripeCalled<StripeIntent>> {
    const exchanges: StripeExchange[] = [];
    const body = await this.#call(operation, method, path, form, idempotencyKey, exchanges);
    const intent = intentOf(body);
    if (intent === undefined) throw this.#badAnswer(exchanges, 'the answer is not a PaymentIntent');
    return { value: intent, exchanges };
  }

  #badAnswer(exchanges: StripeExchange[], message: string): StripeError {
    const last = exchanges[exchanges.length - 1] as StripeExchange;
    last.code = 'bad-answer';
    return new StripeError('unknown', 'bad-answer', message, last);
  }

  async #call(
    operation: StripeOperation,
    method: 'GET' | 'POST',
    path: string,
    form: Record<string, unknown> | undefined,
    idempotencyKey: string | undefined,
    exchanges: StripeExchange[],
  ): Promise<unknown> {
    const started = performance.now();
    const [bare, query] = path.split('?') as [string, string | undefined];
    const exchange: StripeExchange = {
      operation,
      method,
      path: bare,
      request: form ?? (query === undefined ? null : Object.fromEntries(new URLSearchParams(query))),
      httpStatus: null,
      response: null,
      code: 'network',
      durationMs: 0,
    };
    exchanges.push(exchange);
    const done = (code: string) => {
      exchange.code = code;
      exchange.durationMs = Math.round(performance.now() - started);
      this.#record(operation, code, exchange.durationMs);
    };
    let status: number;
    let text: string;
    try {
      const answer = await request(`${this.#baseUrl}${path}`, {
        method,
        dispatcher: this.#dispatcher,
        headersTimeout: this.config.timeoutMs,
        bodyTimeout: this.config.timeoutMs,
        headers: {
          authorization: `Bearer ${this.config.secretKey}`,
          'stripe-version': STRIPE_API_VERSION,
          ...(form !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
          ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
        },
        ...(form !== undefined && { body: formEncode(form) }),
      });
      status = answer.statusCode;
      text = await answer.body.text();
    } catch (error) {
      const network = isConnectError(error);
      const timeout =
        error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError;
      done(network ? 'network' : timeout ? 'timeout' : 'reset');
      throw new StripeError(
        network ? 'network' : 'unknown',
        exchange.code,
        error instanceof Error ? error.message : String(error),
        exchange,
      );
    }
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text
    }
    exchange.httpStatus = status;
    exchange.response = body;
    if (status >= 200 && status < 300) {
      done('ok');
      return body;
    }
    const error = obj(obj(body)?.error);
    const type = str(error?.type);
    const code = status === 401 ? 'authentication_error' : (str(error?.code) ?? type ?? `http-${status}`);
    done(code);
    const message = str(error?.message) ?? `HTTP ${status}`;
    throw new StripeError(stripeErrorKind(status, str(error?.code)), code, message, exchange, {
      type,
      param: str(error?.param),
    });
  }
}

/** The `Stripe-Signature` header Stripe would send for `body` at `tSec` (for local providers and tests). */
export function signStripePayload(body: string, secret: string, tSec: number): string {
  const v1 = createHmac('sha256', secret).update(`${tSec}.${body}`).digest('hex');
  return `t=${tSec},v1=${v1}`;
}

/**
 * Checks a webhook's `Stripe-Signature` (any `v1` HMAC-SHA256 of `t.body` under the endpoint's
 * secret, compared in constant time, `t` within `toleranceSec` of now) and parses the event.
 */
export function verifyStripeSignature(
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  nowSec: number,
  toleranceSec = 300,
):
  | { ok: true; event: StripeEvent }
  | { ok: false; reason: 'missing' | 'malformed' | 'timestamp' | 'signature' | 'body' } {
  if (header === undefined || header === '') return { ok: false, reason: 'missing' };
  const parts = header.split(',').map((p) => p.trim().split('='));
  const stamp = parts.find(([k]) => k === 't')?.[1] ?? '';
  const t = /^\d{1,12}$/.test(stamp) ? Number(stamp) : Number.NaN;
  const signatures = parts.filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v));
  if (!Number.isSafeInteger(t) || signatures.length === 0) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowSec - t) > toleranceSec) return { ok: false, reason: 'timestamp' };
  const text = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const expected = createHmac('sha256', secret).update(`${t}.${text}`).digest();
  const matches = signatures.some(([, v]) => timingSafeEqual(Buffer.from(v ?? '', 'hex'), expected));
  if (!matches) return { ok: false, reason: 'signature' };
  try {
    const event = obj(JSON.parse(text));
    const id = str(event?.id);
    const type = str(event?.type);
    const data = obj(event?.data);
    if (event === undefined || id === undefined || type === undefined || data === undefined)
      return { ok: false, reason: 'body' };
    return { ok: true, event: { id, type, created: Number(event.created ?? 0), data: { object: data.object } } };
  } catch {
    return { ok: false, reason: 'body' };
  }
}
