import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Ledger } from '../ledger/ledger.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { COLLECTION_STATUS } from '../orders/state-machine.js';
import { barcodeFromLinha, formatLinhaDigitavel } from '../rails/boleto/boleto.js';
import {
  IssuerError,
  type BoletoIssuer,
  type BoletoPayer,
  type IssuerCharge,
  type IssuerExchange,
  type NotifiedCharge,
} from '../rails/boleto/issuer.js';
import * as railq from '../rails/queries.js';
import { RailRefusal, type Rail, type RailOrder, type RailStarted } from '../rails/rails.js';
import type { BoletoChargeState } from '../store/schema.js';
import type { Store, Tx } from '../store/store.js';
import { maskDocument } from './api-pix.js';
import { payerDocument, type BrazilDetails } from './details.js';
import { isValidDocument } from './documents.js';
import * as q from './queries.js';

export interface BoletoLiveOptions {
  /** `${PUBLIC_BASE_URL}/rails/boleto/<token>/<issuer>`: where the issuer notifies (Efí per charge, Inter per account). */
  notificationUrl: string;
  /** How long a create waits for the boleto to be registered before it answers without its linha digitável. */
  issueWaitMs: number;
  /** How often reconciliation runs: also the pace of following a registration still under way. */
  reconcileIntervalMs: number;
}

/** What a Brazil order keeps of its boleto at an issuer (see BrazilDetails). */
export type BoletoDetails = Pick<
  BrazilDetails,
  | 'payerAddress'
  | 'boletoBarcode'
  | 'boletoPixCode'
  | 'boletoNossoNumero'
  | 'boletoPaidBy'
  | 'boletoPaidAt'
  | 'boletoFailure'
>;

/** The 27 federative units of Brazil, as boletos name them. */
export const UFS = [
  'AC', 'AL', 'AP', 'AM', 'BA', 'CE', 'DF', 'ES', 'GO', 'MA', 'MT', 'MS', 'MG', 'PA', 'PB', 'PR', 'PE', 'PI', 'RJ',
  'RN', 'RS', 'RO', 'RR', 'SC', 'SP', 'SE', 'TO',
] as const; // prettier-ignore

/** What the payer still has to give before the issuer can register the boleto. */
export type MissingPayerField = 'name' | 'document' | 'address';

/**
 * The payer a boleto at `issuer` names, from the order's details (the merchant's userInfo*, or what
 * the payer gave on the cashier page), or what is missing: a name (Efí wants a person's to be at
 * least two words), a CPF or CNPJ (never one Cashgate generated), and for Inter an address.
 */
export function boletoPayer(
  d: BrazilDetails & BoletoDetails,
  issuer: BoletoIssuer['name'],
): { payer: BoletoPayer } | { missing: MissingPayerField[] } {
  const missing: MissingPayerField[] = [];
  const document = payerDocument(d);
  const name = (d.userInfoName ?? '').trim().replace(/\s+/g, ' ');
  if (document === undefined || !isValidDocument(document.type, document.number)) missing.push('document');
  const words = name === '' ? 0 : name.split(' ').length;
  if (words === 0 || (issuer === 'efi' && document?.type !== 'CNPJ' && words < 2)) missing.push('name');
  const address = d.payerAddress;
  if (issuer === 'inter' && address === undefined) missing.push('address');
  if (missing.length > 0 || document === undefined) return { missing };
  return {
    payer: {
      type: document.type,
      document: document.number,
      name: name.slice(0, 100),
      ...(address !== undefined && { address }),
    },
  };
}

/** How long a claimed issue may take before another attempt (any node's) may claim it again. */
const RETRY_MS = 30_000;

class PaymentHandled extends Error {}

/**
 * How long a payment reconciliation finds, with no amount stated (Efí's list), waits for the
 * notification that states it before the charge's total is credited.
 */
export const UNSTATED_GRACE_MS = 10 * 60_000;

/** Payers' documents masked, tokens removed: what the operator may see of an issuer's messages. */
export function redactBoleto(value: unknown, token: string): unknown {
  if (Array.isArray(value)) return value.map((v) => redactBoleto(v, token));
  if (typeof value === 'string') return token === '' ? value : value.split(token).join('…');
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === 'access_token' || key === 'refresh_token' || key === 'notification'
        ? '[redacted]'
        : ['cpf', 'cnpj', 'cpfCnpj'].includes(key) && typeof v === 'string'
          ? maskDocument(v)
          : redactBoleto(v, token),
    ]),
  );
}

/** What the issuer's state makes of Cashgate's record of the boleto. */
const ROW_STATE: Record<IssuerCharge['state'], BoletoChargeState | undefined> = {
  processing: 'processing',
  failed: 'failed',
  open: 'open',
  paid: 'paid',
  settled: 'settled',
  cancelled: 'cancelled',
  expired: 'expired',
  other: undefined,
};

/**
 * Brazil's boletos registered at an issuer (BRAZIL_BOLETO_RAIL=efi|inter): each issued after its
 * order committed, from durable work, never twice (after an unknown outcome the issuer is asked
 * first); every notification confirmed by the issuer's own query before an order changes; charges
 * of orders that ended written off; a payment that comes after (a printed slip paid at a branch)
 * kept in a suspense account for the operator; and the reconciliation that finds what a lost
 * notification would have told. See docs/going-live-brazil.md.
 */
export class BoletoLive {
  readonly #notifications: Counter<'issuer' | 'disposition'> | undefined;
  readonly #token: string;
  #webhookRegistered = false;

  constructor(
    private readonly deps: {
      issuer: BoletoIssuer;
      store: Store;
      orders: OrderService;
      ledger: Ledger;
      clock: Clock;
      logger: Logger;
      registry?: Registry;
    },
    private readonly options: BoletoLiveOptions,
  ) {
    this.#token = options.notificationUrl.split('/').at(-2) ?? '';
    this.#notifications =
      deps.registry === undefined
        ? undefined
        : new Counter({
            name: 'cashgate_boleto_notifications_total',
            help: 'Notifications from the boleto issuer by issuer and disposition (matched, unmatched, refused, failed)',
            labelNames: ['issuer', 'disposition'],
            registers: [deps.registry],
          });
  }

  get issuer(): BoletoIssuer['name'] {
    return this.deps.issuer.name;
  }

  /** The smallest and largest amount the issuer registers, centavos. */
  get limits(): BoletoIssuer['limits'] {
    return this.deps.issuer.limits;
  }

  /** The rail boleto orders are handed to. */
  rail(): Rail {
    return {
      name: `boleto (${this.issuer})`,
      start: (order) => this.#start(order),
      answerWaitMs: this.options.issueWaitMs,
    };
  }

  async close(): Promise<void> {
    await this.deps.issuer.close();
  }

  // ---- records ---------------------------------------------------------------------------------

  #message(exchange: IssuerExchange, orderId: string | null, ref: string | null): railq.RailMessageRow {
    return railq.outboundMessage(`boleto-${this.issuer}`, exchange, { orderId, ref, at: this.deps.clock.now() }, (v) =>
      redactBoleto(v, this.#token),
    );
  }

  #messages(exchanges: readonly IssuerExchange[], orderId: string | null, ref: string | null) {
    return exchanges.map((exchange) => this.#message(exchange, orderId, ref));
  }

  #write<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.deps.store.transact(work);
  }

  /** Calls the issuer; a failed call is recorded in the order's rail messages before it is thrown. */
  async #call<T>(
    orderId: string | null,
    ref: string | null,
    call: (issuer: BoletoIssuer) => Promise<{ value: T; exchanges: IssuerExchange[] }>,
  ): Promise<{ value: T; exchanges: IssuerExchange[] }> {
    try {
      return await call(this.deps.issuer);
    } catch (error) {
      if (error instanceof IssuerError) {
        await this.#write((tx) => railq.insertRailMessages(tx, [this.#message(error.exchange, orderId, ref)]));
        this.deps.logger.warn(
          { orderId, ref, operation: error.exchange.operation, code: error.code, kind: error.kind },
          `the boleto issuer did not do it: ${error.message}`,
        );
      }
      throw error;
    }
  }

  // ---- issue -------------------------------------------------------------------------------------

  /**
   * The hand-over's start: records the order's boleto, then registers it at the issuer when the
   * payer is known (else the cashier page asks the payer first). Answers the issuer's linha
   * digitável when it registered the boleto within BOLETO_ISSUE_WAIT_MS.
   */
  async #start(order: RailOrder): Promise<RailStarted> {
    const prefix = `${this.issuer}:`;
    if (order.railRef?.startsWith(prefix) !== true)
      throw new RailRefusal(`order ${order.orderId} has no ${this.issuer} boleto (it was made by the sandbox)`);
    const reference = order.railRef.slice(prefix.length);
    const details = JSON.parse(order.details) as BrazilDetails & BoletoDetails;
    const now = this.deps.clock.now();
    const known = await q.boletoCharge(this.deps.store.read, order.orderId);
    if (known === undefined) {
      const payer = boletoPayer(details, this.issuer);
      await this.#write((tx) =>
        q.insertBoletoCharge(tx, {
          order_id: order.orderId,
          issuer: this.issuer,
          reference,
          charge_id: null,
          state: 'payer' in payer ? 'to_issue' : 'awaiting_payer',
          issuer_status: null,
          due_date: details.boletoDueDate ?? '',
          amount: Number(order.amount),
          issue_attempts: 0,
          next_check_at: 'payer' in payer ? now + RETRY_MS : null,
          linha_digitavel: null,
          barcode: null,
          pix_code: null,
          nosso_numero: null,
          pdf_url: null,
          paid_amount: null,
          paid_at: null,
          paid_method: null,
          paid_seen_at: null,
          disposition: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        }),
      );
    }
    // Followed a little less long than the create waits, so that what it finds is in the answer.
    const row = await this.issue(order.orderId, now + Math.max(0, this.options.issueWaitMs - 250));
    return { channelOrderId: reference, ...(row?.state === 'open' && { details: issuedDetails(row) }) };
  }

  /**
   * Registers the order's boleto if it is due to be (state `to_issue`): claimed first (one node
   * issues it), the issuer asked first when an earlier request may have reached it, followed
   * until `followUntil` when the issuer registers asynchronously. Returns the boleto as recorded.
   */
  async issue(orderId: string, followUntil: number): Promise<q.BoletoChargeRow | undefined> {
    const { store, clock, issuer } = this.deps;
    const row = await q.boletoCharge(store.read, orderId);
    if (row?.state !== 'to_issue') return row;
    const now = clock.now();
    const claimed = await this.#write((tx) => q.claimBoletoIssue(tx, orderId, row.issue_attempts, now + RETRY_MS, now));
    if (!claimed) return q.boletoCharge(store.read, orderId);
    const order = await this.deps.orders.find(orderId);
    if (order === undefined) return row;
    const details = JSON.parse(order.details) as BrazilDetails & BoletoDetails;
    const payer = boletoPayer(details, issuer.name);
    if (!('payer' in payer)) {
      await this.#write((tx) =>
        q.updateBoletoCharge(tx, orderId, { state: 'awaiting_payer', next_check_at: null, updated_at: now }),
      );
      return q.boletoCharge(store.read, orderId);
    }
    const request = {
      orderId,
      reference: row.reference,
      amount: BigInt(row.amount),
      dueDate: row.due_date,
      payer: payer.payer,
      ...(order.remark !== null && order.remark.trim() !== '' && { description: order.remark.trim() }),
      notificationUrl: this.options.notificationUrl,
    };
    let charge: { value: IssuerCharge; exchanges: IssuerExchange[] } | undefined;
    if (row.issue_attempts > 0) {
      // An earlier request may have registered it with its answer lost: ask before issuing again.
      const found = await this.#call(orderId, row.reference, (c) => c.find(request));
      await this.#write((tx) => railq.insertRailMessages(tx, this.#messages(found.exchanges, orderId, row.reference)));
      if (found.value !== undefined) charge = { value: found.value, exchanges: [] };
    }
    try {
      charge ??= await this.#call(orderId, row.reference, (c) => c.issue(request));
    } catch (error) {
      if (!(error instanceof IssuerError) || error.kind !== 'invalid') throw error;
      // Refused: perhaps as the repeat of an earlier request the issuer did register.
      const found = await this.#call(orderId, row.reference, (c) => c.find(request));
      if (found.value === undefined) {
        await this.#failed(row, error.message);
        return q.boletoCharge(store.read, orderId);
      }
      charge = { value: found.value, exchanges: found.exchanges };
    }
    let current = charge.value;
    let exchanges = charge.exchanges;
    // Inter registers asynchronously: followed here while the create waits, then by reconciliation.
    while (current.state === 'processing' && clock.now() < followUntil) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, Math.max(10, followUntil - clock.now()))));
      const id = current.id;
      const got = await this.#call(orderId, row.reference, (c) => c.get(id)).catch(() => undefined);
      // A read that failed leaves the registration to reconciliation: the charge's id is recorded below.
      if (got === undefined) break;
      current = got.value;
      exchanges = [...exchanges, ...got.exchanges];
    }
    await this.#apply({ ...row, state: 'processing' }, current, exchanges);
    return q.boletoCharge(store.read, orderId);
  }

  /** The issuer would not register the boleto: the order is cancelled, with the issuer's reason. */
  async #failed(row: q.BoletoChargeRow, reason: string): Promise<void> {
    const now = this.deps.clock.now();
    const record = async (tx: Tx) => {
      await q.updateBoletoCharge(tx, row.order_id, {
        state: 'failed',
        next_check_at: null,
        last_error: reason.slice(0, 300),
        updated_at: now,
      });
    };
    this.deps.logger.warn({ orderId: row.order_id, reason }, 'the issuer did not register the boleto');
    try {
      await this.deps.orders.applyEvent(row.order_id, 'cancelled', {
        source: `boleto-${this.issuer}`,
        data: { boletoFailure: reason.slice(0, 200) },
        also: record,
      });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      await this.#write(record);
    }
  }

  /**
   * The payer gave what the issuer needs (on the cashier page): kept in the order's details and the
   * boleto made due to be issued, in one unit of work; then issued at once (reconciliation retries).
   */
  async payerGiven(
    orderId: string,
    given: Pick<BrazilDetails, 'userInfoType' | 'userInfoNo' | 'userInfoName' | 'documentSource'> & BoletoDetails,
  ) {
    const now = this.deps.clock.now();
    const moved = await this.#write(async (tx) => {
      if (
        !(await q.updateBoletoCharge(tx, orderId, { state: 'to_issue', next_check_at: now, updated_at: now }, [
          'awaiting_payer',
        ]))
      )
        return false;
      await this.deps.orders.handOver.recordIssued(tx, orderId, given);
      return true;
    });
    if (!moved) return;
    await this.issue(orderId, now + this.options.issueWaitMs).catch((error: unknown) =>
      this.deps.logger.error({ err: error, orderId }, 'a boleto could not be issued now; reconciliation retries'),
    );
  }

  // ---- what the issuer says ----------------------------------------------------------------------

  /**
   * Records what the issuer says of a boleto: registered (its linha digitável into the order),
   * still under way, failed, paid (the order paid, or the money kept in suspense when the order no
   * longer takes it), or written off. Safe to call any number of times, from any node.
   */
  async #apply(
    row: q.BoletoChargeRow,
    charge: IssuerCharge,
    exchanges: readonly IssuerExchange[],
    /** Credit a payment whose amount the issuer did not state (at the charge's total): reconciliation, past the grace. */
    unstatedAllowed = false,
  ): Promise<void> {
    const now = this.deps.clock.now();
    const messages = this.#messages(exchanges, row.order_id, row.reference);
    const seen = {
      charge_id: charge.id,
      issuer_status: charge.status.slice(0, 24),
      updated_at: now,
      ...(charge.linhaDigitavel !== undefined && {
        linha_digitavel: charge.linhaDigitavel,
        barcode: charge.barcode ?? barcodeFromLinha(charge.linhaDigitavel),
      }),
      ...(charge.pixCode !== undefined && { pix_code: charge.pixCode }),
      ...(charge.nossoNumero !== undefined && { nosso_numero: charge.nossoNumero.slice(0, 24) }),
      ...(charge.pdfUrl !== undefined && { pdf_url: charge.pdfUrl.slice(0, 500) }),
    };
    if (charge.state === 'paid' && charge.paid !== undefined) {
      if (charge.paid.amountStated || unstatedAllowed) await this.#paid({ ...row, ...seen }, charge.paid, messages);
      // Else the notification that states the amount received (or reconciliation, past the grace) credits it.
      else await this.#write((tx) => railq.insertRailMessages(tx, messages));
      return;
    }
    if (charge.state === 'failed') {
      await this.#write((tx) => railq.insertRailMessages(tx, messages));
      await this.#failed({ ...row, ...seen }, `the issuer did not register it (${charge.status})`);
      return;
    }
    const state = ROW_STATE[charge.state] ?? row.state;
    await this.#write(async (tx) => {
      const opened = state === 'open' && row.state !== 'open';
      await q.updateBoletoCharge(tx, row.order_id, {
        ...seen,
        state: row.state === 'paid' ? 'paid' : state,
        next_check_at: state === 'processing' ? now + this.options.reconcileIntervalMs : null,
      });
      if (opened) await this.deps.orders.handOver.recordIssued(tx, row.order_id, issuedDetails({ ...row, ...seen }));
      await railq.insertRailMessages(tx, messages);
    });
    if (charge.state === 'settled')
      this.deps.logger.warn(
        { orderId: row.order_id, chargeId: charge.id },
        'the boleto was marked paid by hand at the issuer: no money moved, the order is left as it is',
      );
  }

  /** A payment the issuer confirmed: credited to its order, or kept in suspense when the order no longer takes it. */
  async #paid(
    row: q.BoletoChargeRow,
    paid: NonNullable<IssuerCharge['paid']>,
    messages: railq.RailMessageRow[],
  ): Promise<void> {
    const { orders, clock } = this.deps;
    if (row.disposition !== null) return;
    const now = clock.now();
    const payment = {
      paid_amount: Number(paid.amount),
      paid_at: paid.at.slice(0, 40),
      paid_method: paid.method,
      state: 'paid' as const,
      issuer_status: row.issuer_status,
      next_check_at: null,
      updated_at: now,
    };
    const seen = {
      charge_id: row.charge_id,
      linha_digitavel: row.linha_digitavel,
      barcode: row.barcode,
      pix_code: row.pix_code,
      nosso_numero: row.nosso_numero,
      pdf_url: row.pdf_url,
    };
    /** Keeps the payment in suspense for the operator, once; whether this unit of work did. */
    const suspend = async (tx: Tx, memo: string) => {
      if (!(await q.claimBoletoPayment(tx, row.order_id, { ...payment, disposition: 'suspense' }))) return false;
      await this.deps.ledger.post(tx, {
        kind: 'boleto.suspense.received',
        currency: 'BRL',
        merchantId: null,
        orderId: row.order_id,
        memo,
        entries: [
          { account: { kind: 'rail_clearing' }, amount: -paid.amount },
          { account: { kind: 'boleto_suspense' }, amount: paid.amount },
        ],
      });
      await railq.insertRailMessages(tx, messages);
      return true;
    };
    let suspended: boolean | undefined;
    try {
      await orders.applyEvent(row.order_id, 'paid', {
        source: `boleto-${this.issuer}`,
        amount: paid.amount,
        data: {
          boletoPaidBy: paid.method,
          boletoPaidAt: paid.at,
          ...(row.nosso_numero !== null && { boletoNossoNumero: row.nosso_numero }),
        },
        also: async (tx) => {
          await q.updateBoletoCharge(tx, row.order_id, seen);
          if ((await q.orderStatus(tx, row.order_id)) !== COLLECTION_STATUS.paid) {
            // The order's rules refused this amount (an aggregate cashier's dynamicAmountNotify 2).
            suspended = await suspend(tx, `boleto ${row.reference} paid with an amount its order refused`);
            return;
          }
          // Another node or notification recorded this payment first: this unit of work is undone.
          if (!(await q.claimBoletoPayment(tx, row.order_id, { ...payment, disposition: 'credited' })))
            throw new PaymentHandled();
          await railq.insertRailMessages(tx, messages);
        },
      });
    } catch (error) {
      if (error instanceof PaymentHandled) return;
      if (!(error instanceof EventNotAllowedError)) throw error;
      // The order no longer takes a payment (it expired and its boleto was written off): the money
      // is kept in suspense for the operator.
      const status = (await orders.find(row.order_id))?.status;
      suspended = await this.#write(async (tx) => {
        await q.updateBoletoCharge(tx, row.order_id, seen);
        return suspend(tx, `boleto ${row.reference} paid after its order ended (status ${status ?? '?'})`);
      });
    }
    if (suspended === true)
      this.deps.logger.warn(
        { orderId: row.order_id, reference: row.reference, amount: String(paid.amount) },
        'a boleto was paid when its order no longer took it: kept in system boleto_suspense for the operator',
      );
  }

  // ---- notifications -----------------------------------------------------------------------------

  /**
   * A notification from the issuer. Nothing in it is trusted: Efí's token is redeemed, and every
   * charge it names is read again from the issuer before anything changes. The issuer is answered
   * 200 whatever it said; what was handled is recorded.
   */
  async notified(body: unknown): Promise<void> {
    let ids: NotifiedCharge[];
    let exchanges: IssuerExchange[];
    try {
      ({ value: ids, exchanges } = await this.#call(null, null, (c) => c.notified(body)));
    } catch (error) {
      const refused = error instanceof IssuerError && (error.kind === 'not-found' || error.kind === 'invalid');
      await this.#inbound(body, null, refused ? 'refused' : 'failed');
      if (refused) return;
      throw error;
    }
    await this.#write((tx) => railq.insertRailMessages(tx, this.#messages(exchanges, null, null)));
    if (ids.length === 0) await this.#inbound(body, null, 'unmatched');
    for (const { id, paidAmount } of ids) {
      try {
        const row = await q.boletoChargeOfIssuer(this.deps.store.read, this.issuer, id, undefined);
        if (row === undefined) {
          await this.#inbound(body, id, 'unmatched');
          continue;
        }
        const got = await this.#call(row.order_id, row.reference, (c) => c.get(id));
        const charge = got.value;
        // The amount the issuer stated it received, when its own answer carried it (Efí's token).
        const paid =
          charge.paid === undefined || paidAmount === undefined
            ? charge.paid
            : { ...charge.paid, amount: paidAmount, amountStated: true };
        await this.#apply(row, { ...charge, paid }, got.exchanges);
        await this.#inbound(body, id, 'matched', row.order_id);
      } catch (error) {
        this.#notifications?.inc({ issuer: this.issuer, disposition: 'failed' });
        this.deps.logger.error({ err: error, chargeId: id }, 'a boleto notification could not be handled now');
      }
    }
  }

  async #inbound(
    body: unknown,
    ref: string | null,
    disposition: 'matched' | 'unmatched' | 'refused' | 'failed',
    orderId: string | null = null,
  ): Promise<void> {
    this.#notifications?.inc({ issuer: this.issuer, disposition });
    if (disposition === 'failed') return;
    const at = this.deps.clock.now();
    await this.#write((tx) =>
      railq.insertRailMessages(tx, [
        railq.inboundMessage(`boleto-${this.issuer}`, 'notification', body, { orderId, ref, disposition, at }, (v) =>
          redactBoleto(v, this.#token),
        ),
      ]),
    );
  }

  // ---- the payer's boleto ------------------------------------------------------------------------

  /** The order's boleto as Cashgate has it, if it is a live one. */
  charge(orderId: string): Promise<q.BoletoChargeRow | undefined> {
    return q.boletoCharge(this.deps.store.read, orderId);
  }

  /** The issuer's own PDF of the order's boleto, fetched by Cashgate; undefined while there is none. */
  async pdf(orderId: string): Promise<Buffer | undefined> {
    const row = await this.charge(orderId);
    if (row?.charge_id == null || row.linha_digitavel === null) return undefined;
    const id = row.charge_id;
    const got = await this.#call(orderId, row.reference, (c) => c.pdf({ id, pdfUrl: row.pdf_url ?? undefined }));
    return got.value;
  }

  // ---- reconciliation ----------------------------------------------------------------------------

  /**
   * An operator asks the issuer again about one order's boleto now: one waiting to be issued is
   * issued (asking first if an earlier request may have reached the issuer), any other is read
   * again with the issuer's query. How many of the order's things were at the issuer (0 or 1).
   */
  async askAgain(orderId: string): Promise<number> {
    const row = await this.charge(orderId);
    if (row === undefined || row.state === 'awaiting_payer') return 0;
    if (row.state !== 'to_issue' && (row.charge_id === null || row.disposition !== null)) return 0;
    await this.#follow(row.state === 'to_issue' ? { ...row, next_check_at: this.deps.clock.now() } : row);
    return 1;
  }

  /**
   * One reconciliation run: registers the notification URL with the issuer (once per process);
   * issues the boletos due to be issued and follows registrations still under way; writes off the
   * boletos of orders that ended unpaid; lists the charges paid since the last run (the window
   * overlaps the previous one) and handles each not yet handled. Returns how many things it did.
   */
  async reconcile(limit = 50): Promise<number> {
    const { store, clock, logger } = this.deps;
    if (!this.#webhookRegistered) {
      const done = await this.#call(null, null, (c) => c.registerWebhook(this.options.notificationUrl));
      await this.#write((tx) => railq.insertRailMessages(tx, this.#messages(done.exchanges, null, null)));
      this.#webhookRegistered = true;
    }
    const now = clock.now();
    let handled = 0;
    const settle = async <T>(items: readonly T[], work: (item: T) => Promise<unknown>, what: string) => {
      for (const item of items) {
        try {
          await work(item);
          handled += 1;
        } catch (error) {
          logger.error({ err: error, item }, what);
        }
      }
    };
    await settle(
      await q.boletoChargesDue(store.read, now, limit),
      (row) => this.#follow(row),
      'a boleto could not be issued or followed now',
    );
    await settle(
      await q.boletoChargesToCancel(store.read, COLLECTION_STATUS.pending, limit),
      (row) => this.#cancel(row),
      'a boleto could not be written off at the issuer now',
    );
    handled += await this.#listPaid();
    return handled;
  }

  async #follow(row: q.BoletoChargeRow): Promise<void> {
    if (row.state === 'to_issue') {
      await this.issue(row.order_id, this.deps.clock.now());
      return;
    }
    if (row.charge_id === null) return;
    const id = row.charge_id;
    const got = await this.#call(row.order_id, row.reference, (c) => c.get(id));
    await this.#apply(row, got.value, got.exchanges);
  }

  /** Writes off at the issuer the boleto of an order that ended; one the issuer says was paid is handled instead. */
  async #cancel(row: q.BoletoChargeRow): Promise<void> {
    const now = this.deps.clock.now();
    if (row.charge_id === null) {
      // Never registered, unless a request whose answer was lost did: the issuer is asked.
      const found =
        row.issue_attempts > 0
          ? (
              await this.#call(row.order_id, row.reference, (c) =>
                c.find({ ...row, orderId: row.order_id, dueDate: row.due_date }),
              )
            ).value
          : undefined;
      if (found === undefined) {
        await this.#write((tx) =>
          q.updateBoletoCharge(tx, row.order_id, { state: 'cancelled', next_check_at: null, updated_at: now }),
        );
        return;
      }
      await this.#apply(row, found, []);
      row = (await this.charge(row.order_id)) ?? row;
      if (row.charge_id === null || !['open', 'processing'].includes(row.state)) return;
    }
    const id = row.charge_id;
    try {
      const done = await this.#call(row.order_id, row.reference, (c) => c.cancel(id, 'Pedido expirado no Cashgate'));
      await this.#write(async (tx) => {
        await q.updateBoletoCharge(tx, row.order_id, { state: 'cancelled', next_check_at: null, updated_at: now }, [
          'open',
          'processing',
        ]);
        await railq.insertRailMessages(tx, this.#messages(done.exchanges, row.order_id, row.reference));
      });
      return;
    } catch (error) {
      if (!(error instanceof IssuerError) || error.kind !== 'invalid') throw error;
    }
    // Refused: the boleto was paid meanwhile, or written off already. The issuer's word decides.
    const got = await this.#call(row.order_id, row.reference, (c) => c.get(id));
    await this.#apply(row, got.value, got.exchanges);
  }

  /** The charges paid in the window since the cursor (minus an overlap): each not yet handled is. */
  async #listPaid(): Promise<number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const cursorName = `boleto.${this.issuer}.paid`;
    const overlap = Math.max(600_000, 2 * this.options.reconcileIntervalMs);
    const from = ((await railq.railCursor(store.read, cursorName)) ?? now - 86_400_000) - overlap;
    const listed = await this.#call(null, null, (c) => c.paidBetween(from, now));
    let handled = 0;
    for (const charge of listed.value) {
      const row = await q.boletoChargeOfIssuer(store.read, this.issuer, charge.id, charge.reference);
      if (row === undefined || row.disposition !== null) continue;
      if (charge.paid?.amountStated === false) {
        // The list states no amount received (Efí): the notification, which Efí re-sends until it is
        // read, states it. Only when none came for UNSTATED_GRACE_MS is the charge's total taken.
        if (row.paid_seen_at === null)
          await this.#write((tx) => q.updateBoletoCharge(tx, row.order_id, { paid_seen_at: now, updated_at: now }));
        if ((row.paid_seen_at ?? now) + UNSTATED_GRACE_MS > now) continue;
        this.deps.logger.warn(
          { orderId: row.order_id, chargeId: charge.id },
          'a boleto paid with no notification stating the amount received: credited at its total',
        );
      }
      handled += 1;
      await this.#apply(row, charge, [], true).catch((error: unknown) =>
        this.deps.logger.error({ err: error, chargeId: charge.id }, 'a paid boleto could not be handled now'),
      );
    }
    await this.#write(async (tx) => {
      await railq.insertRailMessages(tx, this.#messages(listed.exchanges, null, null));
      await railq.setRailCursor(tx, cursorName, now);
    });
    return handled;
  }
}

/** What a registered boleto shows the merchant and the payer, as order details. */
export function issuedDetails(row: q.BoletoChargeRow): Record<string, string> {
  const linha = row.linha_digitavel ?? '';
  return {
    payParam: linha,
    linhaFormatted: linha === '' ? '' : formatLinhaDigitavel(linha),
    boletoDueDate: row.due_date,
    ...(row.barcode !== null && { boletoBarcode: row.barcode }),
    ...(row.pix_code !== null && { boletoPixCode: row.pix_code }),
    ...(row.nosso_numero !== null && { boletoNossoNumero: row.nosso_numero }),
  };
}
