import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What SQLite's `PRAGMA wal_checkpoint` answers: frames in the WAL, and how many of them are in the database file. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The thread's code: its own connection to the database, which copies the WAL into the database
 * file on request (a PASSIVE checkpoint: it never takes the write lock, so the writer goes on).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
parentPort.on('message', () => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ result });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
});
`;

/** A checkpoint is begun after this many group commits (each writes a group's pages to the WAL). */
const COMMITS_PER_CHECKPOINT = 4;

/** Past this many frames in the WAL (about 16 MB of 4 KiB pages), the next group waits for a checkpoint. */
const WAL_FRAMES_BEHIND = 4_000;

/**
 * Moves SQLite's checkpoints off the event loop. With its automatic checkpoint, SQLite copies the
 * WAL into the database file inside a COMMIT every 1,000 pages, with two flushes to disk, while the
 * event loop waits: under load that was about a sixth of the loop's time. The writer runs with
 * `wal_autocheckpoint=0` instead, and a worker thread with its own connection checkpoints every few
 * group commits while the writer goes on. A checkpoint that finds every frame copied when the next
 * group commits lets SQLite start the WAL over; under a steady load the copying may never quite
 * catch up, so once the WAL has grown past WAL_FRAMES_BEHIND frames the next group waits (off the
 * event loop) for one checkpoint with no writer beside it, and the WAL starts over.
 *
 * Durability is SQLite's own: a checkpoint flushes the WAL before it copies, and the database
 * file after (`synchronous=NORMAL`), exactly as the automatic one does.
 */
export class Checkpointer {
  #worker: Worker | undefined;
  #running: Promise<void> | undefined;
  #waiting: ((reply: { result?: CheckpointResult; error?: string }) => void) | undefined;
  #commitsSince = 0;
  /** What the last checkpoint found. */
  last: CheckpointResult = { busy: 0, log: 0, checkpointed: 0 };
  /** Checkpoints run, and those the writer waited for. */
  readonly stats = { checkpoints: 0, waited: 0 };

  constructor(
    private readonly file: string,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Told after each group commit: begins a checkpoint every few commits, unless one runs. */
  committed(): void {
    this.#commitsSince += 1;
    if (this.#commitsSince >= COMMITS_PER_CHECKPOINT && this.#running === undefined) void this.#start();
  }

  /**
   * Before a group begins: when the WAL has grown too long, waits for the checkpoint that runs,
   * then runs one with no writer beside it, so that the group's commit starts the WAL over.
   */
  async beforeGroup(): Promise<void> {
    if (this.last.log < WAL_FRAMES_BEHIND) return;
    this.stats.waited += 1;
    // One checkpoint at a time: the thread answers one request at a time, in one reply slot.
    while (this.#running !== undefined) await this.#running;
    await this.#start();
  }

  #start(): Promise<void> {
    this.#commitsSince = 0;
    const running = this.#checkpoint()
      .then((result) => {
        this.last = result;
      })
      .catch((error: unknown) => {
        // A checkpoint that failed leaves the WAL as it was: the next one copies it.
        this.last = { busy: 1, log: 0, checkpointed: 0 };
        this.onError(error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        if (this.#running === running) this.#running = undefined;
      });
    this.#running = running;
    return running;
  }

  #checkpoint(): Promise<CheckpointResult> {
    this.stats.checkpoints += 1;
    const worker = (this.#worker ??= this.#spawn());
    return new Promise((resolve, reject) => {
      this.#waiting = (reply) => {
        this.#waiting = undefined;
        worker.unref();
        if (reply.result !== undefined) resolve(reply.result);
        else reject(new Error(`checkpoint failed: ${reply.error ?? 'the checkpoint thread stopped'}`));
      };
      // A checkpoint in progress keeps the process alive (a CLI command waits for it); an idle thread does not.
      worker.ref();
      worker.postMessage('checkpoint');
    });
  }

  #spawn(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.file, driver } });
    worker.unref();
    worker.on('message', (reply: { result?: CheckpointResult; error?: string }) => this.#waiting?.(reply));
    worker.on('error', (error) => this.#waiting?.({ error: error.message }));
    worker.on('exit', () => {
      this.#worker = undefined;
      this.#waiting?.({});
    });
    return worker;
  }

  /** Waits for the checkpoint that runs, then ends the thread. */
  async close(): Promise<void> {
    await this.#running;
    await this.#worker?.terminate();
    this.#worker = undefined;
  }
}
