/**
 * A local fake of Stripe's API as Cashgate uses it for OXXO vouchers, written from Stripe's
 * published documentation (docs/stripe-oxxo.md lists it): a Bearer secret key, form-encoded bodies
 * in bracket notation, `POST /v1/payment_intents` (created and confirmed with `oxxo`: the intent is
 * `requires_action` with `next_action.oxxo_display_details`), `GET /v1/payment_intents/:id`,
 * `POST …/cancel`, `GET /v1/payment_intents` (created[gte]/[lte], limit, starting_after, has_more),
 * `Idempotency-Key` replays (the same key with other parameters is an `idempotency_error`), Stripe's
 * `{error:{type,code,param,message}}` bodies, and events signed with `Stripe-Signature` posted to
 * `webhookUrl`, retried until a 2xx, optionally twice or out of order. Tests play the store (`pay`)
 * and the clock (`expire`) and inject faults. Plain HTTP on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mexicoCityEndOfDay } from '../../src/mexico/collections.js';
import { signStripePayload } from '../../src/rails/stripe/client.js';

export const STRIPE_TEST = { secretKey: 'sk_test_cashgate', webhookSecret: 'whsec_cashgate_test' } as const;

export type FakeStripeOperation = 'create' | 'retrieve' | 'cancel' | 'list';
export type FakeStripeFault =
  'server-error' | 'unavailable' | 'rate-limited' | 'timeout-after' | 'timeout-before' | 'reset';

export interface FakeStripeRequest {
  operation: FakeStripeOperation | 'unknown';
  method: string;
  path: string;
  headers: Record<string, string>;
  /** the form decoded into nested objects (bracket notation) */
  body: any;
  status: number;
  at: number;
}

export interface FakeStripeEvent {
  id: string;
  type: string;
  /** HTTP status of each delivery attempt (0: none) */
  deliveries: number[];
  payload: string;
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
  /** The payer pays the voucher at the store: succeeded, payment_intent.succeeded posted ('skip': lost; 'twice': delivered twice). */
  pay(id: string, options?: { notify?: 'send' | 'skip' | 'twice' }): void;
  /** The voucher's day passes unpaid: requires_payment_method with last_payment_error, payment_intent.payment_failed posted. */
  expire(id: string, options?: { notify?: 'send' | 'skip' }): void;
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeStripe(
  options: {
    secretKey?: string;
    webhookSecret?: string;
    webhookRetryMs?: number;
    maxWebhookTries?: number;
    now?: () => number;
  } = {},
): Promise<FakeStripe> {
  const fake = new FakeStripeServer(
    options.secretKey ?? STRIPE_TEST.secretKey,
    options.webhookSecret ?? STRIPE_TEST.webhookSecret,
    options.webhookRetryMs ?? 100,
    options.maxWebhookTries ?? 10,
    options.now ?? Date.now,
  );
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

/** A PaymentIntent as Stripe shows it: the fake's own bookkeeping (the billing email) left out. */
const visible = (pi: any): Record<string, unknown> =>
  Object.fromEntries(Object.entries(pi as Record<string, unknown>).filter(([k]) => k !== '__email'));

const stripeError = (status: number, type: string, message: string, code?: string, param?: string) => ({
  status,
  body: { error: { type, message, ...(code !== undefined && { code }), ...(param !== undefined && { param }) } },
});

class FakeStripeServer implements FakeStripe {
  url = '';
  webhookUrl: string | undefined;
  readonly requests: FakeStripeRequest[] = [];
  readonly intents = new Map<string, any>();
  readonly events: FakeStripeEvent[] = [];
  readonly #faults = new Map<FakeStripeOperation, FakeStripeFault[]>();
  readonly #delays = new Map<FakeStripeOperation, number[]>();
  readonly #idempotency = new Map<string, { params: string; status: number; body: unknown }>();
  readonly #pending = new Set<Promise<void>>();
  readonly #held = new Set<ServerResponse>();
  #server: Server | undefined;
  #closed = false;

  constructor(
    private readonly secretKey: string,
    private readonly webhookSecret: string,
    private readonly retryMs: number,
    private readonly maxTries: number,
    private readonly now: () => number,
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

  pay(id: string, options: { notify?: 'send' | 'skip' | 'twice' } = {}): void {
    const pi = this.intents.get(id);
    if (pi === undefined) throw new Error(`fake Stripe: no PaymentIntent ${id}`);
    if (pi.status !== 'requires_action') throw new Error(`fake Stripe: ${id} is ${pi.status}, not payable`);
    if (
      String(pi.__email ?? '')
        .split('@')[0]
        ?.endsWith('fill_never')
    )
      throw new Error(`fake Stripe: ${id}'s test email makes its voucher expire unpaid`);
    Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, next_action: null });
    this.#emit('payment_intent.succeeded', pi, options.notify ?? 'send');
  }

  expire(id: string, options: { notify?: 'send' | 'skip' } = {}): void {
    const pi = this.intents.get(id);
    if (pi === undefined) throw new Error(`fake Stripe: no PaymentIntent ${id}`);
    Object.assign(pi, {
      status: 'requires_payment_method',
      next_action: null,
      last_payment_error: {
        type: 'invalid_request_error',
        code: 'payment_intent_payment_attempt_expired',
        message: 'The OXXO voucher expired.',
      },
    });
    this.#emit('payment_intent.payment_failed', pi, options.notify ?? 'send');
  }

  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const res of this.#held) res.destroy();
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  // ---- events

  #emit(type: string, pi: any, notify: 'send' | 'skip' | 'twice'): void {
    const object = visible(pi);
    const event = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      type,
      created: Math.floor(this.now() / 1000),
      data: { object },
      livemode: false,
    };
    const record: FakeStripeEvent = { id: event.id, type, deliveries: [], payload: JSON.stringify(event) };
    this.events.push(record);
    if (notify === 'skip') return;
    const work = (async () => {
      await this.#deliver(record);
      if (notify === 'twice') await this.#deliver(record);
    })();
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }

  async #deliver(record: FakeStripeEvent): Promise<void> {
    for (let tries = 0; tries < this.maxTries && !this.#closed; tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, this.retryMs));
      const url = this.webhookUrl;
      if (url === undefined) return;
      let status = 0;
      try {
        const answer = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'stripe-signature': signStripePayload(record.payload, this.webhookSecret, Math.floor(this.now() / 1000)),
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
    const operation: FakeStripeOperation | 'unknown' =
      parts[0] === 'v1' && parts[1] === 'payment_intents'
        ? parts.length === 2
          ? method === 'POST'
            ? 'create'
            : 'list'
          : parts.length === 3 && method === 'GET'
            ? 'retrieve'
            : parts[3] === 'cancel'
              ? 'cancel'
              : 'unknown'
        : 'unknown';
    const logged: FakeStripeRequest = {
      operation,
      method,
      path: url.pathname + url.search,
      headers,
      body,
      status: 0,
      at: this.now(),
    };
    this.requests.push(logged);
    const send = (status: number, payload: unknown, extra: Record<string, string> = {}) => {
      logged.status = status;
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': `req_${randomBytes(7).toString('hex')}`,
        ...extra,
      });
      res.end(JSON.stringify(payload));
    };
    if (operation !== 'unknown') {
      const delay = this.#delays.get(operation)?.shift();
      if (delay !== undefined) await new Promise((r) => setTimeout(r, delay));
      const fault = this.#faults.get(operation)?.shift();
      if (fault === 'reset') return void req.socket.destroy();
      if (fault === 'timeout-before') return void this.#held.add(res);
      if (fault === 'server-error') return send(500, stripeError(500, 'api_error', 'An unknown error occurred').body);
      if (fault === 'unavailable') return send(503, stripeError(503, 'api_error', 'Service unavailable').body);
      if (fault === 'rate-limited')
        return send(429, stripeError(429, 'rate_limit_error', 'Too many requests', 'rate_limit').body);
      if (fault === 'timeout-after') {
        this.#perform(operation, parts, body, headers);
        this.#held.add(res);
        return;
      }
    }
    if (url.pathname.startsWith('/voucher/')) {
      logged.status = 200;
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(`<html><body><h1>OXXO Pay</h1><p>${url.pathname.slice(9)}</p></body></html>`);
    }
    if (headers.authorization !== `Bearer ${this.secretKey}`)
      return send(401, stripeError(401, 'invalid_request_error', 'Invalid API Key provided').body);
    if (operation === 'unknown')
      return send(
        404,
        stripeError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${url.pathname})`).body,
      );
    const answer = this.#perform(operation, parts, body, headers);
    send(answer.status, answer.body, answer.replayed ? { 'idempotent-replayed': 'true' } : {});
  }

  #perform(
    operation: FakeStripeOperation,
    parts: string[],
    body: Record<string, any>,
    headers: Record<string, string>,
  ): { status: number; body: unknown; replayed?: boolean } {
    if (operation === 'create') {
      const key = headers['idempotency-key'];
      const params = JSON.stringify(body);
      const earlier = key === undefined ? undefined : this.#idempotency.get(key);
      if (earlier !== undefined) {
        if (earlier.params !== params)
          return stripeError(
            400,
            'idempotency_error',
            'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          );
        return { status: earlier.status, body: earlier.body, replayed: true };
      }
      const answer = this.#create(body);
      if (key !== undefined) this.#idempotency.set(key, { params, status: answer.status, body: answer.body });
      return answer;
    }
    if (operation === 'list') {
      const gte = Number(body.created?.gte ?? 0);
      const lte = Number(body.created?.lte ?? Number.MAX_SAFE_INTEGER);
      const limit = Math.min(100, Number(body.limit ?? 10));
      const all = [...this.intents.values()].filter((pi) => pi.created >= gte && pi.created <= lte).reverse();
      const start = body.starting_after === undefined ? 0 : all.findIndex((pi) => pi.id === body.starting_after) + 1;
      const page = all.slice(start, start + limit).map(visible);
      return {
        status: 200,
        body: { object: 'list', url: '/v1/payment_intents', has_more: start + limit < all.length, data: page },
      };
    }
    const pi = this.intents.get(parts[2] ?? '');
    if (pi === undefined)
      return stripeError(
        404,
        'invalid_request_error',
        `No such payment_intent: '${parts[2] ?? ''}'`,
        'resource_missing',
        'intent',
      );
    if (operation === 'cancel') {
      if (pi.status === 'succeeded')
        return stripeError(
          400,
          'invalid_request_error',
          'This PaymentIntent could not be canceled: it has succeeded.',
          'payment_intent_unexpected_state',
        );
      Object.assign(pi, { status: 'canceled', next_action: null, cancellation_reason: 'requested_by_customer' });
      this.#emit('payment_intent.canceled', pi, 'send');
    }
    const shown = visible(pi);
    return { status: 200, body: shown };
  }

  #create(body: Record<string, any>): { status: number; body: unknown } {
    const amount = Number(body.amount);
    if (!/^\d+$/.test(String(body.amount ?? '')))
      return stripeError(
        400,
        'invalid_request_error',
        'Invalid integer: amount',
        'parameter_invalid_integer',
        'amount',
      );
    if (body.currency !== 'mxn')
      return stripeError(
        400,
        'invalid_request_error',
        'OXXO only supports mxn',
        'payment_intent_invalid_parameter',
        'currency',
      );
    if (!(body.payment_method_types ?? []).includes('oxxo'))
      return stripeError(
        400,
        'invalid_request_error',
        'payment_method_types must include oxxo',
        'parameter_invalid_empty',
        'payment_method_types',
      );
    if (amount < 1000)
      return stripeError(
        400,
        'invalid_request_error',
        'Amount must be at least $10.00 mxn',
        'amount_too_small',
        'amount',
      );
    if (amount > 1_000_000)
      return stripeError(
        400,
        'invalid_request_error',
        'Amount must be no more than $10,000.00 mxn',
        'amount_too_large',
        'amount',
      );
    const days = Number(body.payment_method_options?.oxxo?.expires_after_days ?? 3);
    if (!Number.isInteger(days) || days < 1 || days > 7)
      return stripeError(
        400,
        'invalid_request_error',
        'expires_after_days must be between 1 and 7',
        'parameter_invalid_integer',
        'payment_method_options[oxxo][expires_after_days]',
      );
    const billing = body.payment_method_data?.billing_details ?? {};
    if (typeof billing.name !== 'string' || billing.name.trim().length < 2)
      return stripeError(
        400,
        'invalid_request_error',
        'OXXO requires billing_details[name]',
        'parameter_missing',
        'payment_method_data[billing_details][name]',
      );
    if (typeof billing.email !== 'string' || !billing.email.includes('@'))
      return stripeError(
        400,
        'invalid_request_error',
        'OXXO requires billing_details[email]',
        'parameter_missing',
        'payment_method_data[billing_details][email]',
      );
    const id = `pi_${randomBytes(12).toString('hex')}`;
    const now = this.now();
    const number = BigInt(`0x${randomBytes(8).toString('hex')}`)
      .toString()
      .padStart(20, '0')
      .slice(0, 20);
    const pi: any = {
      id,
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: 'mxn',
      created: Math.floor(now / 1000),
      description: body.description ?? null,
      metadata: body.metadata ?? {},
      livemode: false,
      payment_method: `pm_${randomBytes(12).toString('hex')}`,
      payment_method_types: ['oxxo'],
      status: body.confirm === 'true' ? 'requires_action' : 'requires_payment_method',
      last_payment_error: null,
      next_action:
        body.confirm === 'true'
          ? {
              type: 'oxxo_display_details',
              oxxo_display_details: {
                expires_after: Math.floor(mexicoCityEndOfDay(now, days) / 1000),
                hosted_voucher_url: `${this.url}/voucher/${id}`,
                number,
              },
            }
          : null,
      __email: billing.email,
    };
    this.intents.set(id, pi);
    if (pi.status === 'requires_action') this.#emit('payment_intent.requires_action', pi, 'send');
    const shown = visible(pi);
    return { status: 200, body: shown };
  }
}
