import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations/index.js';
import { postgresDialect, sqliteDialect, type DialectName } from './dialects.js';

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

/**
 * The storage of Cashgate. Reads may use `read`; every write goes through `transact`, one unit of
 * work per call, so commits can later be coalesced (group commit) without touching callers.
 */
export class Store {
  /** Work to run once a unit of work has committed (e.g. waking the callback dispatcher). */
  readonly #afterCommit = new WeakMap<Tx, (() => void)[]>();

  private constructor(
    readonly dialect: DialectName,
    private readonly db: Kysely<Database>,
  ) {}

  static open(options: {
    databaseUrl: string | undefined;
    dataDir: string;
    onConnectionError?: (error: Error) => void;
  }): Store {
    if (options.databaseUrl !== undefined) {
      const { dialect } = postgresDialect(options.databaseUrl, options.onConnectionError ?? (() => undefined));
      return new Store('postgres', new Kysely<Database>({ dialect }));
    }
    return new Store('sqlite', new Kysely<Database>({ dialect: sqliteDialect(options.dataDir) }));
  }

  /** Query builder for reads outside a unit of work; writes go through `transact`. */
  get read(): ReadDb {
    return this.db;
  }

  /** Runs `work` in one database transaction: all of it commits, or none of it does. */
  async transact<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    let unit: Tx | undefined;
    const result = await this.db.transaction().execute((tx) => {
      unit = tx;
      return work(tx);
    });
    const hooks = unit === undefined ? undefined : this.#afterCommit.get(unit);
    for (const hook of hooks ?? []) hook();
    return result;
  }

  /** Runs `hook` after `tx` commits; never when it rolls back. */
  afterCommit(tx: Tx, hook: () => void): void {
    const hooks = this.#afterCommit.get(tx);
    if (hooks === undefined) this.#afterCommit.set(tx, [hook]);
    else hooks.push(hook);
  }

  /** Applies every pending migration; safe when several processes start at once. */
  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const cause = error instanceof Error ? error.message : JSON.stringify(error);
      throw new Error(`migration failed: ${cause}`, { cause: error });
    }
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  /** Resolves when the database answers a trivial query. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** True when the error is a unique-constraint violation on either database. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
