import type { Logger } from 'pino';
import type { ConsoleAccounts } from '../console/accounts.js';
import type { RequestLog } from '../console/request-log.js';
import type { Worker } from './worker.js';

/** Drops ended console sessions, old sign-in failures and request log entries past their week. */
export function consolePruner(
  deps: { accounts: ConsoleAccounts; requestLog: RequestLog; logger: Logger },
  intervalMs = 300_000,
): Worker {
  return {
    name: 'console-pruner',
    intervalMs,
    async run(): Promise<void> {
      const deleted = (await deps.accounts.prune()) + (await deps.requestLog.prune());
      if (deleted > 0) deps.logger.debug({ deleted }, 'pruned console sessions and request log');
    },
  };
}
