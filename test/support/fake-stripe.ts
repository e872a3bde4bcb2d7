/**
 * A local fake of Stripe's API as Cashgate uses it for OXXO vouchers, written from Stripe's
 * published documentation (docs/stripe-oxxo.md lists it):
 * - a Bearer secret key (401 otherwise), form-encoded bodies in bracket notation;
 * - `POST /v1/payment_intents` created and confirmed with `oxxo`: `requires_action` with
 *   `next_action.oxxo_display_details` (`expires_after` at 23:59:59 Mexico City time on the day
 *   `expires_after_days` calendar days after creation, computed here with Intl; a 20-digit
 *   `number`; a `hosted_voucher_url` this server serves); `GET /v1/payment_intents/:id`;
 *   `POST …/:id/cancel`; `GET /v1/payment_intents` (created[gte]/[lte], limit ≤ 100,
 *   starting_after, has_more, newest first); `GET /v1/events/:id`;
 * - Stripe's `{error:{type,code,param,message}}` bodies and OXXO's limits (MXN 10.00–10,000.00);
 * - `Idempotency-Key` on POSTs: the first answer replayed exactly with `Idempotent-Replayed: true`
 *   once the endpoint ran (a request refused by validation saves nothing); other parameters with
 *   the same key are a 400 `idempotency_error`; the same key while its first request is still
 *   running is a 409;
 * - events (`payment_intent.requires_action` on creation, `.succeeded`, `.payment_failed`,
 *   `.canceled`) signed with `Stripe-Signature` (signed anew for each attempt) and posted to
 *   `webhookUrl`, retried every `webhookRetryMs` until a 2xx, up to `maxWebhookTries` attempts;
 *   optionally twice, not at all, or held and released out of order;
 * - Stripe's test-mode emails: a local part ending in `succeed_immediately` is paid at once,
 *   `expire_immediately` expires at once, `expire_with_delay` expires after `expireWithDelayMs`
 *   (3 minutes at Stripe), `fill_never` is never paid. Other vouchers wait for the test to `pay`
 *   or `expire` them.
 * Tests play the store (`pay`) and the clock (`expire`) and inject faults. Plain HTTP on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signStripePayload, STRIPE_API_VERSION } from '../../src/rails/stripe/client.js';

export const STRIPE_TEST = { secretKey: 'sk_test_cashgate', webhookSecret: 'whsec_cashgate_test' } as const;

/** OXXO's amounts in centavos (MXN 10.00 to 10,000.00). */
export const OXXO_MIN_CENTAVOS = 1_000;
export const OXXO_MAX_CENTAVOS = 1_000_000;

export type FakeStripeOperation = 'create' | 'retrieve' | 'cancel' | 'list' | 'event';
export type FakeStripeFault =
  'server-error' | 'unavailable' | 'rate-limited' | 'timeout-after' | 'timeout-before' | 'reset';
export type FakeStripeNotify = 'send' | 'skip' | 'twice';

export interface FakeStripeRequest {
  operation: FakeStripeOperation | 'voucher' | 'unknown';
  method: string;
  path: string;
  headers: Record<string, string>;
  /** the form (or query) decoded into nested objects (bracket notation) */
  body: any;
  /** 0 while unanswered (or never answered) */
  status: number;
  /** answered from the Idempotency-Key's first answer */
  replayed: boolean;
  at: number;
}

export interface FakeStripeEvent {
  id: string;
  type: string;
  /** the PaymentIntent it is about */
  intent: string;
  /** HTTP status of each delivery attempt (0: no answer) */
  deliveries: number[];
  /** the JSON body posted, exactly as signed */
  payload: string;
}

export interface FakeStripeOptions {
  secretKey?: string;
  webhookSecret?: string;
  /** between delivery attempts of one event (default 100 ms) */
  webhookRetryMs?: number;
  /** attempts per delivery of one event (default 10) */
  maxWebhookTries?: number;
  /** the fake's clock in ms (default Date.now): `created`, `expires_after`, event times and signatures */
  now?: () => number;
  /** when an `expire_with_delay` voucher expires (default 180 000 ms, as at Stripe) */
  expireWithDelayMs?: number;
}

export interface FakeStripe {
  url: string;
  /** where events are posted (none while undefined) */
  webhookUrl: string | undefined;
  readonly requests: FakeStripeRequest[];
  /** PaymentIntents as Stripe answers them, by id */
  readonly intents: Map<string, any>;
  readonly events: FakeStripeEvent[];
  failNext(operation: FakeStripeOperation, fault: FakeStripeFault, times?: number): void;
  delayNext(operation: FakeStripeOperation, ms: number, times?: number): void;
  /** The payer pays the voucher at the store: succeeded, amount_received, payment_intent.succeeded ('skip': lost; 'twice': delivered twice). */
  pay(id: string, options?: { notify?: FakeStripeNotify }): void;
  /** The voucher's day passes unpaid: requires_payment_method with last_payment_error, payment_intent.payment_failed. */
  expire(id: string, options?: { notify?: FakeStripeNotify }): void;
  /** From now on events wait (in the order emitted) instead of being posted. */
  holdWebhooks(): void;
  /** Posts the held events one after the other, in the order emitted or reversed (out of order), and stops holding. */
  releaseWebhooks(order?: 'emitted' | 'reversed'): void;
  /** Posts an event again (as Stripe's "resend"). */
  redeliver(eventId: string): void;
  /** Resolves once no delivery (and no immediate test-mode action) is under way. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const fake = new FakeStripeServer({
    secretKey: options.secretKey ?? STRIPE_TEST.secretKey,
    webhookSecret: options.webhookSecret ?? STRIPE_TEST.webhookSecret,
    retryMs: options.webhookRetryMs ?? 100,
    maxTries: options.maxWebhookTries ?? 10,
    now: options.now ?? Date.now,
    expireWithDelayMs: options.expireWithDelayMs ?? 180_000,
  });
  await fake.listen();
  return fake;
}

/** The environment of a gateway on this local Stripe. */
export function stripeGatewayEnv(fake: Pick<FakeStripe, 'url'>, port: number): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MEXICO_OXXO_RAIL: 'stripe',
    STRIPE_SECRET_KEY: STRIPE_TEST.secretKey,
    STRIPE_WEBHOOK_SECRET: STRIPE_TEST.webhookSecret,
    STRIPE_BASE_URL: fake.url,
  };
}

/**
 * 23:59:59 in America/Mexico_City on the calendar day `days` days after the Mexico City day of
 * `ms`, as Unix seconds. Written here with Intl, apart from the gateway's own helper, so that the
 * two are checked against each other.
 */
export function oxxoExpiresAfter(ms: number, days: number): number {
  const zone = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Mexico_City',
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const wallOf = (instant: number): number => {
    const part = Object.fromEntries(zone.formatToParts(instant).map((p) => [p.type, Number(p.value)]));
    return Date.UTC(part.year ?? 0, (part.month ?? 1) - 1, part.day ?? 1, part.hour, part.minute, part.second);
  };
  const today = new Date(wallOf(ms));
  const target = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + days, 23, 59, 59);
  // The instant whose Mexico City wall clock reads `target`: correct by the zone's offset, twice
  // (once more in case the first guess and the answer straddle an offset change).
  let instant = target;
  for (let i = 0; i < 2; i++) instant += target - wallOf(instant);
  return Math.floor(instant / 1000);
}

// ---------------------------------------------------------------------------------------------------------------

/** `a[b][c]=1&d[]=x` → `{a:{b:{c:'1'}}, d:['x']}`. */
function decodeForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: any = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const nextIsArray = path[i + 1] === '';
      if (part === '') {
        if (last) node.push(value);
        return;
      }
      if (last) node[part] = value;
      else node = node[part] ??= nextIsArray ? [] : {};
    });
  }
  return root;
}

interface Answer {
  status: number;
  body: unknown;
  /** whether the endpoint ran (then an Idempotency-Key keeps the answer) */
  ran: boolean;
}

/** Stripe's error body; `ran: false` for a refusal by validation (nothing is kept for its key). */
function refuse(status: number, type: string, message: string, extra: { code?: string; param?: string } = {}): Answer {
  return { status, body: { error: { type, message, ...extra } }, ran: false };
}

const invalid = (message: string, code: string, param?: string): Answer =>
  refuse(400, 'invalid_request_error', message, { code, ...(param !== undefined && { param }) });

const localPart = (email: string): string => email.split('@')[0] ?? '';

class FakeStripeServer implements FakeStripe {
  url = '';
  webhookUrl: string | undefined;
  readonly requests: FakeStripeRequest[] = [];
  readonly intents = new Map<string, any>();
  readonly events: FakeStripeEvent[] = [];
  readonly #eventObjects = new Map<string, Record<string, unknown>>();
  /** what Stripe keeps of the payment method (the billing email decides test-mode behaviour) */
  readonly #billing = new Map<string, { name: string; email: string; paymentMethod: string }>();
  readonly #faults = new Map<FakeStripeOperation, FakeStripeFault[]>();
  readonly #delays = new Map<FakeStripeOperation, number[]>();
  readonly #idempotency = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  readonly #running = new Set<string>();
  readonly #pending = new Set<Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #held = new Set<ServerResponse>();
  #holding: { record: FakeStripeEvent; times: number }[] | undefined;
  #server: Server | undefined;
  #closed = false;

  constructor(
    private readonly config: {
      secretKey: string;
      webhookSecret: string;
      retryMs: number;
      maxTries: number;
      now: () => number;
      expireWithDelayMs: number;
    },
  ) {}

  async listen(): Promise<void> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  failNext(operation: FakeStripeOperation, fault: FakeStripeFault, times = 1): void {
    this.#faults.set(operation, [...(this.#faults.get(operation) ?? []), ...Array<FakeStripeFault>(times).fill(fault)]);
  }

  delayNext(operation: FakeStripeOperation, ms: number, times = 1): void {
    this.#delays.set(operation, [...(this.#delays.get(operation) ?? []), ...Array<number>(times).fill(ms)]);
  }

  pay(id: string, options: { notify?: FakeStripeNotify } = {}): void {
    const pi = this.#intent(id);
    if (pi.status !== 'requires_action') throw new Error(`fake Stripe: ${id} is ${pi.status}, not payable`);
    if (localPart(this.#billing.get(id)?.email ?? '').endsWith('fill_never'))
      throw new Error(`fake Stripe: ${id}'s test email (fill_never) makes its voucher expire unpaid`);
    Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, next_action: null });
    this.#emit('payment_intent.succeeded', pi, options.notify ?? 'send');
  }

  expire(id: string, options: { notify?: FakeStripeNotify } = {}): void {
    const pi = this.#intent(id);
    if (pi.status !== 'requires_action') throw new Error(`fake Stripe: ${id} is ${pi.status}, not awaiting payment`);
    const billing = this.#billing.get(id);
    Object.assign(pi, {
      status: 'requires_payment_method',
      next_action: null,
      payment_method: null,
      last_payment_error: {
        type: 'invalid_request_error',
        code: 'payment_intent_payment_attempt_expired',
        message:
          'The latest attempt to complete the payment has expired. Provide a new payment method to attempt to fulfill this PaymentIntent again.',
        payment_method: {
          id: billing?.paymentMethod ?? null,
          object: 'payment_method',
          type: 'oxxo',
          billing_details: { name: billing?.name ?? null, email: billing?.email ?? null },
        },
      },
    });
    this.#emit('payment_intent.payment_failed', pi, options.notify ?? 'send');
  }

  holdWebhooks(): void {
    this.#holding ??= [];
  }

  releaseWebhooks(order: 'emitted' | 'reversed' = 'emitted'): void {
    const held = this.#holding ?? [];
    this.#holding = undefined;
    if (order === 'reversed') held.reverse();
    this.#track(
      (async () => {
        for (const { record, times } of held) for (let i = 0; i < times; i++) await this.#deliver(record);
      })(),
    );
  }

  redeliver(eventId: string): void {
    const record = this.events.find((e) => e.id === eventId);
    if (record === undefined) throw new Error(`fake Stripe: no event ${eventId}`);
    this.#track(this.#deliver(record));
  }

  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    for (const res of this.#held) res.destroy();
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  /** Read afresh (a delivery awaits between reads while `close()` may run). */
  #isClosed(): boolean {
    return this.#closed;
  }

  #intent(id: string): any {
    const pi = this.intents.get(id);
    if (pi === undefined) throw new Error(`fake Stripe: no PaymentIntent ${id}`);
    return pi;
  }

  #track(work: Promise<void>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }

  /** Runs `action` after `ms` (not on a closed fake); `idle()` waits for it only when `ms` is 0. */
  #later(ms: number, action: () => void): void {
    const work = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        if (!this.#closed) action();
        resolve();
      }, ms);
      timer.unref();
      this.#timers.add(timer);
    });
    if (ms === 0) this.#track(work);
  }

  // ---- events

  #emit(type: string, pi: any, notify: FakeStripeNotify, request?: { id: string; idempotencyKey?: string }): void {
    const event = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: Math.floor(this.config.now() / 1000),
      data: { object: structuredClone(pi) as unknown },
      livemode: false,
      pending_webhooks: this.webhookUrl === undefined ? 0 : 1,
      request: { id: request?.id ?? null, idempotency_key: request?.idempotencyKey ?? null },
      type,
    };
    const record: FakeStripeEvent = {
      id: event.id,
      type,
      intent: String(pi.id),
      deliveries: [],
      payload: JSON.stringify(event),
    };
    this.events.push(record);
    this.#eventObjects.set(event.id, event);
    if (notify === 'skip') return;
    const times = notify === 'twice' ? 2 : 1;
    if (this.#holding !== undefined) return void this.#holding.push({ record, times });
    this.#track(
      (async () => {
        for (let i = 0; i < times; i++) await this.#deliver(record);
      })(),
    );
  }

  async #deliver(record: FakeStripeEvent): Promise<void> {
    for (let tries = 0; tries < this.config.maxTries && !this.#closed; tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, this.config.retryMs));
      const url = this.webhookUrl;
      if (url === undefined || this.#isClosed()) return;
      let status = 0;
      try {
        const answer = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
            'stripe-signature': signStripePayload(
              record.payload,
              this.config.webhookSecret,
              Math.floor(this.config.now() / 1000),
            ),
          },
          body: record.payload,
        });
        await answer.arrayBuffer();
        status = answer.status;
      } catch {
        status = 0;
      }
      record.deliveries.push(status);
      if (status >= 200 && status < 300) return;
    }
  }

  // ---- HTTP

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stripe.local');
    const method = req.method ?? 'GET';
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const body = method === 'GET' ? decodeForm(url.search.slice(1)) : decodeForm(text);
    const parts = url.pathname.split('/').filter((p) => p !== '');
    const operation = this.#route(method, parts);
    const logged: FakeStripeRequest = {
      operation,
      method,
      path: url.pathname + url.search,
      headers,
      body,
      status: 0,
      replayed: false,
      at: this.config.now(),
    };
    this.requests.push(logged);
    const send = (status: number, payload: unknown, extra: Record<string, string> = {}) => {
      logged.status = status;
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': `req_${randomBytes(7).toString('hex')}`,
        'stripe-version': STRIPE_API_VERSION,
        ...extra,
      });
      res.end(JSON.stringify(payload, null, 2));
    };
    if (operation === 'voucher') return this.#voucherPage(parts[2] ?? '', logged, res);
    const key = method === 'POST' ? headers['idempotency-key'] : undefined;
    if (key !== undefined && this.#running.has(key))
      return send(
        409,
        refuse(
          409,
          'idempotency_error',
          `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
        ).body,
      );
    if (key !== undefined) this.#running.add(key);
    try {
      if (operation !== 'unknown') {
        const delay = this.#delays.get(operation)?.shift();
        if (delay !== undefined) await new Promise((r) => setTimeout(r, delay));
        const fault = this.#faults.get(operation)?.shift();
        if (fault === 'reset') return void req.socket.destroy();
        if (fault === 'timeout-before') return void this.#held.add(res);
        if (fault === 'server-error')
          return send(500, refuse(500, 'api_error', 'An unknown error occurred on our side.').body);
        if (fault === 'unavailable')
          return send(503, refuse(503, 'api_error', 'The service is temporarily unavailable.').body);
        if (fault === 'rate-limited')
          return send(
            429,
            refuse(429, 'invalid_request_error', 'Request rate limit exceeded. Try again later.', {
              code: 'rate_limit',
            }).body,
          );
        if (fault === 'timeout-after') {
          if (this.#authorized(headers)) this.#execute(operation, method, url.pathname, parts, body, headers, key);
          return void this.#held.add(res);
        }
      }
      if (!this.#authorized(headers)) {
        const given = (headers.authorization ?? '').replace(/^Bearer\s+/i, '');
        return send(
          401,
          refuse(
            401,
            'invalid_request_error',
            given === ''
              ? "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."
              : `Invalid API Key provided: ${given.slice(0, 8)}${'*'.repeat(Math.max(0, given.length - 12))}${given.slice(-4)}`,
          ).body,
        );
      }
      if (operation === 'unknown')
        return send(
          404,
          refuse(
            404,
            'invalid_request_error',
            `Unrecognized request URL (${method}: ${url.pathname}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
          ).body,
        );
      const answer = this.#execute(operation, method, url.pathname, parts, body, headers, key);
      logged.replayed = answer.replayed;
      send(answer.status, answer.body, answer.replayed ? { 'idempotent-replayed': 'true' } : {});
    } finally {
      if (key !== undefined) this.#running.delete(key);
    }
  }

  #authorized(headers: Record<string, string>): boolean {
    return headers.authorization === `Bearer ${this.config.secretKey}`;
  }

  #route(method: string, parts: string[]): FakeStripeRequest['operation'] {
    if (method === 'GET' && parts[0] === 'oxxo' && parts[1] === 'voucher' && parts.length === 3) return 'voucher';
    if (parts[0] !== 'v1') return 'unknown';
    if (parts[1] === 'events' && parts.length === 3 && method === 'GET') return 'event';
    if (parts[1] !== 'payment_intents') return 'unknown';
    if (parts.length === 2) return method === 'POST' ? 'create' : method === 'GET' ? 'list' : 'unknown';
    if (parts.length === 3 && method === 'GET') return 'retrieve';
    if (parts.length === 4 && parts[3] === 'cancel' && method === 'POST') return 'cancel';
    return 'unknown';
  }

  #voucherPage(id: string, logged: FakeStripeRequest, res: ServerResponse): void {
    const pi = this.intents.get(id);
    const details = pi?.next_action?.oxxo_display_details;
    logged.status = details === undefined ? 404 : 200;
    res.writeHead(logged.status, { 'content-type': 'text/html; charset=utf-8' });
    if (details === undefined) return void res.end('<!doctype html><title>OXXO</title><p>Voucher not found</p>');
    const amount = `${Math.floor(pi.amount / 100)}.${String(pi.amount % 100).padStart(2, '0')}`;
    res.end(
      `<!doctype html><html lang="es"><title>OXXO Pay</title><h1>OXXO Pay</h1>` +
        `<p>Monto: $${amount} MXN</p><p>Referencia: <strong>${String(details.number)}</strong></p>` +
        `<p>Vence: ${new Date(details.expires_after * 1000).toISOString()}</p></html>`,
    );
  }

  /** An authorized request to a known endpoint, with its Idempotency-Key's rules. */
  #execute(
    operation: FakeStripeOperation,
    method: string,
    path: string,
    parts: string[],
    body: Record<string, any>,
    headers: Record<string, string>,
    key: string | undefined,
  ): { status: number; body: unknown; replayed: boolean } {
    const fingerprint = `${method} ${path} ${JSON.stringify(body)}`;
    const earlier = key === undefined ? undefined : this.#idempotency.get(key);
    if (earlier !== undefined) {
      if (earlier.fingerprint !== fingerprint)
        return {
          ...refuse(
            400,
            'idempotency_error',
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key ?? ''}' if you meant to execute a different request.`,
          ),
          replayed: false,
        };
      return { status: earlier.status, body: earlier.body, replayed: true };
    }
    const requestId = `req_${randomBytes(7).toString('hex')}`;
    const answer = this.#perform(operation, parts, body, {
      id: requestId,
      ...(key !== undefined && { idempotencyKey: key }),
    });
    if (key !== undefined && answer.ran)
      this.#idempotency.set(key, { fingerprint, status: answer.status, body: answer.body });
    return { status: answer.status, body: answer.body, replayed: false };
  }

  #perform(
    operation: FakeStripeOperation,
    parts: string[],
    body: Record<string, any>,
    request: { id: string; idempotencyKey?: string },
  ): Answer {
    if (operation === 'create') return this.#create(body, request);
    if (operation === 'list') return this.#list(body);
    if (operation === 'event') {
      const event = this.#eventObjects.get(parts[2] ?? '');
      return event === undefined
        ? refuse(404, 'invalid_request_error', `No such event: '${parts[2] ?? ''}'`, {
            code: 'resource_missing',
            param: 'id',
          })
        : { status: 200, body: event, ran: true };
    }
    const pi = this.intents.get(parts[2] ?? '');
    if (pi === undefined)
      return refuse(404, 'invalid_request_error', `No such payment_intent: '${parts[2] ?? ''}'`, {
        code: 'resource_missing',
        param: 'intent',
      });
    if (operation === 'cancel') {
      if (pi.status === 'succeeded' || pi.status === 'canceled')
        return {
          ...refuse(
            400,
            'invalid_request_error',
            `You cannot cancel this PaymentIntent because it has a status of ${String(pi.status)}. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action, processing.`,
            { code: 'payment_intent_unexpected_state' },
          ),
          ran: true,
        };
      const reason = body.cancellation_reason;
      Object.assign(pi, {
        status: 'canceled',
        next_action: null,
        canceled_at: Math.floor(this.config.now() / 1000),
        cancellation_reason: typeof reason === 'string' ? reason : null,
      });
      this.#emit('payment_intent.canceled', pi, 'send', request);
    }
    return { status: 200, body: structuredClone(pi), ran: true };
  }

  #list(query: Record<string, any>): Answer {
    const bound = (name: 'gte' | 'lte' | 'gt' | 'lt') => {
      const v = query.created?.[name];
      return v === undefined ? undefined : /^\d+$/.test(String(v)) ? Number(v) : Number.NaN;
    };
    const created = { gte: bound('gte'), lte: bound('lte'), gt: bound('gt'), lt: bound('lt') };
    for (const [name, v] of Object.entries(created))
      if (Number.isNaN(v))
        return invalid(
          `Invalid integer: ${String(query.created[name])}`,
          'parameter_invalid_integer',
          `created[${name}]`,
        );
    const limit = query.limit === undefined ? 10 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return invalid('This value must be between 1 and 100.', 'parameter_invalid_integer', 'limit');
    const all = [...this.intents.values()]
      .filter(
        (pi) =>
          (created.gte === undefined || pi.created >= created.gte) &&
          (created.lte === undefined || pi.created <= created.lte) &&
          (created.gt === undefined || pi.created > created.gt) &&
          (created.lt === undefined || pi.created < created.lt),
      )
      .reverse(); // newest first (insertion order, so ties in `created` stay stable)
    let start = 0;
    if (query.starting_after !== undefined) {
      const at = all.findIndex((pi) => pi.id === query.starting_after);
      if (at < 0)
        return invalid(
          `No such payment_intent: '${String(query.starting_after)}'`,
          'resource_missing',
          'starting_after',
        );
      start = at + 1;
    }
    const page = all.slice(start, start + limit).map((pi) => structuredClone(pi) as unknown);
    return {
      status: 200,
      body: { object: 'list', url: '/v1/payment_intents', has_more: start + limit < all.length, data: page },
      ran: true,
    };
  }

  #create(body: Record<string, any>, request: { id: string; idempotencyKey?: string }): Answer {
    if (body.amount === undefined) return invalid('Missing required param: amount.', 'parameter_missing', 'amount');
    if (!/^\d+$/.test(String(body.amount)))
      return invalid(`Invalid integer: ${String(body.amount)}`, 'parameter_invalid_integer', 'amount');
    const amount = Number(body.amount);
    if (body.currency === undefined)
      return invalid('Missing required param: currency.', 'parameter_missing', 'currency');
    const types: unknown[] = Array.isArray(body.payment_method_types) ? body.payment_method_types : [];
    if (!types.includes('oxxo') || body.payment_method_data?.type !== 'oxxo')
      return invalid(
        'This fake Stripe only creates OXXO PaymentIntents: payment_method_types[] and payment_method_data[type] must be oxxo.',
        'parameter_invalid_empty',
        'payment_method_types',
      );
    if (body.currency !== 'mxn')
      return invalid(
        `The currency provided (${String(body.currency)}) is invalid. Payments with oxxo support the following currencies: mxn.`,
        'payment_intent_invalid_parameter',
        'currency',
      );
    if (amount < OXXO_MIN_CENTAVOS) return invalid('Amount must be at least $10.00 mxn', 'amount_too_small', 'amount');
    if (amount > OXXO_MAX_CENTAVOS)
      return invalid('Amount must be no more than $10,000.00 mxn', 'amount_too_large', 'amount');
    const rawDays = body.payment_method_options?.oxxo?.expires_after_days;
    const days = rawDays === undefined ? 3 : /^\d+$/.test(String(rawDays)) ? Number(rawDays) : Number.NaN;
    if (!Number.isInteger(days) || days < 1 || days > 7)
      return invalid(
        'expires_after_days must be an integer between 1 and 7.',
        'parameter_invalid_integer',
        'payment_method_options[oxxo][expires_after_days]',
      );
    const billing = body.payment_method_data?.billing_details ?? {};
    if (typeof billing.name !== 'string' || billing.name.trim().length < 2)
      return invalid(
        'Missing required param: payment_method_data[billing_details][name].',
        'parameter_missing',
        'payment_method_data[billing_details][name]',
      );
    if (typeof billing.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(billing.email))
      return invalid(
        'Missing required param: payment_method_data[billing_details][email].',
        'parameter_missing',
        'payment_method_data[billing_details][email]',
      );
    const id = `pi_${randomBytes(12).toString('hex')}`;
    const now = this.config.now();
    const confirmed = body.confirm === 'true';
    const email = localPart(billing.email);
    const expiresAfter = email.endsWith('expire_immediately')
      ? Math.floor(now / 1000)
      : email.endsWith('expire_with_delay')
        ? Math.floor(now / 1000) + Math.round(this.config.expireWithDelayMs / 1000)
        : oxxoExpiresAfter(now, days);
    const number = BigInt(`0x${randomBytes(8).toString('hex')}`)
      .toString()
      .padStart(20, '0');
    const paymentMethod = `pm_${randomBytes(12).toString('hex')}`;
    const pi: Record<string, any> = {
      id,
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: 'automatic',
      client_secret: `${id}_secret_${randomBytes(12).toString('hex')}`,
      confirmation_method: 'automatic',
      created: Math.floor(now / 1000),
      currency: 'mxn',
      customer: null,
      description: typeof body.description === 'string' ? body.description : null,
      last_payment_error: null,
      livemode: false,
      metadata: body.metadata ?? {},
      next_action: confirmed
        ? {
            type: 'oxxo_display_details',
            oxxo_display_details: {
              expires_after: expiresAfter,
              hosted_voucher_url: `${this.url}/oxxo/voucher/${id}`,
              number,
            },
          }
        : null,
      payment_method: confirmed ? paymentMethod : null,
      payment_method_options: { oxxo: { expires_after_days: days } },
      payment_method_types: ['oxxo'],
      status: confirmed ? 'requires_action' : 'requires_payment_method',
    };
    this.intents.set(id, pi);
    this.#billing.set(id, { name: billing.name, email: billing.email, paymentMethod });
    if (confirmed) {
      this.#emit('payment_intent.requires_action', pi, 'send', request);
      if (email.endsWith('succeed_immediately')) this.#later(0, () => this.#settle(id, 'pay'));
      else if (email.endsWith('expire_immediately')) this.#later(0, () => this.#settle(id, 'expire'));
      else if (email.endsWith('expire_with_delay'))
        this.#later(this.config.expireWithDelayMs, () => this.#settle(id, 'expire'));
    }
    return { status: 200, body: structuredClone(pi), ran: true };
  }

  /** A test-mode email's outcome, unless the test already settled the intent. */
  #settle(id: string, how: 'pay' | 'expire'): void {
    if (this.intents.get(id)?.status !== 'requires_action') return;
    if (how === 'pay') this.pay(id);
    else this.expire(id);
  }
}
