import type { Registry } from 'prom-client';
import { Agent } from 'undici';
import { formatMinor, parseDecimal, type Minor } from '../../money.js';
import { TokenCache } from '../network.js';
import {
  IssuerError,
  issuerCallMetrics,
  sendToIssuer,
  type BoletoIssueRequest,
  type BoletoIssuer,
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
 * Banco Inter's API Cobrança v3 ("BolePix"): what Cashgate needs to call it (see docs/boleto-inter.md).
 * Every call, the token's included, goes over mutual TLS with the certificate issued in Inter's Internet Banking.
 */
export interface InterConfig {
  /** e.g. `https://cdpj.partners.bancointer.com.br` (sandbox `https://cdpj-sandbox.partners.uatinter.co`), no trailing slash. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM client certificate and key for the mutual TLS; a private CA when Inter's certificate is not publicly trusted. */
  certPem: string;
  keyPem: string;
  caPem: string | undefined;
  /** The current account, digits with its check digit and no leading zeros: sent as `x-conta-corrente` when set. */
  account: string | undefined;
  /** How long one call may take before its outcome counts as unknown. */
  timeoutMs: number;
}

type Operation = 'oauth' | 'issue' | 'get' | 'find' | 'cancel' | 'pdf' | 'list-paid' | 'webhook-put';

const SCOPES = 'boleto-cobranca.read boleto-cobranca.write';
const COBRANCAS = '/cobranca/v3/cobrancas';
/** Items asked for per page of `GET /cobrancas` (Inter's maximum is 1000, its default 100). */
const PAGE_SIZE = 100;
/** A listing longer than this many pages is not followed further (a guard against a paging that never ends). */
const MAX_PAGES = 500;
/** Brasília (UTC−3, no daylight saving since 2019): the zone of Inter's dates. */
const BRASILIA_OFFSET_MS = -3 * 3_600_000;
const DAY_MS = 86_400_000;
/** Inter's money text: `^\d{1,10}\.\d{2}$`. */
const MONEY_TEXT = /^\d{1,10}\.\d{2}$/;
/**
 * Node's words for a connection that ended before its TLS handshake did (under TLS 1.2 a server that refuses the
 * client certificate closes it there): the request never left, which `isConnectError` does not recognise by code.
 */
const TLS_NOT_ESTABLISHED = /before secure TLS connection was established/;
/** What Cashgate accepts as a `codigoSolicitacao` read from a callback (a UUID in practice). */
const CHARGE_ID = /^[A-Za-z0-9-]{1,64}$/;

const STATES: Readonly<Record<string, ChargeState>> = {
  EM_PROCESSAMENTO: 'processing',
  FALHA_EMISSAO: 'failed',
  A_RECEBER: 'open',
  ATRASADO: 'open',
  RECEBIDO: 'paid',
  MARCADO_RECEBIDO: 'settled',
  CANCELADO: 'cancelled',
  EXPIRADO: 'expired',
};

/** Which of several charges with the same seuNumero `find` answers: the one that matters most to the order. */
const FIND_RANK: Readonly<Record<ChargeState, number>> = {
  paid: 0,
  settled: 1,
  open: 2,
  processing: 3,
  other: 4,
  cancelled: 5,
  expired: 6,
  failed: 7,
};

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** `YYYY-MM-DD` of an instant in Brasília. */
function brasiliaDate(ms: number): string {
  return new Date(ms + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);
}

/** A `YYYY-MM-DD` date moved by whole days. */
function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * An amount Inter wrote: a string `^\d{1,10}\.\d{2}$` (list items, `valorTotalRecebido`) or, in the charge's
 * detail, a JSON number read by its shortest decimal text (`1234.56`, `2.5`): centavos, or undefined.
 */
function centavos(value: unknown): Minor | undefined {
  if (typeof value === 'string') return MONEY_TEXT.test(value) ? parseDecimal(value, 2) : undefined;
  return typeof value === 'number' ? parseDecimal(value, 2) : undefined;
}

/** An RFC 7807 problem's text: its detail, then each violation by property. */
function problemMessage(body: unknown, status: number): string {
  if (!isObject(body)) return `HTTP ${status}`;
  const parts: string[] = [];
  const detail = text(body.detail);
  if (detail !== undefined) parts.push(detail);
  if (Array.isArray(body.violacoes)) {
    for (const violation of body.violacoes) {
      if (!isObject(violation)) continue;
      const razao = text(violation.razao);
      const where = text(violation.propriedade);
      if (razao !== undefined) parts.push(where === undefined ? razao : `${where}: ${razao}`);
    }
  }
  if (parts.length === 0) parts.push(text(body.title) ?? `HTTP ${status}`);
  return parts.join('; ');
}

function errorKind(status: number): IssuerErrorKind {
  if (status === 404) return 'not-found';
  if (status === 429 || status === 503) return 'busy';
  return status >= 500 ? 'unknown' : 'invalid';
}

/** A charge read from Inter's `{cobranca, boleto, pix}` (the detail of `GET /cobrancas/{id}` or a list item). */
interface Read {
  charge: IssuerCharge;
  /** What the answer lacked that a `get` of the charge would give (a list item's paid fields or boleto). */
  incomplete: boolean;
}

function readCharge(body: unknown, fallbackId: string | undefined): Read | undefined {
  if (!isObject(body) || !isObject(body.cobranca)) return undefined;
  const cobranca = body.cobranca;
  const boleto = isObject(body.boleto) ? body.boleto : {};
  const pix = isObject(body.pix) ? body.pix : {};
  const id = text(cobranca.codigoSolicitacao) ?? fallbackId;
  const status = text(cobranca.situacao);
  if (id === undefined || status === undefined) return undefined;
  const state = STATES[status] ?? 'other';
  const linha = text(boleto.linhaDigitavel);
  const barcode = text(boleto.codigoBarras);
  let paid: IssuerCharge['paid'];
  let incomplete = false;
  if (status === 'RECEBIDO') {
    const amount = centavos(cobranca.valorTotalRecebido);
    const at = text(cobranca.dataSituacao);
    const origin = cobranca.origemRecebimento;
    if (amount === undefined || at === undefined) incomplete = true;
    else
      paid = { amount, at, method: origin === 'BOLETO' || origin === 'PIX' ? origin : 'UNKNOWN', amountStated: true };
  }
  if (state !== 'processing' && state !== 'failed' && (linha === undefined || barcode === undefined)) incomplete = true;
  const charge: IssuerCharge = {
    id,
    reference: text(cobranca.seuNumero),
    state,
    status,
    amount: centavos(cobranca.valorNominal),
    dueDate: text(cobranca.dataVencimento),
    linhaDigitavel: linha !== undefined && /^\d{47}$/.test(linha) ? linha : undefined,
    barcode: barcode !== undefined && /^\d{44}$/.test(barcode) ? barcode : undefined,
    pixCode: text(pix.pixCopiaECola),
    nossoNumero: text(boleto.nossoNumero),
    pdfUrl: undefined,
    paid,
  };
  return { charge, incomplete };
}

/** The exchange of a request refused before it was sent (Cashgate's own check): no call, no metric. */
function unsent(operation: Operation, method: string, path: string, request: unknown, code: string): IssuerExchange {
  return { issuer: 'inter', operation, method, path, request, httpStatus: null, response: null, code, durationMs: 0 };
}

/** The body of `POST /cobrancas`, its amount written from the centavos as a JSON number with two decimals. */
function issueBody(request: BoletoIssueRequest): { text: string; shown: unknown } {
  const { payer } = request;
  const address = payer.address;
  if (address === undefined) throw new Error('unreachable: the payer has an address');
  const pagador: Json = {
    cpfCnpj: payer.document,
    tipoPessoa: payer.type === 'CPF' ? 'FISICA' : 'JURIDICA',
    nome: payer.name,
    endereco: address.street,
    ...(address.number !== undefined && address.number !== '' && { numero: address.number }),
    ...(address.district !== undefined && address.district !== '' && { bairro: address.district }),
    cidade: address.city,
    uf: address.uf,
    cep: address.cep,
  };
  const description = request.description?.replace(/\s+/g, ' ').trim().slice(0, 78);
  const head = JSON.stringify({ seuNumero: request.reference });
  const tail = JSON.stringify({
    dataVencimento: request.dueDate,
    numDiasAgenda: 0,
    pagador,
    ...(description !== undefined && description !== '' && { mensagem: { linha1: description } }),
    formasRecebimento: ['BOLETO', 'PIX'],
  });
  // `{"seuNumero":"…"` + `,"valorNominal":123.45,` + `"dataVencimento":…}`: the decimal is written from the bigint.
  const json = `${head.slice(0, -1)},"valorNominal":${formatMinor(request.amount, 2)},${tail.slice(1)}`;
  return { text: json, shown: JSON.parse(json) as unknown };
}

interface Sent {
  answer: IssuerAnswer;
  exchange: IssuerExchange;
}

/**
 * Banco Inter's API Cobrança v3 over mutual TLS: OAuth2 client-credentials tokens (60 minutes, 5 fetches a minute
 * at most) cached and fetched once however many calls wait; a token Inter refuses (401) dropped and the call made
 * once more; problem+json errors sorted into what the caller does next; every call counted and timed.
 */
export class InterIssuer implements BoletoIssuer {
  readonly name = 'inter' as const;
  readonly limits = { min: 250n, max: 9_999_999_999n };
  readonly #agent: Agent;
  readonly #tokens: TokenCache;
  readonly #record: IssuerCallRecorder;

  constructor(
    private readonly config: InterConfig,
    private readonly now: () => number,
    registry?: Registry,
  ) {
    this.#tokens = new TokenCache(() => this.#fetchToken(), now);
    this.#agent = new Agent({
      connections: 16,
      keepAliveTimeout: 10_000,
      connect: {
        cert: config.certPem,
        key: config.keyPem,
        ...(config.caPem !== undefined && { ca: config.caPem }),
      },
    });
    this.#record = issuerCallMetrics(registry);
  }

  async issue(request: BoletoIssueRequest): Promise<Called<IssuerCharge>> {
    const refuse = (code: string, message: string): never => {
      throw new IssuerError('invalid', code, message, unsent('issue', 'POST', COBRANCAS, null, code));
    };
    if (request.payer.address === undefined)
      refuse('payer-address', 'Inter registers a boleto only with the payer’s address');
    if (request.amount < this.limits.min || request.amount > this.limits.max) {
      refuse('amount', `Inter registers R$ 2.50 to R$ 99,999,999.99; got ${formatMinor(request.amount, 2)}`);
    }
    const exchanges: IssuerExchange[] = [];
    const body = issueBody(request);
    const { answer, exchange } = await this.#call('issue', 'POST', COBRANCAS, body, exchanges);
    const id = isObject(answer.body) ? text(answer.body.codigoSolicitacao) : undefined;
    if (id === undefined)
      throw new IssuerError('unknown', 'bad-answer', 'the answer holds no codigoSolicitacao', exchange);
    const charge: IssuerCharge = {
      id,
      reference: request.reference,
      state: 'processing',
      status: 'EM_PROCESSAMENTO',
      amount: undefined,
      dueDate: undefined,
      linhaDigitavel: undefined,
      barcode: undefined,
      pixCode: undefined,
      nossoNumero: undefined,
      pdfUrl: undefined,
      paid: undefined,
    };
    return { value: charge, exchanges };
  }

  async get(id: string): Promise<Called<IssuerCharge>> {
    const exchanges: IssuerExchange[] = [];
    return { value: await this.#get(id, exchanges), exchanges };
  }

  /**
   * `GET /cobrancas?seuNumero=…` over the due date (the listing needs a date window: `filtrarDataPor=VENCIMENTO`,
   * one day either side of the due date asked for). Only charges whose seuNumero is exactly the reference count; of
   * several, the one that matters most (paid, then open, then still processing… failed last). A list item that lacks
   * what `get` gives is read again by its codigoSolicitacao.
   */
  async find(
    request: Pick<BoletoIssueRequest, 'orderId' | 'reference' | 'dueDate'>,
  ): Promise<Called<IssuerCharge | undefined>> {
    const exchanges: IssuerExchange[] = [];
    const items = await this.#list(
      'find',
      {
        dataInicial: shiftDate(request.dueDate, -1),
        dataFinal: shiftDate(request.dueDate, 1),
        filtrarDataPor: 'VENCIMENTO',
        seuNumero: request.reference,
      },
      exchanges,
    );
    const matching = items.filter((item) => item.charge.reference === request.reference);
    const best = matching.reduce<Read | undefined>(
      (kept, item) => (kept === undefined || FIND_RANK[item.charge.state] < FIND_RANK[kept.charge.state] ? item : kept),
      undefined,
    );
    if (best === undefined) return { value: undefined, exchanges };
    const value = best.incomplete ? await this.#get(best.charge.id, exchanges) : best.charge;
    return { value, exchanges };
  }

  async cancel(id: string, reason: string): Promise<Called<void>> {
    const exchanges: IssuerExchange[] = [];
    const body = JSON.stringify({ motivoCancelamento: reason.slice(0, 50) });
    await this.#call(
      'cancel',
      'POST',
      `${COBRANCAS}/${encodeURIComponent(id)}/cancelar`,
      { text: body, shown: JSON.parse(body) },
      exchanges,
    );
    return { value: undefined, exchanges };
  }

  async pdf(charge: Pick<IssuerCharge, 'id' | 'pdfUrl'>): Promise<Called<Buffer>> {
    const exchanges: IssuerExchange[] = [];
    const { answer, exchange } = await this.#call(
      'pdf',
      'GET',
      `${COBRANCAS}/${encodeURIComponent(charge.id)}/pdf`,
      undefined,
      exchanges,
    );
    const encoded = isObject(answer.body) ? text(answer.body.pdf) : undefined;
    const bytes = encoded === undefined ? Buffer.alloc(0) : Buffer.from(encoded, 'base64');
    if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') {
      throw new IssuerError('invalid', 'bad-pdf', 'the answer holds no PDF (base64 of bytes starting %PDF-)', exchange);
    }
    // The exchange keeps the call, not the document.
    exchange.response = { pdf: `<${bytes.length} bytes>` };
    return { value: bytes, exchanges };
  }

  /**
   * `GET /cobrancas?filtrarDataPor=PAGAMENTO&situacao=RECEBIDO` over the Brasília dates of the two instants, every
   * page; an item without its paid fields is read again with `get`.
   */
  async paidBetween(from: number, to: number): Promise<Called<IssuerCharge[]>> {
    const exchanges: IssuerExchange[] = [];
    const items = await this.#list(
      'list-paid',
      {
        dataInicial: brasiliaDate(from),
        dataFinal: brasiliaDate(to),
        filtrarDataPor: 'PAGAMENTO',
        situacao: 'RECEBIDO',
      },
      exchanges,
    );
    const charges: IssuerCharge[] = [];
    for (const item of items) {
      if (item.charge.status !== 'RECEBIDO') continue;
      charges.push(item.charge.paid === undefined ? await this.#get(item.charge.id, exchanges) : item.charge);
    }
    return { value: charges, exchanges };
  }

  /** Inter posts a JSON array of `CallbackCobranca` (one object is accepted too): their distinct codigoSolicitacao. */
  async notified(body: unknown): Promise<Called<NotifiedCharge[]>> {
    let parsed = body;
    if (typeof parsed === 'string' || Buffer.isBuffer(parsed)) {
      try {
        parsed = JSON.parse(parsed.toString()) as unknown;
      } catch {
        return { value: [], exchanges: [] };
      }
    }
    const items: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    const ids = new Set<string>();
    for (const item of items) {
      const id = isObject(item) ? text(item.codigoSolicitacao) : undefined;
      if (id !== undefined && CHARGE_ID.test(id)) ids.add(id);
    }
    return { value: [...ids].map((id) => ({ id })), exchanges: [] };
  }

  async registerWebhook(url: string): Promise<Called<void>> {
    const exchanges: IssuerExchange[] = [];
    const body = JSON.stringify({ webhookUrl: url });
    await this.#call('webhook-put', 'PUT', `${COBRANCAS}/webhook`, { text: body, shown: JSON.parse(body) }, exchanges);
    return { value: undefined, exchanges };
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  // ---------------------------------------------------------------------------------------------------------------

  async #get(id: string, exchanges: IssuerExchange[]): Promise<IssuerCharge> {
    const { answer, exchange } = await this.#call(
      'get',
      'GET',
      `${COBRANCAS}/${encodeURIComponent(id)}`,
      undefined,
      exchanges,
    );
    const read = readCharge(answer.body, id);
    if (read === undefined)
      throw new IssuerError('unknown', 'bad-answer', 'the answer holds no cobranca with its situacao', exchange);
    if (read.charge.state === 'paid' && read.charge.paid === undefined) {
      throw new IssuerError(
        'unknown',
        'bad-answer',
        'a RECEBIDO charge without valorTotalRecebido or dataSituacao',
        exchange,
      );
    }
    return read.charge;
  }

  /** Every page of `GET /cobrancas` with these filters (`paginacao.paginaAtual` from 0), items read. */
  async #list(
    operation: 'find' | 'list-paid',
    filters: Record<string, string>,
    exchanges: IssuerExchange[],
  ): Promise<Read[]> {
    const items: Read[] = [];
    const seen = new Set<string>();
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = new URLSearchParams({
        ...filters,
        'paginacao.itensPorPagina': String(PAGE_SIZE),
        'paginacao.paginaAtual': String(page),
      });
      const { answer, exchange } = await this.#call(
        operation,
        'GET',
        `${COBRANCAS}?${query.toString()}`,
        undefined,
        exchanges,
      );
      const body = answer.body;
      if (!isObject(body) || !Array.isArray(body.cobrancas)) {
        throw new IssuerError('unknown', 'bad-answer', 'the answer holds no cobrancas list', exchange);
      }
      let added = 0;
      for (const item of body.cobrancas) {
        const read = readCharge(item, undefined);
        if (read === undefined || seen.has(read.charge.id)) continue;
        seen.add(read.charge.id);
        items.push(read);
        added++;
      }
      const last =
        body.ultimaPagina === true ||
        (typeof body.totalPaginas === 'number' && page + 1 >= body.totalPaginas) ||
        body.cobrancas.length < PAGE_SIZE ||
        // A page of nothing new: the paging parameter was not taken, so the next page would be this one again.
        added === 0;
      if (last) return items;
    }
    return items;
  }

  /** One authorised call; a 401 drops the token and the call is made once more with a new one. Throws for non-2xx. */
  async #call(
    operation: Exclude<Operation, 'oauth'>,
    method: string,
    path: string,
    body: { text: string; shown: unknown } | undefined,
    exchanges: IssuerExchange[],
  ): Promise<Sent> {
    let sent = await this.#authorised(operation, method, path, body, exchanges);
    if (sent.answer.status === 401) {
      // Dropped only if no other call has replaced it already: calls refused together fetch one new token, not one
      // each (Inter's token endpoint takes 5 calls a minute).
      if ((await this.#tokens.get()) === sent.token) this.#tokens.drop();
      sent = await this.#authorised(operation, method, path, body, exchanges);
    }
    return this.#accept(sent);
  }

  async #authorised(
    operation: Exclude<Operation, 'oauth'>,
    method: string,
    path: string,
    body: { text: string; shown: unknown } | undefined,
    exchanges: IssuerExchange[],
  ): Promise<Sent & { token: string }> {
    const token = await this.#tokens.get();
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...(this.config.account !== undefined && { 'x-conta-corrente': this.config.account }),
    };
    const sent = await this.#send(operation, method, path, headers, body?.text, body?.shown ?? null);
    exchanges.push(sent.exchange);
    return { ...sent, token };
  }

  /** The answer if 2xx; otherwise the IssuerError it means. */
  #accept(sent: Sent): Sent {
    const { status, body } = sent.answer;
    if (status >= 200 && status < 300) return sent;
    throw new IssuerError(errorKind(status), sent.exchange.code, problemMessage(body, status), sent.exchange);
  }

  async #send(
    operation: Operation,
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    shown: unknown,
  ): Promise<Sent> {
    const started = performance.now();
    // The exchange is counted once its outcome is final (see the handshake below).
    const done = (httpStatus: number | null, response: unknown, code: string): IssuerExchange => {
      const durationMs = Math.round(performance.now() - started);
      return { issuer: 'inter', operation, method, path, request: shown, httpStatus, response, code, durationMs };
    };
    let answer: IssuerAnswer;
    try {
      const url = `${this.config.baseUrl}${path}`;
      answer = await sendToIssuer(
        { url, method, headers, body, dispatcher: this.#agent, timeoutMs: this.config.timeoutMs },
        done,
      );
    } catch (error) {
      if (!(error instanceof IssuerError)) throw error;
      let failure = error;
      if (error.kind === 'unknown' && TLS_NOT_ESTABLISHED.test(error.message)) {
        // Inter closed the connection during the TLS handshake (a client certificate it refuses): nothing was sent.
        const exchange = { ...error.exchange, code: 'network' };
        failure = new IssuerError('network', 'network', error.message.replace(/^inter \S+: \S+ /, ''), exchange);
      }
      this.#record('inter', operation, failure.exchange.code, failure.exchange.durationMs);
      throw failure;
    }
    const ok = answer.status >= 200 && answer.status < 300;
    const title = isObject(answer.body) ? text(answer.body.title) : undefined;
    const code = ok ? 'ok' : (title ?? `http-${answer.status}`);
    const exchange = done(answer.status, answer.body, code);
    this.#record('inter', operation, code, exchange.durationMs);
    return { answer, exchange };
  }

  async #fetchToken(): Promise<{ value: string; expiresInSeconds: number }> {
    const form = new URLSearchParams({
      client_id: this.config.clientId,
      client_secret: this.config.clientSecret,
      grant_type: 'client_credentials',
      scope: SCOPES,
    }).toString();
    const headers = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
    // The form carries the secret: the exchange shows only what was asked for.
    const sent = this.#accept(await this.#send('oauth', 'POST', '/oauth/v2/token', headers, form, { scope: SCOPES }));
    const answer = isObject(sent.answer.body) ? sent.answer.body : {};
    const value = text(answer.access_token);
    const seconds = Number(answer.expires_in ?? 3600);
    if (value === undefined || !Number.isFinite(seconds) || seconds <= 0) {
      throw new IssuerError('invalid', 'bad-token', 'the OAuth answer holds no access token', sent.exchange);
    }
    sent.exchange.response = { ...answer, access_token: '<redacted>' };
    return { value, expiresInSeconds: seconds };
  }
}
