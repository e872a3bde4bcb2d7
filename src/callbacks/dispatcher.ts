import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Clock } from '../clock.js';
import type { LeaseKind } from '../nodes/leases.js';
import { newId } from '../store/ids.js';
import type { Store, Tx } from '../store/store.js';
import type { CallbackMetrics } from './metrics.js';
import * as q from './queries.js';
import { nextRetryAt, type RetryPolicy } from './retry-policy.js';
import type { CallbackSender, DeliveryResult } from './delivery.js';

export interface DispatcherOptions {
  policy: RetryPolicy;
  /** Deliveries in flight in this process. */
  concurrency: number;
  /** Deliveries in flight in this process to one host, so one slow merchant cannot hold back the others. */
  concurrencyPerHost: number;
  /** How often to look for due events that no local commit announced (retries, other nodes). */
  pollIntervalMs: number;
  /** How long a claimed event stays this worker's; past it, another worker re-delivers (at-least-once). */
  leaseMs: number;
}

export interface DispatcherDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  sender: CallbackSender;
  metrics: CallbackMetrics;
  /** The secret of an access key, to sign with. */
  secretOf(accessKey: string): Promise<string | undefined>;
  /** This node: deliveries are leased in its current id. */
  node: { readonly id: string };
  /** Leases freed, counted here when a delivery whose lease ran out is taken over. */
  freed?: Counter<'kind' | 'reason'>;
}

const LEASE_KIND = 'callback_delivery';

interface Claimed {
  event: q.CallbackEventRow;
  leaseToken: string;
}

/** The first line of an error's text (TLS errors carry pages of internals). */
function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}

/**
 * Delivers outbox events: claims due rows in a short transaction (SKIP LOCKED on PostgreSQL, the
 * single writer on SQLite), sends outside any transaction, then records the attempt.
 */
export class CallbackDispatcher {
  readonly #inFlight = new Set<Promise<void>>();
  readonly #perHost = new Map<string, number>();
  #running = false;
  #loop: Promise<void> | undefined;
  #wakeUp: (() => void) | undefined;
  #woken = false;

  constructor(
    private readonly deps: DispatcherDeps,
    private readonly options: DispatcherOptions,
  ) {}

  /** The deliveries' leases, freed when the node delivering them dies or stops. */
  readonly leases: LeaseKind = {
    kind: LEASE_KIND,
    free: (tx, owners, now) => q.freeEventLeases(tx, owners, now),
    held: (db) => q.eventLeases(db),
  };

  /** Starts the delivery loop in this process. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops claiming, then waits for the deliveries in flight to be recorded. */
  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#loop;
    await Promise.all(this.#inFlight);
  }

  /** Looks for due events now instead of at the next poll. */
  wake(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  /**
   * Creates an event and delivers it at once (a manual re-trigger), whether or not the loop runs
   * here: the event is leased in the transaction that creates it, so no other worker takes it.
   */
  async createAndDeliver(
    create: (tx: Tx) => Promise<q.CallbackEventRow>,
  ): Promise<{ event: q.CallbackEventRow; attempt?: q.CallbackAttemptRow }> {
    const { event, claimed } = await this.deps.store.transact(async (tx) => {
      const created = await create(tx);
      return {
        event: created,
        claimed: created.state === 'pending' ? (await this.#lease(tx, [created]))[0] : undefined,
      };
    });
    if (claimed === undefined) return { event };
    const attempt = await this.#deliver(claimed);
    const recorded = await q.findEvent(this.deps.store.read, event.id);
    return { event: recorded ?? event, attempt };
  }

  async #run(): Promise<void> {
    while (this.#running) {
      this.#woken = false;
      try {
        const free = this.options.concurrency - this.#inFlight.size;
        if (free > 0) {
          for (const item of await this.#claim(free)) this.#track(this.#deliver(item).then(() => undefined));
        }
      } catch (error) {
        this.deps.logger.error({ err: error }, 'claiming callback events failed');
      }
      // A finished delivery, a local commit or stop() wakes the loop early; otherwise it polls.
      if (this.#idle()) await this.#sleep(this.options.pollIntervalMs);
    }
  }

  /** True when nothing asked for another look since the last claim (the flag changes across awaits). */
  #idle(): boolean {
    return !this.#woken && this.#running;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wakeUp = () => {
        this.#wakeUp = undefined;
        done();
      };
    });
  }

  #track(delivery: Promise<void>): void {
    const tracked = delivery
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'callback delivery failed unexpectedly'))
      .finally(() => {
        this.#inFlight.delete(tracked);
        this.wake();
      });
    this.#inFlight.add(tracked);
  }

  /**
   * Claims up to `limit` due events, passing over hosts that have their share in flight here.
   * An event whose lease ran out was cut short by a stopped worker: that attempt is recorded as
   * interrupted and the event is sent again. A retry that fell due after the window fails unsent.
   */
  #claim(limit: number): Promise<Claimed[]> {
    const now = this.deps.clock.now();
    const { policy, concurrencyPerHost, leaseMs } = this.options;
    const busy = [...this.#perHost].filter(([, count]) => count >= concurrencyPerHost).map(([host]) => host);
    return this.deps.store.transact(async (tx) => {
      // Only as many rows as there are free slots: each one read is locked until the claim commits.
      const due = await q.selectDueEvents(tx, this.deps.store.dialect, now, limit, busy);
      const chosen: q.CallbackEventRow[] = [];
      const late: string[] = [];
      const interrupted: q.CallbackAttemptRow[] = [];
      const counts = new Map(this.#perHost);
      for (const event of due) {
        const firstAt = event.first_attempt_at;
        if (
          event.state === 'pending' &&
          event.trigger === 'automatic' &&
          firstAt !== null &&
          now - firstAt > policy.windowMs
        ) {
          late.push(event.id);
          continue;
        }
        const host = event.target_host ?? '';
        const count = counts.get(host) ?? 0;
        if (chosen.length === limit || count >= concurrencyPerHost) continue;
        counts.set(host, count + 1);
        // A cut attempt counts as made (it may have reached the merchant); the event is sent again all the same.
        chosen.push(event.state === 'delivering' ? { ...event, attempts: event.attempts + 1 } : event);
        if (event.state === 'delivering') {
          const startedAt = (event.next_attempt_at ?? now) - leaseMs;
          interrupted.push(
            this.#attemptRow(event, startedAt, {
              outcome: 'interrupted',
              httpStatus: null,
              error: 'the worker delivering this callback stopped before recording a result; sent again',
              responseExcerpt: null,
              latencyMs: 0,
            }),
          );
          this.deps.logger.warn(
            { eventId: event.id },
            'a callback delivery was interrupted (its worker stopped); delivering it again',
          );
        }
      }
      await q.expireLateRetries(tx, late, now);
      const claimed = await this.#lease(tx, chosen);
      if (claimed.length === 0) return claimed;
      await q.insertAttempts(tx, interrupted);
      await q.countAttempts(
        tx,
        interrupted.map((a) => a.event_id),
      );
      if (interrupted.length > 0) this.deps.freed?.inc({ kind: LEASE_KIND, reason: 'expired' }, interrupted.length);
      return claimed;
    });
  }

  /** Leases `events` to this node; none when this node was declared dead and has not rejoined yet. */
  async #lease(tx: Tx, events: q.CallbackEventRow[]): Promise<Claimed[]> {
    const now = this.deps.clock.now();
    const token = newId('lease', 8);
    const leased = await q.leaseEvents(
      tx,
      events.map((e) => e.id),
      { token, owner: this.deps.node.id, until: now + this.options.leaseMs, now },
    );
    if (leased < events.length) return [];
    return events.map((event) => ({
      event: { ...event, first_attempt_at: event.first_attempt_at ?? now },
      leaseToken: token,
    }));
  }

  async #deliver({ event, leaseToken }: Claimed): Promise<q.CallbackAttemptRow> {
    const host = event.target_host ?? '';
    this.#perHost.set(host, (this.#perHost.get(host) ?? 0) + 1);
    try {
      const startedAt = this.deps.clock.now();
      return await this.#record(event, leaseToken, startedAt, await this.#send(event));
    } finally {
      const left = (this.#perHost.get(host) ?? 1) - 1;
      if (left === 0) this.#perHost.delete(host);
      else this.#perHost.set(host, left);
    }
  }

  /** One attempt; whatever goes wrong becomes a failed attempt, so the event never sticks. */
  async #send(event: q.CallbackEventRow): Promise<DeliveryResult> {
    const failed = (error: string): DeliveryResult => ({
      outcome: 'failed',
      httpStatus: null,
      error,
      responseExcerpt: null,
      latencyMs: 0,
    });
    let secretKey: string | undefined;
    try {
      secretKey = await this.deps.secretOf(event.access_key);
    } catch (error) {
      this.deps.logger.error({ err: error, eventId: event.id }, 'the secret that signs a callback could not be opened');
      return failed(
        `the secret of access key ${event.access_key} could not be opened (check CASHGATE_MASTER_KEY on this node)`,
      );
    }
    if (secretKey === undefined) return failed(`access key ${event.access_key} does not exist`);
    const result = await this.deps.sender.send({
      url: event.target_url ?? '',
      payload: event.payload,
      notifyId: event.notify_id,
      accessKey: event.access_key,
      secretKey,
    });
    return result.error === null ? result : { ...result, error: firstLine(result.error) };
  }

  #attemptRow(event: q.CallbackEventRow, startedAt: number, result: DeliveryResult): q.CallbackAttemptRow {
    return {
      id: newId('cba'),
      event_id: event.id,
      merchant_id: event.merchant_id,
      attempt_no: event.attempts + 1,
      url: event.target_url ?? '',
      started_at: startedAt,
      latency_ms: result.latencyMs,
      http_status: result.httpStatus,
      outcome: result.outcome,
      error: result.error,
      response_excerpt: result.responseExcerpt,
    };
  }

  async #record(
    event: q.CallbackEventRow,
    leaseToken: string,
    startedAt: number,
    result: DeliveryResult,
  ): Promise<q.CallbackAttemptRow> {
    const attemptsMade = event.attempts + 1;
    const now = this.deps.clock.now();
    const policy = event.trigger === 'manual' ? { ...this.options.policy, maxRetries: 0 } : this.options.policy;
    const retryAt =
      result.outcome === 'delivered'
        ? undefined
        : nextRetryAt(policy, {
            attemptsMade,
            firstAttemptAt: event.first_attempt_at ?? startedAt,
            lastAttemptAt: startedAt,
          });
    const state = result.outcome === 'delivered' ? 'delivered' : retryAt === undefined ? 'failed' : 'pending';
    const attempt = this.#attemptRow(event, startedAt, result);
    const kept = await this.deps.store.transact(async (tx) => {
      await q.insertAttempts(tx, [attempt]);
      return q.finishAttempt(tx, event.id, leaseToken, {
        state,
        nextAttemptAt: retryAt ?? null,
        attempts: attemptsMade,
        now,
      });
    });
    this.deps.metrics.recordAttempt(result);
    const log = {
      eventId: event.id,
      orderId: event.order_id,
      notifyId: event.notify_id,
      attempt: attemptsMade,
      outcome: result.outcome,
      status: result.httpStatus,
      ms: result.latencyMs,
    };
    if (!kept)
      this.deps.logger.warn(
        log,
        'callback attempt finished after its lease ran out; another worker owns the event now',
      );
    else if (result.outcome === 'delivered') this.deps.logger.info(log, 'callback delivered');
    else
      this.deps.logger.warn(
        { ...log, error: result.error, next: retryAt ?? null },
        state === 'failed' ? 'callback failed for good' : 'callback attempt failed; will retry',
      );
    return attempt;
  }
}
