import type { Logger } from 'pino';
import type { OrderService } from '../orders/service.js';
import type { Worker } from './worker.js';

/** Expires collections whose cashier time ran out unpaid (status 3) and token → fiat quotes no deposit met (32), with their callbacks. */
export function expiryWorker(deps: { orders: OrderService; logger: Logger }, intervalMs = 5_000): Worker {
  return {
    name: 'expiry',
    intervalMs,
    async run(): Promise<void> {
      const expired = await deps.orders.expireDue();
      if (expired > 0) deps.logger.info({ expired }, 'expired orders whose time ran out');
    },
  };
}
