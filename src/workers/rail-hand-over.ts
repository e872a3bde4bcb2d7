import type { Logger } from 'pino';
import type { RailHandOver } from '../orders/hand-over.js';
import type { Worker } from './worker.js';

/**
 * Hands orders to their rails where the node that committed them could not: retries after a
 * rail's failure, and hand-overs whose lease ran out (their node died). Safe on many nodes.
 */
export function railHandOverWorker(deps: { handOver: RailHandOver; logger: Logger }, intervalMs: number): Worker {
  return {
    name: 'rail-hand-over',
    intervalMs,
    async run(): Promise<void> {
      // A full batch means more may be due: take the next one at once.
      for (;;) {
        const taken = await deps.handOver.runDue();
        if (taken > 0) deps.logger.info({ taken }, 'worked hand-overs of orders to their rails');
        if (taken < deps.handOver.batch) return;
      }
    },
  };
}
