import type { Registry } from 'prom-client';
import { Agent } from 'undici';
import type { Minor } from '../../money.js';
import { lostExchange, TokenCache } from '../network.js';
import { barcodeFromLinha } from './boleto.js';
import {
  IssuerError,
  issuerCallMetrics,
  sendToIssuer,
  type BoletoIssuer,
  type BoletoIssueRequest,
  type BoletoPayer,
  type Called,
  type NotifiedCharge,
  type ChargeState,
  type IssuerAnswer,
  type IssuerCallRecorder,
  type IssuerCharge,
  type IssuerErrorKind,
  type IssuerExchange,
} from './issuer.js';

/**
 * Efí's API Cobranças (boleto with Pix, "Bolix"), as its published documentation describes it
 * (see docs/boleto-efi.md for the sources and what stays unconfirmed).
 */
export interface EfiConfig {
  /** e.g. `https://cobrancas.api.efipay.com.br` (homologação `https://cobrancas-h.api.efipay.com.br`): no trailing slash, no `/v1`. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** How long one call may take before its outcome counts as unknown. */
  timeoutMs: number;
}

/** The operations this client calls, by the name metrics and exchanges give them. */
export type EfiOperation = 'oauth' | 'issue' | 'get' | 'find' | 'cancel' | 'pdf' | 'list-paid' | 'notification';

/**
 * Efí publishes no largest amount for one charge, only an account limit it enforces (4600037): Cashgate stops at
 * R$ 9,999,999.99, well inside the boleto's 10-digit amount field, and Efí's own refusal covers anything lower.
 */
const EFI_MAX: Minor = 999_999_999n;
/** Efí's documented minimum: R$ 5.00 (4600036). */
const EFI_MIN: Minor = 500n;
/** Efí's rate-limit codes (limites-de-consumo): nothing was done, try later. */
const BUSY_CODES = new Set(['3500049', '3500055']);
/** Efí's `items[].name` limit. */
const ITEM_NAME_MAX = 255;
/** Charges asked for per page of `GET /v1/charges` (Efí documents `limit` but not its maximum). */
const PAGE_SIZE = 100;
/** A list that keeps paging past this is not believed to end. */
const MAX_PAGES = 1000;
/** Brasília time (no daylight saving since 2019): the calendar Efí's dates are written in. */
const BRASILIA_OFFSET_MS = -3 * 3_600_000;
const DAY_MS = 86_400_000;
/** How far before today (or the due date, when earlier) `find` looks for a charge created by an earlier attempt. */
const FIND_LOOKBACK_DAYS = 62;

type Json = Record<string, unknown>;

function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** An integer number of centavos Efí wrote (a number, or a string of digits). */
function cents(value: unknown): Minor | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return BigInt(value);
  return undefined;
}

/** An Efí id (charge_id is an integer) as a string. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return value;
  return undefined;
}

/** The calendar day in Brasília of an instant, `YYYY-MM-DD`. */
export function brasiliaDate(ms: number): string {
  return new Date(ms + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Efí's status word in Cashgate's terms (`identified` is paid but not yet credited: not money yet). */
export function efiState(status: string | undefined): ChargeState {
  switch (status) {
    case 'new':
      return 'processing';
    case 'waiting':
    case 'unpaid':
      return 'open';
    case 'paid':
      return 'paid';
    case 'settled':
      return 'settled';
    case 'canceled':
      return 'cancelled';
    default:
      return 'other';
  }
}

/**
 * How a paid charge was paid, from what Efí says of it: a payment method of `pix` is a Pix; a charge that carries no
 * Pix code at all (a plain boleto) can only have been paid as a boleto; a Bolix (boleto + Pix) keeps the method
 * `banking_billet` however it was paid, and Efí's documentation shows no field that tells the two apart: UNKNOWN.
 */
function paidMethod(method: string | undefined, pixCode: string | undefined): 'BOLETO' | 'PIX' | 'UNKNOWN' {
  if (method === 'pix') return 'PIX';
  if (method === 'banking_billet' && pixCode === undefined) return 'BOLETO';
  return 'UNKNOWN';
}

/** Efí's error body: `{code, error, error_description}`, the description a string or `{property, message}`. */
function efiError(status: number, body: unknown): { code: string; message: string } {
  const problem = obj(body);
  const raw = problem?.code;
  const numeric =
    typeof raw === 'number' && Number.isInteger(raw)
      ? String(raw)
      : typeof raw === 'string' && /^\d+$/.test(raw)
        ? raw
        : undefined;
  // Efí's own codes are 7 digits (3500034…); a `code` that only repeats the HTTP status (or 200) is not one of them.
  const code = numeric !== undefined && numeric !== '200' && numeric !== String(status) ? numeric : `http-${status}`;
  const description = problem?.error_description;
  const detail = obj(description);
  let message: string | undefined;
  if (typeof description === 'string' && description !== '') message = description;
  else if (detail !== undefined) {
    const property = str(detail.property);
    const text = str(detail.message) ?? JSON.stringify(detail).slice(0, 300);
    message = property !== undefined ? `${property}: ${text}` : text;
  }
  message ??= str(problem?.error) ?? (typeof body === 'string' && body !== '' ? body.slice(0, 200) : `HTTP ${status}`);
  return { code, message };
}

function errorKind(status: number, code: string): IssuerErrorKind {
  if (status === 404) return 'not-found';
  if (status === 429 || status === 503 || BUSY_CODES.has(code)) return 'busy';
  if (status >= 500) return 'unknown';
  return 'invalid';
}

/** What Efí's one-step wants as the boleto's payer: a person by name and CPF, or a company by name and CNPJ. */
function customerOf(payer: BoletoPayer): Json {
  const who: Json =
    payer.type === 'CPF'
      ? { name: payer.name, cpf: payer.document }
      : { juridical_person: { corporate_name: payer.name, cnpj: payer.document } };
  const address = payer.address;
  // Efí's address is optional but whole: without a neighbourhood it is left out rather than made up.
  if (address?.district !== undefined && address.district !== '') {
    who.address = {
      street: address.street,
      number: address.number !== undefined && address.number !== '' ? address.number : 'S/N',
      neighborhood: address.district,
      zipcode: address.cep,
      city: address.city,
      state: address.uf,
    };
  }
  return who;
}

/**
 * The item's name: the description, always followed by the order's reference. Efí refuses the third
 * charge identical to two others (4600210), and a payer may well buy the same thing three times:
 * the reference makes each order's charge its own.
 */
function itemName(request: BoletoIssueRequest): string {
  const suffix = ` (${request.reference})`;
  const description = request.description?.trim();
  const name = description !== undefined && description !== '' ? description : `Pedido ${request.orderId}`;
  return `${Array.from(name)
    .slice(0, ITEM_NAME_MAX - suffix.length)
    .join('')}${suffix}`;
}

/**
 * The charge Efí describes, in Cashgate's terms. `data` is the one-step answer (flat), a `GET /v1/charge/:id` detail
 * (the boleto under `payment.banking_billet`) or an element of `GET /v1/charges` (`id`, `payment.payment_method`).
 */
function chargeOf(data: Json, reference: string | undefined): IssuerCharge | undefined {
  const id = idOf(data.charge_id) ?? idOf(data.id);
  if (id === undefined) return undefined;
  const payment = obj(data.payment);
  const billet = obj(payment?.banking_billet) ?? data;
  const status = str(data.status) ?? '';
  const state = efiState(status);
  const digits = typeof billet.barcode === 'string' ? billet.barcode.replace(/\D/g, '') : '';
  const linhaDigitavel = digits.length === 47 ? digits : undefined;
  let barcode: string | undefined;
  if (linhaDigitavel !== undefined) {
    try {
      barcode = barcodeFromLinha(linhaDigitavel);
    } catch {
      barcode = undefined;
    }
  }
  const pixCode = str(obj(billet.pix)?.qrcode) ?? str(obj(payment?.pix)?.qrcode);
  const amount = cents(data.total);
  let paid: IssuerCharge['paid'];
  if (state === 'paid') {
    const history = Array.isArray(data.history) ? data.history.map(obj) : [];
    const lastEntry = history.at(-1);
    paid = {
      // Efí's charge shows no paid value (only the notification's `value` does): with no fine, interest or discount
      // configured by Cashgate, the registered boleto is paid at its total.
      amount: amount ?? 0n,
      at: str(payment?.paid_at) ?? str(data.paid_at) ?? str(lastEntry?.created_at) ?? str(data.created_at) ?? '',
      method: paidMethod(str(payment?.payment_method) ?? str(payment?.method), pixCode),
      amountStated: false,
    };
  }
  return {
    id,
    reference: str(data.custom_id) ?? reference,
    state,
    status,
    amount,
    dueDate: str(billet.expire_at),
    linhaDigitavel,
    barcode,
    pixCode,
    // Efí's answers (one-step, detail, list) carry no nosso número.
    nossoNumero: undefined,
    pdfUrl: str(obj(billet.pdf)?.charge),
    paid,
  };
}

/**
 * A client of Efí's API Cobranças: `POST /v1/authorize` (Basic) for a 600 s Bearer token, cached and fetched again
 * once when Efí refuses it; every call with a timeout, counted and timed; Efí's `{code, error, error_description}`
 * sorted into what the caller does next (IssuerError.kind).
 */
export class EfiIssuer implements BoletoIssuer {
  readonly name = 'efi' as const;
  readonly limits = { min: EFI_MIN, max: EFI_MAX };
  readonly #agent: Agent;
  readonly #tokens: TokenCache;
  readonly #record: IssuerCallRecorder;

  constructor(
    readonly config: EfiConfig,
    private readonly now: () => number,
    registry?: Registry,
  ) {
    this.#agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });
    this.#tokens = new TokenCache(() => this.#fetchToken(), now);
    this.#record = issuerCallMetrics(registry);
  }

  async issue(request: BoletoIssueRequest): Promise<Called<IssuerCharge>> {
    const exchanges: IssuerExchange[] = [];
    const body = {
      items: [{ name: itemName(request), value: Number(request.amount), amount: 1 }],
      metadata: { custom_id: request.orderId, notification_url: request.notificationUrl },
      payment: { banking_billet: { customer: customerOf(request.payer), expire_at: request.dueDate } },
    };
    const answer = await this.#api('issue', 'POST', '/v1/charge/one-step', body, exchanges);
    const data = obj(obj(answer.body)?.data);
    const charge = data === undefined ? undefined : chargeOf(data, request.orderId);
    if (charge === undefined) {
      // Efí said 200 but named no charge: it may still have made one, so the caller asks (find) before issuing again.
      throw new IssuerError(
        'unknown',
        'bad-answer',
        'the one-step answer names no charge_id',
        exchanges.at(-1) ?? this.#lost('issue'),
      );
    }
    return { value: { ...charge, reference: request.orderId, dueDate: charge.dueDate ?? request.dueDate }, exchanges };
  }

  async get(id: string): Promise<Called<IssuerCharge>> {
    const exchanges: IssuerExchange[] = [];
    const charge = await this.#get(id, exchanges);
    return { value: charge, exchanges };
  }

  async find(
    request: Pick<BoletoIssueRequest, 'orderId' | 'reference' | 'dueDate'>,
  ): Promise<Called<IssuerCharge | undefined>> {
    const exchanges: IssuerExchange[] = [];
    // The charge was created (`date_of=creation`) no later than today and than its due date (Efí refuses a past due date).
    const today = brasiliaDate(this.now());
    const latest = /^\d{4}-\d{2}-\d{2}$/.test(request.dueDate) && request.dueDate < today ? request.dueDate : today;
    const items = await this.#list(
      'find',
      {
        charge_type: 'billet',
        begin_date: addDays(latest, -FIND_LOOKBACK_DAYS),
        end_date: addDays(latest, 1),
        date_of: 'creation',
        custom_id: request.orderId,
      },
      exchanges,
    );
    // Efí's filter is not taken on trust: only the charges that say this order's custom_id count.
    const mine = items
      .filter((item) => str(item.custom_id) === request.orderId)
      .map((item) => ({
        id: idOf(item.id) ?? idOf(item.charge_id),
        status: str(item.status),
        created: str(item.created_at) ?? '',
      }))
      .filter((item): item is { id: string; status: string | undefined; created: string } => item.id !== undefined);
    if (mine.length === 0) return { value: undefined, exchanges };
    mine.sort((a, b) =>
      a.created === b.created ? Number(BigInt(b.id) - BigInt(a.id)) : a.created < b.created ? 1 : -1,
    );
    const chosen = mine.find((item) => item.status !== 'canceled') ?? mine[0];
    if (chosen === undefined) return { value: undefined, exchanges };
    const charge = await this.#get(chosen.id, exchanges);
    return { value: charge, exchanges };
  }

  /** Efí's cancel takes no reason: the caller's is not sent. */
  async cancel(id: string): Promise<Called<void>> {
    const exchanges: IssuerExchange[] = [];
    await this.#api('cancel', 'PUT', `/v1/charge/${chargePath(id)}/cancel`, undefined, exchanges);
    return { value: undefined, exchanges };
  }

  async pdf(charge: Pick<IssuerCharge, 'id' | 'pdfUrl'>): Promise<Called<Buffer>> {
    const exchanges: IssuerExchange[] = [];
    const link = charge.pdfUrl ?? (await this.#get(charge.id, exchanges)).pdfUrl;
    if (link === undefined || !/^https?:\/\//i.test(link)) {
      throw new IssuerError(
        'invalid',
        'no-pdf',
        `charge ${charge.id} has no PDF link`,
        exchanges.at(-1) ?? this.#lost('pdf'),
      );
    }
    // Efí's link is public (it is what the payer is sent): no Authorization goes with it.
    const answer = await this.#send('pdf', 'GET', link, { accept: 'application/pdf' }, undefined, exchanges);
    if (answer.bytes.subarray(0, 5).toString('latin1') !== '%PDF-') {
      const last = exchanges.at(-1) ?? this.#lost('pdf');
      throw new IssuerError('invalid', 'not-pdf', `the PDF link of charge ${charge.id} answered something else`, last);
    }
    return { value: answer.bytes, exchanges };
  }

  async paidBetween(from: number, to: number): Promise<Called<IssuerCharge[]>> {
    const exchanges: IssuerExchange[] = [];
    const begin = brasiliaDate(from);
    const end = brasiliaDate(Math.max(from, to));
    const items = await this.#list(
      'list-paid',
      { charge_type: 'billet', begin_date: begin, end_date: end, date_of: 'payment', status: 'paid' },
      exchanges,
    );
    const charges: IssuerCharge[] = [];
    for (const item of items) {
      const charge = chargeOf(item, undefined);
      if (charge?.paid === undefined) continue;
      // Kept only when Efí says it is paid and, when it gives the day, that day is in the window asked for.
      const day = /^\d{4}-\d{2}-\d{2}/.test(charge.paid.at) ? charge.paid.at.slice(0, 10) : undefined;
      if (day !== undefined && (day < begin || day > end)) continue;
      charges.push(charge);
    }
    return { value: charges, exchanges };
  }

  async notified(body: unknown): Promise<Called<NotifiedCharge[]>> {
    const token = obj(body)?.notification;
    if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{1,200}$/.test(token)) return { value: [], exchanges: [] };
    const exchanges: IssuerExchange[] = [];
    let answer: IssuerAnswer;
    try {
      answer = await this.#api('notification', 'GET', `/v1/notification/${token}`, undefined, exchanges);
    } catch (error) {
      // Efí knows no such token (or refuses it as malformed): nothing to read.
      if (error instanceof IssuerError && error.kind === 'invalid')
        throw new IssuerError('not-found', error.code, error.message, error.exchange);
      throw error;
    }
    const events = obj(answer.body)?.data;
    const charges: NotifiedCharge[] = [];
    if (Array.isArray(events)) {
      const ordered = events
        .map(obj)
        .filter((event): event is Json => event !== undefined)
        .map((event, index) => ({ event, order: typeof event.id === 'number' ? event.id : index }))
        .sort((a, b) => a.order - b.order);
      for (const { event } of ordered) {
        if (event.type !== 'charge') continue;
        const id = idOf(obj(event.identifiers)?.charge_id);
        if (id === undefined) continue;
        let charge = charges.find((c) => c.id === id);
        if (charge === undefined) charges.push((charge = { id }));
        // The payment's value is in the event that confirms it (the charge detail has only the total).
        const value = event.value;
        if (
          obj(event.status)?.current === 'paid' &&
          typeof value === 'number' &&
          Number.isSafeInteger(value) &&
          value > 0
        )
          charge.paidAmount = BigInt(value);
      }
    }
    return { value: charges, exchanges };
  }

  /** Efí's notification_url goes with each charge: nothing to register. */
  async registerWebhook(): Promise<Called<void>> {
    return { value: undefined, exchanges: [] };
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #get(id: string, exchanges: IssuerExchange[]): Promise<IssuerCharge> {
    const answer = await this.#api('get', 'GET', `/v1/charge/${chargePath(id)}`, undefined, exchanges);
    const data = obj(obj(answer.body)?.data);
    const charge = data === undefined ? undefined : chargeOf(data, undefined);
    if (charge === undefined) {
      throw new IssuerError(
        'invalid',
        'bad-answer',
        `the answer for charge ${id} holds no charge`,
        exchanges.at(-1) ?? this.#lost('get'),
      );
    }
    return charge;
  }

  /** Every page of `GET /v1/charges` with these filters (`limit` and `page` added), until a short or repeated page. */
  async #list(
    operation: 'find' | 'list-paid',
    filters: Record<string, string>,
    exchanges: IssuerExchange[],
  ): Promise<Json[]> {
    const items: Json[] = [];
    const seen = new Set<string>();
    for (let page = 1; page <= MAX_PAGES; page++) {
      const query = new URLSearchParams({ ...filters, limit: String(PAGE_SIZE), page: String(page) });
      const answer = await this.#api(operation, 'GET', `/v1/charges?${query.toString()}`, undefined, exchanges);
      const data = obj(answer.body)?.data;
      const rows = Array.isArray(data) ? data.map(obj).filter((row): row is Json => row !== undefined) : [];
      let fresh = 0;
      for (const row of rows) {
        const key = idOf(row.id) ?? idOf(row.charge_id) ?? JSON.stringify(row);
        if (seen.has(key)) continue;
        seen.add(key);
        items.push(row);
        fresh++;
      }
      // A short page is the last; a page with nothing new means Efí ignores paging: either way, done.
      if (rows.length < PAGE_SIZE || fresh === 0) break;
    }
    return items;
  }

  /** An authorised call to a path of the API; a token Efí refuses (401) is fetched again once and the call repeated. */
  async #api(
    operation: EfiOperation,
    method: string,
    path: string,
    body: unknown,
    exchanges: IssuerExchange[],
  ): Promise<IssuerAnswer> {
    const url = `${this.config.baseUrl}${path}`;
    const send = async () =>
      this.#send(operation, method, url, { authorization: `Bearer ${await this.#tokens.get()}` }, body, exchanges);
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof IssuerError) || error.exchange.operation === 'oauth' || error.exchange.httpStatus !== 401)
        throw error;
      // A token Efí no longer takes (revoked, expired early): fetched again once.
      this.#tokens.drop();
      return send();
    }
  }

  async #fetchToken(): Promise<{ value: string; expiresInSeconds: number }> {
    const basic = Buffer.from(`${this.config.clientId}:${this.config.clientSecret}`).toString('base64');
    const answer = await this.#send(
      'oauth',
      'POST',
      `${this.config.baseUrl}/v1/authorize`,
      { authorization: `Basic ${basic}` },
      { grant_type: 'client_credentials' },
      undefined,
    );
    const token = obj(answer.body);
    const value = str(token?.access_token);
    const seconds = Number(token?.expires_in ?? 600);
    if (value === undefined || !Number.isFinite(seconds) || seconds <= 0) {
      throw new IssuerError('invalid', 'bad-token', 'the authorize answer holds no access token', this.#lost('oauth'));
    }
    return { value, expiresInSeconds: seconds };
  }

  /**
   * One HTTP call, counted and timed; its exchange is appended to `exchanges` (the token call passes none, and its
   * request body, the grant, and its answer, the token, are never kept). Throws IssuerError for anything but 2xx.
   */
  async #send(
    operation: EfiOperation,
    method: string,
    url: string,
    headers: Record<string, string>,
    body: unknown,
    exchanges: IssuerExchange[] | undefined,
  ): Promise<IssuerAnswer> {
    const started = performance.now();
    const target = new URL(url);
    const path = operation === 'pdf' ? target.pathname : `${target.pathname}${target.search}`;
    const shown = operation === 'oauth' ? null : (body ?? null);
    const done = (httpStatus: number | null, response: unknown, code: string): IssuerExchange => {
      const durationMs = Math.round(performance.now() - started);
      this.#record('efi', operation, code, durationMs);
      const exchange: IssuerExchange = {
        issuer: 'efi',
        operation,
        method,
        path,
        request: shown,
        httpStatus,
        response,
        code,
        durationMs,
      };
      exchanges?.push(exchange);
      return exchange;
    };
    const answer = await sendToIssuer(
      {
        url,
        method,
        headers: {
          accept: 'application/json',
          ...headers,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: this.#agent,
        timeoutMs: this.config.timeoutMs,
      },
      done,
    );
    const ok = answer.status >= 200 && answer.status < 300;
    const response =
      operation === 'pdf' && ok
        ? { bytes: answer.bytes.length }
        : operation === 'oauth' && ok
          ? { token_type: obj(answer.body)?.token_type ?? null, expires_in: obj(answer.body)?.expires_in ?? null }
          : answer.body;
    if (ok) {
      done(answer.status, response, 'ok');
      return answer;
    }
    const { code, message } = efiError(answer.status, answer.body);
    throw new IssuerError(errorKind(answer.status, code), code, message, done(answer.status, response, code));
  }

  /** An exchange for an error that follows no call of its own. */
  #lost(operation: EfiOperation): IssuerExchange {
    return { issuer: 'efi', ...lostExchange(operation) };
  }
}

/** A charge id as it goes in a path: Efí's ids are integers, anything else is refused before it is sent. */
function chargePath(id: string): string {
  if (!/^\d{1,20}$/.test(id)) throw new RangeError(`an Efí charge_id is an integer; got "${id.slice(0, 40)}"`);
  return id;
}
