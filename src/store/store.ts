import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations/index.js';
import { postgresDialect, sqliteDialects, type DialectName } from './dialects.js';
import type { Checkpointer } from './checkpointer.js';
import type { WalSync } from './wal-sync.js';
import { currentUnitScope, outsideUnitScope, runInUnitScope } from './unit-scope.js';

export type Tx = Transaction<Database>;

/**
 * A query builder that can only read: what `Store.read` hands out. A transaction is one too, so
 * read queries take a `ReadDb` and run inside or outside a unit of work alike.
 */
export type ReadDb = Omit<
  Kysely<Database>,
  | 'insertInto'
  | 'replaceInto'
  | 'updateTable'
  | 'deleteFrom'
  | 'mergeInto'
  | 'transaction'
  | 'startTransaction'
  | 'connection'
  | 'schema'
  | 'destroy'
>;

/** A unit of work waiting for, or running in, a group commit. */
interface Unit {
  work(tx: Tx): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** What `afterCommit` asked to run once this unit is durable. */
  hooks: (() => void)[];
}

/** A group commit takes at most this many units. */
const MAX_UNITS_PER_COMMIT = 256;

/**
 * The storage of Cashgate. Reads may use `read`; every write goes through `transact`, one unit of
 * work per call.
 *
 * On SQLite, units are **group-committed**: the units that arrive together (in one turn of the
 * event loop, or while the previous commit was being flushed) share one database transaction and one
 * flush of the WAL to disk. Each runs alone in its own savepoint, so a unit that fails is rolled
 * back by itself and its caller gets its own error, while the others go on. Every caller is
 * answered only once the commit that holds its unit is durable; if that commit or its flush fails,
 * every unit in it fails. The flush runs off the event loop (WalSync), so requests are read, checked
 * and prepared meanwhile; their units form the next group, which begins once the flush is done.
 * Reads use a second, read-only connection, which sees durable commits only and never waits for a
 * commit in progress.
 *
 * On PostgreSQL each unit is its own transaction on a pooled connection (the server coalesces the
 * fsyncs of concurrent commits itself).
 */
export class Store {
  /** PostgreSQL: work to run once a unit of work has committed (e.g. waking the callback dispatcher). */
  readonly #afterCommit = new WeakMap<Tx, (() => void)[]>();
  /** SQLite: units waiting for the next group commit. */
  #queue: Unit[] = [];
  #committing = false;
  /** SQLite: the unit whose work is running (units of a group commit run one after the other). */
  #running: Unit | undefined;
  /** SQLite: settles when the last group commit is durable and its callers are answered. */
  #flushed: Promise<void> = Promise.resolve();
  /** SQLite: set once a flush of the WAL failed; nothing can be known durable after it. */
  #flushFailed: Error | undefined;
  /** Database commits made, and units of work committed or rolled back in them, since the store opened. */
  readonly commitStats = { commits: 0, units: 0 };

  private constructor(
    readonly dialect: DialectName,
    private readonly db: Kysely<Database>,
    private readonly reader: Kysely<Database>,
    private readonly walSync?: WalSync,
    private readonly checkpointer?: Checkpointer,
  ) {}

  static open(options: {
    databaseUrl: string | undefined;
    dataDir: string;
    onConnectionError?: (error: Error) => void;
    /** SQLite: a checkpoint that failed (the next one copies what it left). */
    onCheckpointError?: (error: Error) => void;
    /** PostgreSQL: connections in the pool (default 16). */
    poolSize?: number;
  }): Store {
    if (options.databaseUrl !== undefined) {
      const { dialect } = postgresDialect(
        options.databaseUrl,
        options.onConnectionError ?? (() => undefined),
        options.poolSize,
      );
      const db = new Kysely<Database>({ dialect });
      return new Store('postgres', db, db);
    }
    const { writer, reader, walSync, checkpointer } = sqliteDialects(
      options.dataDir,
      options.onCheckpointError ?? (() => undefined),
    );
    return new Store(
      'sqlite',
      new Kysely<Database>({ dialect: writer }),
      new Kysely<Database>({ dialect: reader }),
      walSync,
      checkpointer,
    );
  }

  /** SQLite: checkpoints run on their own thread, and those a group of writes waited for (none on PostgreSQL). */
  get checkpointStats(): { checkpoints: number; waited: number } {
    return this.checkpointer?.stats ?? { checkpoints: 0, waited: 0 };
  }

  /** Query builder for reads outside a unit of work (committed data only); writes go through `transact`. */
  get read(): ReadDb {
    return this.reader;
  }

  /**
   * Runs `unitWork` as one unit of work: all of it commits, or none of it does, and the promise
   * settles only once that is durable. `unitWork` must not call `transact` or `read` itself: it has
   * `tx`. Inside a unit scope (unit-scope.ts), the scope's work joins the unit before it commits.
   */
  async transact<T>(unitWork: (tx: Tx) => Promise<T>): Promise<T> {
    const scope = currentUnitScope();
    const work =
      scope === undefined
        ? unitWork
        : async (tx: Tx): Promise<T> => {
            // The unit's work runs in its caller's scope, even from the commit loop (which has none).
            const result = await runInUnitScope(scope, () => unitWork(tx));
            await scope.beforeCommit(tx);
            this.afterCommit(tx, () => scope.committed());
            return result;
          };
    if (this.dialect === 'postgres') return this.#transactAlone(work);
    if (this.#flushFailed !== undefined) return Promise.reject(this.#flushFailed);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve, reject, hooks: [] });
      if (!this.#committing) {
        this.#committing = true;
        // The commit loop and the hooks it runs belong to no caller's scope.
        outsideUnitScope(() => setImmediate(() => void this.#commitQueued()));
      }
    });
  }

  /** Runs `hook` after `tx`'s unit of work commits; never when it rolls back. */
  afterCommit(tx: Tx, hook: () => void): void {
    if (this.dialect === 'sqlite') {
      if (this.#running === undefined) throw new Error('afterCommit called outside a running unit of work');
      this.#running.hooks.push(hook);
      return;
    }
    const hooks = this.#afterCommit.get(tx);
    if (hooks === undefined) this.#afterCommit.set(tx, [hook]);
    else hooks.push(hook);
  }

  async #transactAlone<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    let unit: Tx | undefined;
    const result = await this.db.transaction().execute((tx) => {
      unit = tx;
      return work(tx);
    });
    this.commitStats.commits += 1;
    this.commitStats.units += 1;
    const hooks = unit === undefined ? undefined : this.#afterCommit.get(unit);
    outsideUnitScope(() => {
      for (const hook of hooks ?? []) hook();
    });
    return result;
  }

  /** Commits the queued units, in group commits, until none is left. */
  async #commitQueued(): Promise<void> {
    try {
      while (this.#queue.length > 0) await this.#groupCommit();
    } finally {
      this.#committing = false;
    }
  }

  /**
   * One group commit, once the previous one is durable: the units queued by then (at most
   * MAX_UNITS_PER_COMMIT) in one transaction, each in its own savepoint (released when it succeeds,
   * rolled back to when it fails), then one COMMIT; then, once the WAL is flushed, each caller is
   * answered with its own result or error. Units that arrive meanwhile wait for the next group: a
   * group never waits for more units, so it holds the write lock no longer than its units' own work
   * takes.
   */
  async #groupCommit(): Promise<void> {
    // Never two groups committed and not yet durable (readers wait for one flush at most), and no
    // write lock held across a wait: the next group begins once the previous one is durable.
    await this.#flushed;
    // A WAL that the checkpoints left too long is copied first (off the event loop), and starts over.
    await this.checkpointer?.beforeGroup();
    const units = this.#queue.splice(0, MAX_UNITS_PER_COMMIT);
    if (this.#flushFailed !== undefined) {
      for (const unit of units) unit.reject(this.#flushFailed);
      return;
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await this.db.transaction().execute(async (tx) => {
        for (const [n, unit] of units.entries()) {
          await sql.raw(`savepoint unit_${n}`).execute(tx);
          this.#running = unit;
          try {
            const value = await unit.work(tx);
            await sql.raw(`release unit_${n}`).execute(tx);
            outcomes.push({ ok: true, value });
          } catch (error) {
            await sql.raw(`rollback to unit_${n}`).execute(tx);
            await sql.raw(`release unit_${n}`).execute(tx);
            outcomes.push({ ok: false, error });
          } finally {
            this.#running = undefined;
          }
        }
      });
    } catch (error) {
      // The transaction could not begin or commit: nothing of this group is durable.
      for (const unit of units) unit.reject(error);
      return;
    }
    this.#flushed = this.#flush().then(
      () => {
        this.checkpointer?.committed();
        this.#answer(units, outcomes);
      },
      (error: unknown) => {
        // Whether the group reached the disk is unknown, and stays unknown for every later write
        // (a failed flush is reported once): the store takes no more work; a restart recovers
        // from what the disk holds.
        this.#flushFailed = new Error('the database could not flush its log to disk', { cause: error });
        for (const unit of units) unit.reject(this.#flushFailed);
      },
    );
  }

  /** Flushes the WAL; the group commit just made is durable when this settles. */
  async #flush(): Promise<void> {
    await this.walSync?.sync();
  }

  /** Answers the callers of a durable group commit, after running their after-commit hooks. */
  #answer(units: Unit[], outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[]): void {
    this.commitStats.commits += 1;
    this.commitStats.units += units.length;
    let hookError: Error | undefined;
    units.forEach((unit, n) => {
      const outcome = outcomes[n];
      if (outcome?.ok !== true) return unit.reject(outcome?.error);
      try {
        for (const hook of unit.hooks) hook();
      } catch (error) {
        hookError ??= error instanceof Error ? error : new Error(String(error));
      }
      return unit.resolve(outcome.value);
    });
    // A hook that throws is a programming error: every caller has its answer, then it surfaces
    // (as an unhandled rejection, outside the chain of flushes the next group waits for).
    if (hookError !== undefined) void Promise.reject(hookError);
  }

  /** Every migration Cashgate has, and when each was applied to this database (undefined: not yet). */
  async migrations(): Promise<{ name: string; executedAt: Date | undefined }[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    return (await migrator.getMigrations()).map((m) => ({ name: m.name, executedAt: m.executedAt }));
  }

  /** Applies every pending migration; safe when several processes start at once. */
  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const cause = error instanceof Error ? error.message : JSON.stringify(error);
      throw new Error(`migration failed: ${cause}`, { cause: error });
    }
    await this.#flush();
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  /** Resolves when the database answers a trivial query (and every flush so far succeeded). */
  async ping(): Promise<void> {
    // A store that could not flush its log takes no more work: the node is not ready.
    if (this.#flushFailed !== undefined) throw this.#flushFailed;
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.#flushed.catch(() => undefined);
    await this.checkpointer?.close();
    await this.db.destroy();
    this.walSync?.close();
    if (this.reader !== this.db) await this.reader.destroy();
  }
}

/** True when the error is a unique-constraint violation on either database. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
