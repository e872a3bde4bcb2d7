import type { Counter, Registry } from 'prom-client';
import { counterOn } from '../metrics/metrics.js';
import type { ReadDb, Tx } from '../store/store.js';

/** Why a lease was freed: its node was declared dead, its node let it go on a clean stop, or it ran out. */
export type LeaseFreeReason = 'dead' | 'released' | 'expired';

/**
 * One kind of lease in Cashgate (the rail hand-overs, the callback deliveries, the Daraja
 * reconciliation claims, the chains' watches and sendings): how to find and free those a node
 * holds. Every lease records its holder's node id, so that one mechanism (`NodeLiveness`) frees a
 * dead node's leases of every kind at once, and a clean stop releases its own.
 */
export interface LeaseKind {
  /** The `kind` label: rail_hand_over, callback_delivery, daraja_reconcile, chain_watch, chain_send. */
  readonly kind: string;
  /**
   * Frees the leases held by `owners` in the unit of work `tx`: each becomes free for any node from
   * `now`, and its old holder can record nothing more under it. Returns how many it freed.
   */
  free(tx: Tx, owners: readonly string[], now: number): Promise<number>;
  /** How many leases each node holds now, by node id. */
  held(db: ReadDb, now: number): Promise<ReadonlyMap<string, number>>;
}

/** The counter of freed leases (`cashgate_leases_freed_total{kind,reason}`), shared by the modules that take leases over. */
export function leasesFreedCounter(registry: Registry): Counter<'kind' | 'reason'> {
  return counterOn<'kind' | 'reason'>(registry, {
    name: 'cashgate_leases_freed_total',
    help:
      'Leases freed before their holder finished with them, by kind and reason (dead: its node was declared dead; ' +
      'released: its node stopped cleanly; expired: it ran out and another node took it)',
    labelNames: ['kind', 'reason'],
  });
}

/** Groups `(owner, n)` rows of a `held` query into a map. */
export function byOwner(rows: readonly { owner: string | null; n: number | string | bigint }[]): Map<string, number> {
  const held = new Map<string, number>();
  for (const row of rows) if (row.owner !== null) held.set(row.owner, (held.get(row.owner) ?? 0) + Number(row.n));
  return held;
}
