/**
 * Deposit addresses derived on a thread of their own, so the pool's refills (a secp256k1
 * multiplication per address) take no time from the event loop that answers requests. This file
 * is both the thread's code and the main thread's client of it.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DepositAddressDeriver, type AddressFamily } from '../rails/chain/derivation.js';

interface Request {
  id: number;
  family: AddressFamily;
  xpub: string;
  indexes: readonly number[];
}

type Reply = { id: number; addresses: string[] } | { id: number; problem: string };

const THREAD_MARK = 'cashgate deposit address derivation';

/** An idle thread ends after this long; the next refill starts another. */
const IDLE_MS = 60_000;

if (!isMainThread && workerData === THREAD_MARK) {
  const derivers = new Map<string, DepositAddressDeriver>();
  parentPort?.on('message', (request: Request) => {
    let reply: Reply;
    try {
      const key = `${request.family}:${request.xpub}`;
      let deriver = derivers.get(key);
      if (deriver === undefined) {
        deriver = new DepositAddressDeriver(request.family, request.xpub);
        derivers.set(key, deriver);
      }
      const of = deriver;
      reply = { id: request.id, addresses: request.indexes.map((index) => of.address(index)) };
    } catch (error) {
      reply = { id: request.id, problem: error instanceof Error ? error.message : String(error) };
    }
    parentPort?.postMessage(reply);
  });
}

/**
 * Derives batches of addresses on the derivation thread, or, where it cannot run (the sources run
 * through a TypeScript loader, which worker threads do not inherit), on this thread one address per
 * turn of the event loop, so that requests run in between.
 */
export class AddressDerivation {
  #thread: Worker | undefined;
  #nextId = 1;
  readonly #waiting = new Map<number, { resolve(addresses: string[]): void; reject(error: Error): void }>();
  #idle: NodeJS.Timeout | undefined;
  /** Set once the thread failed to start or died: derive here from then on. */
  #unavailable = !import.meta.url.endsWith('.js');

  /** The addresses of `deriver` at `indexes`, in that order. */
  async derive(deriver: DepositAddressDeriver, indexes: readonly number[]): Promise<string[]> {
    const thread = this.#unavailable ? undefined : this.#threadOrNew();
    if (thread === undefined) {
      const addresses: string[] = [];
      for (const index of indexes) {
        await nextTurn();
        addresses.push(deriver.address(index));
      }
      return addresses;
    }
    clearTimeout(this.#idle);
    const id = this.#nextId++;
    const request: Request = { id, family: deriver.family, xpub: deriver.xpub, indexes };
    const addresses = await new Promise<string[]>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      thread.postMessage(request);
    });
    if (this.#waiting.size === 0) this.#idle = setTimeout(() => this.close(), IDLE_MS).unref();
    return addresses;
  }

  /** Ends the thread (a later derive starts another). */
  close(): void {
    clearTimeout(this.#idle);
    const thread = this.#thread;
    this.#thread = undefined;
    void thread?.terminate();
  }

  #threadOrNew(): Worker {
    if (this.#thread !== undefined) return this.#thread;
    const thread = new Worker(new URL(import.meta.url), { workerData: THREAD_MARK });
    // The thread never keeps the process alive: a process that is stopping does not wait for it.
    thread.unref();
    thread.on('message', (reply: Reply) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if ('problem' in reply) waiting?.reject(new Error(reply.problem));
      else waiting?.resolve(reply.addresses);
    });
    const failed = (error: Error) => {
      if (this.#thread === thread) this.#thread = undefined;
      this.#unavailable = true;
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    };
    thread.on('error', failed);
    thread.on('exit', (code) => {
      if (this.#thread === thread && code !== 0) failed(new Error(`the derivation thread exited with ${code}`));
      else if (this.#thread === thread) this.#thread = undefined;
    });
    this.#thread = thread;
    return thread;
  }
}
