import { verifyCallback, type HeadersLike, type VerifyCallbackOptions } from './callbacks.js';
import { CashgateError } from './errors.js';
import { signedHeaders, type Credentials } from './headers.js';
import { Transport, type JsonAnswer, type TransportOptions } from './transport.js';
import type {
  BalanceRecord,
  BankListRequest,
  BankName,
  BrazilBankTransferRequest,
  BrazilCollectionRecord,
  BrazilCollectionRequest,
  BrazilCollectionResult,
  BrazilPixTransferRequest,
  CallbackPayload,
  CheckoutRequest,
  Envelope,
  FiatToTokenRecord,
  FiatToTokenRequest,
  FiatToTokenResult,
  KenyaCollectionRequest,
  KenyaCollectionResult,
  KenyaTransferRecord,
  KenyaTransferRequest,
  OrderQuery,
  OrderRecord,
  TokenToFiatRecord,
  TokenToFiatRequest,
  TokenToFiatResult,
  TransferResult,
  VoucherRequest,
} from './types.js';

export type { Envelope } from './types.js';

export interface ClientOptions extends Credentials, TransportOptions {}

/** Per call: an AbortSignal that stops the call (and its retries). */
export interface CallOptions {
  signal?: AbortSignal;
}

/** `GET /ping`'s answer. */
export interface Ping {
  version: string;
  timestamp: number;
}

/**
 * Every merchant endpoint: the client method, its HTTP method and path. test/sdk-types.test.ts
 * checks that it lists exactly the server's signed routes.
 */
export const MERCHANT_ENDPOINTS = {
  'exchange.fiatToToken': ['POST', '/api/v3/exchange/fiat/to/wallet'],
  'exchange.queryFiatToToken': ['POST', '/api/v3/exchange/query/exchange/orderinfo'],
  'exchange.tokenToFiat': ['POST', '/api/v3/exchange/wallet/to/fiat'],
  'exchange.queryTokenToFiat': ['POST', '/api/v3/exchange/query/wallet/exchange/orderinfo'],
  'kenya.createCollection': ['POST', '/api/v3/ken/createCollectingOrder'],
  'kenya.createTransfer': ['POST', '/api/v3/ken/createTransferOrder'],
  'kenya.queryCollection': ['POST', '/api/v3/ken/query/collectingOrder'],
  'kenya.queryTransfer': ['POST', '/api/v3/ken/query/transferOrder'],
  'kenya.balance': ['GET', '/api/v3/ken/query/balance'],
  'brazil.createCollection': ['POST', '/api/v3/bra/createCollectingOrder'],
  'brazil.createPixTransfer': ['POST', '/api/v3/bra/createTransferOrder'],
  'brazil.createPixTransferAlias': ['POST', '/api/v3/bra/pix/createTransferOrder'],
  'brazil.createBankTransfer': ['POST', '/api/v3/bra/bank/createTransferOrder'],
  'brazil.queryCollection': ['POST', '/api/v3/bra/query/collectingOrder'],
  'brazil.queryTransfer': ['POST', '/api/v3/bra/query/transferOrder'],
  'brazil.balance': ['GET', '/api/v3/bra/query/balance'],
  'brazil.voucher': ['POST', '/api/v3/bra/query/voucher'],
  'brazil.banks': ['POST', '/api/v3/bra/query/bank'],
  'cashier.createCheckout': ['POST', '/api/v3/polymerize/createCollectingOrder'],
} as const satisfies Record<string, readonly ['GET' | 'POST', string]>;

type EndpointName = keyof typeof MERCHANT_ENDPOINTS;

function isEnvelope(body: unknown): body is Envelope {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { code?: unknown }).code === 'string' &&
    typeof (body as { success?: unknown }).success === 'boolean'
  );
}

/** A temporary refusal: rate limited, or the server (or a proxy before it) failed. */
const temporary = (answer: JsonAnswer) =>
  answer.status === 429 ||
  answer.status >= 500 ||
  (isEnvelope(answer.body) && (answer.body.code === '429' || answer.body.code === '500'));

/**
 * A signed client for the Cashgate merchant API: one typed method per endpoint. A failure throws a
 * {@link CashgateError}. Reads are retried after a timeout, a network error, 429 or 5xx; so are
 * creates, because a repeat with the same externalOrderId and body answers the first result
 * (a token → fiat create without externalOrderId is never retried). Each attempt is signed anew.
 */
export class CashgateClient {
  readonly #credentials: Credentials;
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    this.#credentials = { accessKey: options.accessKey, secretKey: options.secretKey };
    this.#transport = new Transport(options);
  }

  /** The exchange area (endpoints 2–5). */
  readonly exchange = {
    fiatToToken: (body: FiatToTokenRequest, options?: CallOptions) =>
      this.#call<FiatToTokenResult>('exchange.fiatToToken', body, options),
    queryFiatToToken: (query: OrderQuery, options?: CallOptions) =>
      this.#call<FiatToTokenRecord>('exchange.queryFiatToToken', query, options),
    tokenToFiat: (body: TokenToFiatRequest, options?: CallOptions) =>
      this.#call<TokenToFiatResult>('exchange.tokenToFiat', body, options),
    queryTokenToFiat: (query: OrderQuery, options?: CallOptions) =>
      this.#call<TokenToFiatRecord>('exchange.queryTokenToFiat', query, options),
  };

  /** Kenya (endpoints 6–10). */
  readonly kenya = {
    createCollection: (body: KenyaCollectionRequest, options?: CallOptions) =>
      this.#call<KenyaCollectionResult>('kenya.createCollection', body, options),
    createTransfer: (body: KenyaTransferRequest, options?: CallOptions) =>
      this.#call<TransferResult>('kenya.createTransfer', body, options),
    queryCollection: (query: OrderQuery, options?: CallOptions) =>
      this.#record<OrderRecord>('kenya.queryCollection', query, options),
    queryTransfer: (query: OrderQuery, options?: CallOptions) =>
      this.#record<KenyaTransferRecord>('kenya.queryTransfer', query, options),
    balance: (options?: CallOptions) => this.#call<BalanceRecord[]>('kenya.balance', undefined, options),
  };

  /** Brazil (endpoints 11–18). */
  readonly brazil = {
    createCollection: (body: BrazilCollectionRequest, options?: CallOptions) =>
      this.#call<BrazilCollectionResult>('brazil.createCollection', body, options),
    createPixTransfer: (body: BrazilPixTransferRequest, options?: CallOptions) =>
      this.#call<TransferResult>('brazil.createPixTransfer', body, options),
    createBankTransfer: (body: BrazilBankTransferRequest, options?: CallOptions) =>
      this.#call<TransferResult>('brazil.createBankTransfer', body, options),
    queryCollection: (query: OrderQuery, options?: CallOptions) =>
      this.#record<BrazilCollectionRecord>('brazil.queryCollection', query, options),
    queryTransfer: (query: OrderQuery, options?: CallOptions) =>
      this.#record<OrderRecord>('brazil.queryTransfer', query, options),
    balance: (options?: CallOptions) => this.#call<BalanceRecord[]>('brazil.balance', undefined, options),
    /** The link to a successful order's PDF voucher. */
    voucher: (body: VoucherRequest, options?: CallOptions) => this.#call<string>('brazil.voucher', body, options),
    banks: (body: BankListRequest = {}, options?: CallOptions) => this.#call<BankName[]>('brazil.banks', body, options),
  };

  /** The aggregate cashier (endpoint 19): the address to send the payer to. */
  readonly cashier = {
    createCheckout: (body: CheckoutRequest, options?: CallOptions) =>
      this.#call<string>('cashier.createCheckout', body, options),
  };

  /** `GET /ping` (public, unsigned). */
  async ping(options?: CallOptions): Promise<Ping> {
    const answer = await this.#transport.send(
      {
        method: 'GET',
        url: this.#transport.url('/ping'),
        headers: () => ({}),
        repeatable: true,
        signal: options?.signal,
      },
      temporary,
    );
    const body = answer.body as Partial<Ping>;
    if (answer.status !== 200 || typeof body.version !== 'string') {
      throw new CashgateError({
        code: 'invalid_response',
        msgEn: `GET /ping answered HTTP ${answer.status} without a version`,
        status: answer.status,
        requestId: answer.requestId,
        attempts: answer.attempts,
        request: 'GET /ping',
      });
    }
    return body as Ping;
  }

  /**
   * Verifies a callback signed with this client's secret key (see {@link verifyCallback}):
   * signature, freshness (default ±300 s) and, with `seen`, replay.
   */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the payload it expects
  verifyCallback<T extends object = CallbackPayload>(
    rawBody: string | Uint8Array,
    headers: HeadersLike,
    options?: Omit<VerifyCallbackOptions, 'secretKey' | 'seen'> & {
      seen?: (nonce: string, timestamp: number) => boolean;
    },
  ): T;
  /** With a replay hook that answers by a Promise (a shared store), the verdict is a Promise. */
  verifyCallback<T extends object = CallbackPayload>(
    rawBody: string | Uint8Array,
    headers: HeadersLike,
    options: Omit<VerifyCallbackOptions, 'secretKey' | 'seen'> & {
      seen: (nonce: string, timestamp: number) => Promise<boolean>;
    },
  ): Promise<T>;
  verifyCallback(
    rawBody: string | Uint8Array,
    headers: HeadersLike,
    options: Omit<VerifyCallbackOptions, 'secretKey'> = {},
  ): unknown {
    const verify = verifyCallback as (body: string | Uint8Array, h: HeadersLike, o: VerifyCallbackOptions) => unknown;
    return verify(rawBody, headers, { ...options, secretKey: this.#credentials.secretKey });
  }

  /** POSTs any body and returns the envelope as it came, failures included (no retry: the SDK cannot tell whether a repeat is safe). */
  async post<T = unknown>(
    path: string,
    body: Record<string, unknown> = {},
    options?: CallOptions,
  ): Promise<Envelope<T>> {
    return (await this.#envelope('POST', path, body, false, options)).envelope as Envelope<T>;
  }

  /** GETs with signed query parameters and returns the envelope as it came, failures included. */
  async get<T = unknown>(
    path: string,
    query: Record<string, string> = {},
    options?: CallOptions,
  ): Promise<Envelope<T>> {
    return (await this.#envelope('GET', path, query, true, options)).envelope as Envelope<T>;
  }

  async #envelope(
    method: 'GET' | 'POST',
    path: string,
    params: Record<string, unknown> | undefined,
    repeatable: boolean,
    options: CallOptions | undefined,
  ): Promise<{ envelope: Envelope; answer: JsonAnswer & { attempts: number } }> {
    const url = this.#transport.url(path);
    const signed = params ?? {};
    if (method === 'GET') for (const [key, value] of Object.entries(signed)) url.searchParams.set(key, String(value));
    // The same text on every attempt; only the nonce and timestamp change.
    const text = method === 'POST' ? JSON.stringify(signed) : undefined;
    const answer = await this.#transport.send(
      {
        method,
        url,
        headers: () => ({
          ...signedHeaders(this.#credentials, method === 'POST' || Object.keys(signed).length > 0 ? signed : null),
          ...(text !== undefined && { 'content-type': 'application/json;charset=utf-8' }),
        }),
        ...(text !== undefined && { body: text }),
        repeatable,
        signal: options?.signal,
      },
      temporary,
    );
    if (!isEnvelope(answer.body)) {
      throw new CashgateError({
        code: 'invalid_response',
        msgEn: `HTTP ${answer.status} answered JSON that is not a Cashgate envelope (is baseUrl the Cashgate server?)`,
        status: answer.status,
        requestId: answer.requestId,
        attempts: answer.attempts,
        request: `${method} ${url.pathname}`,
      });
    }
    return { envelope: answer.body, answer };
  }

  async #call<T>(name: EndpointName, params: object | undefined, options: CallOptions | undefined): Promise<T> {
    const [method, path] = MERCHANT_ENDPOINTS[name];
    const creates = name.includes('.create') || name === 'exchange.fiatToToken' || name === 'exchange.tokenToFiat';
    const externalOrderId = (params as { externalOrderId?: unknown } | undefined)?.externalOrderId;
    // A create is repeatable only through its externalOrderId: the API answers a repeat with the first result.
    const repeatable = !creates || (typeof externalOrderId === 'string' && externalOrderId !== '');
    const { envelope, answer } = await this.#envelope(
      method,
      path,
      params as Record<string, unknown> | undefined,
      repeatable,
      options,
    );
    if (envelope.code !== '200' || !envelope.success) {
      throw new CashgateError({
        code: envelope.code,
        msgEn: envelope.msgEn,
        msg: envelope.msg,
        status: answer.status,
        requestId: answer.requestId,
        retryAfter: answer.retryAfter,
        attempts: answer.attempts,
        request: `${method} ${path}`,
      });
    }
    return envelope.data as T;
  }

  async #record<T>(name: EndpointName, query: OrderQuery, options: CallOptions | undefined): Promise<T> {
    const records = await this.#call<T[]>(name, query, options);
    const [record] = records;
    if (record === undefined) {
      throw new CashgateError({
        code: 'invalid_response',
        msgEn: `${MERCHANT_ENDPOINTS[name][1]} answered no order record`,
        request: `POST ${MERCHANT_ENDPOINTS[name][1]}`,
      });
    }
    return record;
  }
}
