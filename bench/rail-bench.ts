// What the rail benchmarks share: a pool of concurrent tasks, quantiles, a latency row, when a
// receiver first got each order's PAYMENT_SUCCESS callback, and waiting for a condition.
import type { CallbackReceiver } from '../test/support/receiver.js';

/** Runs `task` for 0…count-1, `concurrency` at a time; answers each one's result and the wall time. */
export async function pool<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
): Promise<{ results: T[]; ms: number }> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return { results, ms: performance.now() - start };
}

export const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

export interface LatencyRow {
  name: string;
  p50: number;
  p99: number;
  /** orders whose start and callback were both seen */
  count: number;
  total: number;
}

export function latencyRow(name: string, latencies: (number | undefined)[]): LatencyRow {
  const seen = latencies.filter((ms): ms is number => ms !== undefined).sort((a, b) => a - b);
  return { name, p50: quantile(seen, 0.5), p99: quantile(seen, 0.99), count: seen.length, total: latencies.length };
}

/** When the receiver first got each order's PAYMENT_SUCCESS callback, by its orderId (or externalOrderId). */
export function successAt(
  receiver: CallbackReceiver,
  key: 'orderId' | 'externalOrderId' = 'orderId',
): Map<string, number> {
  const at = new Map<string, number>();
  for (const r of receiver.received) {
    const json = JSON.parse(r.body) as { orderId?: string; externalOrderId?: string; orderStatus?: string };
    const id = json[key];
    if (json.orderStatus === 'PAYMENT_SUCCESS' && id !== undefined && !at.has(id)) at.set(id, r.at);
  }
  return at;
}

export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Pays the orders `concurrency` at a time, each batch's PAYMENT_SUCCESS callbacks awaited (up to
 * 30 s) before the next batch is paid; answers when each order was paid (just before `pay`), by the
 * callback member `key` names.
 */
export async function payInBatches<T extends { orderId: string } | { externalOrderId: string }>(
  receiver: CallbackReceiver,
  list: readonly T[],
  options: { concurrency: number; key: 'orderId' | 'externalOrderId' },
  pay: (order: T) => Promise<void>,
): Promise<Map<string, number>> {
  const idOf = (order: T) => (order as Record<string, string>)[options.key] ?? '';
  const paidAt = new Map<string, number>();
  for (let i = 0; i < list.length; i += options.concurrency) {
    const batch = list.slice(i, i + options.concurrency);
    await Promise.all(
      batch.map(async (order) => {
        paidAt.set(idOf(order), Date.now());
        await pay(order);
      }),
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const got = successAt(receiver, options.key);
      if (batch.every((o) => got.has(idOf(o))) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  return paidAt;
}
