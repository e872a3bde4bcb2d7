import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { pruneExpiredNonces } from '../auth/nonces.js';
import type { Clock } from '../clock.js';
import { counterOn } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import type { Worker } from './worker.js';

const BATCH = 5_000;

/** Deletes nonces whose timestamps left the signature window; each batch is one short transaction. */
export function noncePruner(
  deps: { store: Store; clock: Clock; logger: Logger; registry?: Registry },
  intervalMs = 60_000,
): Worker {
  const pruned =
    deps.registry === undefined
      ? undefined
      : counterOn(deps.registry, {
          name: 'cashgate_nonces_pruned_total',
          help: 'Request nonces deleted by this process once their timestamps left the signature window',
        });
  return {
    name: 'nonce-pruner',
    intervalMs,
    async run(): Promise<void> {
      let deleted = 0;
      for (;;) {
        const count = await deps.store.transact((tx) => pruneExpiredNonces(tx, deps.clock.now(), BATCH));
        pruned?.inc(count);
        deleted += count;
        if (count < BATCH) break;
      }
      if (deleted > 0) deps.logger.debug({ deleted }, 'pruned expired nonces');
    },
  };
}
