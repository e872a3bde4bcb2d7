import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { BRAZILIAN_BANKS } from '../banks/bank-list.js';
import type { Clock } from '../clock.js';
import type { Ledger } from '../ledger/ledger.js';
import { formatMoney, type Minor } from '../money.js';
import { OperatorError } from '../admin/failures.js';
import type { OrderRow } from '../orders/queries.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { allowedEventsAt, COLLECTION_STATUS } from '../orders/state-machine.js';
import { PixError, type ApiPixClient, type PixExchange } from '../rails/pix/api-pix-client.js';
import * as railq from '../rails/queries.js';
import { RailRefusal, type Rail, type RailOrder, type RailStarted } from '../rails/rails.js';
import { isUniqueViolation, type Store, type Tx } from '../store/store.js';
import { payerDocument, type BrazilDetails } from './details.js';
import * as q from './queries.js';

export interface ApiPixOptions {
  /** `${PUBLIC_BASE_URL}/rails/pix/<token>`: the webhook URL registered with the PSP (it appends `/pix`). */
  webhookBase: string;
  /** The operator's Pix key: the charges' `chave`, the sends' `pagador.chave`. */
  pixKey: string;
  /** How long a payout waits for its result before the PSP is asked; also the pace of refund follow-ups. */
  resultTimeoutMs: number;
  /** How often reconciliation runs (a refund under way is asked about that often). */
  reconcileIntervalMs: number;
}

/** The operator asked to return a Pix that is unknown, or not in a state to be returned. */
export class PixReturnRefusal extends Error {
  constructor(
    readonly kind: 'not_found' | 'not_returnable',
    message: string,
  ) {
    super(message);
    this.name = 'PixReturnRefusal';
  }
}

/** The dispositions of a received Pix an operator may assign to an order (its money is held, nobody's yet). */
const ASSIGNABLE: readonly q.PixReceivedRow['disposition'][] = ['unmatched', 'return_failed'];
const COLLECTION_STATUS_NAME: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(COLLECTION_STATUS).map(([name, status]) => [status, name]),
);

/** An assignment refused: `field` of the request breaks the rule `detail` states. */
const notAssignable = (e2eid: string, field: 'e2eid' | 'orderId' | 'amount', detail: string) =>
  new OperatorError({ kind: 'pix_not_assignable', e2eid, field, detail });

/** An assignment refused because the order no longer waits for its payment (a pending one's time is up). */
function notWaiting(e2eid: string, orderId: string, status: number): OperatorError {
  const name = COLLECTION_STATUS_NAME[status];
  const state = `status ${status}${name === undefined ? '' : ` ${name}`}${status === COLLECTION_STATUS.pending ? ', its time is up' : ''}`;
  return notAssignable(
    e2eid,
    'orderId',
    `order ${orderId} is not waiting for a payment (${state}): ` +
      'only an order waiting for its payment (status 1 pending) can be paid; return the Pix instead',
  );
}

const obj = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Reais as the API Pix writes them, "123.45", from centavos; and back. */
const reais = (amount: Minor) => formatMoney(amount, 'BRL').replace(/,/g, '');
const MONEY = /^\d{1,10}\.\d{2}$/;
function centavos(value: unknown): Minor | undefined {
  return typeof value === 'string' && MONEY.test(value) ? BigInt(value.replace('.', '')) : undefined;
}

/** An id of `length` letters and digits derived from `label`: the same on every attempt. */
const derivedId = (label: string, length = 32) => createHash('sha256').update(label).digest('hex').slice(0, length);

/** The idEnvio of a transfer's Pix: derived from the order, so a repeated attempt never pays twice. */
export const envioId = (orderId: string) =>
  `${orderId.replace(/[^a-zA-Z0-9]/g, '')}${derivedId(`envio:${orderId}`)}`.slice(0, 32);
/**
 * The id of the refund (devolução) of a received Pix: derived from its e2eid, so it is asked for
 * once; a return the operator asks for again after one failed is derived from the failed one's id.
 */
export const refundId = (e2eid: string, failed?: string) =>
  `R${derivedId(failed === undefined ? `devolucao:${e2eid}` : `devolucao:${e2eid}:${failed}`, 31)}`;

/** A CPF or CNPJ shown masked in the operator's records: the first three and last two characters. */
export const maskDocument = (value: string) =>
  value.length <= 5 ? value : `${value.slice(0, 3)}${'•'.repeat(value.length - 5)}${value.slice(-2)}`;

/** Payers' and payees' documents masked, tokens and the webhook token removed: what the operator may see. */
export function redactPix(value: unknown, token: string): unknown {
  if (Array.isArray(value)) return value.map((v) => redactPix(v, token));
  if (typeof value === 'string') return token === '' ? value : value.split(token).join('…');
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === 'access_token'
        ? '[redacted]'
        : (key === 'cpf' || key === 'cnpj') && typeof v === 'string'
          ? maskDocument(v)
          : redactPix(v, token),
    ]),
  );
}

/** Efí's account types for `favorecido.contaBanco.tipoConta`, by Cashgate's accountType (CC, CP). */
const ACCOUNT_TYPE: Record<string, string> = { CC: 'cacc', CP: 'svgs' };
const ISPB_BY_NAME = new Map(BRAZILIAN_BANKS.map((bank) => [bank.name, bank.ispb]));

/**
 * Brazil on a PSP's API Pix: collections as charges (cob) whose code the PSP issues, transfers as
 * Pix sent through the PSP's send extension, every webhook confirmed by the PSP's own query before
 * an order changes, Pix that no payable order can take returned to their payers, and the
 * reconciliation that finds what a lost webhook would have told. See docs/going-live-brazil.md.
 */
export class ApiPixBrazil {
  readonly #webhooks: Counter<'kind' | 'result'> | undefined;
  readonly #returns: Counter<'result'> | undefined;
  readonly #token: string;

  constructor(
    private readonly deps: {
      client: ApiPixClient;
      store: Store;
      orders: OrderService;
      ledger: Ledger;
      clock: Clock;
      logger: Logger;
      registry?: Registry;
    },
    private readonly options: ApiPixOptions,
  ) {
    this.#token = options.webhookBase.split('/').pop() ?? '';
    this.#webhooks =
      deps.registry === undefined
        ? undefined
        : new Counter({
            name: 'cashgate_pix_webhooks_total',
            help: 'Pix webhook elements from the PSP by kind (pix, send) and result (confirmed, unmatched, refused, failed)',
            labelNames: ['kind', 'result'],
            registers: [deps.registry],
          });
    this.#returns =
      deps.registry === undefined
        ? undefined
        : new Counter({
            name: 'cashgate_pix_returns_total',
            help: 'Returns (devoluções) of received Pix by how they ended: returned (DEVOLVIDO) or failed (NAO_REALIZADO, or refused by the PSP)',
            labelNames: ['result'],
            registers: [deps.registry],
          });
  }

  /** The rails Brazil's Pix orders are handed to. */
  rails(): { pix: Rail; pixPayout: Rail; bankPayout: Rail } {
    return {
      pix: { name: 'pix (api pix)', start: (order) => this.#startCob(order) },
      pixPayout: {
        name: 'pix-payout (api pix)',
        start: (order) => this.#startSend(order, 'PIX'),
        startsAfterAnswer: true,
      },
      bankPayout: {
        name: 'pix-account (api pix)',
        start: (order) => this.#startSend(order, 'BANK'),
        startsAfterAnswer: true,
      },
    };
  }

  async close(): Promise<void> {
    await this.deps.client.close();
  }

  /** Registers Cashgate's webhook for the Pix key (`PUT /webhook/{chave}`); the PSP appends `/pix`. */
  async registerWebhook(): Promise<void> {
    const exchange = await this.deps.client.api(
      'webhook-put',
      'PUT',
      `/webhook/${encodeURIComponent(this.options.pixKey)}`,
      { webhookUrl: this.options.webhookBase },
    );
    await this.#write((tx) => railq.insertRailMessages(tx, [this.#message(exchange, null, this.options.pixKey)]));
  }

  // ---- records ---------------------------------------------------------------------------------

  #message(
    exchange: Pick<PixExchange, 'endpoint' | 'httpStatus' | 'code' | 'durationMs' | 'request' | 'response'>,
    orderId: string | null,
    ref: string | null,
  ): railq.RailMessageRow {
    return railq.outboundMessage(
      'apipix',
      { ...exchange, operation: exchange.endpoint },
      { orderId, ref, at: this.deps.clock.now() },
      (v) => redactPix(v, this.#token),
    );
  }

  #inbound(
    endpoint: string,
    body: unknown,
    orderId: string | null,
    ref: string | null,
    disposition: 'matched' | 'unmatched' | 'refused',
  ): railq.RailMessageRow {
    const at = this.deps.clock.now();
    return railq.inboundMessage('apipix', endpoint, body, { orderId, ref, disposition, at }, (v) =>
      redactPix(v, this.#token),
    );
  }

  #write<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.deps.store.transact(work);
  }

  /** Calls the PSP; a failed call is recorded in the order's rail history before it is thrown. */
  async #call(
    orderId: string | null,
    ref: string | null,
    call: (client: ApiPixClient) => Promise<PixExchange>,
  ): Promise<PixExchange> {
    try {
      return await call(this.deps.client);
    } catch (error) {
      if (error instanceof PixError) {
        await this.#write((tx) => railq.insertRailMessages(tx, [this.#message(error.exchange, orderId, ref)]));
        this.deps.logger.warn(
          { orderId, ref, operation: error.endpoint, code: error.code, kind: error.kind },
          `the PSP did not do it: ${error.message}`,
        );
      }
      throw error;
    }
  }

  // ---- collections: charges (cob) ------------------------------------------------------------------

  async #startCob(order: RailOrder): Promise<RailStarted> {
    const txid = order.railRef?.startsWith('cob:') === true ? order.railRef.slice(4) : undefined;
    if (txid === undefined)
      throw new RailRefusal(`order ${order.orderId} has no PSP charge (it was made by the sandbox)`);
    const path = `/cob/${txid}`;
    if (order.earlierAttempts > 0) {
      // An earlier attempt may have made the charge: ask before making it.
      const earlier = await this.#existingCob(order.orderId, txid);
      if (earlier !== undefined) return this.#cobStarted(order, txid, earlier);
    }
    const details = JSON.parse(order.details) as BrazilDetails;
    const now = this.deps.clock.now();
    const body: Record<string, unknown> = {
      calendario: { expiracao: Math.max(60, Math.ceil(((order.expiresAt ?? now + 86_400_000) - now) / 1000)) },
      valor: { original: reais(order.amount) },
      chave: this.options.pixKey,
    };
    const payer = payerDocument(details);
    if (payer !== undefined && details.userInfoName !== undefined && details.userInfoName.trim() !== '') {
      body.devedor = {
        [payer.type === 'CNPJ' ? 'cnpj' : 'cpf']: payer.number,
        nome: details.userInfoName.trim().slice(0, 200),
      };
    }
    const remark = order.remark?.trim() ?? '';
    if (remark !== '') body.solicitacaoPagador = remark.slice(0, 140);
    try {
      const exchange = await this.#call(order.orderId, txid, (c) => c.api('cob-put', 'PUT', path, body));
      return this.#cobStarted(order, txid, exchange);
    } catch (error) {
      if (!(error instanceof PixError) || error.kind !== 'invalid') throw error;
      // Refused: perhaps because a lost earlier attempt already made this very charge.
      const earlier = await this.#existingCob(order.orderId, txid);
      if (earlier !== undefined && obj(obj(earlier.response).valor).original === reais(order.amount))
        return this.#cobStarted(order, txid, earlier);
      throw new RailRefusal(error.message);
    }
  }

  async #existingCob(orderId: string, txid: string): Promise<PixExchange | undefined> {
    try {
      return await this.#call(orderId, txid, (c) => c.api('cob-get', 'GET', `/cob/${txid}`));
    } catch (error) {
      if (error instanceof PixError && error.kind === 'not-found') return undefined;
      throw error;
    }
  }

  #cobStarted(order: RailOrder, txid: string, exchange: PixExchange): RailStarted {
    const cob = obj(exchange.response);
    const code = text(cob.pixCopiaECola);
    if (code === undefined) throw new Error(`the PSP's charge ${txid} carries no pixCopiaECola`);
    const location = text(cob.location) ?? text(obj(cob.loc).location) ?? '';
    return {
      channelOrderId: txid,
      details: { payParam: code, pixLocation: location },
      record: async (tx) => {
        const now = this.deps.clock.now();
        await q.insertPixCharge(tx, {
          txid,
          order_id: order.orderId,
          state: 'active',
          amount: Number(order.amount),
          created_at: now,
          updated_at: now,
        });
        await railq.insertRailMessages(tx, [this.#message(exchange, order.orderId, txid)]);
      },
    };
  }

  // ---- webhooks ------------------------------------------------------------------------------------

  /**
   * A webhook delivery (`{"pix":[…]}`). No element is trusted: each received Pix is asked about
   * with `GET /pix/{e2eid}`, each send with the send extension's status query, before any order
   * changes. Handled elements are recorded; the PSP is answered 200 whatever they said.
   */
  async webhook(body: unknown): Promise<void> {
    const elements = Array.isArray(obj(body).pix) ? (obj(body).pix as unknown[]) : [];
    if (elements.length === 0) {
      await this.#write((tx) =>
        railq.insertRailMessages(tx, [this.#inbound('webhook', body, null, null, 'unmatched')]),
      );
      return;
    }
    for (const element of elements) {
      const e = obj(element);
      const idEnvio = text(obj(e.gnExtras).idEnvio);
      try {
        if (idEnvio !== undefined) await this.#sendReported(idEnvio, e);
        else await this.#pixReported(text(e.endToEndId), e);
      } catch (error) {
        this.#webhooks?.inc({ kind: idEnvio === undefined ? 'pix' : 'send', result: 'failed' });
        // Reconciliation asks the PSP again about everything it has not settled.
        this.deps.logger.error({ err: error, idEnvio }, 'a Pix webhook element could not be handled now');
      }
    }
  }

  async #pixReported(e2eid: string | undefined, element: Record<string, unknown>): Promise<void> {
    const { result, orderId } =
      e2eid === undefined ? { result: 'unmatched' as const, orderId: null } : await this.receive(e2eid);
    const disposition = result === 'confirmed' ? 'matched' : result;
    await this.#write((tx) =>
      railq.insertRailMessages(tx, [this.#inbound('webhook-pix', element, orderId, e2eid ?? null, disposition)]),
    );
    this.#webhooks?.inc({ kind: 'pix', result });
  }

  /**
   * A Pix the PSP received, by its end-to-end id: confirmed with `GET /pix/{e2eid}`, then credited
   * to its order if that order still waits for it, or else returned to the payer; a Pix already
   * handled only has its refund followed. Safe to call any number of times, from any node.
   */
  async receive(e2eid: string): Promise<{ result: 'confirmed' | 'unmatched' | 'refused'; orderId: string | null }> {
    const { store, clock, orders } = this.deps;
    const known = await q.pixReceived(store.read, e2eid);
    if (known !== undefined) {
      if (known.disposition === 'returning') await this.#followReturn(known);
      return { result: known.disposition === 'unmatched' ? 'unmatched' : 'confirmed', orderId: known.order_id };
    }
    let exchange: PixExchange;
    try {
      exchange = await this.#call(null, e2eid, (c) => c.api('pix-get', 'GET', `/pix/${encodeURIComponent(e2eid)}`));
    } catch (error) {
      if (error instanceof PixError && error.kind === 'not-found') return { result: 'refused', orderId: null };
      throw error;
    }
    const pix = obj(exchange.response);
    const amount = centavos(pix.valor);
    if (text(pix.endToEndId) !== e2eid || amount === undefined) {
      await this.#write((tx) => railq.insertRailMessages(tx, [this.#message(exchange, null, e2eid)]));
      return { result: 'refused', orderId: null };
    }
    const txid = text(pix.txid);
    const charge = txid === undefined ? undefined : await q.pixChargeByTxid(store.read, txid);
    // The standard's Pix names no payer; PSPs add one (Efí in gnExtras.pagador).
    const payer = obj(obj(pix.gnExtras).pagador ?? pix.pagador);
    const payerDocument = text(payer.cpf) ?? text(payer.cnpj);
    const payerName = text(payer.nome);
    const now = clock.now();
    const row: q.PixReceivedRow = {
      e2eid,
      txid: txid ?? null,
      order_id: charge?.order_id ?? null,
      amount: Number(amount),
      paid_at: text(pix.horario) ?? new Date(now).toISOString(),
      payer_name: payerName ?? null,
      payer_document: payerDocument ?? null,
      disposition: 'unmatched',
      reason: null,
      refund_id: null,
      refund_status: null,
      refund_rtr_id: null,
      next_check_at: null,
      unmatched_posted: 0,
      approval_id: null,
      assigned_by: null,
      assigned_reason: null,
      assigned_at: null,
      created_at: now,
      updated_at: now,
    };
    try {
      if (charge === undefined) {
        // Money at Cashgate's key that no charge asked for: the operator's to look at.
        await this.#write(async (tx) => {
          await q.insertPixReceived(tx, { ...row, unmatched_posted: 1 });
          await this.deps.ledger.post(tx, {
            kind: 'pix.unmatched.received',
            currency: 'BRL',
            merchantId: null,
            memo: `Pix ${e2eid} received that no charge asked for`,
            entries: [
              { account: { kind: 'rail_clearing' }, amount: -amount },
              { account: { kind: 'pix_unmatched' }, amount },
            ],
          });
          await railq.insertRailMessages(tx, [this.#message(exchange, null, e2eid)]);
        });
        this.deps.logger.warn({ e2eid, txid, amount: String(amount) }, 'a Pix arrived that no charge asked for');
        return { result: 'unmatched', orderId: null };
      }
      let refused = false;
      try {
        const applied = await this.#credit(charge.order_id, row, async (tx) => {
          await q.insertPixReceived(tx, { ...row, disposition: 'credited' });
          await q.setPixChargeState(tx, charge.txid, 'paid', now);
          await railq.insertRailMessages(tx, [this.#message(exchange, charge.order_id, e2eid)]);
        });
        // The order's rules refused this payment (an aggregate cashier's dynamicAmountNotify 2).
        refused = applied.status !== COLLECTION_STATUS.paid;
        if (!refused) return { result: 'confirmed', orderId: charge.order_id };
      } catch (error) {
        if (!(error instanceof EventNotAllowedError)) throw error;
      }
      // The order no longer waits for a payment (it expired, or another Pix paid it): return this one.
      const reason = refused
        ? 'the order refused a payment of this amount'
        : `the order no longer waits for a payment (status ${(await orders.find(charge.order_id))?.status ?? '?'})`;
      const returning: q.PixReceivedRow = {
        ...row,
        disposition: 'returning',
        reason,
        refund_id: refundId(e2eid),
        next_check_at: now,
      };
      await this.#write(async (tx) => {
        if (refused) await q.updatePixReceived(tx, e2eid, { ...returning, updated_at: now });
        else await q.insertPixReceived(tx, returning);
        await this.deps.ledger.post(tx, {
          kind: 'pix.return.received',
          currency: 'BRL',
          merchantId: null,
          orderId: charge.order_id,
          memo: `Pix ${e2eid} received for an order that no longer takes it; to be returned`,
          entries: [
            { account: { kind: 'rail_clearing' }, amount: -amount },
            { account: { kind: 'pix_returns' }, amount },
          ],
        });
        await railq.insertRailMessages(tx, [this.#message(exchange, charge.order_id, e2eid)]);
      });
      this.deps.logger.warn({ e2eid, orderId: charge.order_id }, `a Pix is returned to its payer: ${reason}`);
      await this.#followReturn(returning);
      return { result: 'confirmed', orderId: charge.order_id };
    } catch (error) {
      // Another node or delivery handled this Pix first.
      if (isUniqueViolation(error)) return { result: 'confirmed', orderId: charge?.order_id ?? null };
      throw error;
    }
  }

  /**
   * Pays an order with a received Pix: its `paid` event with the Pix's amount, end-to-end id and
   * payer, whose status change, ledger entries and callback commit in one unit of work with `also`
   * (the Pix's own rows). The one path by which a Pix credits an order: matched by its charge's
   * txid, or assigned by an operator.
   */
  #credit(
    orderId: string,
    pix: Pick<q.PixReceivedRow, 'e2eid' | 'amount' | 'payer_name' | 'payer_document'>,
    also: (tx: Tx) => Promise<void>,
  ) {
    return this.deps.orders.applyEvent(orderId, 'paid', {
      source: 'apipix',
      amount: BigInt(pix.amount),
      data: {
        endToEndId: pix.e2eid,
        ...(pix.payer_name !== null && { payerName: pix.payer_name }),
        ...(pix.payer_document !== null && { payerDocument: pix.payer_document }),
      },
      also,
    });
  }

  /** Asks for a received Pix's refund (the same id every time: the PSP makes it once), or asks how it went. */
  async #followReturn(row: q.PixReceivedRow): Promise<void> {
    const { clock } = this.deps;
    const id = row.refund_id ?? refundId(row.e2eid);
    const path = `/pix/${encodeURIComponent(row.e2eid)}/devolucao/${id}`;
    let exchange: PixExchange;
    try {
      exchange =
        row.refund_status === null
          ? await this.#call(row.order_id, row.e2eid, (c) =>
              c.api('devolucao-put', 'PUT', path, { valor: reais(BigInt(row.amount)) }),
            )
          : await this.#call(row.order_id, row.e2eid, (c) => c.api('devolucao-get', 'GET', path));
    } catch (error) {
      // A refused request for a refund may be the repeat of one the PSP already has (Efí answers
      // 409 to a repeated id): ask for it before counting the return as failed.
      const existing =
        error instanceof PixError && error.kind === 'invalid' && row.refund_status === null
          ? await this.#call(row.order_id, row.e2eid, (c) => c.api('devolucao-get', 'GET', path)).catch(() => undefined)
          : undefined;
      if (existing !== undefined) return this.#recordReturn(row, id, existing);
      const final = error instanceof PixError && error.kind === 'invalid';
      const moved = await this.#write((tx) =>
        q.updateReturning(tx, row.e2eid, id, {
          ...(final && { disposition: 'return_failed', reason: error.message.slice(0, 200) }),
          next_check_at: final ? null : clock.now() + this.options.reconcileIntervalMs,
          updated_at: clock.now(),
        }),
      );
      if (!final) throw error;
      if (moved) this.#returnFailed(row, error.message);
      return;
    }
    await this.#recordReturn(row, id, exchange);
  }

  /**
   * Records what the PSP said of a refund: under way, returned (with its ledger entry), or not made.
   * Only a return still under way under this refund id moves: when several nodes or deliveries follow
   * one return at once, the first to record its end posts the journal, the others change nothing.
   */
  async #recordReturn(row: q.PixReceivedRow, id: string, exchange: PixExchange): Promise<void> {
    const refund = obj(exchange.response);
    const status = text(refund.status) ?? 'EM_PROCESSAMENTO';
    const now = this.deps.clock.now();
    const done = status === 'DEVOLVIDO';
    const failed = status === 'NAO_REALIZADO';
    const moved = await this.#write(async (tx) => {
      const updated = await q.updateReturning(tx, row.e2eid, id, {
        refund_status: status,
        refund_rtr_id: text(refund.rtrId) ?? row.refund_rtr_id,
        disposition: done ? 'returned' : failed ? 'return_failed' : 'returning',
        ...(failed && { reason: (text(refund.motivo) ?? 'the PSP could not return it').slice(0, 200) }),
        next_check_at: done || failed ? null : now + this.options.reconcileIntervalMs,
        updated_at: now,
      });
      if (!updated) return false;
      if (done) {
        await this.deps.ledger.post(tx, {
          kind: 'pix.return.sent',
          currency: 'BRL',
          merchantId: null,
          orderId: row.order_id,
          memo: `Pix ${row.e2eid} returned to its payer (${text(refund.rtrId) ?? id})`,
          entries: [
            { account: { kind: 'pix_returns' }, amount: -BigInt(row.amount) },
            { account: { kind: 'rail_clearing' }, amount: BigInt(row.amount) },
          ],
        });
      }
      await railq.insertRailMessages(tx, [this.#message(exchange, row.order_id, row.e2eid)]);
      return true;
    });
    if (!moved) return;
    if (done) this.#returns?.inc({ result: 'returned' });
    if (failed) this.#returnFailed(row, text(refund.motivo) ?? status);
  }

  #returnFailed(row: q.PixReceivedRow, reason: string): void {
    this.#returns?.inc({ result: 'failed' });
    this.deps.logger.warn(
      { e2eid: row.e2eid, orderId: row.order_id, amount: String(row.amount) },
      `a Pix could not be returned to its payer: ${reason}`,
    );
  }

  /**
   * The operator has a Pix returned to its payer: one that no charge asked for (its money moves from
   * `pix_unmatched` to `pix_returns`), or one whose return failed (asked for again under a new
   * refund id). Anything else is refused; two concurrent requests return it once.
   */
  async returnReceived(e2eid: string): Promise<q.PixReceivedRow> {
    const { store, clock } = this.deps;
    const row = await q.pixReceived(store.read, e2eid);
    if (row === undefined) throw new PixReturnRefusal('not_found', 'it was never received');
    if (row.approval_id !== null && row.disposition !== 'credited')
      throw new PixReturnRefusal(
        'not_returnable',
        `its assignment to an order waits for approval ${row.approval_id}: approve or reject that first`,
      );
    if (row.disposition !== 'unmatched' && row.disposition !== 'return_failed')
      throw new PixReturnRefusal(
        'not_returnable',
        `it is ${row.disposition}: only an unmatched Pix or one whose return failed is returned on request`,
      );
    const now = clock.now();
    const returning: q.PixReceivedRow = {
      ...row,
      disposition: 'returning',
      reason:
        row.disposition === 'unmatched'
          ? 'returned by the operator'
          : `asked again by the operator after: ${row.reason ?? 'a failed return'}`.slice(0, 200),
      refund_id: row.disposition === 'unmatched' ? refundId(e2eid) : refundId(e2eid, row.refund_id ?? undefined),
      refund_status: null,
      refund_rtr_id: null,
      // Asked for at once below; reconciliation follows it from the next run on.
      next_check_at: now + this.options.reconcileIntervalMs,
      updated_at: now,
    };
    const claimed = await this.#write(async (tx) => {
      if (!(await q.claimPixReturn(tx, row, returning))) return false;
      if (row.disposition === 'return_failed') return true;
      // An unmatched Pix recorded before its arrival was posted (unmatched_posted 0) comes from the rail.
      await this.deps.ledger.post(tx, {
        kind: 'pix.unmatched.returning',
        currency: 'BRL',
        merchantId: null,
        memo: `Pix ${e2eid} that no charge asked for, to be returned (asked by the operator)`,
        entries: [
          {
            account: { kind: row.unmatched_posted === 1 ? 'pix_unmatched' : 'rail_clearing' },
            amount: -BigInt(row.amount),
          },
          { account: { kind: 'pix_returns' }, amount: BigInt(row.amount) },
        ],
      });
      return true;
    });
    if (!claimed) throw new PixReturnRefusal('not_returnable', 'another request is returning or assigning it already');
    this.deps.logger.warn({ e2eid, amount: String(row.amount) }, 'the operator has a Pix returned to its payer');
    await this.#followReturn(returning).catch((error: unknown) =>
      this.deps.logger.error({ err: error, e2eid }, 'a Pix return could not be followed now'),
    );
    return (await q.pixReceived(store.read, e2eid)) ?? returning;
  }

  /** Pix received that were not credited to an order, newest first: all, or those of one disposition. */
  receivedList(
    disposition: Exclude<q.PixReceivedRow['disposition'], 'credited'> | undefined,
    limit: number,
  ): Promise<q.PixReceivedRow[]> {
    return q.pixReceivedList(this.deps.store.read, disposition, limit);
  }

  // ---- assignment by the operator ------------------------------------------------------------------

  /**
   * Whether a received Pix may be assigned to the order now, from committed data: the Pix is
   * unmatched or its return failed, and no assignment but `approvalId`'s holds it; the order is a
   * Brazilian Pix collection still waiting for its payment, of exactly the Pix's amount. Throws the
   * refusal (OperatorError) naming the field and the rule.
   */
  async assignable(
    e2eid: string,
    orderId: string,
    approvalId: string | null = null,
  ): Promise<{ pix: q.PixReceivedRow; order: OrderRow }> {
    const { store, orders, clock } = this.deps;
    const pix = await q.pixReceived(store.read, e2eid);
    if (pix === undefined) throw new OperatorError({ kind: 'pix_not_found', e2eid });
    if (pix.disposition !== 'credited' && pix.approval_id !== null && pix.approval_id !== approvalId)
      throw new OperatorError({ kind: 'pix_assignment_pending', e2eid, approvalId: pix.approval_id });
    if (!ASSIGNABLE.includes(pix.disposition))
      throw notAssignable(
        e2eid,
        'e2eid',
        `it is ${pix.disposition}: only an unmatched Pix, or one whose return failed, can be assigned to an order`,
      );
    const order = await orders.find(orderId);
    if (order === undefined) throw new OperatorError({ kind: 'order_not_found', orderId });
    if (order.kind !== 'collection' || order.currency !== 'BRL' || !/^(cob|loc|txid):/.test(order.rail_ref ?? ''))
      throw notAssignable(
        e2eid,
        'orderId',
        `order ${orderId} is a ${order.currency} ${order.kind} order (${order.channel_type}): a Pix pays only a Brazilian Pix collection order`,
      );
    if (!allowedEventsAt(order, clock.now()).includes('paid')) throw notWaiting(e2eid, orderId, order.status);
    if (BigInt(order.amount) !== BigInt(pix.amount)) {
      const [paid, asked] = [reais(BigInt(pix.amount)), reais(BigInt(order.amount))];
      throw notAssignable(
        e2eid,
        'amount',
        `the Pix is ${paid} BRL and order ${orderId} asks for ${asked} BRL: ` +
          'a Pix is assigned only to an order of exactly its amount; return it instead',
      );
    }
    return { pix, order };
  }

  /**
   * Holds a Pix for an assignment waiting for its approval, in the unit of work that records the
   * request: nothing else may return or assign it meanwhile. Throws when something moved it first.
   */
  async holdForAssignment(tx: Tx, pix: q.PixReceivedRow, approvalId: string): Promise<void> {
    if (!(await q.holdPixForAssignment(tx, pix, approvalId, this.deps.clock.now())))
      throw notAssignable(pix.e2eid, 'e2eid', 'another request returned or assigned it meanwhile');
  }

  /** Lets go of a Pix whose assignment was rejected: it is as it was (unmatched, or its return failed). */
  releaseAssignment(tx: Tx, e2eid: string, approvalId: string): Promise<void> {
    return q.releasePixHold(tx, e2eid, approvalId, this.deps.clock.now());
  }

  /**
   * Pays the order with a received Pix an operator assigned to it (at once, or `approvalId`'s once
   * approved), exactly as a matched Pix pays its order (#credit): the order's state change, ledger
   * entries and callback, the Pix's money moved back from where it waited (pix_unmatched, or
   * pix_returns for a failed return) to rail_clearing, the Pix recorded as credited to the order with
   * who assigned it and why, and `also` (the audit note, the approval's decision), in one unit of
   * work. The order's charge at the PSP is left for reconciliation to remove (the order no longer
   * waits). Throws the refusal (OperatorError) when the Pix or the order cannot take it.
   */
  async assignReceived(
    e2eid: string,
    orderId: string,
    by: { by: string; reason: string; approvalId: string | null },
    also?: (tx: Tx, pix: q.PixReceivedRow) => Promise<void>,
  ): Promise<{ pix: q.PixReceivedRow; order: OrderRow }> {
    const { pix } = await this.assignable(e2eid, orderId, by.approvalId);
    const now = this.deps.clock.now();
    const change = {
      order_id: orderId,
      approval_id: by.approvalId,
      assigned_by: by.by,
      assigned_reason: by.reason,
      assigned_at: now,
    };
    let order: OrderRow;
    try {
      order = await this.#credit(orderId, pix, async (tx) => {
        // Under the order's lock: the order took it, and the Pix is still as it was read.
        if ((await q.orderStatus(tx, orderId)) !== COLLECTION_STATUS.paid)
          throw notAssignable(e2eid, 'orderId', `order ${orderId}'s rules refused a payment of this amount`);
        if (!(await q.claimPixAssignment(tx, pix, change)))
          throw notAssignable(e2eid, 'e2eid', 'another request returned or assigned it meanwhile');
        const amount = BigInt(pix.amount);
        // Where its money waited: pix_unmatched (unmatched), pix_returns (a failed return), or still
        // rail_clearing for an unmatched Pix recorded before arrivals were posted.
        const from =
          pix.disposition === 'return_failed'
            ? 'pix_returns'
            : pix.unmatched_posted === 1
              ? 'pix_unmatched'
              : undefined;
        if (from !== undefined)
          await this.deps.ledger.post(tx, {
            kind: pix.disposition === 'return_failed' ? 'pix.return.assigned' : 'pix.unmatched.assigned',
            currency: 'BRL',
            merchantId: null,
            orderId,
            memo: `Pix ${e2eid} assigned by the operator to order ${orderId}`,
            entries: [
              { account: { kind: from }, amount: -amount },
              { account: { kind: 'rail_clearing' }, amount },
            ],
          });
        await also?.(tx, { ...pix, ...change, disposition: 'credited' });
      });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      throw notWaiting(e2eid, orderId, error.order.status);
    }
    this.deps.logger.warn(
      { e2eid, orderId, amount: String(pix.amount), approvalId: by.approvalId },
      'the operator assigned a Pix to an order',
    );
    return { pix: (await q.pixReceived(this.deps.store.read, e2eid)) ?? pix, order };
  }

  // ---- payouts: the send extension ---------------------------------------------------------------

  async #startSend(order: RailOrder, channel: 'PIX' | 'BANK'): Promise<RailStarted> {
    const idEnvio = envioId(order.orderId);
    if (order.earlierAttempts > 0) {
      // An earlier attempt may have sent it: ask before sending.
      const earlier = await this.#sendStatus(order.orderId, idEnvio);
      if (earlier !== undefined) return this.#sendStarted(order, idEnvio, earlier);
    }
    const d = JSON.parse(order.details) as BrazilDetails;
    const document = { [d.personIdType === 'CNPJ' ? 'cnpj' : 'cpf']: d.personId ?? '' };
    let favorecido: Record<string, unknown>;
    if (channel === 'PIX') {
      favorecido = { chave: d.accountId ?? '' };
    } else {
      const ispb = ISPB_BY_NAME.get(d.bankName ?? '');
      if (ispb === undefined)
        throw new RailRefusal(`bankName ${JSON.stringify(d.bankName)} has no ISPB on the bank list`);
      favorecido = {
        contaBanco: {
          nome: (d.personName ?? '').slice(0, 200),
          ...document,
          codigoBanco: ispb,
          agencia: d.agency ?? '',
          conta: (d.accountId ?? '').replace(/\D/g, '') || (d.accountId ?? ''),
          tipoConta: ACCOUNT_TYPE[d.accountType ?? ''] ?? 'cacc',
        },
      };
    }
    const remark = order.remark?.trim() ?? '';
    const body = {
      valor: reais(order.amount),
      pagador: { chave: this.options.pixKey, ...(remark !== '' && { infoPagador: remark.slice(0, 140) }) },
      favorecido,
    };
    try {
      const exchange = await this.#call(order.orderId, idEnvio, (c) =>
        c.send('send-put', 'PUT', `/v3/gn/pix/${idEnvio}`, body),
      );
      await this.#markProcessing(order.orderId);
      return this.#sendStarted(order, idEnvio, exchange);
    } catch (error) {
      if (!(error instanceof PixError) || error.kind !== 'invalid') throw error;
      // Refused: perhaps because a lost earlier attempt already sent this very idEnvio.
      const earlier = await this.#sendStatus(order.orderId, idEnvio);
      if (earlier !== undefined) return this.#sendStarted(order, idEnvio, earlier);
      // The PSP refused the payout for what it is: the order fails and its money is released.
      await this.#failPayout(order.orderId, error.message);
      throw new RailRefusal(error.message);
    }
  }

  async #sendStatus(orderId: string, idEnvio: string): Promise<PixExchange | undefined> {
    try {
      return await this.#call(orderId, idEnvio, (c) =>
        c.send('send-get', 'GET', `/v2/gn/pix/enviados/id-envio/${idEnvio}`),
      );
    } catch (error) {
      if (error instanceof PixError && error.kind === 'not-found') return undefined;
      throw error;
    }
  }

  #sendStarted(order: RailOrder, idEnvio: string, exchange: PixExchange): RailStarted {
    const answer = obj(exchange.response);
    const e2eid = text(answer.e2eId) ?? text(answer.endToEndId);
    return {
      channelOrderId: e2eid ?? idEnvio,
      record: async (tx) => {
        const now = this.deps.clock.now();
        await q.insertPixPayout(tx, {
          id_envio: idEnvio,
          order_id: order.orderId,
          state: 'accepted',
          e2eid: e2eid ?? null,
          psp_status: text(answer.status) ?? null,
          checks: 0,
          next_check_at: now + this.options.resultTimeoutMs,
          created_at: now,
          updated_at: now,
        });
        await railq.insertRailMessages(tx, [this.#message(exchange, order.orderId, idEnvio)]);
      },
    };
  }

  async #sendReported(idEnvio: string, element: Record<string, unknown>): Promise<void> {
    const payout = await q.pixPayout(this.deps.store.read, idEnvio);
    await this.#write((tx) =>
      railq.insertRailMessages(tx, [
        this.#inbound(
          'webhook-send',
          element,
          payout?.order_id ?? null,
          idEnvio,
          payout === undefined ? 'unmatched' : 'matched',
        ),
      ]),
    );
    if (payout === undefined) {
      this.#webhooks?.inc({ kind: 'send', result: 'unmatched' });
      return;
    }
    // Efí's status query carries no reason for a send that was not made; the webhook's does. It is
    // only used as the text of a failure the query itself confirmed.
    const erro = obj(obj(element.gnExtras).erro);
    await this.#checkPayout(payout, text(erro.motivo) ?? text(element.motivo));
    this.#webhooks?.inc({ kind: 'send', result: 'confirmed' });
  }

  /** Asks the PSP how a payout went and settles its order when the answer is final. */
  async #checkPayout(payout: q.PixPayoutRow, reportedReason?: string): Promise<void> {
    if (payout.state === 'settled') return;
    const { clock, orders } = this.deps;
    const exchange = await this.#sendStatus(payout.order_id, payout.id_envio);
    const now = clock.now();
    if (exchange === undefined) {
      await this.#write((tx) =>
        q.updatePixPayout(tx, payout.id_envio, {
          checks: payout.checks + 1,
          next_check_at: now + this.options.resultTimeoutMs,
          updated_at: now,
        }),
      );
      return;
    }
    const answer = obj(exchange.response);
    const status = text(answer.status);
    const e2eid = text(answer.endToEndId) ?? text(answer.e2eId) ?? payout.e2eid;
    const settle = async (tx: Tx) => {
      await q.updatePixPayout(tx, payout.id_envio, {
        state: 'settled',
        psp_status: status ?? null,
        e2eid: e2eid ?? null,
        next_check_at: null,
        checks: payout.checks + 1,
        updated_at: now,
      });
      await railq.insertRailMessages(tx, [this.#message(exchange, payout.order_id, payout.id_envio)]);
    };
    if (status === 'REALIZADO') {
      await this.#markProcessing(payout.order_id);
      try {
        await orders.applyEvent(payout.order_id, 'succeeded', {
          source: 'apipix',
          data: { ...(e2eid != null && { endToEndId: e2eid }) },
          also: settle,
        });
      } catch (error) {
        if (!(error instanceof EventNotAllowedError)) throw error;
        await this.#write(settle);
      }
      return;
    }
    if (status === 'NAO_REALIZADO') {
      const reason =
        text(obj(obj(answer.gnExtras).erro).motivo) ??
        text(answer.motivo) ??
        reportedReason ??
        (await this.#reportedReason(payout.id_envio)) ??
        'the receiving institution did not credit the Pix';
      await this.#failPayout(payout.order_id, reason, settle);
      return;
    }
    await this.#write(async (tx) => {
      await q.updatePixPayout(tx, payout.id_envio, {
        psp_status: status ?? null,
        checks: payout.checks + 1,
        next_check_at: now + this.options.resultTimeoutMs,
        updated_at: now,
      });
      await railq.insertRailMessages(tx, [this.#message(exchange, payout.order_id, payout.id_envio)]);
    });
  }

  /**
   * The reason a send webhook gave for a send that was not made (`gnExtras.erro.motivo`), from the
   * webhooks recorded about it: one may have come before Cashgate had recorded the payout.
   */
  async #reportedReason(idEnvio: string): Promise<string | undefined> {
    const messages = await railq.railMessagesAbout(this.deps.store.read, 'apipix', 'webhook-send', idEnvio);
    for (const message of messages) {
      const element = obj(JSON.parse(message.response ?? 'null') as unknown);
      const reason = text(obj(obj(element.gnExtras).erro).motivo) ?? text(element.motivo);
      if (reason !== undefined) return reason;
    }
    return undefined;
  }

  /** The PSP took the payout: the order is with the rail (2, BANK_PROCESSING). */
  async #markProcessing(orderId: string): Promise<void> {
    try {
      await this.deps.orders.applyEvent(orderId, 'processing', { source: 'apipix' });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
    }
  }

  async #failPayout(orderId: string, reason: string, also?: (tx: Tx) => Promise<void>): Promise<void> {
    try {
      await this.deps.orders.applyEvent(orderId, 'failed', {
        source: 'apipix',
        data: { reason },
        ...(also !== undefined && { also }),
      });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      if (also !== undefined) await this.#write(also);
    }
  }

  // ---- reconciliation ------------------------------------------------------------------------------

  /**
   * An operator asks the PSP again about one order now: a payout awaiting its result is made due,
   * then one reconciliation runs (which also lists the Pix received for active charges). How many
   * of the order's things were at the PSP.
   */
  async askAgain(orderId: string): Promise<number> {
    const now = this.deps.clock.now();
    const waiting = await this.deps.store.transact((tx) => q.pixOrderDueNow(tx, orderId, now));
    if (waiting > 0) await this.reconcile();
    return waiting;
  }

  /**
   * One reconciliation run: lists the Pix received since the last run (the window overlaps the
   * previous one) and handles every one not yet handled; removes at the PSP the charges of orders
   * that ended unpaid; asks about refunds under way and about payouts whose result is late.
   * Returns how many things it looked at.
   */
  async reconcile(limit = 50): Promise<number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    return (
      (await this.#listReceived()) +
      (await this.#settled(
        await q.pixChargesToRemove(store.read, COLLECTION_STATUS.pending, limit),
        (charge) => this.#removeCharge(charge),
        (charge) => ({ txid: charge.txid, msg: 'a charge could not be removed at the PSP now' }),
      )) +
      (await this.#settled(
        await q.pixReturnsDue(store.read, now, limit),
        (row) => this.#followReturn(row),
        (row) => ({ e2eid: row.e2eid, msg: 'a Pix return could not be followed now' }),
      )) +
      (await this.#settled(
        await q.pixPayoutsDue(store.read, now, limit),
        (payout) => this.#checkPayout(payout),
        (payout) => ({ idEnvio: payout.id_envio, msg: 'a payout could not be asked about now' }),
      ))
    );
  }

  /**
   * Works each item; returns how many were worked without an error. Failures are logged and not
   * counted, so a PSP that keeps failing does not keep the worker looping within one run.
   */
  async #settled<T>(
    items: readonly T[],
    work: (item: T) => Promise<unknown>,
    describe: (item: T) => { msg: string } & Record<string, string>,
  ): Promise<number> {
    let done = 0;
    for (const item of items) {
      try {
        await work(item);
        done += 1;
      } catch (error) {
        const { msg, ...context } = describe(item);
        this.deps.logger.error({ err: error, ...context }, msg);
      }
    }
    return done;
  }

  /** The window of received Pix since the cursor (minus an overlap), page by page. */
  async #listReceived(): Promise<number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const overlap = Math.max(600_000, 2 * this.options.reconcileIntervalMs);
    const from = ((await railq.railCursor(store.read, 'apipix.received')) ?? now - 3_600_000) - overlap;
    let handled = 0;
    for (let page = 0; page < 100; page += 1) {
      const query = new URLSearchParams({
        inicio: new Date(from).toISOString(),
        fim: new Date(now).toISOString(),
        'paginacao.paginaAtual': String(page),
        'paginacao.itensPorPagina': '100',
      });
      const exchange = await this.#call(null, null, (c) => c.api('pix-list', 'GET', `/pix?${query.toString()}`));
      const answer = obj(exchange.response);
      for (const pix of Array.isArray(answer.pix) ? answer.pix : []) {
        const e2eid = text(obj(pix).endToEndId);
        if (e2eid === undefined) continue;
        const known = await q.pixReceived(store.read, e2eid);
        if (known !== undefined) continue;
        handled += 1;
        await this.receive(e2eid).catch((error: unknown) =>
          this.deps.logger.error({ err: error, e2eid }, 'a received Pix could not be handled now'),
        );
      }
      const pages = Number(obj(obj(answer.parametros).paginacao).quantidadeDePaginas ?? 1);
      if (page + 1 >= pages) break;
    }
    await this.#write((tx) => railq.setRailCursor(tx, 'apipix.received', now));
    return handled;
  }

  /** Removes an ended order's charge at the PSP; one the PSP says was paid has its Pix handled instead. */
  async #removeCharge(charge: q.PixChargeRow): Promise<void> {
    const { clock } = this.deps;
    try {
      const exchange = await this.#call(charge.order_id, charge.txid, (c) =>
        c.api('cob-patch', 'PATCH', `/cob/${charge.txid}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }),
      );
      await this.#write(async (tx) => {
        await q.setPixChargeState(tx, charge.txid, 'removed', clock.now());
        await railq.insertRailMessages(tx, [this.#message(exchange, charge.order_id, charge.txid)]);
      });
      return;
    } catch (error) {
      if (!(error instanceof PixError) || error.kind !== 'invalid') throw error;
    }
    // Refused: the charge was paid meanwhile (CONCLUIDA) or is gone. Its Pix, if any, are handled.
    const cob = await this.#existingCob(charge.order_id, charge.txid);
    const paid = Array.isArray(obj(cob?.response).pix) ? (obj(cob?.response).pix as unknown[]) : [];
    for (const pix of paid) {
      const e2eid = text(obj(pix).endToEndId);
      if (e2eid !== undefined) await this.receive(e2eid);
    }
    await this.#write((tx) => q.setPixChargeState(tx, charge.txid, paid.length > 0 ? 'paid' : 'removed', clock.now()));
  }
}
