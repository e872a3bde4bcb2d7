import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { leasesFreedCounter, type LeaseKind } from '../nodes/leases.js';
import { RailOutcomeUnknown, RailRefusal, type Rail, type RailOrder, type RailStarted } from '../rails/rails.js';
import { fromDb } from '../money.js';
import type { RailTaskAction } from '../store/schema.js';
import type { Store, Tx } from '../store/store.js';
import { sharedDetails, withDetails } from './details.js';
import * as q from './queries.js';
import { INITIAL_STATUS } from './state-machine.js';

/** A hand-over this node holds the lease of. */
export interface LeasedTask {
  task: q.RailTaskRow;
  leaseToken: string;
}

export type HandOverOutcome =
  | {
      ok: true;
      channelOrderId: string;
      /** The order's details and create result once the rail's issued details were recorded in them. */
      recorded?: Pick<q.OrderRow, 'details' | 'create_result'>;
    }
  | { ok: false; error: unknown };

const LEASE_KIND = 'rail_hand_over';

/** Whether a failed attempt is tried again: not when the rail refused for good or may already have it. */
const retryable = (error: unknown) => !(error instanceof RailRefusal || error instanceof RailOutcomeUnknown);

export interface RailHandOverOptions {
  /** How long a node holds a hand-over before another node's worker may take it over. */
  leaseMs: number;
  /** Hand-overs one worker run takes, and works at once (default 16). */
  batch?: number;
}

/** The wait before the next attempt of a hand-over that failed: 1 s, doubling, at most 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(300_000, 1_000 * 2 ** Math.max(0, Math.min(attempts - 1, 20)));
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n', 1)[0] ?? text).slice(0, 500);
}

/**
 * The durable hand-over of orders to their rails. A hand-over is a row written in the order's own
 * unit of work (`plan`), leased at birth to the node that wrote it: so a crash between the commit
 * and the rail's answer loses nothing. That node works it right after the commit (`work`); a
 * worker on any node takes the hand-overs that are due (`runDue`): retries after a failure, and
 * leases that ran out because their node died. The rail is always given the hand-over's id as its
 * idempotency key, and told how many attempts came before, so a rail whose earlier answer was lost
 * asks its provider first instead of starting the order twice. Only the holder of the current
 * lease records an outcome.
 */
export class RailHandOver {
  readonly #attempts: Counter<'rail' | 'outcome'> | undefined;
  readonly #freed: Counter<'kind' | 'reason'> | undefined;
  /** Hand-overs one `runDue` takes at most. */
  readonly batch: number;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      /** The rail that carries an order. */
      railOf(order: q.OrderRow): Rail;
      /** The create result of an order as its kind makes it (kept for identical repeats). */
      createResultOf(order: q.OrderRow): string;
      /** This node: every lease is taken in its current id. */
      node: { readonly id: string };
      registry?: Registry;
    },
    private readonly options: RailHandOverOptions,
  ) {
    this.batch = options.batch ?? 16;
    const { registry, store, clock } = deps;
    if (registry === undefined) return;
    this.#freed = leasesFreedCounter(registry);
    this.#attempts = new Counter({
      name: 'cashgate_rail_handover_attempts_total',
      help: 'Attempts to hand an order to its rail, by rail and outcome (taken, failed)',
      labelNames: ['rail', 'outcome'],
      registers: [registry],
    });
    let stats: Promise<{ count: number; oldest: number | null }> | undefined;
    const read = () =>
      (stats ??= q.unsettledRailTasks(store.read).finally(() => setImmediate(() => (stats = undefined))));
    new Gauge({
      name: 'cashgate_rail_handovers_unsettled',
      help: 'Hand-overs of orders to their rails not yet taken by the rail (being worked or waiting to retry)',
      registers: [registry],
      async collect() {
        this.set((await read()).count);
      },
    });
    new Gauge({
      name: 'cashgate_rail_handover_oldest_age_seconds',
      help: 'Age of the oldest hand-over not yet taken by its rail (0 when none waits)',
      registers: [registry],
      async collect() {
        const { oldest } = await read();
        this.set(oldest === null ? 0 : Math.max(0, (clock.now() - oldest) / 1000));
      },
    });
  }

  /**
   * Writes the hand-over of `order` in the unit of work `tx`, leased to this node: the caller works
   * it with `work` once the unit has committed. `restart` is the how-many-th restart it is.
   */
  async plan(tx: Tx, order: Pick<q.OrderRow, 'id'>, action: RailTaskAction, restart?: number): Promise<LeasedTask> {
    const now = this.deps.clock.now();
    const leaseToken = randomUUID();
    const task: q.RailTaskRow = {
      id: action === 'start' ? `${order.id}.start` : `${order.id}.restart.${restart ?? 1}`,
      order_id: order.id,
      action,
      state: 'working',
      attempts: 1,
      next_attempt_at: now + this.options.leaseMs,
      lease_token: leaseToken,
      lease_owner: this.deps.node.id,
      last_error: null,
      created_at: now,
      updated_at: now,
    };
    await q.insertRailTask(tx, task);
    return { task, leaseToken };
  }

  /** The hand-overs' leases, freed when the node working them dies or stops. */
  readonly leases: LeaseKind = {
    kind: LEASE_KIND,
    free: (tx, owners, now) => q.freeRailTasks(tx, owners, now),
    held: (db) => q.railTaskLeases(db),
  };

  /** Whether the merchant's create waits for the order's rail to start it (see `Rail.startsAfterAnswer`). */
  answerWaitsFor(order: q.OrderRow): boolean {
    return this.deps.railOf(order).startsAfterAnswer !== true;
  }

  /** How long at most the create waits for the rail's first attempt (see `Rail.answerWaitMs`); undefined: to its end. */
  answerWaitMs(order: q.OrderRow): number | undefined {
    return this.deps.railOf(order).answerWaitMs;
  }

  /**
   * The first attempt of a simulator's hand-over (`Rail.local`: it calls nothing outside the
   * process), made inside the order's own unit of work `tx`, so the order and its rail's answer are
   * one commit: the hand-over is written settled, or, when the attempt failed, waiting for its retry
   * as after any failed first attempt. Undefined for every other rail: its hand-over is `plan`ned
   * in the unit and worked after the commit.
   */
  async startInUnit(tx: Tx, order: q.OrderRow): Promise<HandOverOutcome | undefined> {
    const rail = this.deps.railOf(order);
    if (rail.local !== true) return undefined;
    const now = this.deps.clock.now();
    const task: q.RailTaskRow = {
      id: `${order.id}.start`,
      order_id: order.id,
      action: 'start',
      state: 'working',
      attempts: 1,
      next_attempt_at: null,
      lease_token: null,
      lease_owner: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    };
    const { outcome, started } = await this.#attempt(rail, task, order);
    await q.insertRailTask(tx, { ...task, ...this.#settled(task, outcome, now) });
    if (outcome.ok) await this.#recordTaken(tx, task, order.id, outcome, started);
    this.deps.store.afterCommit(tx, () => this.#attempted(rail, task, order, outcome));
    return outcome;
  }

  /**
   * One attempt of a leased hand-over: the rail is asked (outside any transaction), then what it
   * answered is recorded in one unit of work: the rail's reference on the order and the hand-over
   * settled, or the next attempt's time. A start that fails is retried later by a worker; a
   * restart that fails is not (the payer may ask again), and is not counted against the restart limit.
   */
  async work(leased: LeasedTask, order: q.OrderRow): Promise<HandOverOutcome> {
    const { task, leaseToken } = leased;
    const rail = this.deps.railOf(order);
    const { outcome, started } = await this.#attempt(rail, task, order);
    const now = this.deps.clock.now();
    const recorded = await this.deps.store.transact(async (tx) => {
      const kept = await q.finishRailTask(tx, task.id, leaseToken, this.#settled(task, outcome, now));
      if (!kept) return false;
      if (outcome.ok) await this.#recordTaken(tx, task, order.id, outcome, started);
      else if (task.action === 'restart' && !(outcome.error instanceof RailOutcomeUnknown))
        await this.#uncountRestart(tx, order.id);
      return true;
    });
    this.#attempted(rail, task, order, outcome);
    if (!recorded) {
      this.deps.logger.warn(
        { orderId: order.id, handOver: task.id },
        'the lease of the hand-over ran out before the rail answered; the node holding it now records the outcome',
      );
    }
    return outcome;
  }

  /** Asks the rail to start the order, with the hand-over's idempotency key. */
  async #attempt(
    rail: Rail,
    task: q.RailTaskRow,
    order: q.OrderRow,
  ): Promise<{ outcome: HandOverOutcome; started?: RailStarted }> {
    const railOrder: RailOrder = {
      orderId: order.id,
      railRef: order.rail_ref,
      createdAt: order.created_at,
      idempotencyKey: task.id,
      earlierAttempts: task.attempts - 1,
      area: order.area,
      amount: fromDb(order.amount),
      externalOrderId: order.external_order_id,
      remark: order.remark,
      details: order.details,
      expiresAt: order.cashier_expire_at,
    };
    try {
      const started = await rail.start(railOrder);
      return { outcome: { ok: true, channelOrderId: started.channelOrderId }, started };
    } catch (error) {
      return { outcome: { ok: false, error } };
    }
  }

  /** The hand-over's state after an attempt: settled, waiting for its retry, or failed for good. */
  #settled(
    task: q.RailTaskRow,
    outcome: HandOverOutcome,
    now: number,
  ): Pick<q.RailTaskRow, 'state' | 'next_attempt_at' | 'last_error' | 'updated_at'> {
    if (outcome.ok) return { state: 'done', next_attempt_at: null, last_error: null, updated_at: now };
    const retry = task.action === 'start' && retryable(outcome.error);
    return {
      state: retry ? 'pending' : 'failed',
      next_attempt_at: retry ? now + retryDelayMs(task.attempts) : null,
      last_error: errorText(outcome.error),
      updated_at: now,
    };
  }

  /** Records what the rail answered when it took the order: its reference, what it issued, its own rows. */
  async #recordTaken(
    tx: Tx,
    task: q.RailTaskRow,
    orderId: string,
    outcome: Extract<HandOverOutcome, { ok: true }>,
    started: RailStarted | undefined,
  ): Promise<void> {
    // A start keeps the first reference; a restart's new prompt has its own.
    await q.setChannelOrderId(tx, orderId, outcome.channelOrderId, task.action === 'start');
    const issued = started?.details;
    if (issued !== undefined && Object.keys(issued).length > 0) {
      outcome.recorded = await this.recordIssued(tx, orderId, issued, outcome.channelOrderId);
    }
    await started?.record?.(tx);
  }

  /** Counts an attempt once its outcome is recorded, and logs one that failed. */
  #attempted(rail: Rail, task: q.RailTaskRow, order: q.OrderRow, outcome: HandOverOutcome): void {
    this.#attempts?.inc({ rail: rail.name, outcome: outcome.ok ? 'taken' : 'failed' });
    if (outcome.ok) return;
    this.deps.logger.error(
      { err: outcome.error, orderId: order.id, rail: rail.name, handOver: task.id, attempt: task.attempts },
      retryable(outcome.error) && task.action === 'start'
        ? 'the rail did not take the order; the hand-over is retried'
        : 'the rail did not take the order; the hand-over ends',
    );
  }

  /**
   * Merges what a rail issued for the merchant (a PSP's Pix code, an issuer's linha digitável) into
   * the order's details and into the create result kept for identical repeats, in the unit of work `tx`.
   */
  async recordIssued(
    tx: Tx,
    orderId: string,
    issued: object,
    channelOrderId?: string,
  ): Promise<Pick<q.OrderRow, 'details' | 'create_result'> | undefined> {
    const current = await q.lockOrder(tx, this.deps.store.dialect, orderId);
    if (current === undefined) return undefined;
    const details = withDetails(current.details, issued);
    const recorded = {
      details,
      create_result: this.deps.createResultOf({
        ...current,
        details,
        channel_order_id: current.channel_order_id ?? channelOrderId ?? null,
      }),
    };
    await q.updateOrder(tx, orderId, recorded);
    return recorded;
  }

  /** A restart that did not reach the payer does not count against the limit. */
  async #uncountRestart(tx: Tx, orderId: string): Promise<void> {
    const current = await q.lockOrder(tx, this.deps.store.dialect, orderId);
    if (current === undefined) return;
    const restarts = sharedDetails(current).railRestarts ?? 1;
    await q.updateOrder(tx, orderId, {
      details: withDetails(current.details, { railRestarts: Math.max(0, restarts - 1) }),
    });
  }

  /**
   * Takes the hand-overs that are due (retries, and leases that ran out) and works them; returns
   * how many it took. A hand-over whose order no longer waits in its first status (expired or
   * failed meanwhile) is settled without asking the rail.
   */
  async runDue(): Promise<number> {
    const limit = this.batch;
    const now = this.deps.clock.now();
    // A look on the read side first: an idle node's worker writes nothing.
    if (!(await q.anyRailTaskDue(this.deps.store.read, now))) return 0;
    const leaseToken = randomUUID();
    const owner = this.deps.node.id;
    const claimed = await this.deps.store.transact(async (tx) => {
      const due = await q.selectDueRailTasks(tx, this.deps.store.dialect, now, limit);
      const leased = await q.leaseRailTasks(
        tx,
        due.map((t) => t.id),
        { token: leaseToken, owner, until: now + this.options.leaseMs, now },
      );
      // This node was declared dead and has not rejoined yet: it takes nothing.
      if (leased < due.length) return [];
      const expired = due.filter((t) => t.state === 'working').length;
      if (expired > 0) this.#freed?.inc({ kind: LEASE_KIND, reason: 'expired' }, expired);
      const orders = await q.findOrders(
        tx,
        due.map((t) => t.order_id),
      );
      return due.map((task) => ({
        leased: { task: { ...task, attempts: task.attempts + 1, lease_token: leaseToken }, leaseToken },
        order: orders.find((o) => o.id === task.order_id),
      }));
    });
    await Promise.all(
      claimed.map(async ({ leased, order }) => {
        if (order === undefined || order.status !== INITIAL_STATUS[order.kind]) {
          await this.deps.store.transact((tx) =>
            q.finishRailTask(tx, leased.task.id, leaseToken, {
              state: 'done',
              next_attempt_at: null,
              last_error: 'the order no longer waits for its rail',
              updated_at: this.deps.clock.now(),
            }),
          );
          return;
        }
        await this.work(leased, order);
      }),
    );
    return claimed.length;
  }
}
