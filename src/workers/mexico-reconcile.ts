import type { Logger } from 'pino';
import type { OxxoLive } from '../mexico/oxxo-live.js';
import type { SpeiLive } from '../mexico/spei-live.js';
import type { Worker } from './worker.js';

/**
 * Mexico's live rails: STP's received orders of each operating day since the last run (and the
 * returns Cashgate owes), and Stripe's PaymentIntents since the oldest waiting OXXO order, so that
 * a lost webhook still completes (or ends) its order. Safe on many nodes: every decision is recorded
 * once, keyed by the provider's ids.
 */
export function mexicoReconcileWorker(
  deps: { spei?: SpeiLive | undefined; oxxo?: OxxoLive | undefined; logger: Logger },
  intervalMs: number,
): Worker {
  return {
    name: 'mexico-reconcile',
    intervalMs,
    async run(): Promise<void> {
      const work: [string, { reconcile(): Promise<void> } | undefined][] = [
        ['stp', deps.spei],
        ['stripe', deps.oxxo],
      ];
      for (const [rail, connector] of work) {
        if (connector === undefined) continue;
        try {
          await connector.reconcile();
        } catch (error) {
          deps.logger.warn({ err: error, rail }, 'Mexico reconciliation could not finish now: the next run goes on');
        }
      }
    },
  };
}
