import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { DeliveryResult } from './delivery.js';
import { queueStats } from './queries.js';

/** Callback delivery metrics on the service's Prometheus registry. */
export class CallbackMetrics {
  readonly #attempts: Counter<'outcome'>;
  readonly #latency: Histogram;

  constructor(registry: Registry, store: Store, clock: Clock) {
    this.#attempts = new Counter({
      name: 'cashgate_callback_attempts_total',
      help: 'Callback delivery attempts by outcome (delivered, failed, refused)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.#latency = new Histogram({
      name: 'cashgate_callback_delivery_seconds',
      help: 'Time from sending a callback to the response status (or the failure)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    // Queue figures come from the database, so every node reports the whole queue.
    let stats: Promise<{ depth: number; oldestDueAt: number | null }> | undefined;
    const read = () =>
      (stats ??= queueStats(store.read, clock.now()).finally(() => setImmediate(() => (stats = undefined))));
    new Gauge({
      name: 'cashgate_callback_queue_depth',
      help: 'Callback events waiting for delivery or being delivered',
      registers: [registry],
      async collect() {
        this.set((await read()).depth);
      },
    });
    new Gauge({
      name: 'cashgate_callback_oldest_due_age_seconds',
      help: 'How long the oldest due callback event has been waiting (0 when none is due)',
      registers: [registry],
      async collect() {
        const { oldestDueAt } = await read();
        this.set(oldestDueAt === null ? 0 : Math.max(0, (clock.now() - oldestDueAt) / 1000));
      },
    });
  }

  recordAttempt(result: DeliveryResult): void {
    this.#attempts.inc({ outcome: result.outcome });
    this.#latency.observe(result.latencyMs / 1000);
  }
}
