/**
 * A local fake of Efí's API Cobranças (boleto + Pix, "Bolix") for Cashgate's tests, built from Efí's published
 * documentation (docs/boleto-efi.md lists the sources): Basic → Bearer tokens of 600 s, `POST /v1/charge/one-step`
 * with Efí's validation and error bodies, `GET /v1/charge/:id`, `GET /v1/charges` (charge_type, begin_date, end_date,
 * date_of, status, custom_id…), `PUT /v1/charge/:id/cancel`, a PDF behind each charge's `pdf.charge` link, and
 * notifications: a form POST `notification=<token>` on every status change, re-posted until the token is redeemed
 * with `GET /v1/notification/:token`. Plain HTTP on 127.0.0.1. Tests play the payer (`pay`), expire and inject faults.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { boletoBarcode, formatLinhaDigitavel, linhaDigitavel } from '../../src/rails/boleto/boleto.js';
import { dynamicBrCode } from '../../src/rails/pix/br-code.js';
import { isValidCnpj, isValidCpf } from '../../src/brazil/documents.js';

export const EFI_TEST = {
  clientId: 'Client_Id_cashgate_test',
  clientSecret: 'Client_Secret_cashgate_test',
} as const;

/** What the fake calls each route (both `find` and `list-paid` of the client are `list` here). */
export type FakeEfiOperation = 'oauth' | 'issue' | 'get' | 'list' | 'cancel' | 'pdf' | 'notification';

export type FakeEfiFault =
  /** 500, nothing done */
  | 'server-error'
  /** 503, nothing done */
  | 'unavailable'
  /** Efí's rate-limit body (3500055, HTTP 429), nothing done */
  | 'rate-limited'
  /** 401 as if the token had been revoked, nothing done */
  | 'invalid-token'
  /** the operation is performed, but the answer is never sent (the socket is held until close()) */
  | 'timeout-after'
  /** nothing is performed and the answer is never sent */
  | 'timeout-before'
  /** nothing is performed; the socket is destroyed */
  | 'reset';

export interface FakeEfiRequest {
  operation: FakeEfiOperation | 'unknown';
  method: string;
  /** path and query string */
  path: string;
  /** parsed JSON, or the raw text when it is not JSON (undefined when empty) */
  body: any;
  /** HTTP status answered; 0 when the answer was held or the connection reset */
  status: number;
  at: number;
}

export interface FakeEfiNotification {
  url: string;
  token: string;
  /** HTTP status answered; 0 when the POST failed or got no answer */
  status: number;
  at: number;
}

export interface FakeEfiPayOptions {
  /** centavos received, default the charge's total */
  value?: number;
  /** how the payer paid (default BOLETO); Efí's charge does not say it, only the history text does here */
  method?: 'BOLETO' | 'PIX';
  /** 'send' (default), 'skip' (no POST for this change), 'twice' (each POST goes twice) */
  notify?: 'send' | 'skip' | 'twice';
}

export interface FakeEfi {
  /** http://127.0.0.1:PORT, the `EfiConfig.baseUrl` */
  url: string;
  /** every request received, in order */
  readonly requests: FakeEfiRequest[];
  /** charges by charge_id (as a string), as `GET /v1/charge/:id` shows them (`data`) */
  readonly charges: Map<string, any>;
  /** every notification POST attempt, in order (retries and redeliveries included) */
  readonly notifications: FakeEfiNotification[];
  /** the next `times` requests to `operation` fail this way */
  failNext(operation: FakeEfiOperation, fault: FakeEfiFault, times?: number): void;
  /** the next `times` requests to `operation` wait `ms` before they are processed and answered */
  delayNext(operation: FakeEfiOperation, ms: number, times?: number): void;
  /** revokes every token issued so far */
  expireTokens(): void;
  /**
   * The payer pays the charge (waiting, unpaid, or canceled: a slip printed before the cancellation can still be paid
   * at a branch, and Efí's status then changes again): status paid, an event with `value` and `received_by_bank_at`.
   */
  pay(chargeId: string, options?: FakeEfiPayOptions): any;
  /** The due date passes unpaid: waiting → unpaid. */
  expire(chargeId: string): any;
  /** Posts notifications[index]'s token again to the same URL; answers its HTTP status (0: none). */
  redeliver(index: number): Promise<number>;
  /** resolves when no notification is pending */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeEfi(
  options: { now?: () => number; notificationRetryMs?: number; maxNotificationTries?: number } = {},
): Promise<FakeEfi> {
  const fake = new FakeEfiServer(
    options.now ?? Date.now,
    options.notificationRetryMs ?? 200,
    options.maxNotificationTries ?? 20,
  );
  await fake.listen();
  return fake;
}

/** The environment of a gateway on this local Efí, listening on `port` where Efí posts its notifications. */
export function efiGatewayEnv(efi: Pick<FakeEfi, 'url'>, port: number): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    BRAZIL_BOLETO_RAIL: 'efi',
    EFI_BASE_URL: efi.url,
    EFI_CLIENT_ID: EFI_TEST.clientId,
    EFI_CLIENT_SECRET: EFI_TEST.clientSecret,
  };
}

// ---------------------------------------------------------------------------------------------------------------

const TOKEN_TTL_SECONDS = 600;
const MIN_TOTAL = 500;
const EFI_BANK = '364';
const BRASILIA_OFFSET_MS = -3 * 3_600_000;
/** `^[ ]*(.+[ ]+)+.+[ ]*$`: at least two words (Efí's pattern, as reconstructed from its garbled doc). */
const NAME_PATTERN = /^[ ]*(.+[ ]+)+.+[ ]*$/;
const UF = /^(?:AC|AL|AP|AM|BA|CE|DF|ES|GO|MA|MT|MS|MG|PA|PB|PR|PE|PI|RJ|RN|RS|RO|RR|SC|SP|SE|TO)$/;
const CANCELLABLE = new Set(['new', 'waiting', 'unpaid', 'link']);
const LIST_PARAMS = new Set([
  'charge_type',
  'begin_date',
  'end_date',
  'date_of',
  'status',
  'custom_id',
  'customer_document',
  'value',
  'limit',
  'page',
  'offset',
]);

class EfiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: object,
  ) {
    super(JSON.stringify(body));
  }
}

function schemaError(property: string, message: string): EfiFailure {
  return new EfiFailure(400, { code: 3500034, error: 'validation_error', error_description: { property, message } });
}

function unknownProperty(property: string): EfiFailure {
  return new EfiFailure(400, {
    code: 3500010,
    error: 'validation_error',
    error_description: { property, message: 'A propriedade informada não existe' },
  });
}

function refusal(code: number, description: string): EfiFailure {
  return new EfiFailure(400, { code, error: 'validation_error', error_description: description });
}

function isObject(value: unknown): value is Record<string, any> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], at: string): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) throw unknownProperty(`${at}/${key}`);
}

function nonEmpty(value: unknown, max: number, property: string): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > max) {
    throw schemaError(property, `A string deve ter entre 1 e ${max} caracteres`);
  }
  return value;
}

interface ChargeLife {
  token: string;
  events: any[];
  /** the highest event id the integrator has read through GET /v1/notification/:token */
  readEventId: number;
  /** notification POSTs sent since the last status change */
  tries: number;
  /** the delivery loop is running */
  looping: boolean;
  mode: 'send' | 'skip' | 'twice';
  /** a secret in the PDF link */
  secret: string;
  /** what the 4600210 rule compares */
  identity: string;
}

class FakeEfiServer implements FakeEfi {
  url = '';
  readonly requests: FakeEfiRequest[] = [];
  readonly charges = new Map<string, any>();
  readonly notifications: FakeEfiNotification[] = [];
  private readonly server: Server;
  private readonly lives = new Map<string, ChargeLife>();
  private readonly tokens = new Map<string, number>();
  private readonly faults = new Map<FakeEfiOperation, FakeEfiFault[]>();
  private readonly delays = new Map<FakeEfiOperation, number[]>();
  private readonly held = new Set<ServerResponse>();
  private readonly pending = new Set<Promise<void>>();
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly agent = new Agent({ keepAliveTimeout: 1000 });
  private readonly aborter = new AbortController();
  private nextChargeId = 40_000_001;
  private closed = false;

  constructor(
    private readonly now: () => number,
    private readonly retryMs: number,
    private readonly maxTries: number,
  ) {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  failNext(operation: FakeEfiOperation, fault: FakeEfiFault, times = 1): void {
    const queue = this.faults.get(operation) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(operation, queue);
  }

  delayNext(operation: FakeEfiOperation, ms: number, times = 1): void {
    const queue = this.delays.get(operation) ?? [];
    for (let i = 0; i < times; i++) queue.push(ms);
    this.delays.set(operation, queue);
  }

  expireTokens(): void {
    this.tokens.clear();
  }

  pay(chargeId: string, options: FakeEfiPayOptions = {}): any {
    const charge = this.charges.get(chargeId);
    if (charge === undefined) throw new Error(`fake Efí: no charge ${chargeId}`);
    if (!['waiting', 'unpaid', 'canceled'].includes(charge.status)) {
      throw new Error(`fake Efí: charge ${chargeId} is ${charge.status}, which cannot be paid`);
    }
    const value = options.value ?? charge.total;
    const stamp = this.stamp();
    charge.payment.paid_at = stamp;
    charge.history.push({
      message: options.method === 'PIX' ? 'Pagamento via Pix confirmado' : 'Pagamento via boleto confirmado',
      created_at: stamp,
    });
    this.change(chargeId, 'paid', options.notify ?? 'send', { value, received_by_bank_at: this.today() });
    return charge;
  }

  expire(chargeId: string): any {
    const charge = this.charges.get(chargeId);
    if (charge === undefined) throw new Error(`fake Efí: no charge ${chargeId}`);
    if (charge.status !== 'waiting') throw new Error(`fake Efí: charge ${chargeId} is ${charge.status}, not waiting`);
    this.change(chargeId, 'unpaid', 'send');
    return charge;
  }

  async redeliver(index: number): Promise<number> {
    const earlier = this.notifications[index];
    if (earlier === undefined) throw new Error(`fake Efí: no notification ${index}`);
    return this.post(earlier.url, earlier.token);
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.aborter.abort();
    for (const [timer, resolve] of this.timers) {
      clearTimeout(timer);
      resolve();
    }
    this.timers.clear();
    for (const response of this.held) response.socket?.destroy();
    this.held.clear();
    await Promise.allSettled([...this.pending]);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.agent.close();
  }

  // --- HTTP

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const url = new URL(request.url ?? '/', this.url);
    const method = request.method ?? 'GET';
    const route = this.route(method, url.pathname);
    const record: FakeEfiRequest = {
      operation: route?.operation ?? 'unknown',
      method,
      path: `${url.pathname}${url.search}`,
      body,
      status: 0,
      at: this.now(),
    };
    this.requests.push(record);
    const send = (status: number, payload: object | Buffer, type = 'application/json'): void => {
      record.status = status;
      const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
      response.writeHead(status, { 'content-type': type, 'content-length': bytes.length });
      response.end(bytes);
    };
    if (route === undefined) {
      send(404, { code: 404, error: 'not_found', error_description: 'Rota não encontrada' });
      return;
    }
    const delay = this.delays.get(route.operation)?.shift();
    if (delay !== undefined) await this.wait(delay);
    const fault = this.faults.get(route.operation)?.shift();
    if (fault === 'reset') return void request.socket.destroy();
    if (fault === 'timeout-before') return this.hold(response);
    if (fault === 'server-error')
      return send(500, { code: 500, error: 'internal_server_error', error_description: 'Erro interno do servidor' });
    if (fault === 'unavailable')
      return send(503, { code: 503, error: 'service_unavailable', error_description: 'Serviço indisponível' });
    if (fault === 'rate-limited') {
      return send(429, {
        code: 3500055,
        error: 'rate_limit',
        error_description: 'Limite de requisições excedido, tente novamente mais tarde',
      });
    }
    if (fault === 'invalid-token')
      return send(401, { code: 401, error: 'invalid_token', error_description: 'Token inválido ou expirado' });
    if (route.operation !== 'oauth' && route.operation !== 'pdf' && !this.authorised(request)) {
      return send(401, { code: 401, error: 'invalid_token', error_description: 'Token inválido ou expirado' });
    }
    let result: { status: number; payload: object | Buffer; type?: string };
    try {
      result = route.run(url, body, request);
    } catch (error) {
      if (!(error instanceof EfiFailure)) throw error;
      result = { status: error.status, payload: error.body };
    }
    if (fault === 'timeout-after') return this.hold(response);
    send(result.status, result.payload, result.type);
  }

  private hold(response: ServerResponse): void {
    this.held.add(response);
  }

  private route(
    method: string,
    path: string,
  ):
    | {
        operation: FakeEfiOperation;
        run: (
          url: URL,
          body: any,
          request: IncomingMessage,
        ) => { status: number; payload: object | Buffer; type?: string };
      }
    | undefined {
    if (method === 'POST' && path === '/v1/authorize')
      return { operation: 'oauth', run: (_u, body, request) => this.authorize(body, request) };
    if (method === 'POST' && path === '/v1/charge/one-step')
      return { operation: 'issue', run: (_u, body) => this.oneStep(body) };
    if (method === 'GET' && path === '/v1/charges') return { operation: 'list', run: (url) => this.list(url) };
    let match = /^\/v1\/charge\/(\d+)$/.exec(path);
    if (method === 'GET' && match !== null) {
      const id = match[1] ?? '';
      return {
        operation: 'get',
        run: () => ({ status: 200, payload: { code: 200, data: structuredClone(this.charge(id)) } }),
      };
    }
    match = /^\/v1\/charge\/(\d+)\/cancel$/.exec(path);
    if (method === 'PUT' && match !== null) {
      const id = match[1] ?? '';
      return { operation: 'cancel', run: () => this.cancel(id) };
    }
    match = /^\/v1\/notification\/([A-Za-z0-9-]+)$/.exec(path);
    if (method === 'GET' && match !== null) {
      const token = match[1] ?? '';
      return { operation: 'notification', run: () => this.redeem(token) };
    }
    match = /^\/emissao\/(\d+)\/([0-9a-f]+)\.pdf$/.exec(path);
    if (method === 'GET' && match !== null) {
      const id = match[1] ?? '';
      const secret = match[2] ?? '';
      return { operation: 'pdf', run: () => this.pdf(id, secret) };
    }
    return undefined;
  }

  private authorised(request: IncomingMessage): boolean {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (\S+)$/.exec(header);
    if (match === null) return false;
    const expires = this.tokens.get(match[1] ?? '');
    return expires !== undefined && expires > this.now();
  }

  private authorize(body: any, request: IncomingMessage): { status: number; payload: object } {
    const expected = `Basic ${Buffer.from(`${EFI_TEST.clientId}:${EFI_TEST.clientSecret}`).toString('base64')}`;
    if (request.headers.authorization !== expected) {
      return {
        status: 401,
        payload: { error: 'invalid_client', error_description: 'Credenciais inválidas ou inativas' },
      };
    }
    if (!isObject(body) || body.grant_type !== 'client_credentials') {
      return {
        status: 400,
        payload: { error: 'unsupported_grant_type', error_description: 'grant_type deve ser client_credentials' },
      };
    }
    const token = randomBytes(24).toString('hex');
    const expiresAt = this.now() + TOKEN_TTL_SECONDS * 1000;
    this.tokens.set(token, expiresAt);
    return {
      status: 200,
      payload: {
        access_token: token,
        refresh_token: randomBytes(24).toString('hex'),
        expires_in: TOKEN_TTL_SECONDS,
        expire_at: String(expiresAt),
        token_type: 'Bearer',
      },
    };
  }

  private charge(id: string): any {
    const charge = this.charges.get(id);
    if (charge === undefined)
      throw new EfiFailure(404, { code: 404, error: 'charge_not_found', error_description: 'Cobrança não encontrada' });
    return charge;
  }

  // --- One step

  private oneStep(body: any): { status: number; payload: object } {
    if (!isObject(body)) throw schemaError('/', 'O corpo da requisição deve ser um objeto');
    onlyKeys(body, ['items', 'shippings', 'metadata', 'payment'], '');
    if (!Array.isArray(body.items) || body.items.length === 0) throw schemaError('/items', 'Informe ao menos um item');
    let total = 0;
    body.items.forEach((item: any, i: number) => {
      if (!isObject(item)) throw schemaError(`/items/${i}`, 'O item deve ser um objeto');
      onlyKeys(item, ['name', 'value', 'amount', 'marketplace'], `/items/${i}`);
      nonEmpty(item.name, 255, `/items/${i}/name`);
      if (!Number.isInteger(item.value) || item.value < 0)
        throw schemaError(`/items/${i}/value`, 'O valor deve ser um inteiro');
      const amount = item.amount ?? 1;
      if (!Number.isInteger(amount) || amount < 1)
        throw schemaError(`/items/${i}/amount`, 'A quantidade deve ser um inteiro positivo');
      total += item.value * amount;
    });
    const metadata = body.metadata ?? {};
    if (!isObject(metadata)) throw schemaError('/metadata', 'metadata deve ser um objeto');
    onlyKeys(metadata, ['custom_id', 'notification_url'], '/metadata');
    if (metadata.custom_id !== undefined) nonEmpty(metadata.custom_id, 255, '/metadata/custom_id');
    if (metadata.notification_url !== undefined) nonEmpty(metadata.notification_url, 255, '/metadata/notification_url');
    if (!isObject(body.payment)) throw schemaError('/payment', 'Informe a forma de pagamento');
    onlyKeys(body.payment, ['banking_billet', 'credit_card'], '/payment');
    const billet = body.payment.banking_billet;
    if (!isObject(billet)) throw schemaError('/payment/banking_billet', 'Informe os dados do boleto');
    onlyKeys(
      billet,
      ['customer', 'expire_at', 'discount', 'conditional_discount', 'configurations', 'message'],
      '/payment/banking_billet',
    );
    const customer = this.customer(billet.customer);
    if (
      typeof billet.expire_at !== 'string' ||
      !/^\d{4}-\d{2}-\d{2}$/.test(billet.expire_at) ||
      Number.isNaN(Date.parse(billet.expire_at))
    ) {
      throw schemaError(
        '/payment/banking_billet/expire_at',
        'A string não corresponde ao modelo: ^[12][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$',
      );
    }
    const expireAt: string = billet.expire_at;
    if (expireAt < this.today()) throw refusal(4600007, 'A data de vencimento deve ser maior ou igual à data atual');
    if (total < MIN_TOTAL) throw refusal(4600036, 'O valor mínimo para emissão de boleto é de R$ 5,00');
    const identity = JSON.stringify([body.items, total, customer, expireAt]);
    const twins = [...this.lives.values()].filter((life) => life.identity === identity).length;
    if (twins >= 2) throw refusal(4600210, 'Não é possível emitir três cobranças idênticas');
    let barcode: string;
    const id = this.nextChargeId++;
    try {
      barcode = boletoBarcode({
        bankCode: EFI_BANK,
        dueDate: expireAt,
        amountCents: total,
        freeField: String(id).padStart(25, '0'),
      });
    } catch {
      throw refusal(4600414, 'A data de vencimento informada ultrapassa o limite permitido');
    }
    const chargeId = String(id);
    const secret = randomBytes(8).toString('hex');
    const host = new URL(this.url).host;
    const pixCode = dynamicBrCode({
      locationUrl: `${host}/bolix/v2/cobv/${randomUUID().replace(/-/g, '')}`,
      merchantName: 'EFI SA',
      merchantCity: 'OURO PRETO',
      amount: (total / 100).toFixed(2),
    });
    const link = `${this.url}/emissao/${chargeId}/${secret}`;
    const stamp = this.stamp();
    const charge = {
      charge_id: id,
      total,
      status: 'new',
      custom_id: metadata.custom_id ?? null,
      created_at: stamp,
      notification_url: metadata.notification_url ?? null,
      items: structuredClone(body.items).map((item: any) => ({
        name: item.name,
        value: item.value,
        amount: item.amount ?? 1,
      })),
      history: [{ message: 'Cobrança criada', created_at: stamp }],
      customer,
      payment: {
        method: 'banking_billet',
        created_at: stamp,
        message: billet.message ?? null,
        banking_billet: {
          barcode: formatLinhaDigitavel(linhaDigitavel(barcode)),
          pix: { qrcode: pixCode, qrcode_image: 'data:image/svg+xml;base64,PHN2Zy8+' },
          link,
          pdf: { charge: `${link}.pdf` },
          expire_at: expireAt,
          configurations: {
            days_to_write_off: billet.configurations?.days_to_write_off ?? 89,
            interest_type: 'daily',
            interest: 0,
            fine: 0,
          },
        },
      },
    };
    this.charges.set(chargeId, charge);
    this.lives.set(chargeId, {
      token: randomUUID(),
      events: [],
      readEventId: 0,
      tries: 0,
      looping: false,
      mode: 'send',
      secret,
      identity,
    });
    this.event(chargeId, 'new', null);
    charge.history.push({ message: 'Pagamento via boleto aguardando confirmação', created_at: stamp });
    this.change(chargeId, 'waiting', 'send');
    const data = charge.payment.banking_billet;
    return {
      status: 200,
      payload: {
        code: 200,
        data: {
          barcode: data.barcode,
          pix: data.pix,
          link,
          billet_link: link,
          pdf: data.pdf,
          expire_at: expireAt,
          charge_id: id,
          status: charge.status,
          total,
          payment: 'banking_billet',
        },
      },
    };
  }

  private customer(customer: unknown): object {
    const at = '/payment/banking_billet/customer';
    if (!isObject(customer)) throw schemaError(at, 'Informe os dados do cliente');
    onlyKeys(customer, ['name', 'cpf', 'email', 'phone_number', 'birth', 'address', 'juridical_person'], at);
    const out: Record<string, any> = {};
    if (customer.juridical_person !== undefined) {
      const company = customer.juridical_person;
      if (!isObject(company)) throw schemaError(`${at}/juridical_person`, 'juridical_person deve ser um objeto');
      onlyKeys(company, ['corporate_name', 'cnpj'], `${at}/juridical_person`);
      out.juridical_person = {
        corporate_name: nonEmpty(company.corporate_name, 255, `${at}/juridical_person/corporate_name`),
        cnpj: company.cnpj,
      };
      if (typeof company.cnpj !== 'string' || !/^\d{14}$/.test(company.cnpj) || !isValidCnpj(company.cnpj)) {
        throw schemaError(`${at}/juridical_person/cnpj`, 'O CNPJ informado é inválido');
      }
    } else {
      if (typeof customer.name !== 'string' || !NAME_PATTERN.test(customer.name)) {
        throw schemaError(`${at}/name`, 'A string não corresponde ao modelo: ^[ ]*(.+[ ]+)+.+[ ]*$');
      }
      if (typeof customer.cpf !== 'string' || !/^\d{11}$/.test(customer.cpf) || !isValidCpf(customer.cpf)) {
        throw schemaError(`${at}/cpf`, 'O CPF informado é inválido');
      }
    }
    if (customer.name !== undefined) out.name = customer.name;
    if (customer.cpf !== undefined) out.cpf = customer.cpf;
    if (customer.address !== undefined) {
      const address = customer.address;
      const where = `${at}/address`;
      if (!isObject(address)) throw schemaError(where, 'address deve ser um objeto');
      onlyKeys(address, ['street', 'number', 'neighborhood', 'zipcode', 'city', 'complement', 'state'], where);
      for (const key of ['street', 'number', 'neighborhood', 'city']) nonEmpty(address[key], 200, `${where}/${key}`);
      if (typeof address.zipcode !== 'string' || !/^[0-9]{8}$/.test(address.zipcode))
        throw schemaError(`${where}/zipcode`, 'A string não corresponde ao modelo: ^[0-9]{8}$');
      if (typeof address.state !== 'string' || !UF.test(address.state))
        throw schemaError(`${where}/state`, 'Informe uma UF válida');
      out.address = { complement: null, ...address };
    }
    return out;
  }

  // --- Cancel, list, PDF, notifications

  private cancel(id: string): { status: number; payload: object } {
    const charge = this.charge(id);
    if (!CANCELLABLE.has(charge.status))
      throw refusal(3500043, `A transação não pode ser cancelada no status ${charge.status}`);
    charge.history.push({ message: 'Cobrança cancelada', created_at: this.stamp() });
    this.change(id, 'canceled', 'send');
    return { status: 200, payload: { code: 200 } };
  }

  /** `GET /v1/charges`: charge_type, begin_date and end_date required; date_of creation (default), payment or expired. */
  private list(url: URL): { status: number; payload: object } {
    const query = url.searchParams;
    for (const key of query.keys()) if (!LIST_PARAMS.has(key)) throw unknownProperty(`/${key}`);
    const chargeType = query.get('charge_type');
    if (chargeType === null || !['billet', 'card', 'carnet', 'subscription'].includes(chargeType))
      throw schemaError('/charge_type', 'Informe o tipo de cobrança');
    const begin = query.get('begin_date');
    const end = query.get('end_date');
    for (const [name, value] of [
      ['begin_date', begin],
      ['end_date', end],
    ] as const) {
      if (value === null || !/^\d{4}-\d{2}-\d{2}$/.test(value))
        throw schemaError(`/${name}`, 'A string não corresponde ao modelo: YYYY-MM-DD');
    }
    const dateOf = query.get('date_of') ?? 'creation';
    if (!['creation', 'payment', 'expired'].includes(dateOf))
      throw schemaError('/date_of', 'date_of deve ser creation, payment ou expired');
    const limit = Number(query.get('limit') ?? 100);
    const page = Number(query.get('page') ?? 1);
    const offsetParam = query.get('offset');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw schemaError('/limit', 'limit deve ser um inteiro entre 1 e 1000');
    if (!Number.isInteger(page) || page < 1) throw schemaError('/page', 'page deve ser um inteiro positivo');
    const status = query.get('status');
    const customId = query.get('custom_id');
    const value = query.get('value');
    const document = query.get('customer_document');
    const matches =
      chargeType !== 'billet'
        ? []
        : [...this.charges.values()].filter((charge) => {
            const day =
              dateOf === 'creation'
                ? charge.created_at.slice(0, 10)
                : dateOf === 'payment'
                  ? charge.payment.paid_at?.slice(0, 10)
                  : charge.payment.banking_billet.expire_at;
            if (day === undefined || day < (begin ?? '') || day > (end ?? '')) return false;
            if (status !== null && charge.status !== status) return false;
            if (customId !== null && charge.custom_id !== customId) return false;
            if (value !== null && String(charge.total) !== value) return false;
            if (
              document !== null &&
              charge.customer.cpf !== document &&
              charge.customer.juridical_person?.cnpj !== document
            )
              return false;
            return true;
          });
    const offset = offsetParam !== null ? Number(offsetParam) : (page - 1) * limit;
    const data = matches.slice(offset, offset + limit).map((charge) => {
      const billet = charge.payment.banking_billet;
      return {
        id: charge.charge_id,
        total: charge.total,
        status: charge.status,
        custom_id: charge.custom_id,
        created_at: charge.created_at,
        customer: {
          phone_number: null,
          ...(charge.customer.cpf !== undefined && { cpf: charge.customer.cpf, name: charge.customer.name }),
          ...(charge.customer.juridical_person !== undefined && {
            cnpj: charge.customer.juridical_person.cnpj,
            corporate_name: charge.customer.juridical_person.corporate_name,
          }),
        },
        payment: {
          payment_method: 'banking_billet',
          paid_at: charge.payment.paid_at ?? null,
          pix: billet.pix,
          banking_billet: { barcode: billet.barcode, link: billet.link, expire_at: billet.expire_at, pdf: billet.pdf },
        },
      };
    });
    return { status: 200, payload: { code: 200, data } };
  }

  private pdf(id: string, secret: string): { status: number; payload: object | Buffer; type?: string } {
    const charge = this.charges.get(id);
    if (charge === undefined || this.lives.get(id)?.secret !== secret) {
      return { status: 404, payload: Buffer.from('<html><body>Not found</body></html>'), type: 'text/html' };
    }
    return {
      status: 200,
      payload: minimalPdf(`Boleto ${id} ${charge.payment.banking_billet.barcode}`),
      type: 'application/pdf',
    };
  }

  private redeem(token: string): { status: number; payload: object } {
    const entry = [...this.lives.entries()].find(([, life]) => life.token === token);
    if (entry === undefined) {
      throw new EfiFailure(404, {
        code: 404,
        error: 'notification_not_found',
        error_description: 'Token de notificação inválido',
      });
    }
    const [, life] = entry;
    life.readEventId = life.events.at(-1)?.id ?? 0;
    return { status: 200, payload: { code: 200, data: structuredClone(life.events) } };
  }

  private event(chargeId: string, current: string, previous: string | null, extra: object = {}): void {
    const life = this.lives.get(chargeId);
    const charge = this.charges.get(chargeId);
    if (life === undefined || charge === undefined) return;
    life.events.push({
      id: life.events.length + 1,
      type: 'charge',
      custom_id: charge.custom_id,
      status: { current, previous },
      identifiers: { charge_id: charge.charge_id },
      created_at: this.stamp(),
      ...extra,
    });
  }

  /** A status change: its event, then notifications until the token is read (or maxNotificationTries). */
  private change(chargeId: string, status: string, mode: 'send' | 'skip' | 'twice', extra: object = {}): void {
    const charge = this.charges.get(chargeId);
    const life = this.lives.get(chargeId);
    if (charge === undefined || life === undefined) return;
    const previous: string = charge.status;
    charge.status = status;
    this.event(chargeId, status, previous, extra);
    life.tries = 0;
    life.mode = mode;
    if (mode === 'skip' || charge.notification_url === null || life.looping) return;
    life.looping = true;
    const loop = (async () => {
      try {
        for (;;) {
          await this.wait(this.retryMs);
          const last = life.events.at(-1)?.id ?? 0;
          if (this.closed || life.mode === 'skip' || life.readEventId >= last || life.tries >= this.maxTries) return;
          life.tries++;
          const times = life.mode === 'twice' ? 2 : 1;
          for (let i = 0; i < times; i++) await this.post(charge.notification_url, life.token);
        }
      } finally {
        life.looping = false;
      }
    })();
    this.pending.add(loop);
    void loop.then(() => this.pending.delete(loop));
  }

  private async post(url: string, token: string): Promise<number> {
    const attempt: FakeEfiNotification = { url, token, status: 0, at: this.now() };
    this.notifications.push(attempt);
    try {
      const response = await undiciRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ notification: token }).toString(),
        dispatcher: this.agent,
        signal: AbortSignal.any([this.aborter.signal, AbortSignal.timeout(10_000)]),
      });
      await response.body.dump();
      attempt.status = response.statusCode;
    } catch {
      attempt.status = 0;
    }
    return attempt.status;
  }

  /** A pause that close() ends early. */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.set(timer, resolve);
    });
  }

  /** Today in Brasília, `YYYY-MM-DD`. */
  private today(): string {
    return new Date(this.now() + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);
  }

  /** Efí's timestamps: `YYYY-MM-DD HH:mm:ss`, Brasília time. */
  private stamp(): string {
    return new Date(this.now() + BRASILIA_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
  }
}

/** A one-page PDF 1.4 showing `text` (ASCII), with a correct cross-reference table. */
export function minimalPdf(text: string): Buffer {
  const safe = text.replace(/[^\x20-\x7e]/g, '?').replace(/([\\()])/g, '\\$1');
  const stream = `BT /F1 10 Tf 40 800 Td (${safe}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
