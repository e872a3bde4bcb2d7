import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { counterOn } from '../metrics/metrics.js';
import { outsideUnitScope } from '../store/unit-scope.js';

/** A periodic background job. Each run must be safe while other nodes run the same job. */
export interface Worker {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

/** The gauge of each worker's last finished run, by outcome (the back office's System page reads it). */
export const WORKER_LAST_RUN = 'cashgate_worker_last_run_timestamp_seconds';

/**
 * Runs workers in this process, each run after the previous one finished; wake() runs every worker
 * that is waiting for its next run now (work was freed: a dead node's leases); stop() waits for
 * runs in flight.
 */
export function startWorkers(
  workers: readonly Worker[],
  logger: Logger,
  registry?: Registry,
): { wake(): void; stop(): Promise<void> } {
  const runs =
    registry === undefined
      ? undefined
      : counterOn<'worker' | 'outcome'>(registry, {
          name: 'cashgate_worker_runs_total',
          help: 'Runs of the periodic workers in this process, by worker and outcome (ok, failed)',
          labelNames: ['worker', 'outcome'],
        });
  const lastRun =
    registry === undefined
      ? undefined
      : ((registry.getSingleMetric(WORKER_LAST_RUN) as Gauge<'worker' | 'outcome'> | undefined) ??
        new Gauge<'worker' | 'outcome'>({
          name: WORKER_LAST_RUN,
          help: 'When each periodic worker of this process last finished a run (Unix seconds), by outcome (ok, failed)',
          labelNames: ['worker', 'outcome'],
          registers: [registry],
        }));
  let stopped = false;
  const timers = new Map<NodeJS.Timeout, Worker>();
  const inFlight = new Set<Promise<void>>();
  const schedule = (worker: Worker, delay: number): void => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const run = worker
        .run()
        .then(() => {
          runs?.inc({ worker: worker.name, outcome: 'ok' });
          lastRun?.set({ worker: worker.name, outcome: 'ok' }, Date.now() / 1000);
        })
        .catch((error: unknown) => {
          runs?.inc({ worker: worker.name, outcome: 'failed' });
          lastRun?.set({ worker: worker.name, outcome: 'failed' }, Date.now() / 1000);
          logger.error({ err: error, worker: worker.name }, 'worker run failed');
        })
        .finally(() => {
          inFlight.delete(run);
          schedule(worker, worker.intervalMs);
        });
      inFlight.add(run);
    }, delay);
    timer.unref();
    timers.set(timer, worker);
  };
  for (const worker of workers) schedule(worker, 0);
  return {
    wake() {
      // A wake from a request must not carry the request's unit scope (its audit record) into the runs.
      outsideUnitScope(() => {
        for (const [timer, worker] of [...timers]) {
          clearTimeout(timer);
          timers.delete(timer);
          schedule(worker, 0);
        }
      });
    },
    async stop() {
      stopped = true;
      for (const timer of timers.keys()) clearTimeout(timer);
      await Promise.all(inFlight);
    },
  };
}
