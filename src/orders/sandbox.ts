import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { amountField } from '../ledger/amount-field.js';
import type { OrderArea, OrderKind } from '../store/schema.js';
import type { OrderRow } from './queries.js';
import { EventNotAllowedError, type OrderService } from './service.js';
import { allowedEventsAt, eventsOf } from './state-machine.js';

/** What a sandbox event may carry: the amount paid or received, a transaction hash, the sender. */
export interface SandboxInput {
  amount?: unknown;
  tradeHash?: string | undefined;
  from?: string | undefined;
  source: string;
}

/** An order kind's own simulator (the exchange's chain), for events beyond one plain transition. */
export type SandboxDriver = (order: OrderRow, event: string, input: SandboxInput) => Promise<OrderRow>;

/** The simulated rails: sandbox events move an order exactly as a rail's report would. */
export class OrderSandbox {
  readonly #drivers = new Map<
    string,
    { driver: SandboxDriver; extraEvents: readonly string[]; internalEvents: readonly string[] }
  >();

  constructor(
    private readonly orders: OrderService,
    readonly enabled: boolean,
    private readonly clock: Clock,
    /** Areas whose orders a live rail carries: only that rail moves them, never the sandbox. */
    private readonly liveAreas: ReadonlySet<OrderArea> = new Set(),
    /** Channels a live rail carries in an area whose other channels are simulated (a boleto issuer's BOLETO). */
    private readonly liveChannels: ReadonlySet<string> = new Set(),
  ) {}

  /** Whether sandbox events may drive this order (the sandbox is on and its rail is a simulator). */
  enabledFor(order: Pick<OrderRow, 'area' | 'channel_type'>): boolean {
    return this.enabled && !this.liveAreas.has(order.area) && !this.liveChannels.has(order.channel_type);
  }

  /**
   * Hands the sandbox events of `kinds` (an order kind, or one area's kind as `area.kind`) to their
   * own driver; `extraEvents` are events it adds (e.g. `complete`), `internalEvents` outcomes it
   * decides itself and the sandbox does not offer.
   */
  registerDriver(
    kinds: readonly (OrderKind | `${OrderArea}.${OrderKind}`)[],
    driver: SandboxDriver,
    events: { extra?: readonly string[]; internal?: readonly string[] } = {},
  ): void {
    for (const kind of kinds)
      this.#drivers.set(kind, { driver, extraEvents: events.extra ?? [], internalEvents: events.internal ?? [] });
  }

  #driverOf(order: OrderRow) {
    return this.#drivers.get(`${order.area}.${order.kind}`) ?? this.#drivers.get(order.kind);
  }

  /** The sandbox events the order's state allows now (a collection whose time is up: only `expired`). */
  allowed(order: OrderRow): string[] {
    const driver = this.#driverOf(order);
    const own = allowedEventsAt(order, this.clock.now()).filter(
      (event) => !(driver?.internalEvents.includes(event) ?? false),
    );
    return own.length > 0 ? [...own, ...(driver?.extraEvents ?? [])] : own;
  }

  /** Applies a sandbox event (`paid` may carry the amount actually paid) through the same code path as the rails. */
  async apply(orderId: string, event: string, input: SandboxInput): Promise<OrderRow> {
    if (!this.enabled) throw new OperatorError({ kind: 'sandbox_disabled' });
    const order = await this.orders.find(orderId);
    if (order === undefined) throw new OperatorError({ kind: 'order_not_found', orderId });
    if (!this.enabledFor(order)) throw new OperatorError({ kind: 'sandbox_live_rail', orderId, area: order.area });
    const own = this.#driverOf(order);
    if (!eventsOf(order.kind).includes(event) && !(own?.extraEvents.includes(event) ?? false)) {
      throw new OperatorError({
        kind: 'event_not_allowed',
        orderId,
        status: order.status,
        event,
        allowedEvents: this.allowed(order),
      });
    }
    if (own !== undefined) {
      try {
        return await own.driver(order, event, input);
      } catch (error) {
        if (!(error instanceof EventNotAllowedError)) throw error;
        const now = (await this.orders.find(orderId)) ?? error.order;
        throw new OperatorError({
          kind: 'event_not_allowed',
          orderId,
          status: now.status,
          event,
          allowedEvents: this.allowed(now),
        });
      }
    }
    const amount =
      input.amount === undefined || event !== 'paid' ? undefined : amountField('amount', input.amount, order.currency);
    try {
      return await this.orders.applyEvent(orderId, event, {
        source: input.source,
        ...(amount !== undefined && { amount }),
      });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      throw new OperatorError({
        kind: 'event_not_allowed',
        orderId,
        status: error.order.status,
        event,
        allowedEvents: error.allowed,
      });
    }
  }
}
