import type { Logger } from 'pino';
import type { BoletoLive } from '../brazil/boleto-live.js';
import type { Worker } from './worker.js';

/**
 * Brazil's boletos at an issuer: registers the notification URL (once per process), issues the
 * boletos whose payer has been given, follows registrations still under way, writes off the
 * boletos of orders that ended, and lists the charges paid since the last run, so that a lost
 * notification still completes its order. Safe on many nodes.
 */
export function boletoReconcileWorker(deps: { boleto: BoletoLive; logger: Logger }, intervalMs: number): Worker {
  return {
    name: 'boleto-reconcile',
    intervalMs,
    async run(): Promise<void> {
      for (;;) {
        const handled = await deps.boleto.reconcile();
        if (handled > 0) deps.logger.info({ handled }, 'reconciled boletos with the issuer');
        if (handled < 50) return;
      }
    },
  };
}
