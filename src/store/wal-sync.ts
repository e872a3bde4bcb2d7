import { closeSync, fdatasync, fstatSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Makes SQLite's commits durable off the event loop, with the guarantee synchronous=FULL gives.
 *
 * The writer runs with synchronous=NORMAL: its COMMIT writes the transaction's frames to the WAL
 * without waiting for the disk. Cashgate then flushes the WAL itself (fdatasync, on libuv's thread
 * pool, so the event loop goes on parsing, checking and preparing the next requests meanwhile) and
 * answers nobody, runs no after-commit hook, and commits no later group until the flush is done.
 * With FULL, SQLite does the same flush inside COMMIT, on the event loop.
 *
 * What a reader could see differently: under FULL a commit becomes visible only once it is on disk;
 * here it is visible from COMMIT until the flush ends. So reads on this process's reader wait for
 * the flush in progress (`whenSynced`), and are run the moment it ends, before any later commit:
 * nothing read was not yet durable. At most one group is ever committed and not yet flushed.
 *
 * A checkpoint (copying the WAL into the database file) stays SQLite's: in NORMAL it flushes the
 * WAL before and the database after, as in FULL. A new WAL file's directory entry is flushed when
 * it is first seen, as SQLite would on its first sync.
 */
export class WalSync {
  #fd: number | undefined;
  /** Set while a flush runs: the reads waiting for it, run when it ends. */
  #waiting: (() => void)[] | undefined;
  /** Flushes begun since the store opened (each covers one group commit). */
  flushes = 0;

  constructor(private readonly walPath: string) {}

  /** Flushes everything written to the WAL so far; reads wait until it is done. */
  sync(): Promise<void> {
    const fd = this.#walFd();
    this.flushes += 1;
    const waiting: (() => void)[] = [];
    this.#waiting = waiting;
    return new Promise((resolve, reject) => {
      fdatasync(fd, (error) => {
        this.#waiting = undefined;
        // The reads that waited run now, before anything later can commit.
        for (const read of waiting) read();
        if (error === null) resolve();
        else reject(error);
      });
    });
  }

  /** Runs `read` now, or, while a flush is in progress, the moment it ends. */
  whenSynced<T>(read: () => Promise<T>): Promise<T> {
    const waiting = this.#waiting;
    if (waiting === undefined) return read();
    return new Promise<T>((resolve, reject) => {
      waiting.push(() => {
        try {
          read().then(resolve, reject);
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
  }

  /** The WAL's descriptor, opened again if SQLite replaced the file (a new WAL after the last close). */
  #walFd(): number {
    if (this.#fd !== undefined && fstatSync(this.#fd).nlink > 0) return this.#fd;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = openSync(this.walPath, 'r+');
    // A WAL file that is new must survive a power cut by name too.
    const directory = openSync(dirname(this.walPath), 'r');
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
    return this.#fd;
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}
