import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Gauge, type Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { leasesFreedCounter, type LeaseFreeReason, type LeaseKind } from './leases.js';
import * as q from './queries.js';

/** How long a node that ended stays listed before its row is removed. */
const ENDED_KEPT_MS = 7 * 86_400_000;
/** Every this many heartbeats, leases still held by nodes that ended are looked for (and freed). */
const SWEEP_EVERY = 5;

/**
 * Who this process is among the nodes sharing a database: a fresh id at every start, and a new one
 * when a node that was declared dead (a long pause) rejoins. Every lease is taken in the name of
 * the id current at that moment; the modules that take leases read it here each time.
 */
export class NodeIdentity {
  #id = NodeIdentity.newId();

  static newId(): string {
    return `node_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  }

  get id(): string {
    return this.#id;
  }

  /** A new id (the old one was declared dead); returns the old one. */
  renew(): string {
    const old = this.#id;
    this.#id = NodeIdentity.newId();
    return old;
  }
}

export interface NodeLivenessOptions {
  /** How often this node writes its heartbeat and looks for dead nodes (NODE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** A node whose heartbeat is older than this is dead (NODE_DEAD_AFTER_MS). */
  deadAfterMs: number;
  version: string;
}

export interface NodeStart {
  /** 'serve' or 'worker'. */
  role: string;
  /**
   * True when this process is known to be the only node on its database (SQLite: the data directory
   * is locked), so every other node still marked alive died with its process and is freed at start.
   */
  soleNode: boolean;
}

/**
 * Node liveness: this process's heartbeat row in `nodes`, and the one mechanism that frees leases
 * early. Every heartbeat, each node also looks for alive nodes whose heartbeat is older than the
 * dead limit; in one unit of work it declares them dead and frees every lease they hold, of every
 * registered kind, then wakes this node's workers to take the work up. A node that finds itself
 * declared dead (its heartbeat write matches no alive row) frees what it may still have taken under
 * the old id and rejoins under a new one; what it was doing under the old leases records nothing,
 * because every write that records an outcome checks its lease. A clean stop releases this node's
 * leases and marks it gone.
 */
export class NodeLiveness {
  readonly #kinds: LeaseKind[] = [];
  readonly #listeners: (() => void)[] = [];
  readonly #freed: Counter<'kind' | 'reason'> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  #ticks = 0;
  #started = 0;
  #role = 'serve';
  #stopped = false;

  constructor(
    private readonly deps: { store: Store; clock: Clock; logger: Logger; identity: NodeIdentity; registry?: Registry },
    private readonly options: NodeLivenessOptions,
  ) {
    const { registry, store, clock } = deps;
    if (registry === undefined) return;
    this.#freed = leasesFreedCounter(registry);
    new Gauge({
      name: 'cashgate_nodes_alive',
      help: 'Nodes on this database whose heartbeat is fresh (younger than NODE_DEAD_AFTER_MS)',
      registers: [registry],
      async collect() {
        this.set(await q.aliveNodeCount(store.read, clock.now() - options.deadAfterMs));
      },
    });
  }

  get id(): string {
    return this.deps.identity.id;
  }

  /** Adds the leases of a module: freed with this node's dead peers, released when it stops. */
  register(...kinds: (LeaseKind | undefined)[]): void {
    for (const kind of kinds) if (kind !== undefined) this.#kinds.push(kind);
  }

  /** Calls `listener` after leases were freed (to wake the workers that take them up). */
  onFreed(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Joins: writes this node's row, frees what dead predecessors held, and starts the heartbeat. */
  async start(how: NodeStart): Promise<void> {
    const { store, clock, logger } = this.deps;
    this.#role = how.role;
    this.#started = clock.now();
    await store.transact(async (tx) => {
      await q.insertNode(tx, this.#row(this.#started));
      await q.pruneNodes(tx, this.#started - ENDED_KEPT_MS);
    });
    // On a database only this process can use, every other node marked alive died with its process.
    if (how.soleNode) await this.#reap(null);
    else await this.#reap(this.#started - this.options.deadAfterMs);
    await this.#sweep();
    logger.info({ node: this.id, role: how.role }, 'node joined');
    this.#schedule();
  }

  #row(now: number): q.NodeRow {
    return {
      id: this.id,
      host: hostname().slice(0, 255),
      pid: process.pid,
      role: this.#role,
      version: this.options.version,
      started_at: now,
      heartbeat_at: now,
      state: 'alive',
      ended_at: null,
    };
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#beat()
        .catch((error: unknown) => this.deps.logger.error({ err: error, node: this.id }, 'node heartbeat failed'))
        .finally(() => this.#schedule());
    }, this.options.heartbeatMs);
    this.#timer.unref();
  }

  /**
   * One heartbeat: writes this node's, rejoins under a new id if it was declared dead meanwhile,
   * then declares dead (and frees the leases of) the nodes whose heartbeat stopped.
   */
  async #beat(): Promise<void> {
    const { store, clock, logger, identity } = this.deps;
    const now = clock.now();
    if (!(await store.transact((tx) => q.beat(tx, this.id, now)))) {
      const old = identity.renew();
      logger.warn(
        { node: old, newNode: this.id },
        'this node was declared dead (its heartbeat stopped for longer than NODE_DEAD_AFTER_MS); it rejoins under ' +
          'a new id and records nothing under its old leases',
      );
      await store.transact(async (tx) => {
        await q.insertNode(tx, this.#row(now));
        await q.endNode(tx, old, 'dead', now);
        await this.#free(tx, [old], now, 'dead');
      });
      this.#notify();
    }
    await this.#reap(now - this.options.deadAfterMs);
    this.#ticks += 1;
    if (this.#ticks % SWEEP_EVERY === 0) await this.#sweep();
  }

  /** Declares dead the silent nodes (every other alive one when `cutoff` is null) and frees their leases. */
  async #reap(cutoff: number | null): Promise<void> {
    const { store, clock, logger } = this.deps;
    // A look on the read side first: a healthy cluster's heartbeat writes nothing more.
    if (cutoff !== null && !(await q.anySilentNode(store.read, cutoff, this.id))) return;
    const now = clock.now();
    const { dead, freed } = await store.transact(async (tx) => {
      const dead = await q.declareDead(tx, cutoff, this.id, now);
      return { dead, freed: dead.length === 0 ? 0 : await this.#free(tx, dead, now, 'dead') };
    });
    if (dead.length === 0) return;
    logger.warn({ nodes: dead, freed }, 'declared dead the nodes whose heartbeat stopped, and freed their leases');
    this.#notify();
  }

  /** Frees leases still held by nodes that ended (taken under an old id just before it was declared dead). */
  async #sweep(): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const owners = [...(await this.held()).keys()].filter((owner) => owner !== this.id);
    const ended = await q.endedNodes(store.read, owners);
    if (ended.length === 0) return;
    const freed = await store.transact((tx) => this.#free(tx, ended, now, 'dead'));
    if (freed > 0) {
      this.deps.logger.warn({ nodes: ended, freed }, 'freed leases still held by nodes that ended');
      this.#notify();
    }
  }

  async #free(tx: Parameters<LeaseKind['free']>[0], owners: string[], now: number, reason: LeaseFreeReason) {
    let total = 0;
    for (const kind of this.#kinds) {
      const freed = await kind.free(tx, owners, now);
      // Counted even if the unit later rolls back: a rolled-back reap is retried at the next heartbeat.
      if (freed > 0) this.#freed?.inc({ kind: kind.kind, reason }, freed);
      total += freed;
    }
    return total;
  }

  #notify(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.deps.logger.error({ err: error }, 'waking the workers after freed leases failed');
      }
    }
  }

  /** Leases held now, by node id and kind (the admin API's view). */
  async held(): Promise<Map<string, Record<string, number>>> {
    const now = this.deps.clock.now();
    const held = new Map<string, Record<string, number>>();
    for (const kind of this.#kinds) {
      for (const [owner, count] of await kind.held(this.deps.store.read, now)) {
        const entry = held.get(owner) ?? {};
        entry[kind.kind] = count;
        held.set(owner, entry);
      }
    }
    return held;
  }

  /** The dead limit, so that readers can tell a silent node from a live one. */
  get deadAfterMs(): number {
    return this.options.deadAfterMs;
  }

  /**
   * A clean stop, once this node's work has finished or been abandoned: every lease it still holds
   * is released (free for another node at once) and the node is marked gone, in one unit of work.
   */
  async stop(): Promise<void> {
    if (this.#stopped || this.#started === 0) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#tick;
    const { store, clock, logger } = this.deps;
    const now = clock.now();
    const released = await store.transact(async (tx) => {
      const released = await this.#free(tx, [this.id], now, 'released');
      await q.endNode(tx, this.id, 'gone', now);
      return released;
    });
    logger.info({ node: this.id, released, ranMs: now - this.#started }, 'node left: its leases are released');
  }
}
