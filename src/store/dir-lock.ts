import SqliteDatabase from 'better-sqlite3';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** A second node was started on a SQLite data directory that a running node holds. */
export class DataDirInUseError extends Error {
  readonly code = 'data_dir_in_use';

  constructor(dataDir: string, holder: string | undefined) {
    super(
      `the data directory ${dataDir} is in use by another Cashgate node${holder === undefined ? '' : ` (${holder})`}: ` +
        'on SQLite one data directory serves one node at a time. Stop that node first, give this one its own ' +
        'CASHGATE_DATA_DIR, or run several nodes on PostgreSQL (DATABASE_URL).',
    );
    this.name = 'DataDirInUseError';
  }
}

const LOCK_FILE = 'cashgate.lock';
const HOLDER_FILE = 'cashgate.lock.holder';

/**
 * Takes the data directory for this process alone, for as long as it runs: an exclusive SQLite lock
 * on `cashgate.lock` (an operating-system file lock, so the lock ends with the process however it
 * ends: a SIGKILL or a power cut leaves nothing to clean up). A second node on the directory gets a
 * `DataDirInUseError` at once. One-off CLI commands do not take it: they may run beside the node.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const lock = new SqliteDatabase(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock, and locking_mode keeps it until the connection closes.
    lock.exec('create table if not exists holder (pid integer, host text, since integer)');
    lock.exec('begin exclusive; delete from holder; commit');
  } catch (error) {
    lock.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
      let holder: string | undefined;
      try {
        holder = readFileSync(join(dataDir, HOLDER_FILE), 'utf8').trim();
      } catch {
        holder = undefined;
      }
      throw new DataDirInUseError(dataDir, holder);
    }
    throw error;
  }
  writeFileSync(
    join(dataDir, HOLDER_FILE),
    `pid ${process.pid} on ${hostname()}, since ${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}\n`,
  );
  return { release: () => lock.close() };
}
