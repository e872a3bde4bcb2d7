import type { Logger } from 'pino';
import type { DepositAddresses } from '../exchange/deposit-addresses.js';
import type { Worker } from './worker.js';

/** At most one warning of a dry pool this often. */
const DRY_WARNING_EVERY_MS = 60_000;

/**
 * Keeps the deposit address pool topped up (DEPOSIT_ADDRESS_POOL_SIZE addresses per pooled family)
 * and derives what a dead process left pending; safe on every node at once.
 */
export function depositAddressPoolWorker(
  deps: { addresses: DepositAddresses; logger: Logger },
  intervalMs = 1_000,
): Worker {
  let warnedAt = Number.NEGATIVE_INFINITY;
  let inlineSinceWarning = 0;
  return {
    name: 'deposit-address-pool',
    intervalMs,
    async run(): Promise<void> {
      const { derived, derivedInline } = await deps.addresses.topUp();
      if (derived > 0) deps.logger.debug({ derived }, 'derived deposit addresses into the pool');
      inlineSinceWarning += derivedInline;
      if (inlineSinceWarning > 0 && Date.now() - warnedAt >= DRY_WARNING_EVERY_MS) {
        deps.logger.warn(
          { derivedInline: inlineSinceWarning },
          'the deposit address pool ran dry: creates derived their addresses inline (raise DEPOSIT_ADDRESS_POOL_SIZE if this repeats)',
        );
        warnedAt = Date.now();
        inlineSinceWarning = 0;
      }
    },
  };
}
