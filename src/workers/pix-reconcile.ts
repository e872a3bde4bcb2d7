import type { Logger } from 'pino';
import type { ApiPixBrazil } from '../brazil/api-pix.js';
import type { Worker } from './worker.js';

/**
 * Brazil on a PSP's API Pix: lists the Pix received since the last run and handles any a lost
 * webhook did not bring, removes the charges of orders that ended unpaid, follows refunds and asks
 * about payouts whose result is late. Safe on many nodes. Until the webhook is registered with the
 * PSP, each run tries again first.
 */
export function pixReconcileWorker(deps: { pix: ApiPixBrazil; logger: Logger }, intervalMs: number): Worker {
  let registered = false;
  return {
    name: 'pix-reconcile',
    intervalMs,
    async run(): Promise<void> {
      if (!registered) {
        await deps.pix.registerWebhook();
        registered = true;
        deps.logger.info('the Pix webhook is registered with the PSP');
      }
      for (;;) {
        const looked = await deps.pix.reconcile();
        if (looked > 0) deps.logger.info({ looked }, 'reconciled Pix with the PSP');
        if (looked < 50) return;
      }
    },
  };
}
