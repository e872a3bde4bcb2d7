/**
 * A local fake of STP (Sistema de Transferencias y Pagos, SPEI participant 90646) for Cashgate's tests, built
 * from the sources docs/stp.md lists: `PUT /speiws/rest/ordenPago/registra` checking every field and the firma
 * (RSA PKCS#1 v1.5 SHA-256 over the 34-field cadena, with the company's registered public key) and answering
 * STP's `{resultado:{id}}` codes; payouts that settle (LQ), are cancelled (CN) or returned (D + causa) a moment
 * later, announced by a "cambio de estado" POST (Shape A or B) retried until a 2xx; incoming transfers ("abonos")
 * the test sends to the company's CLABEs, posted until the gateway replies `{"mensaje":"confirmar"}` or
 * `{"mensaje":"devolver","id":<causa>}`; and the queries that are the source of truth, `POST /efws/API/consultaOrden`
 * and `POST /speiws/rest/ordenPago/consOrdenesFech`, each with its firma checked. Plain HTTP on 127.0.0.1.
 *
 * The fake builds its cadenas itself (not with src/rails/stp/firma.ts), so a client that signs the wrong bytes
 * is refused here as STP would refuse it.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { buildClabe, isValidClabe, MX_BANKS } from '../../src/rails/stp/clabe.js';
import { mexicoCityDate, STP_RETURN_CAUSES } from '../../src/rails/stp/client.js';

export const STP_TEST = { empresa: 'CASHGATE', clabePrefix: '6461801570' } as const;

/** A fresh 2048-bit RSA key pair for one test run: the private key as STP issues it (encrypted PKCS#8 PEM). */
export function stpTestKeys(): { privateKeyPem: string; passphrase: string; publicKey: KeyObject } {
  const passphrase = 'cashgate-test';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
  });
  return { privateKeyPem: privateKey, passphrase, publicKey: createPublicKey(publicKey) };
}

/** The environment of a gateway on this local STP, listening on `port`; `keyPath` holds stpTestKeys()'s PEM. */
export function stpGatewayEnv(
  fake: Pick<FakeStp, 'url' | 'empresa' | 'clabePrefix'>,
  port: number,
  keyPath: string,
): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MEXICO_SPEI_RAIL: 'stp',
    STP_BASE_URL: `${fake.url}/speiws/rest`,
    STP_QUERY_URL: fake.url,
    STP_EMPRESA: fake.empresa,
    STP_PRIVATE_KEY: keyPath,
    STP_PRIVATE_KEY_PASSPHRASE: 'cashgate-test',
    STP_CLABE_PREFIX: fake.clabePrefix,
  };
}

export type FakeStpOperation = 'registra' | 'consultaOrden' | 'consOrdenesFech';

export type FakeStpFault =
  /** 500, nothing done */
  | 'server-error'
  /** 503, nothing done */
  | 'unavailable'
  /** the operation is performed, but the answer is never sent (the socket is held until close()) */
  | 'timeout-after'
  /** nothing is performed and the answer is never sent */
  | 'timeout-before'
  /** nothing is performed; the socket is destroyed */
  | 'reset';

/** How a registered payout ends: settled, cancelled, returned with a causa, or held (pending) until `resolveOrder`. */
export type FakeStpOutcome = 'LQ' | 'CN' | { estado: 'D'; causaDevolucion: number } | 'hold';

export interface FakeStpRequest {
  operation: FakeStpOperation | 'unknown';
  method: string;
  path: string;
  /** parsed JSON, or the raw text when it is not JSON (undefined when empty) */
  body: any;
  /** HTTP status answered; 0 when the answer was held or the connection reset */
  status: number;
  at: number;
}

export interface FakeStpOrder {
  /** STP's id (the folio registra answered, or the received order's id) */
  id: number;
  /** E sent (a payout), R received (an abono) */
  tipo: 'E' | 'R';
  claveRastreo: string;
  /** A (registered), LQ, CN, D for sent orders; R (unanswered), LQ (confirmed), D (returned) for received */
  estado: string;
  /** centavos */
  monto: bigint;
  /** YYYYMMDD, Mexico City */
  fechaOperacion: string;
  causaDevolucion?: number;
  tsCaptura: number;
  tsLiquidacion?: number;
  tsDevolucion?: number;
  /** the order's fields as registered (sent) or as the abono carried them (received) */
  fields: Record<string, any>;
}

export interface FakeStpWebhook {
  kind: 'abono' | 'estado';
  url: string;
  body: Record<string, unknown>;
  /** HTTP status answered; 0 when the POST failed or got no answer */
  status: number;
  /** the reply, parsed as JSON when it is JSON */
  reply: unknown;
  at: number;
}

export interface FakeStpAbonoOptions {
  cuentaBeneficiario: string;
  /** pesos, at most 2 decimals: '123.45' */
  monto: string;
  nombreOrdenante?: string;
  cuentaOrdenante?: string;
  /** the sending bank's 5-digit key (default 40012, BBVA) */
  institucionOrdenante?: string;
  claveRastreo?: string;
  /** YYYYMMDD (default today in Mexico City) */
  fechaOperacion?: string;
  conceptoPago?: string;
  referenciaNumerica?: number;
  /** the webhook's field casing: camelCase (default) or the older capitalised variant */
  casing?: 'camel' | 'capital';
  /** deliver the same abono twice (the second after the first is answered) */
  duplicate?: boolean;
  /** a lost webhook: nothing is posted; only a query reveals the received order */
  lost?: boolean;
}

export interface FakeStpAbono {
  id: string;
  claveRastreo: string;
  /** the webhook body posted */
  body: Record<string, unknown>;
  /** every reply received, in order (status 0: none) */
  replies: { status: number; body: unknown; at: number }[];
  outcome: 'delivering' | 'confirmed' | 'returned' | 'unanswered' | 'lost';
  causaDevolucion?: number;
}

export interface FakeStp {
  /** http://127.0.0.1:PORT (efws host; the REST base is `${url}/speiws/rest`) */
  url: string;
  empresa: string;
  clabePrefix: string;
  /** where cambio-de-estado webhooks go (none posted while undefined) */
  orderWebhookUrl: string | undefined;
  /** where abono webhooks go */
  abonoWebhookUrl: string | undefined;
  /** the cambio-de-estado body shape (default A) */
  cambioEstadoShape: 'A' | 'B';
  /** every request received, in order */
  readonly requests: FakeStpRequest[];
  /** orders by id (as a string), sent and received */
  readonly orders: Map<string, FakeStpOrder>;
  /** abonos by id */
  readonly abonos: Map<string, FakeStpAbono>;
  /** every webhook POST attempt, in order */
  readonly webhooks: FakeStpWebhook[];
  /** the next `times` requests to `operation` fail this way */
  failNext(operation: FakeStpOperation, fault: FakeStpFault, times?: number): void;
  /** the next `times` requests to `operation` wait `ms` before they are processed and answered */
  delayNext(operation: FakeStpOperation, ms: number, times?: number): void;
  /** the next `times` registered payouts end this way (default: LQ) */
  nextOutcome(outcome: FakeStpOutcome, times?: number): void;
  /** the next `times` registra calls that pass every other check are refused by PLD (-200) */
  rejectPldNext(times?: number): void;
  /** ends a held payout (or changes any payout's state), then posts its cambio de estado */
  resolveOrder(id: string | number, outcome: Exclude<FakeStpOutcome, 'hold'>): FakeStpOrder;
  /** an incoming SPEI transfer to one of the company's CLABEs; resolves once delivery has ended */
  sendAbono(options: FakeStpAbonoOptions): Promise<FakeStpAbono>;
  /** posts an abono again (until answered, as the first time); a reply changes nothing once it was answered */
  redeliver(id: string | number): Promise<FakeStpAbono>;
  /** resolves when no payout and no webhook is pending */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeStp(options: {
  publicKey: KeyObject;
  empresa: string;
  clabePrefix?: string;
  webhookRetryMs?: number;
  maxWebhookTries?: number;
  /** how long a registered payout stays `A` before its outcome (default 50 ms) */
  settleMs?: number;
  now?: () => number;
}): Promise<FakeStp> {
  const fake = new FakeStpServer(
    options.publicKey,
    options.empresa,
    options.clabePrefix ?? STP_TEST.clabePrefix,
    options.webhookRetryMs ?? 100,
    options.maxWebhookTries ?? 10,
    options.settleMs ?? 50,
    options.now ?? Date.now,
  );
  await fake.listen();
  return fake;
}

// ---------------------------------------------------------------------------------------------------------------

/** The 34 fields of an order's cadena original, in STP's order (written here independently of src/). */
const ORDEN_FIELDS = `institucionContraparte empresa fechaOperacion folioOrigen claveRastreo institucionOperante monto
  tipoPago tipoCuentaOrdenante nombreOrdenante cuentaOrdenante rfcCurpOrdenante tipoCuentaBeneficiario
  nombreBeneficiario cuentaBeneficiario rfcCurpBeneficiario emailBeneficiario tipoCuentaBeneficiario2
  nombreBeneficiario2 cuentaBeneficiario2 rfcCurpBeneficiario2 conceptoPago conceptoPago2 claveCatUsuario1
  claveCatUsuario2 clavePago referenciaCobranza referenciaNumerica tipoOperacion topologia usuario medioEntrega
  prioridad iva`.split(/\s+/);

const REQUIRED_ORDEN_FIELDS = [
  'empresa',
  'firma',
  'claveRastreo',
  'conceptoPago',
  'cuentaBeneficiario',
  'nombreBeneficiario',
  'institucionContraparte',
  'institucionOperante',
  'monto',
  'tipoPago',
  'tipoCuentaBeneficiario',
  'rfcCurpBeneficiario',
  'referenciaNumerica',
  'cuentaOrdenante',
  'tipoCuentaOrdenante',
];

const STP = '90646';
/** Institutions STP refuses as a destination (stpmex-python `BLOCKED_INSTITUTIONS`). */
const BLOCKED = new Set(['90642']);
/** The 5-digit keys the fake knows: MX_BANKS, and Banxico's development banks it lists. */
const KNOWN_INSTITUTIONS = new Set(Object.values(MX_BANKS).map((bank) => bank.code5));
const MAX_MONTO = 999_999_999_999_99n;

/** Pesos (a JSON number by its shortest text, or a string) to centavos; undefined unless ≥ 0 with ≤ 2 decimals. */
function centavos(value: unknown): bigint | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (match === null) return undefined;
  return BigInt(match[1] ?? '0') * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

function pesos(cents: bigint): string {
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
}

/** A JSON text in which every bigint (centavos: monto) is written as a raw 2-decimal number (`10.90`), as STP writes amounts. */
function stpJson(value: unknown): string {
  const marker = `__raw_${randomBytes(4).toString('hex')}__`;
  const json = JSON.stringify(value, (key, inner: unknown) =>
    typeof inner === 'bigint' ? `${marker}${pesos(inner)}` : inner,
  );
  return json.replace(new RegExp(`"${marker}(\\d+\\.\\d{2})"`, 'g'), '$1');
}

function isObject(value: unknown): value is Record<string, any> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

function cadenaOrden(body: Record<string, any>): string {
  const values = ORDEN_FIELDS.map((name) => {
    const value = body[name];
    if (value === undefined || value === null) return '';
    if ((name === 'monto' || name === 'iva') && value !== '') {
      // signed here: a negative amount is refused (-20) after the firma, not as a bad firma
      const text = String(value);
      const negative = text.startsWith('-');
      const cents = centavos(negative ? text.slice(1) : text);
      return cents === undefined ? text : `${negative ? '-' : ''}${pesos(cents)}`;
    }
    return String(value);
  });
  return `||${values.join('|')}||`;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: object,
  ) {
    super(JSON.stringify(body));
  }
}

function resultado(id: number, descripcionError: string): Refusal {
  return new Refusal(200, { resultado: { id, descripcionError } });
}

class FakeStpServer implements FakeStp {
  url = '';
  orderWebhookUrl: string | undefined;
  abonoWebhookUrl: string | undefined;
  cambioEstadoShape: 'A' | 'B' = 'A';
  readonly requests: FakeStpRequest[] = [];
  readonly orders = new Map<string, FakeStpOrder>();
  readonly abonos = new Map<string, FakeStpAbono>();
  readonly webhooks: FakeStpWebhook[] = [];
  private readonly server: Server;
  private readonly faults = new Map<FakeStpOperation, FakeStpFault[]>();
  private readonly delays = new Map<FakeStpOperation, number[]>();
  private readonly outcomes: FakeStpOutcome[] = [];
  private pld = 0;
  private readonly held = new Set<ServerResponse>();
  private readonly pending = new Set<Promise<void>>();
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly agent = new Agent({ keepAliveTimeout: 1000 });
  private readonly aborter = new AbortController();
  private nextId = 9_349_827;
  private closed = false;

  constructor(
    private readonly publicKey: KeyObject,
    readonly empresa: string,
    readonly clabePrefix: string,
    private readonly retryMs: number,
    private readonly maxTries: number,
    private readonly settleMs: number,
    private readonly now: () => number,
  ) {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  failNext(operation: FakeStpOperation, fault: FakeStpFault, times = 1): void {
    const queue = this.faults.get(operation) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(operation, queue);
  }

  delayNext(operation: FakeStpOperation, ms: number, times = 1): void {
    const queue = this.delays.get(operation) ?? [];
    for (let i = 0; i < times; i++) queue.push(ms);
    this.delays.set(operation, queue);
  }

  nextOutcome(outcome: FakeStpOutcome, times = 1): void {
    for (let i = 0; i < times; i++) this.outcomes.push(outcome);
  }

  rejectPldNext(times = 1): void {
    this.pld += times;
  }

  resolveOrder(id: string | number, outcome: Exclude<FakeStpOutcome, 'hold'>): FakeStpOrder {
    const order = this.orders.get(String(id));
    if (order?.tipo !== 'E') throw new Error(`fake STP: no payout ${String(id)}`);
    this.finish(order, outcome);
    return order;
  }

  async sendAbono(options: FakeStpAbonoOptions): Promise<FakeStpAbono> {
    const cents = centavos(options.monto);
    if (cents === undefined || cents <= 0n) throw new Error(`fake STP: bad abono monto ${options.monto}`);
    const id = this.nextId++;
    const now = this.now();
    const fechaOperacion = options.fechaOperacion ?? mexicoCityDate(now);
    const claveRastreo = options.claveRastreo ?? `FAKE${randomBytes(6).toString('hex').toUpperCase()}`;
    const institucionOrdenante = options.institucionOrdenante ?? '40012';
    const fields = {
      claveRastreo,
      conceptoPago: options.conceptoPago ?? 'PAGO',
      cuentaBeneficiario: options.cuentaBeneficiario,
      cuentaOrdenante: options.cuentaOrdenante ?? buildClabe('0121800000', id % 10_000_000),
      empresa: this.empresa,
      institucionOrdenante,
      nombreBeneficiario: 'CASHGATE CLIENTE',
      nombreOrdenante: options.nombreOrdenante ?? 'JUAN PEREZ LOPEZ',
      referenciaNumerica: options.referenciaNumerica ?? 1_234_567,
      rfcCurpOrdenante: 'ND',
    };
    const order: FakeStpOrder = {
      id,
      tipo: 'R',
      claveRastreo,
      estado: 'R',
      monto: cents,
      fechaOperacion,
      tsCaptura: now,
      tsLiquidacion: now,
      fields,
    };
    this.orders.set(String(id), order);
    const body: Record<string, unknown> =
      options.casing === 'capital'
        ? {
            Clave: id,
            FechaOperacion: Number(fechaOperacion),
            InstitucionOrdenante: institucionOrdenante,
            InstitucionBeneficiaria: STP,
            ClaveRastreo: claveRastreo,
            Monto: cents,
            NombreOrdenante: fields.nombreOrdenante,
            TipoCuentaOrdenante: 40,
            CuentaOrdenante: fields.cuentaOrdenante,
            RFCCurpOrdenante: 'ND',
            NombreBeneficiario: fields.nombreBeneficiario,
            TipoCuentaBeneficiario: 40,
            CuentaBeneficiario: options.cuentaBeneficiario,
            RFCCurpBeneficiario: 'ND',
            ConceptoPago: fields.conceptoPago,
            ReferenciaNumerica: fields.referenciaNumerica,
            Empresa: this.empresa,
          }
        : {
            id,
            fechaOperacion: Number(fechaOperacion),
            institucionOrdenante: Number(institucionOrdenante),
            institucionBeneficiaria: Number(STP),
            claveRastreo,
            monto: cents,
            nombreOrdenante: fields.nombreOrdenante,
            tipoCuentaOrdenante: 40,
            cuentaOrdenante: fields.cuentaOrdenante,
            rfcCurpOrdenante: 'ND',
            nombreBeneficiario: fields.nombreBeneficiario,
            tipoCuentaBeneficiario: 40,
            cuentaBeneficiario: options.cuentaBeneficiario,
            nombreBeneficiario2: null,
            tipoCuentaBeneficiario2: null,
            cuentaBeneficiario2: null,
            rfcCurpBeneficiario: 'ND',
            conceptoPago: fields.conceptoPago,
            referenciaNumerica: fields.referenciaNumerica,
            empresa: this.empresa,
            tipoPago: 1,
            tsLiquidacion: now,
            folioCodi: null,
          };
    const abono: FakeStpAbono = {
      id: String(id),
      claveRastreo,
      body,
      replies: [],
      outcome: options.lost === true ? 'lost' : 'delivering',
    };
    this.abonos.set(abono.id, abono);
    if (options.lost === true) return abono;
    await this.track(this.deliverAbono(abono, options.duplicate === true ? 2 : 1));
    return abono;
  }

  async redeliver(id: string | number): Promise<FakeStpAbono> {
    const abono = this.abonos.get(String(id));
    if (abono === undefined) throw new Error(`fake STP: no abono ${String(id)}`);
    if (abono.outcome === 'lost' || abono.outcome === 'unanswered') abono.outcome = 'delivering';
    await this.track(this.deliverAbono(abono, 1));
    return abono;
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
    const operation = this.route(method, url.pathname);
    const record: FakeStpRequest = {
      operation: operation ?? 'unknown',
      method,
      path: url.pathname,
      body,
      status: 0,
      at: this.now(),
    };
    this.requests.push(record);
    const send = (status: number, payload: object | string): void => {
      record.status = status;
      const bytes = Buffer.from(typeof payload === 'string' ? payload : stpJson(payload));
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
      response.end(bytes);
    };
    if (operation === undefined) {
      send(404, { timestamp: new Date(this.now()).toISOString(), status: 404, error: 'Not Found', path: url.pathname });
      return;
    }
    const delay = this.delays.get(operation)?.shift();
    if (delay !== undefined) await this.wait(delay);
    const fault = this.faults.get(operation)?.shift();
    if (fault === 'reset') return void request.socket.destroy();
    if (fault === 'timeout-before') return void this.held.add(response);
    if (fault === 'server-error') return send(500, '<html><body><h1>500 Internal Server Error</h1></body></html>');
    if (fault === 'unavailable') return send(503, '<html><body><h1>503 Service Unavailable</h1></body></html>');
    let result: { status: number; payload: object };
    try {
      if (!isObject(body))
        throw new Refusal(400, { resultado: { id: 0, descripcionError: 'Formato de mensaje invalido' } });
      result =
        operation === 'registra'
          ? this.registra(body)
          : operation === 'consultaOrden'
            ? this.consultaOrden(body)
            : this.consOrdenesFech(body);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      result = { status: error.status, payload: error.body };
    }
    if (fault === 'timeout-after') return void this.held.add(response);
    send(result.status, result.payload);
  }

  private route(method: string, path: string): FakeStpOperation | undefined {
    if (method === 'PUT' && path === '/speiws/rest/ordenPago/registra') return 'registra';
    if (method === 'POST' && path === '/efws/API/consultaOrden') return 'consultaOrden';
    if (method === 'POST' && path === '/speiws/rest/ordenPago/consOrdenesFech') return 'consOrdenesFech';
    return undefined;
  }

  private signedBy(cadena: string, firma: unknown): boolean {
    if (typeof firma !== 'string' || firma === '') return false;
    try {
      return cryptoVerify('sha256', Buffer.from(cadena, 'utf8'), this.publicKey, Buffer.from(firma, 'base64'));
    } catch {
      return false;
    }
  }

  // --- registra

  private registra(body: Record<string, any>): { status: number; payload: object } {
    for (const name of REQUIRED_ORDEN_FIELDS) {
      if (!present(body[name])) throw resultado(0, `El campo ${name} es obligatorio`);
    }
    // An unknown empresa has no registered key: its firma cannot be validated.
    if (body.empresa !== this.empresa || !this.signedBy(cadenaOrden(body), body.firma))
      throw resultado(0, 'Error validando la firma');
    for (const name of ['nombreBeneficiario', 'conceptoPago', 'nombreOrdenante']) {
      const value = body[name];
      if (value !== undefined && (typeof value !== 'string' || value.length > 39 || !/^[\x20-\x7e]*$/.test(value)))
        throw resultado(0, `El campo ${name} es invalido`);
    }
    const clave = String(body.claveRastreo);
    if (clave.length > 29 || !/^[A-Za-z0-9]+$/.test(clave)) throw resultado(-34, 'Clave de rastreo invalida');
    if ([...this.orders.values()].some((order) => order.tipo === 'E' && order.claveRastreo === clave))
      throw resultado(-1, `La clave de rastreo ${clave} ya fue utilizada`);
    const operante = String(body.institucionOperante);
    if (operante !== STP) throw resultado(-9, `La Institucion ${operante} no es valida`);
    const contraparte = String(body.institucionContraparte);
    if (!/^\d{5}$/.test(contraparte) || !KNOWN_INSTITUTIONS.has(contraparte) || BLOCKED.has(contraparte))
      throw resultado(-9, `La Institucion ${contraparte} no es valida`);
    const tipoBeneficiario = Number(body.tipoCuentaBeneficiario);
    const cuenta = String(body.cuentaBeneficiario);
    const lengthFits =
      (tipoBeneficiario === 40 && /^\d{18}$/.test(cuenta)) ||
      (tipoBeneficiario === 3 && /^\d{15,16}$/.test(cuenta)) ||
      (tipoBeneficiario === 10 && /^\d{10}$/.test(cuenta));
    if (!lengthFits || Number(body.tipoCuentaOrdenante) !== 40) throw resultado(-11, 'Tipo de cuenta invalido');
    const monto = centavos(body.monto);
    if (monto === undefined || monto <= 0n || monto > MAX_MONTO) throw resultado(-20, 'Monto invalido');
    const referencia = Number(body.referenciaNumerica);
    if (!Number.isInteger(referencia) || referencia < 1 || referencia > 9_999_999)
      throw resultado(0, 'El campo referenciaNumerica es invalido');
    const ordenante = String(body.cuentaOrdenante);
    if (!isValidClabe(ordenante) || !ordenante.startsWith(this.clabePrefix))
      throw resultado(-7, `La cuenta ${ordenante} no existe`);
    if (tipoBeneficiario === 40) {
      if (!isValidClabe(cuenta)) throw resultado(-7, `La cuenta ${cuenta} no existe`);
      if (cuenta.slice(0, 3) !== contraparte.slice(2))
        throw resultado(-22, 'La cuenta clabe no coincide para la institucion operante');
    }
    if (cuenta === ordenante) throw resultado(-24, 'Cuenta ordenante y beneficiaria iguales');
    if (this.pld > 0) {
      this.pld--;
      throw resultado(-200, 'Se rechaza por PLD');
    }
    const id = this.nextId++;
    const now = this.now();
    const fields = { ...body };
    delete fields.firma;
    const order: FakeStpOrder = {
      id,
      tipo: 'E',
      claveRastreo: clave,
      estado: 'A',
      monto,
      fechaOperacion: typeof body.fechaOperacion === 'string' ? body.fechaOperacion : mexicoCityDate(now),
      tsCaptura: now,
      fields,
    };
    this.orders.set(String(id), order);
    const outcome = this.outcomes.shift() ?? 'LQ';
    if (outcome !== 'hold') {
      void this.track(
        (async () => {
          await this.wait(this.settleMs);
          if (!this.closed && order.estado === 'A') this.finish(order, outcome);
        })(),
      );
    }
    return { status: 200, payload: { resultado: { id } } };
  }

  /** A payout's new state, then its cambio de estado webhook (retried until a 2xx). */
  private finish(order: FakeStpOrder, outcome: Exclude<FakeStpOutcome, 'hold'>): void {
    const now = this.now();
    if (outcome === 'LQ') {
      order.estado = 'LQ';
      order.tsLiquidacion = now;
    } else if (outcome === 'CN') {
      order.estado = 'CN';
    } else {
      order.estado = 'D';
      order.tsLiquidacion ??= now;
      order.tsDevolucion = now;
      order.causaDevolucion = outcome.causaDevolucion;
    }
    const url = this.orderWebhookUrl;
    if (url === undefined) return;
    const body: Record<string, unknown> =
      this.cambioEstadoShape === 'A'
        ? {
            id: order.id,
            empresa: this.empresa,
            claveRastreo: order.claveRastreo,
            estado: order.estado,
            ...(order.causaDevolucion !== undefined && { causaDevolucion: order.causaDevolucion }),
            tsLiquidacion: order.tsLiquidacion ?? null,
          }
        : {
            id: order.id,
            Estado: order.estado === 'LQ' ? 'LIQUIDACION' : order.estado === 'D' ? 'DEVOLUCION' : 'CANCELACION',
            Detalle:
              order.causaDevolucion !== undefined
                ? `${order.causaDevolucion} ${STP_RETURN_CAUSES[order.causaDevolucion] ?? ''}`.trim()
                : '',
          };
    void this.track(
      (async () => {
        for (let tries = 0; tries < this.maxTries && !this.closed; tries++) {
          if (tries > 0) await this.wait(this.retryMs);
          if (this.isClosed()) return;
          const { status } = await this.post('estado', url, body);
          if (status >= 200 && status < 300) return;
        }
      })(),
    );
  }

  // --- abonos

  /** Posts the abono `times` times in a row, each until a usable reply or maxTries; the first usable reply decides. */
  private async deliverAbono(abono: FakeStpAbono, times: number): Promise<void> {
    const url = this.abonoWebhookUrl;
    if (url === undefined) throw new Error('fake STP: abonoWebhookUrl is not set');
    const order = this.orders.get(abono.id);
    if (order === undefined) return;
    for (let delivery = 0; delivery < times; delivery++) {
      let answered = false;
      for (let tries = 0; tries < this.maxTries && !this.closed; tries++) {
        if (tries > 0) await this.wait(this.retryMs);
        if (this.isClosed()) break;
        const { status, reply } = await this.post('abono', url, abono.body);
        abono.replies.push({ status, body: reply, at: this.now() });
        const decision = status >= 200 && status < 300 ? decisionOf(reply) : undefined;
        if (decision === undefined) continue;
        answered = true;
        if (order.estado === 'R') {
          if (decision.mensaje === 'confirmar') {
            order.estado = 'LQ';
            abono.outcome = 'confirmed';
          } else {
            order.estado = 'D';
            order.causaDevolucion = decision.causa;
            order.tsDevolucion = this.now();
            abono.outcome = 'returned';
            abono.causaDevolucion = decision.causa;
          }
        }
        break;
      }
      if (!answered && order.estado === 'R') abono.outcome = 'unanswered';
    }
  }

  private async post(
    kind: 'abono' | 'estado',
    url: string,
    body: Record<string, unknown>,
  ): Promise<{ status: number; reply: unknown }> {
    const attempt: FakeStpWebhook = { kind, url, body, status: 0, reply: undefined, at: this.now() };
    this.webhooks.push(attempt);
    try {
      const response = await undiciRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stpJson(body),
        dispatcher: this.agent,
        signal: AbortSignal.any([this.aborter.signal, AbortSignal.timeout(10_000)]),
      });
      const text = await response.body.text();
      attempt.status = response.statusCode;
      try {
        attempt.reply = text === '' ? undefined : JSON.parse(text);
      } catch {
        attempt.reply = text;
      }
    } catch {
      attempt.status = 0;
    }
    return { status: attempt.status, reply: attempt.reply };
  }

  // --- queries

  private consultaOrden(body: Record<string, any>): { status: number; payload: object } {
    const clave = typeof body.claveRastreo === 'string' ? body.claveRastreo : '';
    const tipo = body.tipoOrden;
    const fecha = typeof body.fechaOperacion === 'string' ? body.fechaOperacion : undefined;
    const cadena = `||${String(body.empresa)}|${clave}|${String(tipo)}|${fecha ?? ''}||`;
    if (body.empresa !== this.empresa || !this.signedBy(cadena, body.firma))
      throw new Refusal(400, { estado: 3, mensaje: 'Error validando la firma' });
    if (clave === '')
      throw new Refusal(400, { estado: 2, mensaje: '{claveRastreo=el campo clave de rastreo no puede venir vacio}' });
    if (tipo !== 'E' && tipo !== 'R')
      throw new Refusal(400, { estado: 2, mensaje: '{tipoOrden=el campo tipo de orden debe ser E o R}' });
    const day = fecha ?? mexicoCityDate(this.now());
    const order = [...this.orders.values()].find(
      (o) => o.tipo === tipo && o.claveRastreo === clave && o.fechaOperacion === day,
    );
    if (order === undefined) throw new Refusal(400, { estado: 6, mensaje: 'No se encontraron datos relacionados' });
    return {
      status: 200,
      payload: { estado: 0, mensaje: 'Datos consultados correctamente', respuesta: this.efwsView(order) },
    };
  }

  private consOrdenesFech(body: Record<string, any>): { status: number; payload: object } {
    const fecha = typeof body.fechaOperacion === 'string' ? body.fechaOperacion : undefined;
    const cadena = `|||${String(body.empresa)}|${fecha ?? ''}|||${'|'.repeat(30)}`;
    if (body.empresa !== this.empresa || !this.signedBy(cadena, body.firma))
      throw resultado(0, 'Error validando la firma');
    const tipo = body.estado;
    if (tipo !== 'E' && tipo !== 'R') throw resultado(0, 'El campo estado es invalido');
    const day = fecha ?? mexicoCityDate(this.now());
    const list = [...this.orders.values()].filter((o) => o.tipo === tipo && o.fechaOperacion === day);
    if (list.length === 0) throw resultado(-100, 'No se encontraron ordenes');
    return { status: 200, payload: { resultado: { id: 1, lst: list.map((o) => this.listView(o)) } } };
  }

  /** An order as efws consultaOrden answers it (monto a raw 2-decimal number, ts* epoch ms). */
  private efwsView(order: FakeStpOrder): object {
    const f = order.fields;
    const received = order.tipo === 'R';
    return {
      idEF: order.id,
      claveRastreo: order.claveRastreo,
      conceptoPago: f.conceptoPago ?? null,
      cuentaBeneficiario: f.cuentaBeneficiario ?? null,
      cuentaOrdenante: f.cuentaOrdenante ?? null,
      empresa: this.empresa,
      estado: order.estado,
      fechaOperacion: Number(order.fechaOperacion),
      institucionContraparte: Number(received ? f.institucionOrdenante : f.institucionContraparte),
      institucionOperante: Number(STP),
      medioEntrega: 3,
      monto: order.monto,
      nombreBeneficiario: f.nombreBeneficiario ?? null,
      nombreOrdenante: f.nombreOrdenante ?? null,
      nombreCep: null,
      rfcCep: null,
      sello: null,
      rfcCurpBeneficiario: f.rfcCurpBeneficiario ?? 'ND',
      referenciaNumerica: f.referenciaNumerica !== undefined ? Number(f.referenciaNumerica) : null,
      rfcCurpOrdenante: f.rfcCurpOrdenante ?? null,
      tipoCuentaBeneficiario: Number(f.tipoCuentaBeneficiario ?? 40),
      tipoCuentaOrdenante: Number(f.tipoCuentaOrdenante ?? 40),
      tipoPago: 1,
      tsCaptura: order.tsCaptura,
      tsLiquidacion: order.tsLiquidacion ?? null,
      causaDevolucion: order.causaDevolucion ?? null,
      urlCEP: null,
    };
  }

  /** An order as consOrdenesFech lists it: as recorded from STP, with no id of the order. */
  private listView(order: FakeStpOrder): object {
    const f = order.fields;
    const received = order.tipo === 'R';
    return {
      causaDevolucion: order.causaDevolucion ?? null,
      clavePago: '',
      claveRastreo: order.claveRastreo,
      claveRastreoDevolucion: order.estado === 'D' ? String(order.id + 9_000_000) : null,
      conceptoPago: f.conceptoPago ?? '',
      conceptoPago2: '',
      cuentaBeneficiario: f.cuentaBeneficiario ?? '',
      cuentaBeneficiario2: '',
      cuentaOrdenante: f.cuentaOrdenante ?? '',
      empresa: this.empresa,
      estado: order.estado,
      fechaOperacion: Number(order.fechaOperacion),
      institucionContraparte: Number(received ? f.institucionOrdenante : f.institucionContraparte),
      institucionOperante: Number(STP),
      medioEntrega: 3,
      monto: order.monto,
      nombreBeneficiario: f.nombreBeneficiario ?? '',
      nombreBeneficiario2: '',
      nombreOrdenante: f.nombreOrdenante ?? '',
      prioridad: Number(f.prioridad ?? 0),
      referenciaCobranza: '',
      referenciaNumerica: Number(f.referenciaNumerica ?? 0),
      rfcCurpBeneficiario: f.rfcCurpBeneficiario ?? 'ND',
      rfcCurpBeneficiario2: '',
      rfcCurpOrdenante: f.rfcCurpOrdenante ?? '',
      tipoCuentaBeneficiario: Number(f.tipoCuentaBeneficiario ?? 40),
      tipoCuentaOrdenante: Number(f.tipoCuentaOrdenante ?? 40),
      tipoPago: 1,
      topologia: f.topologia ?? 'T',
      tsCaptura: order.tsCaptura,
      tsDevolucion: order.tsDevolucion ?? null,
      tsLiquidacion: order.tsLiquidacion ?? null,
      usuario: this.empresa.toLowerCase(),
    };
  }

  // --- plumbing

  private track(work: Promise<void>): Promise<void> {
    this.pending.add(work);
    const done = work.finally(() => this.pending.delete(work));
    void done.catch(() => undefined);
    return work;
  }

  /** Whether close() was called (read through a call: it changes while a loop awaits). */
  private isClosed(): boolean {
    return this.closed;
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
}

/** The gateway's reply to an abono: confirmar, or devolver with a known return cause; undefined when neither. */
function decisionOf(reply: unknown): { mensaje: 'confirmar' } | { mensaje: 'devolver'; causa: number } | undefined {
  if (!isObject(reply)) return undefined;
  if (reply.mensaje === 'confirmar') return { mensaje: 'confirmar' };
  if (reply.mensaje === 'devolver') {
    const causa = Number(reply.id);
    if (Number.isInteger(causa) && Object.hasOwn(STP_RETURN_CAUSES, causa)) return { mensaje: 'devolver', causa };
  }
  return undefined;
}
