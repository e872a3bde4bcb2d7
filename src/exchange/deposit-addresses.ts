import type { Clock } from '../clock.js';
import type { AddressFamily, DepositAddressDeriver } from '../rails/chain/derivation.js';
import { MAX_ADDRESS_INDEX } from '../rails/chain/derivation.js';
import type { ReadDb, Store, Tx } from '../store/store.js';
import { AddressDerivation } from './derivation-thread.js';
import * as q from './queries.js';

export interface DepositAddress {
  address: string;
  family: AddressFamily;
  keyId: string;
  index: number;
  path: string;
}

/** The families orders take addresses of (token → fiat and the aggregate cashier: TRON only); only they are pooled. */
const POOLED_FAMILIES: readonly AddressFamily[] = ['tron'];

/** Indexes claimed and derived per unit of work when the pool is topped up. */
const FILL_BATCH = 100;

/**
 * A pending index claimed by another node is left to it this long before a worker here derives it
 * too (the same address: deriving twice is wasted work, never a second hand-out).
 */
const PENDING_GRACE_MS = 10_000;

/** How long one run of the worker goes on refilling while creates keep taking what it derives. */
const RUN_BUDGET_MS = 2_000;

/** What a run of the pool's worker did. */
export interface PoolTopUp {
  /** Addresses derived into the pools. */
  derived: number;
  /** Creates that found the pool (turned on) without a derived address, and derived theirs inline, since the last run. */
  derivedInline: number;
}

/**
 * Deposit addresses derived from the operator's extended public keys.
 *
 * Deriving one is the costly part of a token → fiat create (a secp256k1 multiplication), so a
 * worker derives addresses ahead into a pool (`topUp`) and a create takes a pooled one in its own
 * unit of work (`reserve`), deriving inline only when the pool has none. Every index is claimed from
 * the key's counter exactly once, in the unit of work that either records it as an order's
 * (`deposit_addresses`) or adds it to the pool (`deposit_address_pool`); a create moves a pooled
 * index to `deposit_addresses` in one unit of work. So at every commit each index below the counter
 * is in exactly one of the two tables: a crash rolls back whatever it interrupted, and no index,
 * and no address, is ever handed out twice, on any node.
 */
export class DepositAddresses {
  /** Creates that derived inline since the worker last asked. */
  #derivedInline = 0;
  /** When this process started: pending indexes claimed before it are a dead process's. */
  readonly #startedAt: number;
  readonly #derivation = new AddressDerivation();

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      derivers: Readonly<Partial<Record<AddressFamily, DepositAddressDeriver>>>;
      /** How many addresses per pooled family the worker keeps derived ahead (0: none, every create derives inline). */
      poolSize: number;
    },
  ) {
    this.#startedAt = deps.clock.now();
  }

  #deriver(family: AddressFamily): DepositAddressDeriver {
    const deriver = this.deps.derivers[family];
    if (deriver === undefined)
      throw new Error(`no ${family} xpub is configured: deposit addresses of that family cannot be derived`);
    return deriver;
  }

  /**
   * An unused address of `family`, taken in `tx`: the lowest pooled one, else the key's next index
   * derived now. Record it with `assign` once the order row exists; if `tx` rolls back, a pooled
   * address goes back to the pool and an inline index back to the counter.
   */
  async reserve(tx: Tx, family: AddressFamily): Promise<DepositAddress> {
    const deriver = this.#deriver(family);
    const pooled = await q.takePooledAddress(tx, this.deps.store.dialect, deriver.keyId);
    if (pooled !== undefined) {
      return {
        address: pooled.address,
        family,
        keyId: deriver.keyId,
        index: pooled.index,
        path: deriver.path(pooled.index),
      };
    }
    if (this.deps.poolSize > 0) this.#derivedInline += 1;
    await q.ensureAddressCounter(tx, deriver.keyId);
    const index = (await q.advanceAddressCounter(tx, deriver.keyId)) - 1;
    if (index > MAX_ADDRESS_INDEX)
      throw new Error(
        `every non-hardened index of ${family} key ${deriver.keyId} is used: configure a new account xpub`,
      );
    return { address: deriver.address(index), family, keyId: deriver.keyId, index, path: deriver.path(index) };
  }

  /** Records the address as the order's: a second hand-out of it would break a unique constraint. */
  async assign(tx: Tx, deposit: DepositAddress, orderId: string, now: number): Promise<void> {
    await q.insertDepositAddress(tx, {
      address: deposit.address,
      family: deposit.family,
      key_id: deposit.keyId,
      path_index: deposit.index,
      order_id: orderId,
      created_at: now,
    });
  }

  /**
   * The worker's run: derives the pending indexes a dead process left, then tops each pooled
   * family up to the pool size, `FILL_BATCH` indexes at a time: one short unit of work claims them
   * (the counter advanced, their rows added without address), they are derived off the event loop
   * (AddressDerivation), and a second unit writes the addresses. A crash between the two leaves the
   * claimed rows pending, never an index lost or given twice.
   */
  async topUp(): Promise<PoolTopUp> {
    let derived = 0;
    for (const family of POOLED_FAMILIES) {
      const deriver = this.deps.derivers[family];
      if (deriver === undefined) continue;
      derived += await this.#derivePending(deriver);
      derived += await this.#fill(deriver);
    }
    const derivedInline = this.#derivedInline;
    this.#derivedInline = 0;
    return { derived, derivedInline };
  }

  async #derivePending(deriver: DepositAddressDeriver): Promise<number> {
    // This process's own batches are never pending while its worker runs (one run at a time).
    const claimedBefore = Math.max(this.#startedAt, this.deps.clock.now() - PENDING_GRACE_MS);
    let derived = 0;
    for (;;) {
      const pending = await q.pendingPoolIndexes(this.deps.store.read, deriver.keyId, claimedBefore, FILL_BATCH);
      if (pending.length === 0) return derived;
      await this.#deriveInto(deriver, pending);
      derived += pending.length;
    }
  }

  async #fill(deriver: DepositAddressDeriver): Promise<number> {
    const size = this.deps.poolSize;
    // Topped up a batch at a time (a tenth of the pool, at most FILL_BATCH), not one address per create.
    const least = Math.min(FILL_BATCH, Math.ceil(size / 10));
    let derived = 0;
    // A run refills for at most RUN_BUDGET_MS, so that it ends (and the process can stop) under any load.
    const started = performance.now();
    while (performance.now() - started < RUN_BUDGET_MS) {
      const missing = size - (await q.pooledCount(this.deps.store.read, deriver.keyId));
      if (missing < least || missing <= 0) break;
      const count = Math.min(FILL_BATCH, missing);
      const first = await this.deps.store.transact(async (tx) => {
        await q.ensureAddressCounter(tx, deriver.keyId);
        const claimed = await q.claimPoolIndexes(tx, {
          keyId: deriver.keyId,
          family: deriver.family,
          count,
          now: this.deps.clock.now(),
        });
        // Rolls the claim back: the last indexes are left to creates, which then fail as reserve says.
        if (claimed + count - 1 > MAX_ADDRESS_INDEX)
          throw new Error(`the ${deriver.family} key ${deriver.keyId} has fewer than ${count} indexes left to pool`);
        return claimed;
      });
      await this.#deriveInto(
        deriver,
        Array.from({ length: count }, (_, n) => first + n),
      );
      derived += count;
    }
    return derived;
  }

  /** Derives the claimed indexes (on the derivation thread) and writes their addresses in one unit of work. */
  async #deriveInto(deriver: DepositAddressDeriver, indexes: readonly number[]): Promise<void> {
    const addresses = await this.#derivation.derive(deriver, indexes);
    await this.deps.store.transact(async (tx) => {
      for (const [n, index] of indexes.entries())
        await q.fillPooledAddress(tx, { keyId: deriver.keyId, index, address: addresses[n] as string });
    });
  }
}

/** The addresses of `family` handed out since `since`, for a deposit watcher. */
export function recentDepositAddresses(db: ReadDb, family: AddressFamily, since: number): Promise<string[]> {
  return q.depositAddressesSince(db, family, since);
}
