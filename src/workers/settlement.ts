import type { Logger } from 'pino';
import type { LedgerService } from '../ledger/service.js';
import type { Worker } from './worker.js';

/** Moves collected money whose settlement time has come from awaiting settlement to available. */
export function settlementWorker(deps: { ledger: LedgerService; logger: Logger }, intervalMs = 5_000): Worker {
  return {
    name: 'settlement',
    intervalMs,
    async run(): Promise<void> {
      const settled = await deps.ledger.settleDue();
      if (settled > 0) deps.logger.info({ settled }, 'settled collected money');
    },
  };
}
