import type { Logger } from 'pino';
import { noteAudit } from '../access/audit-log.js';
import { OperatorError } from '../admin/failures.js';
import type { Registry } from 'prom-client';
import type { CallbackOutbox } from '../callbacks/service.js';
import type { CallbackOrderSource, OrderCallback } from '../callbacks/sources.js';
import type { Clock } from '../clock.js';
import type { RequestNonce } from '../http/caller.js';
import { reviveExact } from '../http/exact-json.js';
import { ApiError } from '../http/failures.js';
import { isLanguage, LANGUAGES, type Language } from '../http/language.js';
import { inEach, translator, type PlainKey } from '../i18n/messages.js';
import { feeFor, type FeeChannel, type FeeRule } from '../ledger/fees.js';
import { InsufficientBalanceError } from '../ledger/ledger.js';
import { formatMoney, toDbMinor, type Currency, type Minor } from '../money.js';
import { OrderMetrics } from '../metrics/metrics.js';
import type { LedgerService } from '../ledger/service.js';
import { newId, randomHex } from '../store/ids.js';
import type { OrderArea, OrderKind, RailTaskAction } from '../store/schema.js';
import type { ReadDb, Store, Tx } from '../store/store.js';
import { sharedDetails, storeFeeRule, withDetails } from './details.js';
import type { TransitionEffects, TransitionStep } from './effects.js';
import { RailHandOver, type HandOverOutcome, type LeasedTask } from './hand-over.js';
import type { Rail } from '../rails/rails.js';
import { createOnce, requestHash } from './idempotency.js';
import * as q from './queries.js';
import { allowedEventsAt, INITIAL_STATUS, isFinal, isTimeUp, nextStatus, statusText } from './state-machine.js';

/** The order events of a payout an operator settled by hand carry this source. */
export const SETTLED_BY_HAND_SOURCE = 'settle_by_hand';

/**
 * What one order kind (e.g. Kenya collection) says about its orders beyond the shared rules; `R` is
 * the create answer's data.
 */
export interface OrderKindSpec<R = unknown> {
  area: OrderArea;
  kind: OrderKind;
  /** The create answer's data, from the new order; kept with the order and replayed to identical repeats. */
  createResult(order: q.OrderRow): R;
  /** The callback body for the order as it is (sent when the order becomes final, or re-triggered). */
  callbackPayload(order: q.OrderRow): Record<string, unknown>;
  /** The rail that carries this order (by its channel). */
  rail(order: q.OrderRow): Rail;
  /**
   * The kind's own part of the create transaction: it may complete the draft (fee, details, rail
   * reference) before `step.insert()` writes it, and write rows that refer to the order after.
   * Without it the draft is inserted as it is.
   */
  write?(step: CreateStep): Promise<void>;
  /** The ledger entries and order changes of one allowed transition, in its transaction. */
  transition(step: TransitionStep): Promise<TransitionEffects>;
  /**
   * Collections: whether a reported payment is refused (e.g. another amount when the order accepts
   * only its own), decided under the order's lock. A refusal changes no status and credits nothing:
   * it is recorded as the order event `payment_refused` with these details merged into the order's.
   */
  refusePayment?(order: q.OrderRow, options: EventOptions): Record<string, unknown> | undefined;
}

/** The create transaction as a kind's `write` sees it. */
export interface CreateStep {
  tx: Tx;
  /** The order about to be written; its fee, details and rail_ref may still change before insert. */
  order: q.OrderRow;
  /** The fee schedule of the order's channel now in force (kept on the order). */
  feeRule: FeeRule;
  /** Writes the order, its `created` event and, for a transfer, the freeze of amount + fee. */
  insert: () => Promise<void>;
}

export interface EventOptions {
  /** Who reported the event: `api`, `sandbox:admin`, `expiry`, a rail's name. */
  source: string;
  /** Collections: the amount actually paid. */
  amount?: Minor;
  /** What a rail reported with the event (e.g. a chain's transaction hash and amount), as text. */
  data?: Readonly<Record<string, string>>;
  /** The reporter's own rows about the event (a rail's request settled, its messages), written in the same unit of work. */
  also?: (tx: Tx) => Promise<void>;
}

/** An order to create: plain data; its kind's spec says the rest. */
export interface NewOrder {
  /** From newOrderId, so that codes carrying the id (a Pix txid, a boleto's campo livre) are made before the insert. */
  id: string;
  merchantId: string;
  accessKey: string;
  /** The merchant's id for the order; null where the spec makes it optional: the order's own id stands in, and no repeat is recognised. */
  externalOrderId: string | null;
  /** The create request's body, exactly as validated: an identical repeat returns the first result. */
  requestBody: unknown;
  /** The create request's nonce, recorded in the order's unit of work (one commit per request). */
  nonce?: RequestNonce;
  currency: Currency;
  channelType: string;
  payType: number;
  feeChannel: FeeChannel;
  amount: Minor;
  notifyUrl: string | null;
  returnUrl: string | null;
  remark: string | null;
  details: object;
  /** What the rail will know the order by (e.g. a Pix txid), when it is known at creation. */
  railRef?: string;
  /** Collections: how long the payer has, from creation, or until when. */
  cashierExpiry?: { lifetimeMs: number } | { at: number };
  /** An order without a cashier that still expires if nothing happens (a token → fiat quote). */
  deadline?: number;
}

/** An event refused by the order's state: the events it allows now. */
export class EventNotAllowedError extends Error {
  constructor(
    readonly order: q.OrderRow,
    readonly event: string,
    readonly allowed: string[],
  ) {
    super(
      `order ${order.id} is in status ${order.status}: event ${event} is not allowed; allowed now: ${allowed.join(', ') || 'none (the order is final)'}`,
    );
    this.name = 'EventNotAllowedError';
  }
}

/** The events that end an order without success; errorMsg / errorMsgEn are their `api.order` texts. */
const FAILURE_REASONS: readonly PlainKey<'api.order'>[] = ['expired', 'cancelled', 'bank_rejected', 'failed'];

function failureReason(event: string): Record<Language, string> | undefined {
  const reason = FAILURE_REASONS.find((name) => name === event);
  if (reason === undefined) return undefined;
  return inEach(LANGUAGES, (lang) => translator('api.order', lang)(reason));
}

export function orderKindOf(order: Pick<q.OrderRow, 'area' | 'kind'>): string {
  return `${order.area}.${order.kind}`;
}

const ID_PREFIX: Partial<Record<`${OrderArea}.${OrderKind}`, string>> = {
  'ken.collection': 'KC',
  'ken.transfer': 'KT',
  'bra.collection': 'BC',
  'bra.transfer': 'BT',
  'exchange.fiat_to_token': 'XF',
  'exchange.token_to_fiat': 'XT',
  'cashier.collection': 'AC',
};

function orderLabelsOf(order: q.OrderRow): { area: string; kind: string; channel: string | null } {
  return { area: order.area, kind: order.kind, channel: order.channel_type };
}

/** A new order id of the kind (KC/KT/BC/BT/XF/XT/AC + 24 hex), handed out before the order is written. */
export function newOrderId(kind: Pick<OrderKindSpec, 'area' | 'kind'>): string {
  const prefix = ID_PREFIX[`${kind.area}.${kind.kind}`];
  if (prefix === undefined) throw new Error(`no order kind ${kind.area}.${kind.kind}`);
  return `${prefix}${randomHex(12).toUpperCase()}`;
}

/** What `work` settles to within `ms`, or undefined when it takes longer (it goes on). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** At most this many first hand-over attempts run after their creates' answers at once, per process. */
export const MAX_BACKGROUND_HANDOVERS = 64;

/**
 * Orders of every area and kind: idempotent creation, state transitions that carry their ledger
 * entries and callback in one transaction, and the lookups queries need.
 */
export class OrderService implements CallbackOrderSource {
  readonly kind = 'orders';
  readonly #specs = new Map<string, OrderKindSpec>();
  /** First attempts of hand-overs started after the create's answer, still running. */
  readonly #background = new Set<Promise<void>>();
  /** The durable hand-over of orders to their rails; its worker runs `handOver.runDue`. */
  readonly handOver: RailHandOver;
  /** Orders created and status changes, counted once their unit of work commits. */
  readonly #metrics: OrderMetrics | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ledger: LedgerService,
    private readonly outbox: CallbackOutbox,
    private readonly logger: Logger,
    options: { railLeaseMs: number; node: { readonly id: string }; registry?: Registry },
  ) {
    this.#metrics = options.registry === undefined ? undefined : new OrderMetrics(options.registry);
    this.handOver = new RailHandOver(
      {
        store,
        clock,
        logger,
        railOf: (order) => this.#spec(order).rail(order),
        createResultOf: (order) => JSON.stringify(this.#spec(order).createResult(order)),
        node: options.node,
        ...(options.registry !== undefined && { registry: options.registry }),
      },
      { leaseMs: options.railLeaseMs },
    );
  }

  /** Waits for the hand-overs started after a create's answer (before the store closes). */
  async drain(): Promise<void> {
    while (this.#background.size > 0) await Promise.all([...this.#background]);
  }

  register(spec: OrderKindSpec): void {
    this.#specs.set(orderKindOf(spec), spec);
  }

  #spec(order: Pick<q.OrderRow, 'area' | 'kind'>): OrderKindSpec {
    const spec = this.#specs.get(orderKindOf(order));
    if (spec === undefined) throw new Error(`no order kind ${orderKindOf(order)} is registered`);
    return spec;
  }

  /**
   * Creates the order of the kind, or returns the first result of an identical earlier request with
   * the same externalOrderId; a different request with that externalOrderId is refused. Transfers
   * freeze amount + fee in the same transaction, or are refused when the balance is short.
   *
   * One unit of work holds the request's nonce, the order, its event, its ledger entries and its
   * hand-over to the rail; once it is durable the order is handed to its rail (the answer waits for
   * that first attempt, and does not depend on it). A hand-over that fails, or that a crash cut
   * short, is retried by the hand-over worker on any node: a merchant's repeat does not do it. A
   * simulator (`Rail.local`) answers inside the unit instead: its answer commits with the order.
   */
  async create<R>(spec: OrderKindSpec<R>, input: NewOrder): Promise<{ order: q.OrderRow; data: R; created: boolean }> {
    if (this.#specs.get(orderKindOf(spec)) !== spec)
      throw new Error(`order kind ${orderKindOf(spec)} is not registered`);
    const hash = requestHash(input.requestBody);
    const outcome = await createOnce({
      externalOrderId: input.externalOrderId,
      hash,
      // A kind's own writing may refuse before the order is inserted: a repeat is found first.
      readFirst: spec.write !== undefined,
      find: (externalOrderId) =>
        q.findByExternalId(this.store.read, {
          merchantId: input.merchantId,
          area: spec.area,
          kind: spec.kind,
          externalOrderId,
        }),
      insert: () =>
        this.store.transact(async (tx) => {
          await input.nonce?.record(tx);
          const written = await this.#write(tx, spec, input, hash);
          // A simulator's answer is recorded with the order; any other rail is called after the commit.
          const started = await this.handOver.startInUnit(tx, written.order);
          if (started !== undefined) return { ...written, started };
          return { ...written, leased: await this.handOver.plan(tx, written.order, 'start') };
        }),
    });
    if ('created' in outcome) {
      const created = outcome.created;
      if ('started' in created) {
        this.#applyOutcome(created.order, 'start', created.started);
        return { order: created.order, data: this.#answerData(created.data, created.started), created: true };
      }
      const { order, data, leased } = created;
      if (!this.handOver.answerWaitsFor(order) && this.#background.size < MAX_BACKGROUND_HANDOVERS) {
        // Started without holding the answer; a failure is the hand-over's to retry, as ever. Past
        // the limit, the create waits for its own attempt: a burst of creates cannot become an
        // unbounded burst of calls to the provider.
        this.#inBackground(order.id, this.#handOver(leased, { ...order }));
        return { order, data, created: true };
      }
      const waitMs = this.handOver.answerWaitMs(order);
      const handing = this.#handOver(leased, order);
      const handed = waitMs === undefined ? await handing : await within(handing, waitMs);
      if (handed === undefined) {
        // The rail is slow to issue: the answer goes without it, and the attempt goes on.
        this.#inBackground(order.id, handing);
        return { order, data, created: true };
      }
      return { order, data: this.#answerData(data, handed), created: true };
    }
    const order = outcome.repeat;
    return { order, data: reviveExact(JSON.parse(order.create_result)) as R, created: false };
  }

  /**
   * The first answer to an identical earlier create under the same externalOrderId, or undefined
   * when there is none. For kinds whose create checks state that can change before it creates (a
   * rate, a chain's readiness): a repeat of a create whose answer was lost is answered as the first
   * one was, not refused by a check that has changed since. A different request under that
   * externalOrderId is refused, as create refuses it.
   */
  async earlierAnswer<R>(
    spec: OrderKindSpec<R>,
    input: Pick<NewOrder, 'merchantId' | 'externalOrderId' | 'requestBody'>,
  ): Promise<R | undefined> {
    const { externalOrderId } = input;
    if (externalOrderId === null) return undefined;
    const row = await q.findByExternalId(this.store.read, {
      merchantId: input.merchantId,
      area: spec.area,
      kind: spec.kind,
      externalOrderId,
    });
    if (row === undefined) return undefined;
    if (row.request_hash !== requestHash(input.requestBody))
      throw new ApiError({ kind: 'duplicate_external_order_id', externalOrderId });
    return reviveExact(JSON.parse(row.create_result)) as R;
  }

  /** A first attempt that goes on after the create's answer; drained before the store closes. */
  #inBackground(orderId: string, attempt: Promise<unknown>): void {
    const started: Promise<void> = attempt
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.error({ err: error, orderId }, 'an order could not be handed to its rail now'),
      )
      .finally(() => this.#background.delete(started));
    this.#background.add(started);
  }

  /** Works a hand-over this node holds; the order carries the rail's reference when the rail took it. */
  async #handOver(leased: LeasedTask, order: q.OrderRow): Promise<HandOverOutcome> {
    const outcome = await this.handOver.work(leased, order);
    this.#applyOutcome(order, leased.task.action, outcome);
    return outcome;
  }

  /** What the rail's answer recorded, on the order as the create holds it. */
  #applyOutcome(order: q.OrderRow, action: RailTaskAction, outcome: HandOverOutcome): void {
    if (!outcome.ok) return;
    if (action !== 'start' || order.channel_order_id === null) order.channel_order_id = outcome.channelOrderId;
    if (outcome.recorded !== undefined) Object.assign(order, outcome.recorded);
  }

  /** The create's answer: what the rail issued for the merchant (a PSP's Pix code) is in the result kept for repeats. */
  #answerData<R>(data: R, outcome: HandOverOutcome): R {
    const recorded = outcome.ok ? outcome.recorded : undefined;
    return recorded === undefined ? data : (reviveExact(JSON.parse(recorded.create_result)) as R);
  }

  /** The create transaction: the draft, the kind's own work around its insert, the create result kept. */
  async #write<R>(
    tx: Tx,
    spec: OrderKindSpec<R>,
    input: NewOrder,
    hash: string,
  ): Promise<{ order: q.OrderRow; data: R }> {
    const now = this.clock.now();
    // The fee schedule in force at creation applies, also to a collection paid later.
    const feeRule = await this.ledger.feeRule(tx, input.merchantId, input.feeChannel);
    const fee = spec.kind === 'transfer' ? feeFor(input.amount, feeRule) : 0n;
    const order: q.OrderRow = {
      id: input.id,
      merchant_id: input.merchantId,
      access_key: input.accessKey,
      area: spec.area,
      kind: spec.kind,
      external_order_id: input.externalOrderId ?? input.id,
      request_hash: hash,
      create_result: '',
      status: INITIAL_STATUS[spec.kind],
      currency: input.currency,
      channel_type: input.channelType,
      pay_type: input.payType,
      amount: toDbMinor(input.amount),
      fee: toDbMinor(fee),
      actual_amount: null,
      notify_url: input.notifyUrl,
      return_url: input.returnUrl,
      remark: input.remark,
      details: withDetails(input.details, { feeRule: storeFeeRule(feeRule) }),
      cashier_id: input.cashierExpiry === undefined ? null : newId('csh', 16),
      cashier_expire_at:
        input.cashierExpiry === undefined
          ? (input.deadline ?? null)
          : 'at' in input.cashierExpiry
            ? input.cashierExpiry.at
            : now + input.cashierExpiry.lifetimeMs,
      channel_order_id: null,
      rail_ref: input.railRef ?? null,
      error_msg: null,
      error_msg_en: null,
      created_at: now,
      pay_time: null,
      complete_time: null,
      updated_at: now,
    };
    const written: { data?: R } = {};
    const insert = async () => {
      if ('data' in written) throw new Error(`order ${order.id} is inserted once`);
      written.data = spec.createResult(order);
      order.create_result = JSON.stringify(written.data);
      await q.insertOrder(tx, order);
      await q.insertOrderEvent(tx, {
        id: newId('oev'),
        order_id: order.id,
        event: 'created',
        from_status: null,
        to_status: order.status,
        source: 'api',
        at: now,
      });
      this.#countOnCommit(tx, (metrics) => metrics.created(orderLabelsOf(order)));
      if (spec.kind === 'transfer') {
        await this.freezeOrRefuse(tx, order, {
          total: input.amount + fee,
          journal: 'transfer.freeze',
          purpose: 'transfer',
        });
      }
    };
    await (spec.write === undefined ? insert() : spec.write({ tx, order, feeRule, insert }));
    if (!('data' in written)) throw new Error(`order kind ${orderKindOf(spec)} did not insert order ${order.id}`);
    return { order, data: written.data as R };
  }

  /**
   * Moves `total` from the merchant's available balance to frozen for the order, or refuses the
   * create with a 300 that says how much is needed and available (the transaction then rolls back).
   */
  async freezeOrRefuse(
    tx: Tx,
    order: q.OrderRow,
    freeze: { total: Minor; journal: string; purpose: 'transfer' | 'exchange' },
  ): Promise<void> {
    const currency = order.currency;
    try {
      await this.ledger.ledger.freeze(tx, {
        merchantId: order.merchant_id,
        currency,
        orderId: order.id,
        total: freeze.total,
        kind: freeze.journal,
      });
    } catch (error) {
      if (!(error instanceof InsufficientBalanceError)) throw error;
      const [balance] = await this.ledger.balances(tx, order.merchant_id, [currency]);
      throw new ApiError({
        kind: 'insufficient_balance',
        purpose: freeze.purpose,
        currency,
        needed: formatMoney(freeze.total, currency),
        available: formatMoney(balance?.available ?? 0n, currency),
      });
    }
  }

  /**
   * Moves an order one step (a rail's report, the sandbox, the expiry worker). The new status, its
   * ledger entries and, when final, its callback commit together; an event the state does not
   * allow (a late or repeated report) changes nothing and throws EventNotAllowedError.
   */
  async applyEvent(orderId: string, event: string, options: EventOptions): Promise<q.OrderRow> {
    return this.store.transact(async (tx) => {
      const order = await q.lockOrder(tx, this.store.dialect, orderId);
      if (order === undefined) throw new Error(`order ${orderId} does not exist`);
      return this.#applyIn(tx, order, event, options);
    });
  }

  /** One step of `applyEvent` in the unit of work `tx`, on the order already locked in it. */
  async #applyIn(tx: Tx, order: q.OrderRow, event: string, options: EventOptions): Promise<q.OrderRow> {
    const now = this.clock.now();
    const allowed = allowedEventsAt(order, now);
    const to = allowed.includes(event) ? nextStatus(order.kind, order.status, event) : undefined;
    if (to === undefined) throw new EventNotAllowedError(order, event, allowed);
    const spec = this.#spec(order);
    const refusal = order.kind === 'collection' && event === 'paid' ? spec.refusePayment?.(order, options) : undefined;
    if (refusal !== undefined) {
      const refused = { details: withDetails(order.details, refusal), updated_at: now };
      await q.updateOrder(tx, order.id, refused);
      await q.insertOrderEvent(tx, {
        id: newId('oev'),
        order_id: order.id,
        event: 'payment_refused',
        from_status: order.status,
        to_status: order.status,
        source: options.source,
        at: now,
      });
      await options.also?.(tx);
      return { ...order, ...refused };
    }
    const effects = await spec.transition({ tx, order, event, to, now, options });
    const changes: Partial<q.OrderRow> = { status: to, updated_at: now, ...effects.changes };
    const reason = effects.failure ?? failureReason(event);
    if (reason !== undefined) {
      const { language } = await q.merchantTermsOf(tx, order.merchant_id);
      Object.assign(changes, {
        complete_time: now,
        error_msg: reason[isLanguage(language) ? language : 'en'],
        error_msg_en: reason.en,
      });
    }
    await q.updateOrder(tx, order.id, changes);
    await q.insertOrderEvent(tx, {
      id: newId('oev'),
      order_id: order.id,
      event,
      from_status: order.status,
      to_status: to,
      source: options.source,
      at: now,
    });
    if (to !== order.status) this.#countOnCommit(tx, (metrics) => metrics.reached(orderLabelsOf(order), to));
    const updated = { ...order, ...changes };
    if (isFinal(order.kind, to)) await this.outbox.enqueue(tx, this.#callback(updated));
    await options.also?.(tx);
    return updated;
  }

  /**
   * Ends a payout in doubt (its rail's outcome unknown) as an operator found it out of band with the
   * provider: `paid` moves it to succeeded (through processing when the rail never took it),
   * `failed` to failed, each step through the same transition a rail's report takes (ledger
   * entries, the merchant's callback). In the same unit of work its hand-overs end (nothing sends
   * it again) and the order is flagged as settled by hand. A rail's later report finds the order
   * final and changes nothing.
   */
  async settleByHand(
    orderId: string,
    input: { outcome: 'paid' | 'failed'; reason: string; by: string; operatorId: string | null },
  ): Promise<{ order: q.OrderRow; settled: q.SettledByHandRow }> {
    return this.store.transact(async (tx) => {
      const locked = await q.lockOrder(tx, this.store.dialect, orderId);
      if (locked === undefined) throw new OperatorError({ kind: 'order_not_found', orderId });
      if (locked.kind !== 'transfer') {
        throw new OperatorError({ kind: 'not_a_payout', orderId, orderKind: orderKindOf(locked) });
      }
      if (isFinal(locked.kind, locked.status)) {
        throw new OperatorError({
          kind: 'payout_final',
          orderId,
          status: locked.status,
          statusText: statusText(locked.kind, locked.status),
        });
      }
      // A node calling the rail now could still have it paid: its outcome comes first.
      const leaseEndsAt = await q.liveHandOverLeaseEnd(tx, orderId, this.clock.now());
      if (leaseEndsAt !== undefined) throw new OperatorError({ kind: 'payout_in_flight', orderId, leaseEndsAt });
      const options: EventOptions = { source: SETTLED_BY_HAND_SOURCE };
      const steps =
        input.outcome === 'failed'
          ? ['failed']
          : locked.status === INITIAL_STATUS.transfer
            ? ['processing', 'succeeded']
            : ['succeeded'];
      let order = locked;
      for (const step of steps) {
        order = await this.#applyIn(tx, order, step, options);
      }
      const now = this.clock.now();
      const ended = await q.endRailTasksOf(tx, orderId, {
        last_error: 'settled by hand by an operator: never sent again',
        updated_at: now,
      });
      const settled: q.SettledByHandRow = {
        order_id: orderId,
        outcome: input.outcome,
        from_status: locked.status,
        settled_by: input.by,
        operator_id: input.operatorId,
        reason: input.reason,
        settled_at: now,
      };
      await q.insertSettledByHand(tx, settled);
      noteAudit({
        targetType: 'order',
        targetId: orderId,
        before: { status: locked.status },
        after: { status: order.status, settledByHand: input.outcome, handOversEnded: ended },
      });
      return { order, settled };
    });
  }

  /** Whether and how an operator settled the order by hand. */
  settledByHand(orderId: string): Promise<q.SettledByHandRow | undefined> {
    return q.findSettledByHand(this.store.read, orderId);
  }

  /**
   * Records what a rail reported that leaves the order where it is (a payer who cancelled an STK
   * prompt may still pay): `details` merged into the order's, and an order event, with the rail's
   * own rows, in one unit of work.
   */
  async recordRailReport(
    orderId: string,
    report: { event: string; source: string; details: object; also?: (tx: Tx) => Promise<void> },
  ): Promise<void> {
    await this.store.transact(async (tx) => {
      const order = await q.lockOrder(tx, this.store.dialect, orderId);
      if (order === undefined) throw new Error(`order ${orderId} does not exist`);
      const now = this.clock.now();
      await q.updateOrder(tx, orderId, { details: withDetails(order.details, report.details), updated_at: now });
      await q.insertOrderEvent(tx, {
        id: newId('oev'),
        order_id: orderId,
        event: report.event,
        from_status: order.status,
        to_status: order.status,
        source: report.source,
        at: now,
      });
      await report.also?.(tx);
    });
  }

  /** Counts what a unit of work did once it has committed; a unit rolled back counts nothing. */
  #countOnCommit(tx: Tx, count: (metrics: OrderMetrics) => void): void {
    const metrics = this.#metrics;
    if (metrics !== undefined) this.store.afterCommit(tx, () => count(metrics));
  }

  #callback(order: q.OrderRow): OrderCallback {
    return {
      orderId: order.id,
      orderKind: orderKindOf(order),
      merchantId: order.merchant_id,
      accessKey: order.access_key,
      notifyUrl: order.notify_url,
      payload: this.#spec(order).callbackPayload(order),
    };
  }

  async currentCallback(db: ReadDb, orderId: string): Promise<OrderCallback | undefined> {
    const order = await q.findOrder(db, orderId);
    return order === undefined ? undefined : this.#callback(order);
  }

  /** The caller's order named by both ids in this area (or one of these areas) and kind, else a 300 "order not found". */
  async findForQuery(
    merchantId: string,
    area: OrderArea | readonly OrderArea[],
    kind: OrderKind,
    ids: { externalOrderId: string; orderId: string },
  ): Promise<q.OrderRow> {
    const order = await q.findOrder(this.store.read, ids.orderId);
    const areas: readonly OrderArea[] = typeof area === 'string' ? [area] : area;
    if (
      order?.merchant_id !== merchantId ||
      !areas.includes(order.area) ||
      order.kind !== kind ||
      order.external_order_id !== ids.externalOrderId
    ) {
      throw new ApiError({ kind: 'order_not_found' });
    }
    return order;
  }

  find(orderId: string): Promise<q.OrderRow | undefined> {
    return q.findOrder(this.store.read, orderId);
  }

  findByRailRef(railRef: string): Promise<q.OrderRow | undefined> {
    return q.findByRailRef(this.store.read, railRef);
  }

  findByCashier(cashierId: string): Promise<q.OrderRow | undefined> {
    return q.findByCashier(this.store.read, cashierId);
  }

  history(orderId: string): Promise<q.OrderEventRow[]> {
    return q.eventsOfOrder(this.store.read, orderId);
  }

  /**
   * Asks the order's rail to start it again (an STK prompt the payer never saw), while it waits in its
   * first state, at most `limit` times and not within `cooldownMs` of the last start; each time is an
   * order event. False when it may not.
   */
  async restartOnRail(orderId: string, rules: { limit: number; cooldownMs: number }, source: string): Promise<boolean> {
    const planned = await this.store.transact(async (tx) => {
      const locked = await q.lockOrder(tx, this.store.dialect, orderId);
      if (locked === undefined || locked.status !== INITIAL_STATUS[locked.kind]) return undefined;
      const { railRestarts: restarts = 0, railRestartedAt } = sharedDetails(locked);
      const now = this.clock.now();
      if (restarts >= rules.limit || isTimeUp(locked, now)) return undefined;
      // The first prompt counts as a start too: a payer cannot fire several in one second.
      const last = railRestartedAt ?? locked.created_at;
      if (now - last < rules.cooldownMs) return undefined;
      const changes = {
        details: withDetails(locked.details, { railRestarts: restarts + 1, railRestartedAt: now }),
        updated_at: now,
      };
      await q.updateOrder(tx, orderId, changes);
      await q.insertOrderEvent(tx, {
        id: newId('oev'),
        order_id: orderId,
        event: 'rail_restarted',
        from_status: locked.status,
        to_status: locked.status,
        source,
        at: now,
      });
      const order = { ...locked, ...changes };
      return { order, leased: await this.handOver.plan(tx, order, 'restart', restarts + 1) };
    });
    return planned !== undefined && (await this.#handOver(planned.leased, planned.order)).ok;
  }

  /** Expires collections whose cashier time ran out unpaid, and exchange quotes that lapsed; returns how many. */
  async expireDue(limit = 100): Promise<number> {
    const due = await q.expiredOrders(this.store.read, this.clock.now(), limit);
    let expired = 0;
    for (const { id } of due) {
      try {
        const order = await this.applyEvent(id, 'expired', { source: 'expiry' });
        this.#metrics?.expired(order);
        expired += 1;
      } catch (error) {
        if (!(error instanceof EventNotAllowedError)) throw error; // paid meanwhile, on this node or another
      }
    }
    return expired;
  }
}
