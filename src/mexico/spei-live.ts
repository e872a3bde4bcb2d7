/**
 * SPEI collections through STP (MEXICO_SPEI_RAIL=stp). Each order has a CLABE of its own under the
 * company's prefix; a transfer to it reaches Cashgate as STP's abono webhook, which Cashgate must
 * answer: `confirmar` keeps the money, `devolver` (with a cause) makes STP return it.
 *
 * - Nothing in an abono's body is trusted: the received order is read back from STP's consultation
 *   (by its clave de rastreo) before anything changes, and a body STP does not know is refused.
 * - The decision is recorded with its ledger entries (a credited order's collection) in one
 *   transaction before the answer is sent; a repeated delivery (the same id, or the same clave de
 *   rastreo, date and sending bank) is answered with the decision recorded, so a crash between the
 *   two never keeps money Cashgate told STP to return, nor returns money it credited.
 * - Reconciliation lists STP's received orders of each operating day (from a stored cursor, the day
 *   before included) and finds what a lost webhook would have told; money STP settled to Cashgate
 *   that no waiting order took is returned by Cashgate itself (`registra`, its clave de rastreo
 *   derived from the transfer, followed by consultation and the cambio-de-estado webhook).
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { redactForAudit } from '../access/redact.js';
import type { Clock } from '../clock.js';
import type { Ledger } from '../ledger/ledger.js';
import * as oq from '../orders/queries.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { COLLECTION_STATUS } from '../orders/state-machine.js';
import { bankOfCode5, isValidClabe } from '../rails/stp/clabe.js';
import {
  abonoReply,
  mexicoCityDate,
  parseAbono,
  parseCambioEstado,
  StpError,
  type StpAbono,
  type StpClient,
  type StpExchange,
  type StpOrder,
} from '../rails/stp/client.js';
import * as railq from '../rails/queries.js';
import { derivedHex, type Rail } from '../rails/rails.js';
import type { Store, Tx } from '../store/store.js';
import * as q from './queries.js';

const RAIL = 'stp';
/**
 * A received order STP still shows waiting for Cashgate's answer this long after it arrived is
 * taken as lost: STP holds the money, so Cashgate decides it then (credits its waiting order, or
 * keeps it to return it itself) and answers any later delivery with that decision.
 */
export const LOST_WEBHOOK_GRACE_MS = 2 * 60_000;
const DAY_MS = 86_400_000;

/** SPEI return causes Cashgate gives (STP's catalogue of causas de devolución). */
export const SPEI_RETURN_CAUSE = {
  /** A CLABE Cashgate never issued. */
  unknownAccount: 1,
  /** The CLABE of an order that no longer waits (paid, expired, cancelled). */
  cancelledAccount: 3,
  /** Another amount, refused by the order's cashier (dynamicAmountNotify 2): "beneficiario no reconoce el pago". */
  notRecognised: 13,
} as const;

/** What Cashgate answers STP for an abono: the HTTP status and the body. */
export interface AbonoAnswer {
  status: number;
  body: unknown;
}

class AlreadyDecided extends Error {}

/** An abono's recorded decision as the reply STP expects. */
function replyOf(row: Pick<q.SpeiAbonoRow, 'decision' | 'causa'>): AbonoAnswer {
  return {
    status: 200,
    body:
      row.decision === 'confirmar'
        ? abonoReply('confirmar')
        : { mensaje: 'devolver', id: row.causa ?? SPEI_RETURN_CAUSE.unknownAccount },
  };
}

/** A received order's key across deliveries: clave de rastreo, operating date and sending bank. */
const rastreoKeyOf = (a: { claveRastreo: string; fechaOperacion: string; institucionOrdenante: string }) =>
  `${a.claveRastreo}|${a.fechaOperacion}|${a.institucionOrdenante}`.slice(0, 60);

export class SpeiLive {
  readonly #abonos: Counter | undefined;
  readonly #latency: Histogram | undefined;

  constructor(
    private readonly deps: {
      client: StpClient;
      store: Store;
      orders: OrderService;
      ledger: Ledger;
      clock: Clock;
      logger: Logger;
      registry?: Registry | undefined;
    },
    private readonly config: {
      /** The company's STP code, which every abono names. */
      empresa: string;
      /** The 10 digits of Cashgate's CLABEs. */
      clabePrefix: string;
    },
  ) {
    const registry = deps.registry;
    this.#abonos =
      registry === undefined
        ? undefined
        : new Counter({
            name: 'cashgate_spei_abonos_total',
            help: 'Incoming SPEI transfers by how Cashgate answered (confirmar, devolver, repeat, refused, failed) and what became of them',
            labelNames: ['answer', 'disposition'],
            registers: [registry],
          });
    this.#latency =
      registry === undefined
        ? undefined
        : new Histogram({
            name: 'cashgate_spei_abono_seconds',
            help: 'Time from an abono webhook arriving to its answer (STP consultation and the recording included)',
            buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
            registers: [registry],
          });
  }

  /**
   * The rail of SPEI orders: nothing to ask STP, since every CLABE under the company's prefix reaches
   * it; the order's CLABE (issued in its create transaction) is its reference.
   */
  rail(): Rail {
    return {
      name: 'spei (stp)',
      start: (order) => {
        const clabe = (order.railRef ?? '').replace(/^clabe:/, '');
        if (!isValidClabe(clabe)) throw new Error(`order ${order.orderId} has no valid CLABE`);
        return Promise.resolve({ channelOrderId: clabe });
      },
    };
  }

  #messages(exchanges: readonly StpExchange[], orderId: string | null, ref: string | null): railq.RailMessageRow[] {
    const at = this.deps.clock.now();
    return exchanges.map((e) => railq.outboundMessage(RAIL, e, { orderId, ref, at }, redactForAudit));
  }

  #inbound(
    endpoint: string,
    body: unknown,
    ref: string | null,
    disposition: 'matched' | 'unmatched' | 'refused',
    orderId: string | null,
  ): railq.RailMessageRow {
    const at = this.deps.clock.now();
    return railq.inboundMessage(RAIL, endpoint, body, { orderId, ref, disposition, at }, redactForAudit);
  }

  #count(answer: string, disposition: string): void {
    this.#abonos?.inc({ answer, disposition });
  }

  // ---- abonos ------------------------------------------------------------------------------------

  /**
   * STP's abono webhook: the answer (confirmar or devolver) once the decision is recorded; 403 for
   * a transfer STP does not know (a forged body: nothing recorded); 503 while STP cannot be asked
   * (nothing recorded: STP delivers the abono again).
   */
  async abono(body: unknown): Promise<AbonoAnswer> {
    const started = this.deps.clock.now();
    try {
      return await this.#abono(body);
    } finally {
      this.#latency?.observe((this.deps.clock.now() - started) / 1000);
    }
  }

  async #abono(body: unknown): Promise<AbonoAnswer> {
    const { store, logger } = this.deps;
    const abono = parseAbono(body);
    if (abono === undefined || (abono.empresa !== undefined && abono.empresa !== this.config.empresa)) {
      this.#count('refused', 'malformed');
      await store.transact((tx) => railq.insertRailMessages(tx, [this.#inbound('abono', body, null, 'refused', null)]));
      return { status: 400, body: { mensaje: 'abono no reconocido' } };
    }
    const known = await q.findAbono(store.read, abono.id, rastreoKeyOf(abono));
    if (known !== undefined) return this.#repeat(known);
    // The body says a transfer arrived: STP's own consultation says whether it did, and what it is.
    let confirmed: StpOrder | undefined;
    let exchanges: StpExchange[];
    try {
      const called = await this.deps.client.consultaOrden({
        claveRastreo: abono.claveRastreo,
        tipoOrden: 'R',
        fechaOperacion: abono.fechaOperacion,
      });
      confirmed = called.value;
      exchanges = called.exchanges;
    } catch (error) {
      this.#count('failed', 'consultation');
      logger.warn({ err: error, abono: abono.id }, 'STP could not confirm an abono now: it will be delivered again');
      return { status: 503, body: { mensaje: 'intente más tarde' } };
    }
    if (
      confirmed === undefined ||
      confirmed.monto !== abono.monto ||
      (confirmed.cuentaBeneficiario !== undefined && confirmed.cuentaBeneficiario !== abono.cuentaBeneficiario)
    ) {
      this.#count('refused', 'unconfirmed');
      logger.warn({ abono: abono.id }, 'an abono STP does not confirm was refused: nothing changed');
      await store.transact((tx) =>
        railq.insertRailMessages(tx, [
          this.#inbound('abono', body, abono.claveRastreo, 'refused', null),
          ...this.#messages(exchanges, null, abono.claveRastreo),
        ]),
      );
      return { status: 403, body: { mensaje: 'abono no reconocido' } };
    }
    // Who sent it, as STP's own record says (the body's words only where STP's answer is silent).
    const sender = {
      ...abono,
      ...(confirmed.cuentaOrdenante !== undefined && { cuentaOrdenante: confirmed.cuentaOrdenante }),
      ...(confirmed.nombreOrdenante !== undefined && { nombreOrdenante: confirmed.nombreOrdenante }),
    };
    return replyOf(await this.#decide(sender, 'webhook', body, exchanges));
  }

  #repeat(row: q.SpeiAbonoRow): AbonoAnswer {
    this.#count('repeat', row.disposition);
    return replyOf(row);
  }

  /**
   * Decides what the transfer is and records it, with the order's collection and ledger entries
   * when it completes a waiting order, in one transaction; another delivery that recorded first
   * wins (its decision is the one answered).
   */
  async #decide(
    abono: StpAbono,
    source: 'webhook' | 'reconcile',
    body: unknown,
    exchanges: readonly StpExchange[],
    /** `held`: STP settled it (or holds it) and Cashgate can no longer answer; `returned`: STP returned it already. */
    stp: 'asks' | 'held' | 'returned' = 'asks',
  ): Promise<q.SpeiAbonoRow> {
    const settledByStp = stp === 'held';
    const { store, orders, clock } = this.deps;
    const now = clock.now();
    const orderId = abono.cuentaBeneficiario.startsWith(this.config.clabePrefix)
      ? await q.orderOfClabe(store.read, abono.cuentaBeneficiario)
      : undefined;
    const base: q.SpeiAbonoRow = {
      id: abono.id,
      rastreo_key: rastreoKeyOf(abono),
      clabe: abono.cuentaBeneficiario.slice(0, 18),
      order_id: orderId ?? null,
      amount: Number(abono.monto),
      fecha_operacion: abono.fechaOperacion,
      institucion_ordenante: abono.institucionOrdenante,
      clave_rastreo: abono.claveRastreo.slice(0, 30),
      payer_name: abono.nombreOrdenante?.slice(0, 120) ?? null,
      payer_account: abono.cuentaOrdenante?.slice(0, 20) ?? null,
      decision: 'devolver',
      causa: SPEI_RETURN_CAUSE.unknownAccount,
      disposition: 'unmatched',
      source,
      // A webhook's decision is answered as soon as it commits; one made by reconciliation has no one to answer.
      answered_at: source === 'webhook' ? now : null,
      stp_estado: null,
      checked_at: stp === 'asks' ? null : now,
      // Money STP already settled to Cashgate (found by reconciliation) that no order took is returned by Cashgate.
      return_state: null,
      return_rastreo: null,
      return_folio: null,
      return_attempts: 0,
      last_error: null,
      created_at: now,
      updated_at: now,
    };
    const messages = (id: string | null) => [
      this.#inbound(
        source === 'webhook' ? 'abono' : 'consOrdenesFech',
        body,
        abono.claveRastreo,
        id === null ? 'unmatched' : 'matched',
        id,
      ),
      ...this.#messages(exchanges, id, abono.claveRastreo),
    ];
    const order = orderId === undefined ? undefined : await orders.find(orderId);
    if (stp !== 'returned' && order !== undefined && order.status === COLLECTION_STATUS.pending) {
      const bank = bankOfCode5(abono.institucionOrdenante);
      try {
        let recorded: q.SpeiAbonoRow | undefined;
        await orders.applyEvent(order.id, 'paid', {
          source: RAIL,
          amount: abono.monto,
          data: {
            payerBank: bank?.name ?? abono.institucionOrdenante,
            payerBankCode: abono.institucionOrdenante,
            ...(abono.cuentaOrdenante !== undefined && { payerAccount: abono.cuentaOrdenante }),
            ...(abono.nombreOrdenante !== undefined && { payerName: abono.nombreOrdenante }),
            claveRastreo: abono.claveRastreo,
          },
          also: async (tx) => {
            const status = (await oq.findOrder(tx, order.id))?.status;
            // The order's rules refused this amount (an aggregate cashier's dynamicAmountNotify 2): returned.
            const row: q.SpeiAbonoRow =
              status === COLLECTION_STATUS.paid
                ? { ...base, decision: 'confirmar', causa: null, disposition: 'credited' }
                : settledByStp
                  ? { ...base, ...this.#keptToReturn(abono), disposition: 'refused' }
                  : { ...base, causa: SPEI_RETURN_CAUSE.notRecognised, disposition: 'refused' };
            if (!(await q.insertAbono(tx, row))) throw new AlreadyDecided();
            if (row.return_state === 'to_send') await this.#holdForReturn(tx, row);
            await railq.insertRailMessages(tx, messages(order.id));
            recorded = row;
          },
        });
        if (recorded !== undefined) {
          this.#count(recorded.decision, recorded.disposition);
          return recorded;
        }
      } catch (error) {
        if (error instanceof AlreadyDecided) return this.#recorded(abono);
        if (!(error instanceof EventNotAllowedError)) throw error;
        // The order stopped waiting meanwhile (its deadline passed): the transfer is returned.
      }
    }
    const ended = order !== undefined;
    const row: q.SpeiAbonoRow = settledByStp
      ? { ...base, ...this.#keptToReturn(abono), disposition: 'late' }
      : {
          ...base,
          causa: ended ? SPEI_RETURN_CAUSE.cancelledAccount : SPEI_RETURN_CAUSE.unknownAccount,
          disposition: 'unmatched',
        };
    const inserted = await store.transact(async (tx) => {
      if (!(await q.insertAbono(tx, row))) return false;
      if (row.return_state === 'to_send') await this.#holdForReturn(tx, row);
      await railq.insertRailMessages(tx, messages(orderId ?? null));
      return true;
    });
    if (!inserted) return this.#recorded(abono);
    this.#count('devolver', row.disposition);
    return row;
  }

  async #recorded(abono: StpAbono): Promise<q.SpeiAbonoRow> {
    const row = await q.findAbono(this.deps.store.read, abono.id, rastreoKeyOf(abono));
    if (row === undefined) throw new Error(`abono ${abono.id} was recorded by another delivery but cannot be read`);
    this.#count('repeat', row.disposition);
    return row;
  }

  /**
   * A transfer STP holds that no waiting order took, once Cashgate could no longer answer it in
   * time: kept (any later delivery is answered confirmar, so STP never returns it as well) and
   * returned by Cashgate itself.
   */
  #keptToReturn(abono: Pick<StpAbono, 'id'>) {
    return {
      decision: 'confirmar' as const,
      causa: null,
      return_state: 'to_send' as const,
      return_rastreo: this.#returnRastreo(abono),
    };
  }

  /** The clave de rastreo of Cashgate's own return of a transfer: derived from it, the same on every attempt. */
  #returnRastreo(abono: Pick<StpAbono, 'id'> | Pick<q.SpeiAbonoRow, 'id'>): string {
    return `CGD${derivedHex(`spei return ${abono.id}`, 20).toUpperCase()}`;
  }

  /** Money STP settled to Cashgate that no order took: held in system spei_returns until its return settles. */
  async #holdForReturn(tx: Tx, row: q.SpeiAbonoRow): Promise<void> {
    await this.deps.ledger.post(tx, {
      kind: 'spei.return.held',
      currency: 'MXN',
      merchantId: null,
      orderId: row.order_id,
      memo: `SPEI ${row.clave_rastreo} settled to CLABE ${row.clabe} with no waiting order: to be returned`,
      entries: [
        { account: { kind: 'rail_clearing' }, amount: -BigInt(row.amount) },
        { account: { kind: 'spei_returns' }, amount: BigInt(row.amount) },
      ],
    });
  }

  // ---- Cashgate's own returns ---------------------------------------------------------------------

  /**
   * Sends or follows each return Cashgate owes: `registra` with the derived clave de rastreo (after
   * an unknown outcome, STP is asked first); a sent one is read back until it settles (LQ: the held
   * money leaves) or fails (CN, D: the operator is told; the money stays held).
   */
  async runReturns(limit = 50): Promise<void> {
    const rows = await q.openAbonoReturns(this.deps.store.read, limit);
    for (const row of rows) {
      try {
        if (row.return_state === 'to_send') await this.#sendReturn(row);
        else await this.#followReturn(row);
      } catch (error) {
        this.deps.logger.error({ err: error, abono: row.id }, 'a SPEI return could not be handled now');
      }
    }
  }

  async #sendReturn(row: q.SpeiAbonoRow): Promise<void> {
    const { client, store, clock } = this.deps;
    const rastreo = row.return_rastreo ?? this.#returnRastreo(row);
    const exchanges: StpExchange[] = [];
    const now = () => clock.now();
    const record = (changes: Parameters<typeof q.claimAbonoReturn>[3], from: 'to_send' = 'to_send') =>
      store.transact(async (tx) => {
        if (!(await q.claimAbonoReturn(tx, row.id, from, changes))) return;
        await railq.insertRailMessages(tx, this.#messages(exchanges, row.order_id, rastreo));
      });
    // Sent only once STP shows the transfer settled to Cashgate: one it returned itself needs no return.
    const received = await client.consultaOrden({
      claveRastreo: row.clave_rastreo,
      tipoOrden: 'R',
      fechaOperacion: row.fecha_operacion,
    });
    exchanges.push(...received.exchanges);
    if (received.value === undefined || received.value.state === 'pending') return;
    if (received.value.state === 'failed') {
      await store.transact(async (tx) => {
        const moved = await q.claimAbonoReturn(tx, row.id, 'to_send', {
          return_state: 'settled',
          last_error: `returned by STP (${received.value?.estado ?? ''}): no return of Cashgate's was needed`,
          updated_at: now(),
        });
        if (moved) await this.#releaseHold(tx, row, 'spei.return.by-stp', 'returned by STP itself');
      });
      return;
    }
    if (row.return_attempts > 0) {
      // An earlier attempt may have reached STP: ask before sending again.
      try {
        const found = await client.consultaOrden({ claveRastreo: rastreo, tipoOrden: 'E' });
        exchanges.push(...found.exchanges);
        if (found.value !== undefined) {
          await record({ return_state: 'sent', return_folio: found.value.id.slice(0, 20), updated_at: now() });
          return;
        }
      } catch (error) {
        if (error instanceof StpError) exchanges.push(error.exchange);
        await store.transact((tx) => railq.insertRailMessages(tx, this.#messages(exchanges, row.order_id, rastreo)));
        return;
      }
    }
    await store.transact((tx) =>
      q.claimAbonoReturn(tx, row.id, 'to_send', {
        return_state: 'to_send',
        return_attempts: row.return_attempts + 1,
        updated_at: now(),
      }),
    );
    try {
      const sent = await client.registra({
        claveRastreo: rastreo,
        monto: BigInt(row.amount),
        conceptoPago: `DEVOLUCION ${row.clave_rastreo}`,
        cuentaBeneficiario: row.payer_account ?? '',
        nombreBeneficiario: row.payer_name ?? 'ND',
        institucionContraparte: row.institucion_ordenante,
        cuentaOrdenante: row.clabe,
        referenciaNumerica: Number(BigInt(`0x${derivedHex(rastreo, 8)}`) % 9_999_999n) + 1,
      });
      exchanges.push(...sent.exchanges);
      await record({ return_state: 'sent', return_folio: String(sent.value.folio), updated_at: now() });
    } catch (error) {
      if (!(error instanceof StpError)) throw error;
      exchanges.push(error.exchange);
      if (error.kind === 'invalid') {
        await record({ return_state: 'failed', last_error: error.message.slice(0, 300), updated_at: now() });
        this.deps.logger.error(
          { abono: row.id, code: error.code },
          'STP refused a SPEI return: the operator must return it',
        );
        return;
      }
      // Duplicate or unknown: the next run asks STP by the clave de rastreo before sending again.
      await store.transact(async (tx) => {
        await q.updateAbono(tx, row.id, { last_error: error.message.slice(0, 300), updated_at: now() });
        await railq.insertRailMessages(tx, this.#messages(exchanges, row.order_id, rastreo));
      });
    }
  }

  async #followReturn(row: q.SpeiAbonoRow): Promise<void> {
    const { client, store, clock } = this.deps;
    const rastreo = row.return_rastreo ?? '';
    const found = await client.consultaOrden({ claveRastreo: rastreo, tipoOrden: 'E' });
    const order = found.value;
    if (order === undefined || order.state === 'pending') return;
    const now = clock.now();
    await store.transact(async (tx) => {
      const settled = order.state === 'settled';
      const moved = await q.claimAbonoReturn(tx, row.id, 'sent', {
        return_state: settled ? 'settled' : 'failed',
        ...(settled
          ? {}
          : {
              last_error: `STP ${order.estado}${order.causaDevolucion === undefined ? '' : ` causa ${order.causaDevolucion}`}`,
            }),
        updated_at: now,
      });
      if (!moved) return;
      await railq.insertRailMessages(tx, this.#messages(found.exchanges, row.order_id, rastreo));
      if (settled) await this.#releaseHold(tx, row, 'spei.return.sent', `returned to its sender (${rastreo})`);
    });
  }

  /** The held money leaves system spei_returns: returned to its sender. */
  async #releaseHold(tx: Tx, row: q.SpeiAbonoRow, kind: string, how: string): Promise<void> {
    await this.deps.ledger.post(tx, {
      kind,
      currency: 'MXN',
      merchantId: null,
      orderId: row.order_id,
      memo: `SPEI ${row.clave_rastreo} ${how}`,
      entries: [
        { account: { kind: 'spei_returns' }, amount: -BigInt(row.amount) },
        { account: { kind: 'rail_clearing' }, amount: BigInt(row.amount) },
      ],
    });
  }

  /** STP's cambio-de-estado webhook: a prompt to read the return it names back from STP (never trusted alone). */
  async cambioEstado(body: unknown): Promise<void> {
    const change = parseCambioEstado(body);
    const row =
      change?.claveRastreo === undefined
        ? undefined
        : await q.abonoByReturnRastreo(this.deps.store.read, change.claveRastreo);
    await this.deps.store.transact((tx) =>
      railq.insertRailMessages(tx, [
        this.#inbound(
          'cambioEstado',
          body,
          change?.claveRastreo ?? null,
          row === undefined ? 'unmatched' : 'matched',
          row?.order_id ?? null,
        ),
      ]),
    );
    if (row?.return_state === 'sent') await this.#followReturn(row);
  }

  // ---- reconciliation ------------------------------------------------------------------------------

  /**
   * What a lost webhook would have told: STP's received orders of each operating day from the cursor
   * (the day before it included, as overlap) to today, in Mexico City's calendar. A transfer STP
   * still waits on (`R`) is left for its webhook; one STP settled that Cashgate never saw is decided
   * now (credited to its waiting order, or returned by Cashgate); a recorded decision STP settled the
   * other way is put right (money kept that Cashgate said to return goes back to its sender).
   */
  async reconcile(): Promise<void> {
    const { store, clock, client } = this.deps;
    const now = clock.now();
    const cursorName = 'stp.received';
    const cursor = (await railq.railCursor(store.read, cursorName)) ?? now;
    const days = new Set<string>();
    for (let at = Math.min(cursor, now) - DAY_MS; at <= now; at += DAY_MS) days.add(mexicoCityDate(at));
    days.add(mexicoCityDate(now));
    const today = mexicoCityDate(now);
    for (const day of days) {
      const listed = await client.ordenesPorFecha({
        tipoOrden: 'R',
        ...(day === today ? {} : { fechaOperacion: day }),
      });
      for (const received of listed.value) {
        try {
          await this.#reconcileOne(received, day);
        } catch (error) {
          this.deps.logger.error(
            { err: error, claveRastreo: received.claveRastreo },
            'a received SPEI order could not be reconciled now',
          );
        }
      }
    }
    await store.transact((tx) => railq.setRailCursor(tx, cursorName, now));
    await this.runReturns();
  }

  async #reconcileOne(received: StpOrder, day: string): Promise<void> {
    const { store, clock } = this.deps;
    if (received.cuentaBeneficiario === undefined) return;
    const abono: StpAbono = {
      // STP's list of a day names no id: the transfer is known by its clave de rastreo and date.
      id: received.id !== '' ? received.id : `R${received.fechaOperacion ?? day}${received.claveRastreo}`.slice(0, 40),
      fechaOperacion: received.fechaOperacion ?? day,
      institucionOrdenante: received.institucionOrdenante ?? '',
      claveRastreo: received.claveRastreo,
      monto: received.monto,
      cuentaBeneficiario: received.cuentaBeneficiario,
      ...(received.cuentaOrdenante !== undefined && { cuentaOrdenante: received.cuentaOrdenante }),
      ...(received.nombreOrdenante !== undefined && { nombreOrdenante: received.nombreOrdenante }),
    };
    const known =
      (await q.findAbono(store.read, abono.id, rastreoKeyOf(abono))) ??
      (await q.findAbonoByRastreo(store.read, abono.claveRastreo, abono.fechaOperacion));
    const now = clock.now();
    if (known === undefined) {
      // Waiting for Cashgate's answer: its webhook is still to come (or to be delivered again), unless it is long overdue.
      const arrived = received.tsLiquidacion ?? received.tsCaptura ?? now;
      if (received.state === 'pending' && now - arrived < LOST_WEBHOOK_GRACE_MS) return;
      if (received.state === 'failed') {
        // STP returned it without Cashgate: recorded, nothing to do.
        const row = await this.#decide(abono, 'reconcile', received, [], 'returned');
        await store.transact((tx) =>
          q.updateAbono(tx, row.id, { stp_estado: received.estado.slice(0, 4), checked_at: now, updated_at: now }),
        );
        return;
      }
      // STP settled it to Cashgate (or holds it, its webhook lost) and Cashgate never answered: decided now.
      await this.#decide(abono, 'reconcile', received, [], 'held');
      return;
    }
    if (known.stp_estado === received.estado) return;
    await store.transact(async (tx) => {
      await q.updateAbono(tx, known.id, { stp_estado: received.estado.slice(0, 4), checked_at: now, updated_at: now });
      if (received.state === 'settled' && known.decision === 'devolver' && known.return_state === null) {
        // STP kept money Cashgate said to return (its answer never reached STP): Cashgate keeps it
        // (a later delivery is answered confirmar, so STP does not return it too) and returns it itself.
        const held = { ...known, ...this.#keptToReturn(known) };
        await q.updateAbono(tx, known.id, {
          decision: 'confirmar',
          return_state: 'to_send',
          return_rastreo: held.return_rastreo,
          updated_at: now,
        });
        await this.#holdForReturn(tx, held);
      }
    });
    if (received.state === 'failed' && known.decision === 'confirmar') {
      this.#count('confirmar', 'returned-by-stp');
      this.deps.logger.error(
        { abono: known.id, orderId: known.order_id },
        'STP returned a SPEI transfer Cashgate credited: the operator must reverse the credit',
      );
    }
  }

  /** The transfers no waiting order took, newest first, for the operator. */
  unmatched(limit: number): Promise<q.SpeiAbonoRow[]> {
    return q.unmatchedAbonos(this.deps.store.read, limit);
  }

  async close(): Promise<void> {
    await this.deps.client.close();
  }
}
