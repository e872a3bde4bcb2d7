import type { Logger } from 'pino';
import type { DarajaKenya } from '../kenya/daraja.js';
import type { Worker } from './worker.js';

/**
 * Asks Daraja about every request whose answer is late: an STK prompt with no confirmed callback,
 * a payout with no result. What a lost callback would have told, found. Safe on many nodes.
 */
export function darajaReconcileWorker(deps: { daraja: DarajaKenya; logger: Logger }, intervalMs: number): Worker {
  return {
    name: 'daraja-reconcile',
    intervalMs,
    async run(): Promise<void> {
      for (;;) {
        const asked = await deps.daraja.reconcile();
        if (asked > 0) deps.logger.info({ asked }, 'asked Daraja about requests whose answer is late');
        if (asked < 50) return;
      }
    },
  };
}
