/**
 * A client of STP (Sistema de Transferencias y Pagos), Mexico's SPEI participant 90646: payout
 * orders (`PUT /ordenPago/registra`), the order queries that are the source of truth (efws
 * `consultaOrden`, `/ordenPago/consOrdenesFech`), and pure parsers of the two webhooks STP posts
 * (an incoming transfer, "abono"; a payout's change of state, "cambio de estado"). Every write
 * carries `empresa` and a `firma` (firma.ts); there is no token. docs/stp.md lists the sources
 * and what stays unconfirmed.
 */
import type { KeyObject } from 'node:crypto';
import type { Registry } from 'prom-client';
import { Agent, request, type Dispatcher } from 'undici';
import { parseDecimal, type Minor } from '../../money.js';
import { isConnectError, lostExchange, providerCallMetrics, type ProviderExchange } from '../network.js';
import { cadenaConsultaFecha, cadenaConsultaOrden, cadenaOriginalOrden, formatMonto, signCadena } from './firma.js';

export interface StpConfig {
  /** The REST base, e.g. `https://demo.stpmex.com:7024/speiws/rest` or `https://prod.stpmex.com/speiws/rest` (no trailing slash). */
  baseUrl: string;
  /** The efws host, e.g. `https://efws-dev.stpmex.com` or `https://prod.stpmex.com` (no trailing slash, no `/efws`). */
  queryUrl: string;
  /** The company code STP gave (e.g. `TAMIZI`). */
  empresa: string;
  /** The company's RSA private key (firma.ts `loadStpPrivateKey`). */
  privateKey: KeyObject;
  /** How long one call may take before its outcome counts as unknown. */
  timeoutMs: number;
  /** The connection pool to use (closed by its owner); the client makes its own otherwise. */
  dispatcher?: Dispatcher;
  registry?: Registry;
  now?: () => number;
}

/** STP's own Banxico participant key. */
export const STP_INSTITUCION = '90646';

/** The operations this client calls, by the name metrics and exchanges give them. */
export type StpOperation = 'registra' | 'consultaOrden' | 'consOrdenesFech';

/** A payout order. Amounts in centavos; texts are made ASCII and cut to STP's lengths before they are signed. */
export interface StpOrdenRequest {
  /** ≤ 29 letters and digits, unique: STP's idempotency key (a reused one is refused with -1). */
  claveRastreo: string;
  monto: Minor;
  /** ≤ 39 ASCII characters (longer is cut). */
  conceptoPago: string;
  /** CLABE (18), card (15/16) or phone (10). */
  cuentaBeneficiario: string;
  /** ≤ 39 ASCII characters (longer is cut). */
  nombreBeneficiario: string;
  /** The receiving bank's 5-digit Banxico key (e.g. `40072` Banorte). */
  institucionContraparte: string;
  /** The company's own CLABE at STP. */
  cuentaOrdenante: string;
  /** 1 to 9 999 999. */
  referenciaNumerica: number;
  /** ≤ 18; `ND` when unknown (the default). */
  rfcCurpBeneficiario?: string;
  /** 40 CLABE, 3 card, 10 phone; by default from the account's length. */
  tipoCuentaBeneficiario?: number;
  nombreOrdenante?: string;
  rfcCurpOrdenante?: string;
  /** 40 (CLABE), the default. */
  tipoCuentaOrdenante?: number;
  /** 0 normal (the default), 1 high. */
  prioridad?: 0 | 1;
  /** `YYYYMMDD`; left out by default (STP takes its current operating day). */
  fechaOperacion?: string;
}

/** One call as it happened, for the order's rail messages (the firma shortened; redacted further by the caller). */
export type StpExchange = ProviderExchange<StpOperation>;

export interface StpCalled<T> {
  value: T;
  /** Every call it took, in order. */
  exchanges: StpExchange[];
}

/**
 * What a failed call means for the caller:
 * - `duplicate`: STP already has an order with this claveRastreo (-1): ask with consultaOrden, never resend;
 * - `invalid`: STP refused the request for what it is (firma, a field, the account, PLD): trying again would not help;
 * - `not-found`: no such endpoint (404);
 * - `busy`: STP asked to slow down or is unavailable (429, 503): nothing was done;
 * - `network`: the request never left (connection refused, TLS refused): nothing was done;
 * - `unknown`: the answer was lost or unusable (timeout, reset, a 5xx, STP's own "no response from the
 *   service"): STP may have registered the order; ask by claveRastreo before sending it again.
 */
export type StpErrorKind = 'duplicate' | 'invalid' | 'not-found' | 'busy' | 'network' | 'unknown';

export class StpError extends Error {
  readonly #exchange: StpExchange;

  constructor(
    readonly kind: StpErrorKind,
    /** As StpExchange.code. */
    readonly code: string,
    /** STP's `descripcionError` / `mensaje`, or what went wrong. */
    readonly descripcion: string,
    exchange: StpExchange,
    /** STP's numeric `resultado.id` (or efws `estado`), when it gave one. */
    readonly stpCode?: number,
  ) {
    super(`stp ${exchange.operation}: ${code} ${descripcion}`);
    this.name = 'StpError';
    this.#exchange = exchange;
  }

  /** The call as it happened (private to the error, so a logged error never carries a payee's data). */
  get exchange(): StpExchange {
    return this.#exchange;
  }
}

/** An order's state in Cashgate's words. */
export type StpOrderState = 'settled' | 'failed' | 'pending';

/** An order as STP's queries describe it, normalised. */
export interface StpOrder {
  /** STP's id of the order (`idEF`, or `id`/folio), as a string; '' when the answer names none (consOrdenesFech). */
  id: string;
  claveRastreo: string;
  /** STP's own state code (`LQ`, `CN`, `D`, `R`, `A`…). */
  estado: string;
  state: StpOrderState;
  monto: Minor;
  cuentaOrdenante?: string;
  nombreOrdenante?: string;
  /** The counterparty's 5-digit key (for a received order, the sending bank). */
  institucionOrdenante?: string;
  cuentaBeneficiario?: string;
  nombreBeneficiario?: string;
  conceptoPago?: string;
  referenciaNumerica?: string;
  /** `YYYYMMDD`. */
  fechaOperacion?: string;
  causaDevolucion?: number;
  /** Epoch ms. */
  tsLiquidacion?: number;
  tsCaptura?: number;
}

/** An incoming SPEI transfer to one of the company's CLABEs, as STP's abono webhook announces it. */
export interface StpAbono {
  /** STP's id of the received order (`id`, or `Clave` in the older variant). */
  id: string;
  /** `YYYYMMDD`. */
  fechaOperacion: string;
  /** The sending bank's Banxico key. */
  institucionOrdenante: string;
  claveRastreo: string;
  /** What was received, centavos. */
  monto: Minor;
  nombreOrdenante?: string;
  cuentaOrdenante?: string;
  tipoCuentaOrdenante?: number;
  rfcCurpOrdenante?: string;
  /** The company's CLABE that received it. */
  cuentaBeneficiario: string;
  nombreBeneficiario?: string;
  conceptoPago?: string;
  referenciaNumerica?: string;
  empresa?: string;
  /** Epoch ms. */
  tsLiquidacion?: number;
}

/** A payout's change of state, as STP's webhook announces it (to be confirmed with consultaOrden). */
export interface StpCambioEstado {
  /** The folio `registra` answered. */
  id: string;
  claveRastreo?: string;
  /** `LQ`, `CN`, `D` (Shape B's LIQUIDACION, CANCELACION, DEVOLUCION read as these), or what STP sent. */
  estado: string;
  causaDevolucion?: number;
  tsLiquidacion?: number;
  empresa?: string;
  /** Shape B's `Detalle`. */
  detalle?: string;
}

/**
 * SPEI's return causes (the `id` of a `devolver` reply, an order's `causaDevolucion`), as the sources
 * list them: the wording is abridged and unconfirmed against STP's current catalogue.
 */
export const STP_RETURN_CAUSES: Readonly<Record<number, string>> = Object.freeze({
  1: 'cuenta inexistente',
  2: 'cuenta bloqueada',
  3: 'cuenta cancelada',
  5: 'cuenta en otra divisa',
  6: 'cuenta no pertenece al banco',
  13: 'beneficiario no reconoce el pago',
  14: 'falta información',
  15: 'tipo de pago erróneo',
  16: 'tipo de operación errónea',
  17: 'tipo de cuenta no corresponde',
  18: 'a solicitud del emisor',
  19: 'caracteres inválidos',
  20: 'excede límite de saldo',
  21: 'excede límite de abonos',
  22: 'número de línea de teléfono no registrado',
  23: 'cuenta adicional no recibe',
  24: 'estructura de información adicional',
  25: 'falta instrucción',
  26: 'resolución del convenio',
  27: 'pago opcional no aceptado',
  28: 'tipo de pago CoDi',
  30: 'clave de rastreo repetida',
  31: 'certificado emisor vencido',
});

// ---------------------------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

/** STP's `descripcionError` (with id 0) when its own back end did not answer: the order may exist. */
const NO_SERVICE_RESPONSE = 'No se recibió respuesta del servicio';
/** efws `estado` meaning "no data" (`No se encontraron datos relacionados`, answered with HTTP 400). */
const EFWS_NOT_FOUND = 6;
/** `resultado.id` meaning no order found. */
const NOT_FOUND_ID = -100;
/** Text fields STP cuts at 39 characters. */
const TEXT_MAX = 39;

function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** A non-empty string, or an integer written as one (STP writes some keys as numbers). */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed === '' || trimmed === 'null' ? undefined : trimmed;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** An integer sent as a number or as digits. */
function int(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,15}$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/** A positive id (STP's folio / idEF / abono id) as digits. */
function idText(value: unknown): string | undefined {
  const id = text(value);
  return id !== undefined && /^\d{1,20}$/.test(id) && /[1-9]/.test(id) ? id : undefined;
}

/** A calendar day `YYYYMMDD` (STP writes it as a number or a string). */
function dayText(value: unknown): string | undefined {
  const day = text(value);
  if (day === undefined || !/^\d{8}$/.test(day)) return undefined;
  const month = Number(day.slice(4, 6));
  const date = Number(day.slice(6, 8));
  return month >= 1 && month <= 12 && date >= 1 && date <= 31 ? day : undefined;
}

/**
 * Pesos as STP writes them (a JSON number such as `10.90`, read by JavaScript as 10.9, or a string)
 * to centavos, by the decimal text and never by float arithmetic: a number by its shortest text
 * (`String(10.9)` = `10.9`), which round-trips every amount of 15 significant digits or fewer. At
 * most 2 decimals, not negative, no exponent; undefined otherwise.
 */
export function montoToCentavos(value: unknown): Minor | undefined {
  if (typeof value === 'string') return parseDecimal(value.trim(), 2);
  if (typeof value === 'number') return Number.isFinite(value) ? parseDecimal(String(value), 2) : undefined;
  return undefined;
}

/** The calendar day in Mexico City of an instant, `YYYYMMDD` (STP's fechaOperacion form; daylight rules by the tz database). */
export function mexicoCityDate(ms: number): string {
  const parts = MEXICO_CITY_DAY.formatToParts(new Date(ms));
  const part = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}${part('month')}${part('day')}`;
}

const MEXICO_CITY_DAY = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Mexico_City',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/**
 * STP's state code in Cashgate's words. Sent orders: `LQ` settled; `CN` cancelled, `D` returned,
 * `RB` rejected by Banxico failed; anything else pending (the caller keeps asking). Received orders:
 * `LQ` (kept after `confirmar`) and `TLQ` (a settled transfer between two STP accounts, as STP
 * answers one) settled; `D` (returned after `devolver`), `XD` (being returned), `CN`, `RB` failed;
 * `R` (received, not yet confirmed) and anything else pending.
 */
export function stpOrderState(estado: string, tipoOrden: 'E' | 'R' = 'E'): StpOrderState {
  if (estado === 'LQ' || estado === 'TLQ') return 'settled';
  if (estado === 'CN' || estado === 'D' || estado === 'RB') return 'failed';
  if (tipoOrden === 'R' && estado === 'XD') return 'failed';
  return 'pending';
}

/** An order of STP's answers (efws `respuesta`, an element of `lst`, v1 `ordenPago`), or undefined when it is not one. */
function orderOf(data: Json, tipoOrden: 'E' | 'R', idRequired: boolean): StpOrder | undefined {
  // consOrdenesFech's list, as recorded from STP, names no id of the order: '' then (match on claveRastreo).
  const id = idText(data.idEF) ?? idText(data.id) ?? idText(data.folio) ?? (idRequired ? undefined : '');
  const claveRastreo = text(data.claveRastreo);
  const estado = text(data.estado);
  const monto = montoToCentavos(data.monto);
  if (id === undefined || claveRastreo === undefined || estado === undefined || monto === undefined) return undefined;
  const order: StpOrder = { id, claveRastreo, estado, state: stpOrderState(estado, tipoOrden), monto };
  const set = <K extends keyof StpOrder>(key: K, value: StpOrder[K] | undefined): void => {
    if (value !== undefined) order[key] = value;
  };
  set('cuentaOrdenante', text(data.cuentaOrdenante));
  set('nombreOrdenante', text(data.nombreOrdenante));
  // For a received order the counterparty is the sending bank; for a sent one STP is the ordering institution.
  set(
    'institucionOrdenante',
    tipoOrden === 'R'
      ? (text(data.institucionOrdenante) ?? text(data.institucionContraparte))
      : (text(data.institucionOperante) ?? STP_INSTITUCION),
  );
  set('cuentaBeneficiario', text(data.cuentaBeneficiario));
  set('nombreBeneficiario', text(data.nombreBeneficiario));
  set('conceptoPago', text(data.conceptoPago));
  set('referenciaNumerica', text(data.referenciaNumerica));
  set('fechaOperacion', dayText(data.fechaOperacion));
  const causa = int(data.causaDevolucion);
  set('causaDevolucion', causa !== undefined && causa > 0 ? causa : undefined);
  set('tsLiquidacion', positiveMs(data.tsLiquidacion));
  set('tsCaptura', positiveMs(data.tsCaptura));
  return order;
}

function positiveMs(value: unknown): number | undefined {
  const ms = int(value);
  return ms !== undefined && ms > 0 ? ms : undefined;
}

/**
 * A text field as STP takes it: accents dropped (NFD), anything outside printable ASCII and the
 * cadena's separator `|` made a space, spaces collapsed, cut to `max`.
 */
export function stpText(value: string, max = TEXT_MAX): string {
  const ascii = value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|\|/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return ascii.slice(0, max).trimEnd();
}

/** The account type STP infers from an account's length (stpmex-python `get_tipo_cuenta`). */
function tipoCuentaOf(cuenta: string): number | undefined {
  if (cuenta.length === 18) return 40;
  if (cuenta.length === 15 || cuenta.length === 16) return 3;
  if (cuenta.length === 10) return 10;
  return undefined;
}

/** The firma shortened for an exchange (it is no secret, only long). */
function shown(body: Json): Json {
  const firma = body.firma;
  return typeof firma === 'string' ? { ...body, firma: `${firma.slice(0, 12)}…` } : body;
}

interface StpAnswer {
  status: number;
  body: unknown;
}

/**
 * A client of STP: payout orders signed with the company's key, the queries that tell an order's
 * state, every call with a timeout, counted and timed; STP's `{resultado:{id, descripcionError}}`
 * sorted into what the caller does next (StpError.kind).
 */
export class StpClient {
  readonly #dispatcher: Dispatcher;
  readonly #ownAgent: Agent | undefined;
  readonly #record: (called: string, outcome: string, durationMs: number) => void;

  constructor(readonly config: StpConfig) {
    if (config.dispatcher === undefined) {
      const agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });
      this.#ownAgent = agent;
      this.#dispatcher = agent;
    } else {
      this.#ownAgent = undefined;
      this.#dispatcher = config.dispatcher;
    }
    this.#record = providerCallMetrics(config.registry, {
      prefix: 'cashgate_stp',
      provider: 'STP',
      labels: ['operation', 'outcome'],
      outcomes: "ok, STP's resultado id, efws-<estado>, http-<status>, timeout, network, bad-answer",
    });
  }

  /** The fields of an order as they are signed and sent (monto as centavos: written `1.20`). */
  ordenFields(orden: StpOrdenRequest): Record<string, string | number | bigint> {
    const fields: Record<string, string | number | bigint> = {
      institucionContraparte: orden.institucionContraparte,
      empresa: this.config.empresa,
      claveRastreo: orden.claveRastreo,
      institucionOperante: STP_INSTITUCION,
      monto: orden.monto,
      tipoPago: 1,
      tipoCuentaOrdenante: orden.tipoCuentaOrdenante ?? 40,
      cuentaOrdenante: orden.cuentaOrdenante,
      nombreBeneficiario: stpText(orden.nombreBeneficiario),
      cuentaBeneficiario: orden.cuentaBeneficiario,
      rfcCurpBeneficiario: (orden.rfcCurpBeneficiario ?? 'ND').toUpperCase(),
      conceptoPago: stpText(orden.conceptoPago),
      referenciaNumerica: orden.referenciaNumerica,
      topologia: 'T',
      medioEntrega: 3,
      prioridad: orden.prioridad ?? 0,
    };
    const tipo = orden.tipoCuentaBeneficiario ?? tipoCuentaOf(orden.cuentaBeneficiario);
    if (tipo !== undefined) fields.tipoCuentaBeneficiario = tipo;
    if (orden.fechaOperacion !== undefined) fields.fechaOperacion = orden.fechaOperacion;
    if (orden.nombreOrdenante !== undefined && stpText(orden.nombreOrdenante) !== '')
      fields.nombreOrdenante = stpText(orden.nombreOrdenante);
    if (orden.rfcCurpOrdenante !== undefined && orden.rfcCurpOrdenante !== '')
      fields.rfcCurpOrdenante = orden.rfcCurpOrdenante.toUpperCase();
    return fields;
  }

  /**
   * Registers a payout order: `PUT {baseUrl}/ordenPago/registra`. Answers STP's folio. A reused
   * claveRastreo is StpError `duplicate` (ask consultaOrden); a lost answer `unknown` (ask too).
   */
  async registra(orden: StpOrdenRequest): Promise<StpCalled<{ folio: number }>> {
    const exchanges: StpExchange[] = [];
    const fields = this.ordenFields(orden);
    const firma = signCadena(cadenaOriginalOrden(fields), this.config.privateKey);
    // The amount goes as a JSON number written from its decimal text (`1.20`), never through a float.
    const { monto, ...rest } = fields;
    const montoText = formatMonto(monto as bigint);
    const restJson = JSON.stringify({ ...rest, firma });
    const raw = `{"monto":${montoText},${restJson.slice(1)}`;
    const logged = shown({ monto: montoText, ...rest, firma });
    const answer = await this.#send(
      'registra',
      'PUT',
      `${this.config.baseUrl}/ordenPago/registra`,
      raw,
      logged,
      exchanges,
    );
    const resultado = obj(obj(answer.body)?.resultado);
    const id = int(resultado?.id);
    const descripcion = text(resultado?.descripcionError);
    if (answer.status >= 200 && answer.status < 300 && id !== undefined && id > 0 && descripcion === undefined) {
      this.#done(exchanges, 'ok');
      return { value: { folio: id }, exchanges };
    }
    throw this.#refusal(answer, exchanges, 'registra');
  }

  /**
   * An order by its claveRastreo: `POST {queryUrl}/efws/API/consultaOrden`, `E` sent or `R` received.
   * Undefined when STP has none (efws `estado` 6, or `resultado.id` -100, or an empty answer).
   * `fechaOperacion` (`YYYYMMDD`) is left out for the current operating day, as STP asks.
   */
  async consultaOrden(query: {
    claveRastreo: string;
    tipoOrden: 'E' | 'R';
    fechaOperacion?: string;
  }): Promise<StpCalled<StpOrder | undefined>> {
    const exchanges: StpExchange[] = [];
    const { empresa } = this.config;
    const body: Json = { empresa, claveRastreo: query.claveRastreo, tipoOrden: query.tipoOrden };
    if (query.fechaOperacion !== undefined) body.fechaOperacion = query.fechaOperacion;
    body.firma = signCadena(
      cadenaConsultaOrden(empresa, query.claveRastreo, query.tipoOrden, query.fechaOperacion),
      this.config.privateKey,
    );
    const answer = await this.#send(
      'consultaOrden',
      'POST',
      `${this.config.queryUrl}/efws/API/consultaOrden`,
      JSON.stringify(body),
      shown(body),
      exchanges,
    );
    const reply = obj(answer.body);
    const estado = int(reply?.estado);
    const resultado = obj(reply?.resultado);
    const resultadoId = int(resultado?.id);
    if (estado === EFWS_NOT_FOUND || resultadoId === NOT_FOUND_ID) {
      this.#done(exchanges, 'not-found');
      return { value: undefined, exchanges };
    }
    if (answer.status >= 200 && answer.status < 300) {
      if (answer.body === null || (estado === 0 && (reply?.respuesta === undefined || reply.respuesta === null))) {
        this.#done(exchanges, 'not-found');
        return { value: undefined, exchanges };
      }
      const data = estado === 0 ? obj(reply?.respuesta) : obj(resultado?.ordenPago);
      if (data !== undefined) {
        const order = orderOf(data, query.tipoOrden, true);
        if (order?.claveRastreo !== query.claveRastreo) {
          throw this.#bad(exchanges, 'consultaOrden', `the answer holds no order ${query.claveRastreo}`);
        }
        this.#done(exchanges, 'ok');
        return { value: order, exchanges };
      }
    }
    throw this.#refusal(answer, exchanges, 'consultaOrden');
  }

  /**
   * The orders of one operating day (the current one when `fechaOperacion` is left out):
   * `POST {baseUrl}/ordenPago/consOrdenesFech`, `E` sent or `R` received. STP's -100 is an empty list.
   */
  async ordenesPorFecha(query: { tipoOrden: 'E' | 'R'; fechaOperacion?: string }): Promise<StpCalled<StpOrder[]>> {
    const exchanges: StpExchange[] = [];
    const { empresa } = this.config;
    const body: Json = { empresa, estado: query.tipoOrden };
    if (query.fechaOperacion !== undefined) body.fechaOperacion = query.fechaOperacion;
    body.firma = signCadena(
      cadenaConsultaFecha(empresa, query.tipoOrden, query.fechaOperacion),
      this.config.privateKey,
    );
    const answer = await this.#send(
      'consOrdenesFech',
      'POST',
      `${this.config.baseUrl}/ordenPago/consOrdenesFech`,
      JSON.stringify(body),
      shown(body),
      exchanges,
    );
    const resultado = obj(obj(answer.body)?.resultado);
    if (answer.status >= 200 && answer.status < 300 && resultado !== undefined) {
      if (int(resultado.id) === NOT_FOUND_ID) {
        this.#done(exchanges, 'ok');
        return { value: [], exchanges };
      }
      const list = resultado.lst;
      if (Array.isArray(list)) {
        const orders: StpOrder[] = [];
        for (const item of list) {
          // STP's list may hold nulls (seen in its answers): skipped; anything else must read as an order.
          if (item === null) continue;
          const data = obj(item);
          const order = data === undefined ? undefined : orderOf(data, query.tipoOrden, false);
          if (order === undefined) throw this.#bad(exchanges, 'consOrdenesFech', 'an element of lst is not an order');
          orders.push(order);
        }
        this.#done(exchanges, 'ok');
        return { value: orders, exchanges };
      }
    }
    throw this.#refusal(answer, exchanges, 'consOrdenesFech');
  }

  async close(): Promise<void> {
    await this.#ownAgent?.close();
  }

  /** The error an answer that is not a success means. */
  #refusal(answer: StpAnswer, exchanges: StpExchange[], operation: StpOperation): StpError {
    const { status } = answer;
    const reply = obj(answer.body);
    const resultado = obj(reply?.resultado);
    const id = int(resultado?.id);
    const efws = int(reply?.estado);
    const message =
      text(resultado?.descripcionError) ??
      text(reply?.mensaje) ??
      (typeof answer.body === 'string' && answer.body !== '' ? answer.body.slice(0, 200) : `HTTP ${status}`);
    const fail = (kind: StpErrorKind, code: string, stpCode?: number): StpError =>
      new StpError(kind, code, message, this.#done(exchanges, code), stpCode);
    if (status === 429 || status === 503) return fail('busy', `http-${status}`);
    if (status >= 500) return fail('unknown', `http-${status}`);
    if (id !== undefined && id <= 0) {
      if (id === -1) return fail('duplicate', '-1', id);
      // STP's own back end did not answer it: the order may exist; the caller asks before sending again.
      if (id === 0 && message === NO_SERVICE_RESPONSE) return fail('unknown', '0', id);
      return fail('invalid', String(id), id);
    }
    if (operation === 'consultaOrden' && efws !== undefined && efws !== 0) return fail('invalid', `efws-${efws}`, efws);
    if (status === 404) return fail('not-found', 'http-404');
    if (status >= 400) return fail('invalid', `http-${status}`);
    // 2xx (or 3xx) that says neither success nor a refusal: STP may have acted.
    return fail('unknown', 'bad-answer');
  }

  #bad(exchanges: StpExchange[], operation: StpOperation, message: string): StpError {
    const last = exchanges.at(-1);
    const exchange: StpExchange = last === undefined ? lostExchange(operation) : this.#done(exchanges, 'bad-answer');
    return new StpError('invalid', 'bad-answer', message, exchange);
  }

  /** Sets the outcome of the last call (recorded once, when known). */
  #done(exchanges: StpExchange[], code: string): StpExchange {
    const last = exchanges.at(-1);
    if (last === undefined) throw new Error('no STP call to finish');
    if (last.code === '') {
      last.code = code;
      this.#record(last.operation, code, last.durationMs);
    }
    return last;
  }

  /**
   * One HTTP call with the timeout; its exchange is appended to `exchanges` with an empty code, which
   * the caller sets once it has read the answer. A call that never left throws StpError `network`;
   * one whose answer was lost, `unknown`. Any HTTP status is returned.
   */
  async #send(
    operation: StpOperation,
    method: 'PUT' | 'POST',
    url: string,
    body: string,
    logged: unknown,
    exchanges: StpExchange[],
  ): Promise<StpAnswer> {
    const started = performance.now();
    const exchange: StpExchange = {
      operation,
      method,
      path: new URL(url).pathname,
      request: logged,
      httpStatus: null,
      response: null,
      code: '',
      durationMs: 0,
    };
    exchanges.push(exchange);
    const { timeoutMs } = this.config;
    try {
      const answer = await request(url, {
        method,
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body,
        dispatcher: this.#dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const raw = await answer.body.text();
      let parsed: unknown = null;
      if (raw !== '') {
        try {
          parsed = JSON.parse(raw);
        } catch {
          parsed = raw.slice(0, 500);
        }
      }
      exchange.httpStatus = answer.statusCode;
      exchange.response = parsed;
      exchange.durationMs = Math.round(performance.now() - started);
      return { status: answer.statusCode, body: parsed };
    } catch (error) {
      exchange.durationMs = Math.round(performance.now() - started);
      const neverSent = isConnectError(error);
      const code = neverSent ? 'network' : 'timeout';
      throw new StpError(
        neverSent ? 'network' : 'unknown',
        code,
        error instanceof Error ? error.message : String(error),
        this.#done(exchanges, code),
      );
    }
  }
}

// --- Webhooks (pure) -------------------------------------------------------------------------------------------

/** A field of a webhook body by its camelCase name or the older capitalised variant's. */
function field(body: Json, camel: string, ...aliases: string[]): unknown {
  for (const name of [camel, `${camel[0]?.toUpperCase() ?? ''}${camel.slice(1)}`, ...aliases]) {
    if (Object.hasOwn(body, name) && body[name] !== null && body[name] !== undefined) return body[name];
  }
  return undefined;
}

/**
 * An abono (incoming SPEI) webhook body: the camelCase shape (`id, fechaOperacion, institucionOrdenante,
 * claveRastreo, monto, cuentaBeneficiario…`) or the older capitalised one (`Clave, FechaOperacion,
 * InstitucionOrdenante, ClaveRastreo, Monto, CuentaBeneficiario, RFCCurpOrdenante…`). Undefined when a
 * required field is missing or malformed, or monto is not a positive amount with at most 2 decimals.
 * Dedupe on `id`, and on (claveRastreo, fechaOperacion, institucionOrdenante).
 */
export function parseAbono(body: unknown): StpAbono | undefined {
  const data = obj(body);
  if (data === undefined) return undefined;
  const id = idText(field(data, 'id', 'Clave', 'clave'));
  const fechaOperacion = dayText(field(data, 'fechaOperacion'));
  const institucionOrdenante = text(field(data, 'institucionOrdenante'));
  const claveRastreo = text(field(data, 'claveRastreo'));
  const monto = montoToCentavos(field(data, 'monto'));
  const cuentaBeneficiario = text(field(data, 'cuentaBeneficiario'));
  if (
    id === undefined ||
    fechaOperacion === undefined ||
    institucionOrdenante === undefined ||
    !/^\d{1,5}$/.test(institucionOrdenante) ||
    claveRastreo === undefined ||
    monto === undefined ||
    monto <= 0n ||
    cuentaBeneficiario === undefined
  )
    return undefined;
  const abono: StpAbono = { id, fechaOperacion, institucionOrdenante, claveRastreo, monto, cuentaBeneficiario };
  const set = <K extends keyof StpAbono>(key: K, value: StpAbono[K] | undefined): void => {
    if (value !== undefined) abono[key] = value;
  };
  set('nombreOrdenante', text(field(data, 'nombreOrdenante')));
  set('cuentaOrdenante', text(field(data, 'cuentaOrdenante')));
  set('tipoCuentaOrdenante', int(field(data, 'tipoCuentaOrdenante')));
  set('rfcCurpOrdenante', text(field(data, 'rfcCurpOrdenante', 'RFCCurpOrdenante')));
  set('nombreBeneficiario', text(field(data, 'nombreBeneficiario')));
  set('conceptoPago', text(field(data, 'conceptoPago')));
  set('referenciaNumerica', text(field(data, 'referenciaNumerica')));
  set('empresa', text(field(data, 'empresa')));
  set('tsLiquidacion', positiveMs(field(data, 'tsLiquidacion')));
  return abono;
}

/** Shape B's state words, as STP's state codes. */
const SHAPE_B_STATES: Readonly<Record<string, string>> = {
  LIQUIDACION: 'LQ',
  LIQUIDADA: 'LQ',
  DEVOLUCION: 'D',
  DEVUELTA: 'D',
  CANCELACION: 'CN',
  CANCELADA: 'CN',
};

/**
 * A "cambio de estado" webhook body, in either deployed shape: A `{id, empresa, claveRastreo, estado:
 * LQ|CN|D, causaDevolucion?, tsLiquidacion}`, B `{id, Estado: LIQUIDACION|DEVOLUCION|CANCELACION,
 * Detalle}`. Undefined without a positive id and a state. Only a prompt to ask consultaOrden.
 */
export function parseCambioEstado(body: unknown): StpCambioEstado | undefined {
  const data = obj(body);
  if (data === undefined) return undefined;
  const id = idText(data.id ?? data.Id ?? data.folio);
  const raw = text(data.estado) ?? text(data.Estado);
  if (id === undefined || raw === undefined) return undefined;
  const upper = raw.toUpperCase();
  const estado = Object.hasOwn(SHAPE_B_STATES, upper) ? (SHAPE_B_STATES[upper] ?? upper) : upper;
  const change: StpCambioEstado = { id, estado };
  const claveRastreo = text(data.claveRastreo) ?? text(data.ClaveRastreo);
  if (claveRastreo !== undefined) change.claveRastreo = claveRastreo;
  const causa = int(data.causaDevolucion ?? data.CausaDevolucion);
  if (causa !== undefined && causa > 0) change.causaDevolucion = causa;
  const ts = positiveMs(data.tsLiquidacion ?? data.TsLiquidacion);
  if (ts !== undefined) change.tsLiquidacion = ts;
  const empresa = text(data.empresa) ?? text(data.Empresa);
  if (empresa !== undefined) change.empresa = empresa;
  const detalle = text(data.Detalle) ?? text(data.detalle);
  if (detalle !== undefined) change.detalle = detalle;
  return change;
}

/** The reply to an abono that keeps the money. */
export function abonoReply(decision: 'confirmar'): { mensaje: 'confirmar' };
/** The reply to an abono that makes STP return the money, with a SPEI return cause (STP_RETURN_CAUSES). */
export function abonoReply(decision: 'devolver', causa: number): { mensaje: 'devolver'; id: number };
export function abonoReply(
  decision: 'confirmar' | 'devolver',
  causa?: number,
): { mensaje: 'confirmar' } | { mensaje: 'devolver'; id: number } {
  if (decision === 'confirmar') return { mensaje: 'confirmar' };
  if (causa === undefined || !Object.hasOwn(STP_RETURN_CAUSES, causa)) {
    throw new RangeError(`a devolver reply needs a known SPEI return cause; got ${String(causa)}`);
  }
  return { mensaje: 'devolver', id: causa };
}
