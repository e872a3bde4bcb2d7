import { AsyncLocalStorage } from 'node:async_hooks';
import type { Tx } from './store.js';

/**
 * Work that joins every unit of work begun inside it: the audit log uses it to write a staff
 * action's record in the same transaction as the change it records.
 */
export interface UnitScope {
  /** Runs inside each unit of work begun in the scope, after the unit's own work, before it commits. */
  beforeCommit(tx: Tx): Promise<void>;
  /** Runs once such a unit has committed (never when it rolled back). */
  committed(): void;
}

const storage = new AsyncLocalStorage<UnitScope>();

/** Runs `work` with `scope` joined to every unit of work it begins (directly or through what it calls). */
export function runInUnitScope<T>(scope: UnitScope, work: () => Promise<T>): Promise<T> {
  return storage.run(scope, work);
}

/** The scope the caller runs in, if any. */
export function currentUnitScope(): UnitScope | undefined {
  return storage.getStore();
}

/**
 * Runs `start` outside any scope: background work started from a request (a woken worker, a commit
 * loop, an after-commit hook) must not carry the request's scope into units of work of its own.
 */
export function outsideUnitScope<T>(start: () => T): T {
  return storage.exit(start);
}
