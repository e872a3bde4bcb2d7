import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { amountField, type Currency } from '../ledger/money.js';
import type { OrderRow } from './queries.js';
import { EventNotAllowedError, type OrderService } from './service.js';
import { allowedEvents, eventsOf } from './state-machine.js';

/** The simulated rails: sandbox events move an order exactly as a rail's report would. */
export class OrderSandbox {
  constructor(
    private readonly orders: OrderService,
    readonly enabled: boolean,
    private readonly clock: Clock,
  ) {}

  /** Applies a sandbox event (`paid` may carry the amount actually paid) through the same code path as the rails. */
  async apply(orderId: string, event: string, input: { amount?: unknown; source: string }): Promise<OrderRow> {
    if (!this.enabled) throw new OperatorError({ kind: 'sandbox_disabled' });
    const order = await this.orders.find(orderId);
    if (order === undefined) throw new OperatorError({ kind: 'order_not_found', orderId });
    if (!eventsOf(order.kind).includes(event)) {
      throw new OperatorError({ kind: 'event_not_allowed', orderId, status: order.status, event, allowedEvents: allowedEvents(order.kind, order.status) });
    }
    // The payer's time is up even before the expiry worker marks it: the cashier page says so too.
    if (event === 'paid' && order.status === 1 && order.cashier_expire_at !== null && order.cashier_expire_at <= this.clock.now()) {
      throw new OperatorError({ kind: 'event_not_allowed', orderId, status: order.status, event, allowedEvents: ['expired'] });
    }
    const amount =
      input.amount === undefined || event !== 'paid' ? undefined : amountField('amount', input.amount, order.currency as Currency);
    try {
      return await this.orders.applyEvent(orderId, event, { source: input.source, ...(amount !== undefined && { amount }) });
    } catch (error) {
      if (!(error instanceof EventNotAllowedError)) throw error;
      throw new OperatorError({ kind: 'event_not_allowed', orderId, status: error.order.status, event, allowedEvents: error.allowed });
    }
  }
}
