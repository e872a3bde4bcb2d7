import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
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
}

interface Claimed {
  event: q.CallbackEventRow;
  leaseToken: string;
  host: string;
}

function hostOf(url: string | null): string {
  try {
    return url === null ? '' : new URL(url).host;
  } catch {
    return '';
  }
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
      return { event: created, claimed: created.state === 'pending' ? (await this.#lease(tx, [created]))[0] : undefined };
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

  /** Claims up to `limit` due events, leaving hosts that already have their share in flight. */
  #claim(limit: number): Promise<Claimed[]> {
    const now = this.deps.clock.now();
    return this.deps.store.transact(async (tx) => {
      const due = await q.selectDueEvents(tx, this.deps.store.dialect, now, limit * 4);
      const chosen: q.CallbackEventRow[] = [];
      const counts = new Map(this.#perHost);
      for (const event of due) {
        if (chosen.length === limit) break;
        const host = hostOf(event.target_url);
        const count = counts.get(host) ?? 0;
        if (count >= this.options.concurrencyPerHost) continue;
        counts.set(host, count + 1);
        chosen.push(event);
        if (event.state === 'delivering') {
          this.deps.logger.warn({ eventId: event.id }, 'a callback delivery was interrupted (its worker stopped); delivering it again');
        }
      }
      return this.#lease(tx, chosen);
    });
  }

  async #lease(tx: Tx, events: q.CallbackEventRow[]): Promise<Claimed[]> {
    const now = this.deps.clock.now();
    const token = newId('lease', 8);
    await q.leaseEvents(tx, events.map((e) => e.id), { token, until: now + this.options.leaseMs, now });
    return events.map((event) => ({
      event: { ...event, first_attempt_at: event.first_attempt_at ?? now },
      leaseToken: token,
      host: hostOf(event.target_url),
    }));
  }

  async #deliver({ event, leaseToken, host }: Claimed): Promise<q.CallbackAttemptRow> {
    this.#perHost.set(host, (this.#perHost.get(host) ?? 0) + 1);
    try {
      const startedAt = this.deps.clock.now();
      const secretKey = await this.deps.secretOf(event.access_key);
      const result: DeliveryResult =
        secretKey === undefined
          ? { outcome: 'refused', httpStatus: null, error: `access key ${event.access_key} no longer exists`, responseExcerpt: null, latencyMs: 0 }
          : await this.deps.sender.send({
              url: event.target_url ?? '',
              payload: event.payload,
              notifyId: event.notify_id,
              accessKey: event.access_key,
              secretKey,
            });
      return await this.#record(event, leaseToken, startedAt, result);
    } finally {
      const left = (this.#perHost.get(host) ?? 1) - 1;
      if (left === 0) this.#perHost.delete(host);
      else this.#perHost.set(host, left);
    }
  }

  async #record(event: q.CallbackEventRow, leaseToken: string, startedAt: number, result: DeliveryResult): Promise<q.CallbackAttemptRow> {
    const attemptsMade = event.attempts + 1;
    const now = this.deps.clock.now();
    const policy = event.trigger === 'manual' ? { ...this.options.policy, maxRetries: 0 } : this.options.policy;
    const retryAt =
      result.outcome === 'delivered'
        ? undefined
        : nextRetryAt(policy, { attemptsMade, firstAttemptAt: event.first_attempt_at ?? startedAt, lastAttemptAt: startedAt });
    const state = result.outcome === 'delivered' ? 'delivered' : retryAt === undefined ? 'failed' : 'pending';
    const attempt: q.CallbackAttemptRow = {
      id: newId('cba'),
      event_id: event.id,
      attempt_no: attemptsMade,
      url: event.target_url ?? '',
      started_at: startedAt,
      latency_ms: result.latencyMs,
      http_status: result.httpStatus,
      outcome: result.outcome,
      error: result.error,
      response_excerpt: result.responseExcerpt,
    };
    const kept = await this.deps.store.transact(async (tx) => {
      await q.insertAttempt(tx, attempt);
      return q.finishAttempt(tx, event.id, leaseToken, { state, nextAttemptAt: retryAt ?? null, attempts: attemptsMade, now });
    });
    this.deps.metrics.recordAttempt(result);
    const log = { eventId: event.id, orderId: event.order_id, notifyId: event.notify_id, attempt: attemptsMade, outcome: result.outcome, status: result.httpStatus, ms: result.latencyMs };
    if (!kept) this.deps.logger.warn(log, 'callback attempt finished after its lease ran out; another worker owns the event now');
    else if (result.outcome === 'delivered') this.deps.logger.info(log, 'callback delivered');
    else this.deps.logger.warn({ ...log, error: result.error, next: retryAt ?? null }, state === 'failed' ? 'callback failed for good' : 'callback attempt failed; will retry');
    return attempt;
  }
}
