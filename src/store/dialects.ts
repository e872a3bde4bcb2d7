import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Checkpointer } from './checkpointer.js';
import { statementName } from './statement-names.js';
import { WalSync } from './wal-sync.js';
import {
  CompiledQuery,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type SqliteDatabase as KyselySqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
} from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** SQLite takes the write lock at BEGIN, so two processes never deadlock upgrading a read lock. */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class CashgateSqliteDialect extends SqliteDialect {
  constructor(private readonly sqliteConfig: SqliteDialectConfig) {
    super(sqliteConfig);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.sqliteConfig);
  }
}

/** The reader: every query waits for the WAL flush in progress, if any (see WalSync). */
class DurableReadsSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly walSync: WalSync,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    return {
      executeQuery: (query) => this.walSync.whenSynced(() => connection.executeQuery(query)),
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }
}

class DurableReadsSqliteDialect extends SqliteDialect {
  constructor(
    private readonly sqliteConfig: SqliteDialectConfig,
    private readonly walSync: WalSync,
  ) {
    super(sqliteConfig);
  }

  override createDriver(): Driver {
    return new DurableReadsSqliteDriver(this.sqliteConfig, this.walSync);
  }
}

const SQLITE_FILE_NAME = 'cashgate.sqlite';

/** PostgreSQL ends a session's transaction that stays idle this long (see `postgresDialect`). */
const IDLE_IN_TRANSACTION_MS = 30_000;

/** How many distinct statements a connection keeps prepared (the queries of the whole service fit). */
const PREPARED_STATEMENTS = 1_000;

/**
 * The connection as Kysely sees it, keeping each statement prepared after its first use: the same
 * SQL text (Kysely compiles a query to the same text every time; values are parameters) is not
 * parsed and planned again per request. Least recently used statements are let go beyond the limit;
 * SQLite re-prepares a kept statement by itself when the schema changes.
 */
function keepingStatementsPrepared(database: SqliteDatabase.Database): KyselySqliteDatabase {
  const prepared = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let statement = prepared.get(sql);
      if (statement === undefined) statement = database.prepare(sql);
      else prepared.delete(sql);
      prepared.set(sql, statement);
      if (prepared.size > PREPARED_STATEMENTS) prepared.delete(prepared.keys().next().value as string);
      return statement;
    },
  };
}

/**
 * The embedded database: WAL for concurrent readers; every commit durable before anyone is told of
 * it, as synchronous=FULL makes it, but flushed off the event loop (WalSync: the writer runs with
 * synchronous=NORMAL and the store flushes the WAL itself after each group commit). Two
 * connections: the writer, which runs the group commits, and a read-only reader, which sees durable
 * commits only and does not wait while a commit is being prepared. Checkpoints run on a thread of
 * their own (Checkpointer).
 */
export function sqliteDialects(
  dataDir: string,
  onCheckpointError: (error: Error) => void,
): { writer: Dialect; reader: Dialect; walSync: WalSync; checkpointer: Checkpointer } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, SQLITE_FILE_NAME);
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  // Checkpoints run on a thread of their own (Checkpointer), not inside the writer's COMMIT.
  database.pragma('wal_autocheckpoint = 0');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const readOnly = new SqliteDatabase(file, { readonly: true });
  readOnly.pragma('busy_timeout = 5000');
  const walSync = new WalSync(`${file}-wal`);
  return {
    writer: new CashgateSqliteDialect({ database: keepingStatementsPrepared(database) }),
    reader: new DurableReadsSqliteDialect({ database: keepingStatementsPrepared(readOnly) }, walSync),
    walSync,
    checkpointer: new Checkpointer(file, onCheckpointError),
  };
}

const INT8_OID = 20;

type QueryCall = (...args: unknown[]) => unknown;

/**
 * Sends the statements that have a name (statement-names.ts) as named ones: the connection parses
 * and plans each once, then only binds and executes it. Kysely calls `query(text, values)`.
 */
function preparingNamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as QueryCall;
  (client as unknown as { query: QueryCall }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && Array.isArray(values) ? statementName(text) : undefined;
    return name === undefined ? query(...args) : query({ name, text, values });
  };
}

/** bigint columns hold milliseconds and minor units: parse them as exact JS numbers, refusing any that would lose precision. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${text} exceeds the safe integer range`);
  return value;
}

/**
 * PostgreSQL through a pool. An idle connection that breaks (a database restart, a network cut) is
 * reported to `onIdleError` and replaced on next use, instead of crashing the process.
 */
export function postgresDialect(
  databaseUrl: string,
  onIdleError: (error: Error) => void,
  maxConnections = 16,
): { dialect: Dialect; pool: pg.Pool } {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, parseInt8);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: maxConnections,
    types,
    // A unit of work never waits on anything but the database, so a transaction idle this long
    // belongs to a node that froze or lost its network: the server ends it and lets go of its row
    // locks instead of keeping them until the connection is found dead (TCP keepalive: hours).
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    keepAlive: true,
  });
  pool.on('error', onIdleError);
  pool.on('connect', preparingNamedStatements);
  return { dialect: new PostgresDialect({ pool }), pool };
}
