import { Counter, Histogram, type Registry } from 'prom-client';
import { request, type Dispatcher } from 'undici';
import type { Minor } from '../../money.js';
import { isConnectError, type ProviderExchange } from '../network.js';

/**
 * A bank or institution that registers boletos (with their Pix) for Cashgate: Efí's API Cobranças
 * ("Bolix") or Banco Inter's API Cobrança v3 ("BolePix"). Each client speaks its issuer's own API
 * and answers in these terms; `brazil/boleto-live.ts` decides what an answer does to an order.
 */
export type IssuerName = 'efi' | 'inter';

/** The payer a registered boleto names: a person (CPF) or a company (CNPJ); Inter also needs an address. */
export interface BoletoPayer {
  type: 'CPF' | 'CNPJ';
  /** 11 or 14 digits, no punctuation. */
  document: string;
  /** A person's full name (Efí wants at least two words) or a company's name. */
  name: string;
  address?: {
    street: string;
    number?: string;
    district?: string;
    city: string;
    /** One of Brazil's 27 units (two capital letters). */
    uf: string;
    /** 8 digits. */
    cep: string;
  };
}

export interface BoletoIssueRequest {
  /** Cashgate's order id: Efí's `metadata.custom_id`. */
  orderId: string;
  /** Up to 15 letters and digits derived from the order: Inter's `seuNumero`, the same on every attempt. */
  reference: string;
  /** Centavos. */
  amount: Minor;
  /** `YYYY-MM-DD` (a business day). */
  dueDate: string;
  payer: BoletoPayer;
  /** What the boleto says it is for (the order's remark), if anything. */
  description?: string;
  /** Where the issuer notifies this charge's changes (Efí's per-charge `notification_url`; Inter's is per account). */
  notificationUrl: string;
}

/**
 * A charge's state in Cashgate's words, from the issuer's own status:
 * - `processing`: registration still running (Inter `EM_PROCESSAMENTO`; Efí `new`);
 * - `failed`: registration failed (Inter `FALHA_EMISSAO`);
 * - `open`: registered and payable (Inter `A_RECEBER`, `ATRASADO`; Efí `waiting`, `unpaid`);
 * - `paid`: money received (Inter `RECEBIDO`; Efí `paid`, and `identified` is not yet paid);
 * - `settled`: marked paid by hand at the issuer, no money moved (Inter `MARCADO_RECEBIDO`; Efí `settled`);
 * - `cancelled`: written off by Cashgate or the account holder (Inter `CANCELADO`; Efí `canceled`);
 * - `expired`: written off by the issuer after its last payable day (Inter `EXPIRADO`);
 * - `other`: anything else (Inter `PROTESTO`; Efí `refunded`, `contested`, `identified`…): kept, never credited.
 */
export type ChargeState = 'processing' | 'failed' | 'open' | 'paid' | 'settled' | 'cancelled' | 'expired' | 'other';

export interface IssuerCharge {
  /** The issuer's id of the charge: Efí's `charge_id` (as a string), Inter's `codigoSolicitacao`. */
  id: string;
  /** What Cashgate gave it: Efí's `custom_id` (the order id), Inter's `seuNumero`. */
  reference: string | undefined;
  state: ChargeState;
  /** The issuer's own status word (`A_RECEBER`, `waiting`…). */
  status: string;
  /** The nominal amount, centavos. */
  amount: Minor | undefined;
  dueDate: string | undefined;
  /** 47 digits, unformatted (Efí sends it formatted: the client strips it). */
  linhaDigitavel: string | undefined;
  /** 44 digits, when the issuer gives it (Inter); derived from the linha digitável otherwise. */
  barcode: string | undefined;
  /** The Bolix / BolePix copy-and-paste Pix code, when the issuer made one. */
  pixCode: string | undefined;
  /** The bank's nosso número, when the issuer gives it. */
  nossoNumero: string | undefined;
  /** Efí's link to its own PDF of the boleto (Inter's PDF is asked for by id). */
  pdfUrl: string | undefined;
  /** Set when the issuer says money was received. */
  paid:
    | {
        /** What the issuer says it received (fines, interest or discounts make it differ from `amount`), centavos. */
        amount: Minor;
        /** When (ISO 8601 date or date-time, as the issuer wrote it). */
        at: string;
        /** How the payer paid: at a bank with the boleto, through its Pix QR, or the issuer did not say. */
        method: 'BOLETO' | 'PIX' | 'UNKNOWN';
        /**
         * Whether the issuer stated the amount it received (Inter's valorTotalRecebido), or `amount`
         * is only the charge's total because its answer states none (Efí's detail and list).
         */
        amountStated: boolean;
      }
    | undefined;
}

/**
 * One call as it happened, for the order's rail messages (redacted by the caller). `operation` is
 * what metrics call it: `oauth`, `issue`, `get`, `find`, `cancel`, `pdf`, `list-paid`,
 * `notification`, `webhook-put`; `code` is `ok`, the issuer's error code or name, `http-<status>`,
 * `timeout` or `network`.
 */
export interface IssuerExchange extends ProviderExchange {
  issuer: IssuerName;
}

/**
 * What a failed call means for the caller:
 * - `invalid`: the issuer refused the request for what it is: trying again would not help;
 * - `not-found`: the issuer knows no such charge or notification token;
 * - `busy`: the issuer asked to slow down or is unavailable (429, 503, Efí's rate-limit codes): nothing was done;
 * - `network`: the request never left (connection refused, TLS refused): nothing was done;
 * - `unknown`: the answer was lost (timeout, reset, a 5xx): the issuer may have acted; ask before issuing again.
 */
export type IssuerErrorKind = 'invalid' | 'not-found' | 'busy' | 'network' | 'unknown';

export class IssuerError extends Error {
  readonly #exchange: IssuerExchange;

  constructor(
    readonly kind: IssuerErrorKind,
    /** The issuer's error code (Efí's numeric `code`, Inter's problem `title`), or `http-<status>`, `timeout`, `network`. */
    readonly code: string,
    message: string,
    exchange: IssuerExchange,
  ) {
    super(`${exchange.issuer} ${exchange.operation}: ${code} ${message}`);
    this.name = 'IssuerError';
    this.#exchange = exchange;
  }

  /** The call as it happened (private to the error, so a logged error never carries a payer's data). */
  get exchange(): IssuerExchange {
    return this.#exchange;
  }
}

/**
 * A charge a notification speaks of. `paidAmount` only when the issuer itself stated the amount it
 * received in an answer Cashgate asked for (Efí's redeemed token carries the payment's `value`,
 * which its charge detail does not); never from a notification's body.
 */
export interface NotifiedCharge {
  id: string;
  paidAmount?: Minor;
}

export interface Called<T> {
  value: T;
  /** Every call it took (a token fetch is not one of them), in order. */
  exchanges: IssuerExchange[];
}

/** The client of one issuer. Every method throws IssuerError for an answer it cannot use. */
export interface BoletoIssuer {
  readonly name: IssuerName;
  /** The smallest and largest amount the issuer registers, centavos (Efí R$ 5.00; Inter R$ 2.50 to R$ 99,999,999.99). */
  readonly limits: { min: Minor; max: Minor };
  /**
   * Registers the boleto. Efí answers the registered charge (`open`); Inter only its
   * `codigoSolicitacao` (`processing`, the rest empty): follow it with `get`.
   */
  issue(request: BoletoIssueRequest): Promise<Called<IssuerCharge>>;
  /** The charge as the issuer has it now: the source of truth. */
  get(id: string): Promise<Called<IssuerCharge>>;
  /**
   * The charge an earlier attempt for this order may have registered (asked after an unknown
   * outcome, before issuing again), or undefined when the issuer has none. Efí: its charges
   * listed by `custom_id` = orderId; Inter: `GET /cobrancas?seuNumero=reference` (over the issue's
   * due date window).
   */
  find(
    request: Pick<BoletoIssueRequest, 'orderId' | 'reference' | 'dueDate'>,
  ): Promise<Called<IssuerCharge | undefined>>;
  /** Writes the charge off (Efí `PUT /v1/charge/:id/cancel`; Inter `POST …/cancelar` with the reason, ≤ 50 characters). */
  cancel(id: string, reason: string): Promise<Called<void>>;
  /** The issuer's own PDF of the boleto (Efí's `pdf.charge` link fetched; Inter `GET …/pdf` decoded). */
  pdf(charge: Pick<IssuerCharge, 'id' | 'pdfUrl'>): Promise<Called<Buffer>>;
  /** The charges paid between the two instants (by payment date), every page: for reconciliation. */
  paidBetween(from: number, to: number): Promise<Called<IssuerCharge[]>>;
  /**
   * The ids of the charges a notification body speaks of, for Cashgate to read each again with
   * `get`: Efí's `notification` token is redeemed (`GET /v1/notification/:token`, which is also
   * what tells Efí it was delivered); Inter's array of callbacks is read for its `codigoSolicitacao`s.
   * Nothing in the body itself is trusted.
   */
  notified(body: unknown): Promise<Called<NotifiedCharge[]>>;
  /** Tells the issuer where to notify (Inter `PUT /cobranca/v3/cobrancas/webhook`); Efí's is per charge (a no-op). */
  registerWebhook(url: string): Promise<Called<void>>;
  close(): Promise<void>;
}

const recorders = new WeakMap<Registry, IssuerCallRecorder>();

/** Records one call to an issuer: counted by issuer, operation and outcome, timed by issuer and operation. */
export type IssuerCallRecorder = (issuer: IssuerName, operation: string, outcome: string, durationMs: number) => void;

/**
 * `cashgate_boleto_issuer_requests_total{issuer,operation,outcome}` and
 * `cashgate_boleto_issuer_request_duration_seconds{issuer,operation}`, made once per registry.
 */
export function issuerCallMetrics(registry: Registry | undefined): IssuerCallRecorder {
  if (registry === undefined) return () => undefined;
  const known = recorders.get(registry);
  if (known !== undefined) return known;
  const calls = new Counter({
    name: 'cashgate_boleto_issuer_requests_total',
    help: 'Calls to the boleto issuer by issuer, operation and outcome (ok, the issuer error code, http-<status>, timeout, network)',
    labelNames: ['issuer', 'operation', 'outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'cashgate_boleto_issuer_request_duration_seconds',
    help: 'Time the boleto issuer took to answer, by issuer and operation',
    labelNames: ['issuer', 'operation'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const record: IssuerCallRecorder = (issuer, operation, outcome, durationMs) => {
    calls.inc({ issuer, operation, outcome });
    latency.observe({ issuer, operation }, durationMs / 1000);
  };
  recorders.set(registry, record);
  return record;
}

/** An HTTP answer from an issuer: its status, its body parsed as JSON (or its text, cut short), its raw bytes. */
export interface IssuerAnswer {
  status: number;
  body: unknown;
  bytes: Buffer;
}

/**
 * Sends one request to an issuer with a timeout. A request that never left is an IssuerError of
 * kind `network`; one whose answer was lost, `unknown`. Any HTTP status is returned, for the
 * client to read in its issuer's terms. `done` builds the call's exchange (and records it).
 */
export async function sendToIssuer(
  call: {
    url: string;
    method: string;
    headers: Record<string, string>;
    body: string | undefined;
    dispatcher: Dispatcher | undefined;
    timeoutMs: number;
  },
  done: (httpStatus: number | null, response: unknown, code: string) => IssuerExchange,
): Promise<IssuerAnswer> {
  try {
    const answer = await request(call.url, {
      method: call.method as 'GET',
      headers: call.headers,
      ...(call.body !== undefined && { body: call.body }),
      ...(call.dispatcher !== undefined && { dispatcher: call.dispatcher }),
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
      signal: AbortSignal.timeout(call.timeoutMs),
    });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    let body: unknown = null;
    if (bytes.length > 0) {
      const text = bytes.toString('utf8');
      try {
        body = JSON.parse(text);
      } catch {
        body = text.slice(0, 500);
      }
    }
    return { status: answer.statusCode, body, bytes };
  } catch (error) {
    const neverSent = isConnectError(error);
    const code = neverSent ? 'network' : 'timeout';
    throw new IssuerError(
      neverSent ? 'network' : 'unknown',
      code,
      error instanceof Error ? error.message : String(error),
      done(null, null, code),
    );
  }
}
