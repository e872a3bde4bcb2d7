import { CashgateError } from './errors.js';
import { Transport, type JsonAnswer, type TransportOptions } from './transport.js';
import type { Amount } from './types.js';

/** The operator's admin API (`/admin/v1`, bearer token): see docs/operations.md. */
export interface AdminOptions extends TransportOptions {
  /** CASHGATE_ADMIN_TOKEN */
  token: string;
}

export type Language = 'en' | 'pt-BR' | 'es';
export type Permission =
  | 'exchange'
  | 'ken.collection'
  | 'ken.transfer'
  | 'bra.collection'
  | 'bra.transfer'
  | 'polymerize'
  | 'query'
  | 'balance'
  | 'all';
export type CashierMethod = 'PIX' | 'PIX_DYNAMIC' | 'BOLETO' | 'SPEI' | 'OXXO' | 'USDT_TRC20';
/** The currency a merchant's aggregate cashiers take: reais (Pix, boleto) or pesos (SPEI, OXXO). */
export type CashierCurrency = 'BRL' | 'MXN';

export interface Merchant {
  merchantId: string;
  name: string;
  language: Language;
  callbackUrl: string | null;
  settlementDelayMs: number;
  cashierLifetimeMs: number;
  cashierMethods: CashierMethod[];
  cashierCurrency: CashierCurrency;
  createdAt: number;
  /** The operator's pauses of the merchant's payments (money in) and payouts (money out); null: not paused. */
  paused: { payments: MerchantPause | null; payouts: MerchantPause | null };
}

/** An operator's pause: since when (Unix ms), why (never shown to the merchant), by whom. */
export interface MerchantPause {
  since: number;
  reason: string;
  by: string;
}

/** What a pause or resume names: payments (every create that takes money in) or payouts (every create that pays out). */
export interface PauseRequest {
  what: 'payments' | 'payouts';
  reason: string;
}

export interface CreateMerchantRequest {
  name: string;
  language?: Language;
}

export interface CreatedMerchant {
  merchantId: string;
  name: string;
  language: Language;
}

export interface CreateApiKeyRequest {
  permissions: Permission[];
  /** Addresses or CIDR ranges, as a list or comma-separated; 0.0.0.0 allows any address. */
  ipWhitelist: string[] | string;
  debug?: boolean;
  label?: string;
}

export type EditApiKeyRequest = Partial<CreateApiKeyRequest>;

/** The only time the secret is shown. */
export interface CreatedApiKey {
  accessKey: string;
  secretKey: string;
  activeAt: number;
}

export interface ApiKey {
  accessKey: string;
  label: string;
  permissions: string[];
  ipWhitelist: string[];
  debug: boolean;
  /** pending (waiting for activeAt: a new, edited or re-enabled key), active, disabled or deleted */
  status: 'pending' | 'active' | 'disabled' | 'deleted';
  activeAt: number;
  createdAt: number;
  updatedAt: number;
}

export interface Balance {
  currency: string;
  available: string;
  frozen: string;
  awaitingSettlement: string;
}

export interface BalanceAdjustment {
  currency: string;
  /** Negative to debit. */
  amount: Amount;
  reason: string;
}

export interface Fee {
  channel: string;
  currency: string;
  percentBps: number;
  fixed: string;
  minimum: string;
}

export interface SetFeeRequest {
  percentBps: number;
  fixed?: Amount;
  minimum?: Amount;
  /** Why: kept in the audit log. */
  reason: string;
}

/** A money action (balance adjustment, payment assignment) waiting for (or decided by) a second operator. */
export interface Approval {
  approvalId: string;
  kind: 'balance_adjustment' | 'payment_assignment';
  /** What approving it does, in words. */
  action: string;
  merchantId: string;
  currency: string;
  amount: string;
  /** payment_assignment: the received Pix's end-to-end id and the order it pays; null otherwise. */
  e2eid: string | null;
  orderId: string | null;
  reason: string;
  state: 'pending' | 'approved' | 'rejected';
  requestedBy: string;
  decidedBy: string | null;
  decisionReason: string | null;
  journalId: string | null;
  createdAt: string;
  decidedAt: string | null;
}

/** Applied at once, or (at or above APPROVAL_THRESHOLD) pending another operator's approval. */
export type BalanceAdjustmentResult =
  { state: 'applied'; journalId: string; balance: Balance } | { state: 'pending'; approval: Approval };

export interface Rate {
  currency: string;
  token: string;
  buy: string;
  sell: string;
  spreadBps: number;
  fiatToTokenRate: string;
  tokenToFiatRate: string;
  updatedAt: number;
}

export interface SetRateRequest {
  buy: string;
  sell: string;
  spreadBps?: number;
}

export interface CallbackAttempt {
  attemptId: string;
  eventId: string;
  notifyId: string;
  trigger: 'automatic' | 'manual';
  attemptNo: number;
  url: string;
  startedAt: number;
  latencyMs: number;
  httpStatus: number | null;
  outcome: string;
  error: string | null;
  responseExcerpt: string | null;
}

export interface CallbackEvent {
  eventId: string;
  notifyId: string;
  orderId: string;
  orderKind: string;
  trigger: 'automatic' | 'manual';
  /** pending, delivering, delivered, failed or no_target */
  state: string;
  targetUrl: string | null;
  accessKey: string;
  /** The JSON body sent: a callback payload (`CallbackPayload`), or a test callback's body. */
  payload: unknown;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
}

export interface CallbackDelivery {
  event: CallbackEvent;
  attempt: CallbackAttempt | null;
}

export interface SandboxEvent {
  event: string;
  amount?: Amount;
  tradeHash?: string;
  from?: string;
}

export interface SandboxResult {
  orderId: string;
  orderStatus: number;
  orderStatusText: string;
  allowedEvents: string[];
}

const segment = encodeURIComponent;

/**
 * A typed client for the operator's admin API. An answer other than 2xx throws a
 * {@link CashgateError} with the API's error code and message. Reads are retried like the
 * merchant client's; changes are sent once.
 */
export class CashgateAdmin {
  readonly #transport: Transport;
  readonly #token: string;

  constructor(options: AdminOptions) {
    this.#transport = new Transport(options);
    this.#token = options.token;
  }

  readonly merchants = {
    create: (body: CreateMerchantRequest) => this.#send<CreatedMerchant>('POST', '/admin/v1/merchants', body),
    list: async () => (await this.#send<{ merchants: Merchant[] }>('GET', '/admin/v1/merchants')).merchants,
    get: (merchantId: string) => this.#send<Merchant>('GET', `/admin/v1/merchants/${segment(merchantId)}`),
    /** The unified callback address; null clears it. */
    setCallbackUrl: (merchantId: string, url: string | null) =>
      this.#send<Merchant>('PUT', `/admin/v1/merchants/${segment(merchantId)}/callback`, { url }),
    setCashier: (
      merchantId: string,
      body: { lifetimeMs?: number; methods?: CashierMethod[]; currency?: CashierCurrency },
    ) => this.#send<Merchant>('PUT', `/admin/v1/merchants/${segment(merchantId)}/cashier`, body),
    /** Pauses the merchant's payments or payouts (pausing what is paused keeps the first pause). */
    pause: (merchantId: string, body: PauseRequest) =>
      this.#send<Merchant>('POST', `/admin/v1/merchants/${segment(merchantId)}/pause`, body),
    /** Resumes them; what is not paused is a 409 not_paused. */
    resume: (merchantId: string, body: PauseRequest) =>
      this.#send<Merchant>('POST', `/admin/v1/merchants/${segment(merchantId)}/resume`, body),
    setSettlementDelay: (merchantId: string, delayMs: number) =>
      this.#send<{ merchantId: string; settlementDelayMs: number }>(
        'PUT',
        `/admin/v1/merchants/${segment(merchantId)}/settlement`,
        { delayMs },
      ),
  };

  readonly keys = {
    create: (merchantId: string, body: CreateApiKeyRequest) =>
      this.#send<CreatedApiKey>('POST', `/admin/v1/merchants/${segment(merchantId)}/api-keys`, body),
    list: async (merchantId: string) =>
      (await this.#send<{ apiKeys: ApiKey[] }>('GET', `/admin/v1/merchants/${segment(merchantId)}/api-keys`)).apiKeys,
    edit: (merchantId: string, accessKey: string, body: EditApiKeyRequest) =>
      this.#send<ApiKey>('PATCH', this.#key(merchantId, accessKey), body),
    disable: (merchantId: string, accessKey: string) =>
      this.#send<ApiKey>('POST', `${this.#key(merchantId, accessKey)}/disable`),
    enable: (merchantId: string, accessKey: string) =>
      this.#send<ApiKey>('POST', `${this.#key(merchantId, accessKey)}/enable`),
    delete: (merchantId: string, accessKey: string) => this.#send<ApiKey>('DELETE', this.#key(merchantId, accessKey)),
  };

  readonly balances = {
    get: async (merchantId: string) =>
      (
        await this.#send<{ merchantId: string; balances: Balance[] }>(
          'GET',
          `/admin/v1/merchants/${segment(merchantId)}/balances`,
        )
      ).balances,
    adjust: (merchantId: string, body: BalanceAdjustment) =>
      this.#send<BalanceAdjustmentResult>(
        'POST',
        `/admin/v1/merchants/${segment(merchantId)}/balance-adjustments`,
        body,
      ),
  };

  readonly approvals = {
    list: async (state?: Approval['state']) =>
      (
        await this.#send<{ approvals: Approval[] }>(
          'GET',
          `/admin/v1/approvals${state === undefined ? '' : `?state=${state}`}`,
        )
      ).approvals,
    approve: (approvalId: string, reason?: string) =>
      this.#send<{ approval: Approval; balance?: Balance }>(
        'POST',
        `/admin/v1/approvals/${segment(approvalId)}/approve`,
        reason === undefined ? {} : { reason },
      ),
    reject: (approvalId: string, reason: string) =>
      this.#send<{ approval: Approval }>('POST', `/admin/v1/approvals/${segment(approvalId)}/reject`, { reason }),
  };

  readonly fees = {
    list: async (merchantId: string) =>
      (await this.#send<{ fees: Fee[] }>('GET', `/admin/v1/merchants/${segment(merchantId)}/fees`)).fees,
    /** channel: e.g. `bra.collection.PIX` (the list is in docs/operations.md). */
    set: (merchantId: string, channel: string, body: SetFeeRequest) =>
      this.#send<Fee>('PUT', `/admin/v1/merchants/${segment(merchantId)}/fees/${segment(channel)}`, body),
  };

  readonly rates = {
    list: async () => (await this.#send<{ rates: Rate[] }>('GET', '/admin/v1/rates')).rates,
    set: (currency: string, token: string, body: SetRateRequest) =>
      this.#send<Rate>('PUT', `/admin/v1/rates/${segment(currency)}/${segment(token)}`, body),
  };

  readonly callbacks = {
    /** The order's callback events and their attempts, newest last. */
    list: (orderId: string) =>
      this.#send<{ orderId: string; events: CallbackEvent[]; attempts: CallbackAttempt[] }>(
        'GET',
        `/admin/v1/orders/${segment(orderId)}/callbacks`,
      ),
    /** Sends the order's current state now. */
    retrigger: (orderId: string) =>
      this.#send<CallbackDelivery>('POST', `/admin/v1/orders/${segment(orderId)}/callbacks`),
  };

  readonly sandbox = {
    /** Drives an order one step, as its simulated rail would. */
    event: (orderId: string, body: SandboxEvent) =>
      this.#send<SandboxResult>('POST', `/admin/v1/sandbox/orders/${segment(orderId)}/events`, body),
  };

  #key(merchantId: string, accessKey: string): string {
    return `/admin/v1/merchants/${segment(merchantId)}/api-keys/${segment(accessKey)}`;
  }

  async #send<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: object): Promise<T> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const answer = await this.#transport.send(
      {
        method,
        url: this.#transport.url(path),
        headers: () => ({
          authorization: `Bearer ${this.#token}`,
          ...(text !== undefined && { 'content-type': 'application/json' }),
        }),
        ...(text !== undefined && { body: text }),
        repeatable: method === 'GET',
      },
      (a: JsonAnswer) => a.status === 429 || a.status >= 500,
    );
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    const error = (answer.body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    const message = typeof error?.message === 'string' ? error.message : JSON.stringify(answer.body);
    throw new CashgateError({
      code: typeof error?.code === 'string' ? error.code : `http_${answer.status}`,
      msgEn: message,
      status: answer.status,
      requestId: answer.requestId,
      retryAfter: answer.retryAfter,
      attempts: answer.attempts,
      request: `${method} ${path}`,
    });
  }
}
