/**
 * OXXO cash vouchers through Stripe (MEXICO_OXXO_RAIL=stripe). Each order gets one PaymentIntent,
 * created and confirmed with the `oxxo` method after the order committed, from its durable
 * hand-over, with an Idempotency-Key derived from the order (a repeated attempt gets Stripe's first
 * answer again); the voucher (its number, expiry and hosted page) goes to the order.
 *
 * - A webhook event is taken only with a valid `Stripe-Signature` (HMAC-SHA256 of `t.body`, its
 *   timestamp within 5 minutes), and even then only as a prompt: the PaymentIntent is read back
 *   from Stripe before the order changes.
 * - Reconciliation lists the PaymentIntents created since the oldest OXXO order still waiting (with
 *   an overlap) and applies what each says, so a lost webhook still completes or ends its order.
 */
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { OrderRow } from '../orders/queries.js';
import { EventNotAllowedError, type OrderService } from '../orders/service.js';
import { COLLECTION_STATUS } from '../orders/state-machine.js';
import * as railq from '../rails/queries.js';
import { RailRefusal, type Rail, type RailOrder, type RailStarted } from '../rails/rails.js';
import {
  StripeError,
  verifyStripeSignature,
  type StripeClient,
  type StripeExchange,
  type StripeIntent,
} from '../rails/stripe/client.js';
import type { Store } from '../store/store.js';
import { mexicoCityDaysBetween } from './collections.js';
import * as q from './queries.js';

const RAIL = 'stripe';
/** How far before the oldest waiting order the PaymentIntent list starts. */
const LIST_OVERLAP_MS = 10 * 60_000;
/** Stripe keeps an Idempotency-Key 24 hours: past this, an attempt with an unknown outcome looks the intent up instead. */
const IDEMPOTENCY_KEY_LIFETIME_MS = 23 * 3_600_000;

/** An OXXO order's details the connector reads: the voucher's deadline and the payer's name and email. */
interface OxxoOrderDetails {
  oxxoExpiresAt?: number;
  oxxoName?: string;
  oxxoEmail?: string;
}

/** Names, emails and secrets of Stripe's messages redacted for an order's rail messages. */
export function redactStripe(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactStripe);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => {
      if (typeof v !== 'string') return [key, redactStripe(v)];
      if (/email/i.test(key)) return [key, v.replace(/^(.).*@/, '$1…@')];
      if (/(^|\])?\[?name\]?$|^name$/i.test(key)) return [key, `${v.slice(0, 1)}…`];
      if (/client_secret|authorization/i.test(key)) return [key, '[redacted]'];
      return [key, v];
    }),
  );
}

export class OxxoLive {
  readonly #events: Counter | undefined;

  constructor(
    private readonly deps: {
      client: StripeClient;
      store: Store;
      orders: OrderService;
      clock: Clock;
      logger: Logger;
      registry?: Registry | undefined;
    },
    private readonly config: { webhookSecret: string },
  ) {
    this.#events =
      deps.registry === undefined
        ? undefined
        : new Counter({
            name: 'cashgate_oxxo_events_total',
            help: 'Stripe webhook events by type and what Cashgate did (applied, ignored, refused, failed)',
            labelNames: ['type', 'outcome'],
            registers: [deps.registry],
          });
  }

  #messages(exchanges: readonly StripeExchange[], orderId: string | null, ref: string | null) {
    const at = this.deps.clock.now();
    return exchanges.map((e) => railq.outboundMessage(RAIL, e, { orderId, ref, at }, redactStripe));
  }

  #inbound(
    body: unknown,
    ref: string | null,
    disposition: 'matched' | 'unmatched' | 'refused',
    orderId: string | null,
  ) {
    const at = this.deps.clock.now();
    return railq.inboundMessage(RAIL, 'webhook', body, { orderId, ref, disposition, at }, redactStripe);
  }

  /** The rail of OXXO orders: one confirmed PaymentIntent per order, its voucher recorded with the order. */
  rail(): Rail {
    return { name: 'oxxo (stripe)', start: (order) => this.#start(order) };
  }

  async #start(order: RailOrder): Promise<RailStarted> {
    const { client, clock } = this.deps;
    const d = JSON.parse(order.details) as OxxoOrderDetails;
    const now = clock.now();
    const deadline = d.oxxoExpiresAt ?? 0;
    // Whole Mexico City days to the order's own deadline: never past it, and Stripe takes 1 to 7.
    const days = Math.min(7, mexicoCityDaysBetween(now, deadline));
    if (days < 1 || deadline <= now)
      throw new RailRefusal(`the OXXO voucher's deadline has passed (${new Date(deadline).toISOString()})`);
    const exchanges: StripeExchange[] = [];
    const record = (intent: StripeIntent): RailStarted => ({
      channelOrderId: intent.id,
      details: {
        paymentIntent: intent.id,
        ...(intent.voucher !== undefined && {
          oxxoNumber: intent.voucher.number,
          oxxoVoucherUrl: intent.voucher.hostedVoucherUrl,
        }),
      },
      record: (tx) => railq.insertRailMessages(tx, this.#messages(exchanges, order.orderId, intent.id)),
    });
    try {
      if (order.earlierAttempts > 0 && now - order.createdAt > IDEMPOTENCY_KEY_LIFETIME_MS) {
        // Stripe may have forgotten the key: look for an intent an earlier attempt made.
        const listed = await client.listCreatedBetween(Math.floor(order.createdAt / 1000) - 60, Math.ceil(now / 1000));
        exchanges.push(...listed.exchanges);
        const earlier = listed.value.find((i) => i.orderId === order.orderId);
        if (earlier !== undefined) return record(earlier);
      }
      const created = await client.createOxxoIntent({
        amount: order.amount,
        idempotencyKey: order.idempotencyKey,
        expiresAfterDays: days,
        name: d.oxxoName ?? '',
        email: d.oxxoEmail ?? '',
        orderId: order.orderId,
        ...(order.remark !== null && order.remark !== '' && { description: order.remark }),
      });
      exchanges.push(...created.exchanges);
      return record(created.value);
    } catch (error) {
      if (!(error instanceof StripeError)) throw error;
      exchanges.push(error.exchange);
      await this.deps.store.transact((tx) =>
        railq.insertRailMessages(tx, this.#messages(exchanges, order.orderId, null)),
      );
      // Refused for what it is: another attempt would not help. Otherwise the same key is sent again.
      if (error.kind === 'invalid') throw new RailRefusal(`Stripe refused the voucher: ${error.message}`);
      throw error;
    }
  }

  /**
   * Stripe's webhook: 400 for a body whose signature or timestamp does not hold (nothing changes);
   * otherwise the PaymentIntent it names is read back from Stripe and applied. 500 when Stripe
   * cannot be asked now (Stripe delivers the event again).
   */
  async webhook(rawBody: string, signature: string | undefined): Promise<{ status: number; body: unknown }> {
    const { store, logger, clock } = this.deps;
    const verified = verifyStripeSignature(
      rawBody,
      signature,
      this.config.webhookSecret,
      Math.floor(clock.now() / 1000),
    );
    if (!verified.ok) {
      this.#events?.inc({ type: 'unknown', outcome: 'refused' });
      logger.warn({ reason: verified.reason }, 'a Stripe webhook with no valid signature was refused');
      let body: unknown = null;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = null;
      }
      await store.transact((tx) => railq.insertRailMessages(tx, [this.#inbound(body, null, 'refused', null)]));
      return { status: 400, body: { error: `signature ${verified.reason}` } };
    }
    const event = verified.event;
    const object = (event.data.object ?? {}) as { id?: unknown; object?: unknown };
    if (!event.type.startsWith('payment_intent.') || typeof object.id !== 'string') {
      this.#events?.inc({ type: event.type, outcome: 'ignored' });
      return { status: 200, body: { received: true } };
    }
    try {
      const read = await this.deps.client.retrieve(object.id);
      const outcome = await this.#apply(read.value, read.exchanges, event);
      this.#events?.inc({ type: event.type, outcome });
      return { status: 200, body: { received: true } };
    } catch (error) {
      this.#events?.inc({ type: event.type, outcome: 'failed' });
      logger.warn(
        { err: error, event: event.id },
        'a Stripe event could not be confirmed now: Stripe delivers it again',
      );
      return { status: 500, body: { error: 'try again' } };
    }
  }

  /** What the PaymentIntent (as Stripe has it) makes of its order: paid, ended, or nothing yet. */
  async #apply(intent: StripeIntent, exchanges: readonly StripeExchange[], event?: unknown): Promise<string> {
    const { orders, store } = this.deps;
    const order = intent.orderId === undefined ? undefined : await orders.find(intent.orderId);
    const ours = order !== undefined && order.channel_type === 'OXXO' && order.channel_order_id === intent.id;
    const messages = [
      ...(event === undefined
        ? []
        : [this.#inbound(event, intent.id, ours ? 'matched' : 'unmatched', ours ? order.id : null)]),
      ...this.#messages(exchanges, ours ? order.id : null, intent.id),
    ];
    if (!ours || order.status !== COLLECTION_STATUS.pending) {
      if (event !== undefined) await store.transact((tx) => railq.insertRailMessages(tx, messages));
      if (ours && intent.state === 'paid' && order.status !== COLLECTION_STATUS.paid) this.#lostPayment(order, intent);
      return ours ? 'settled-before' : 'unmatched';
    }
    try {
      if (intent.state === 'paid') {
        await orders.applyEvent(order.id, 'paid', {
          source: RAIL,
          amount: intent.amountReceived,
          data: { paymentIntent: intent.id },
          also: (tx) => railq.insertRailMessages(tx, messages),
        });
        return 'paid';
      }
      if (intent.state === 'expired' || intent.state === 'canceled') {
        await orders.applyEvent(order.id, 'expired', {
          source: RAIL,
          also: (tx) => railq.insertRailMessages(tx, messages),
        });
        return 'expired';
      }
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      if (intent.state === 'paid') this.#lostPayment(order, intent);
      return 'settled-before';
    }
    if (event !== undefined) await store.transact((tx) => railq.insertRailMessages(tx, messages));
    return 'waiting';
  }

  /** Stripe took cash for an order that no longer waits (it cannot be refunded): the operator settles it. */
  #lostPayment(order: OrderRow, intent: StripeIntent): void {
    this.deps.logger.error(
      { orderId: order.id, paymentIntent: intent.id, status: order.status },
      'an OXXO voucher was paid for an order that had ended: the operator must settle it with the merchant',
    );
  }

  /**
   * The PaymentIntents created from the oldest OXXO order still waiting (less an overlap; the stored
   * cursor when none waits) to now, each applied as its webhook would have been.
   */
  async reconcile(): Promise<void> {
    const { store, clock, client } = this.deps;
    const now = clock.now();
    const cursorName = 'stripe.oxxo.created';
    const oldest = await q.oldestWaitingOrder(store.read, 'OXXO');
    const from = (oldest ?? (await railq.railCursor(store.read, cursorName)) ?? now) - LIST_OVERLAP_MS;
    const listed = await client.listCreatedBetween(Math.floor(from / 1000), Math.ceil(now / 1000));
    for (const intent of listed.value) {
      if (
        intent.orderId === undefined ||
        (intent.state !== 'paid' && intent.state !== 'expired' && intent.state !== 'canceled')
      )
        continue;
      try {
        await this.#apply(intent, []);
      } catch (error) {
        this.deps.logger.error(
          { err: error, paymentIntent: intent.id },
          'an OXXO PaymentIntent could not be reconciled now',
        );
      }
    }
    await store.transact((tx) => railq.setRailCursor(tx, cursorName, oldest ?? now));
  }

  async close(): Promise<void> {
    await this.deps.client.close();
  }
}
