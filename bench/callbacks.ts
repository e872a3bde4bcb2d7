// Callback deliveries per second to a local receiver, and end-to-end callback latency, in one run.
//   npm run bench:callbacks                                   (SQLite in a temporary directory)
//   BENCH_DATABASE_URL=postgres://… npm run bench:callbacks   (also PostgreSQL: a fresh database
//       cashgate_bench_<random> is created on that server and dropped afterwards)
// Environment: BENCH_EVENTS (default 2000), BENCH_CONCURRENCY (default 32), BENCH_LATENCY_EVENTS
// (default 200), BENCH_LATENCY_PARALLEL (admin calls in flight, a list; default "1,4").
//
// drain: events are queued through the admin API on a server without workers, then one
// `cashgate worker` is started; the time runs from its spawn until the receiver has every event.
// latency: a normal server (workers on) gets test callbacks a few at a time; each is timed from the
// start of its admin call until the receiver gets the request with its notify_id.
// Every run checks that each queued notify_id arrived exactly once; the exit code is 1 otherwise.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runCli, startServerProcess, type ServerProcess } from '../test/support/process.js';

const events = Number(process.env.BENCH_EVENTS ?? 2000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const latencyEvents = Number(process.env.BENCH_LATENCY_EVENTS ?? 200);
const latencyParallel = (process.env.BENCH_LATENCY_PARALLEL ?? '1,4').split(',').map(Number);
const QUEUE_PARALLEL = 32;
/** A run fails when the receiver gets nothing new for this long. */
const STALL_MS = 30_000;
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;

interface Row {
  database: string;
  scenario: string;
  events: number;
  seconds: number;
  perSecond: number;
  p50?: number;
  p99?: number;
  /** CPU time of the worker process over its wall time (1.00 = one core busy). */
  workerCpu?: number;
}

interface Check {
  database: string;
  expected: number;
  received: number;
  lost: number;
  duplicates: number;
  unexpected: number;
}

/** Live child processes, stopped on any exit path. */
const children = new Set<ServerProcess>();
/** Details printed under the table. */
const notes: string[] = [];

async function start(env: Record<string, string>, command: 'serve' | 'worker' = 'serve'): Promise<ServerProcess> {
  const child = await startServerProcess(env, command);
  children.add(child);
  return child;
}

async function stop(child: ServerProcess): Promise<void> {
  await child.stop();
  children.delete(child);
}

function killChildren(): void {
  for (const child of children) child.child.kill('SIGKILL');
  children.clear();
}
process.on('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killChildren();
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------
// The merchant's endpoint: answers 200 at once and records when each notify_id arrived.

interface Arrival {
  count: number;
  /** performance.now() of the first arrival. */
  at: number;
}

class Receiver {
  readonly arrivals = new Map<string, Arrival>();
  /** Requests without a notify_id header. */
  anonymous = 0;
  url = '';
  #server: Server;
  #waiter: { missing: Set<string>; progress: () => void } | undefined;

  constructor() {
    this.#server = createServer((request, response) => {
      const at = performance.now();
      request.resume();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"code":"200","success":true}');
      const header = request.headers.notify_id;
      const notifyId = typeof header === 'string' ? header : undefined;
      if (notifyId === undefined) {
        this.anonymous++;
        return;
      }
      const seen = this.arrivals.get(notifyId);
      if (seen !== undefined) {
        seen.count++;
        return;
      }
      this.arrivals.set(notifyId, { count: 1, at });
      if (this.#waiter?.missing.delete(notifyId) === true) this.#waiter.progress();
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/callback`;
  }

  /** Resolves when every id has arrived; rejects when nothing new arrives for `stallMs`. */
  waitFor(ids: Iterable<string>, stallMs = STALL_MS): Promise<void> {
    const missing = new Set([...ids].filter((id) => !this.arrivals.has(id)));
    if (missing.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          this.#waiter = undefined;
          reject(
            new Error(`receiver stalled: ${missing.size} callbacks still missing after ${stallMs} ms without progress`),
          );
        }, stallMs);
      };
      arm();
      this.#waiter = {
        missing,
        progress: () => {
          if (missing.size > 0) return arm();
          clearTimeout(timer);
          this.#waiter = undefined;
          resolve();
        },
      };
    });
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

// ---------------------------------------------------------------------------------------------

async function queueTest(baseUrl: string, merchantId: string, url: string): Promise<string> {
  const response = await fetch(`${baseUrl}/admin/v1/merchants/${merchantId}/callback/test`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`queueing a test callback failed: HTTP ${response.status} ${text}`);
  return (JSON.parse(text) as { notifyId: string }).notifyId;
}

/** Runs `task` `count` times, `parallel` at a time. */
async function inParallel<T>(count: number, parallel: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  return results;
}

/** utime + stime of a process in seconds (Linux /proc), or undefined elsewhere. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat; the slice starts at field 3. Clock ticks are 100 per second on Linux.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

async function createDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `cashgate_bench_${randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => run(`drop database if exists ${name} with (force)`) };
}

// ---------------------------------------------------------------------------------------------

/** Queues `latencyEvents` test callbacks, `parallel` admin calls at a time, and times each one to its arrival. */
async function measureLatency(
  label: string,
  parallel: number,
  baseUrl: string,
  merchantId: string,
  receiver: Receiver,
): Promise<{ ids: string[]; row: Row }> {
  const startedAt = new Map<string, number>();
  const beganAt = performance.now();
  await inParallel(latencyEvents, parallel, async () => {
    const t0 = performance.now();
    startedAt.set(await queueTest(baseUrl, merchantId, receiver.url), t0);
  });
  const ids = [...startedAt.keys()];
  await receiver.waitFor(ids);
  const arrivedAt = (id: string) => receiver.arrivals.get(id)?.at ?? Number.NaN;
  const latencies = ids.map((id) => arrivedAt(id) - (startedAt.get(id) ?? Number.NaN)).sort((a, b) => a - b);
  const seconds = (Math.max(...ids.map(arrivedAt)) - beganAt) / 1000;
  return {
    ids,
    row: {
      database: label,
      scenario: `latency, ${parallel} at a time, workers in server (per host 4)`,
      events: ids.length,
      seconds,
      perSecond: ids.length / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    },
  };
}

async function benchDatabase(label: string, databaseUrl: string | undefined): Promise<{ rows: Row[]; check: Check }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-'));
  const database = databaseUrl === undefined ? undefined : await createDatabase(databaseUrl);
  const receiver = new Receiver();
  const expected: string[] = [];
  const rows: Row[] = [];
  const env: Record<string, string> = {
    CASHGATE_DATA_DIR: dataDir,
    CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    KEY_ACTIVATION_DELAY_MS: '0',
    CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'info', // production default: one log line per delivery is part of the cost
    ...(database !== undefined && { DATABASE_URL: database.url }),
  };
  try {
    await receiver.listen();
    const merchant = await runCli(['merchant', 'create', '--name', 'Bench'], env);
    if (merchant.code !== 0) throw new Error(merchant.stderr);
    const { merchantId } = JSON.parse(merchant.stdout) as { merchantId: string };
    const key = await runCli(['key', 'create', '--merchant', merchantId], env);
    if (key.code !== 0) throw new Error(key.stderr);

    // (a) drain: queue with workers off, then time one worker process emptying the outbox.
    const queueing = await start({ ...env, CASHGATE_WORKERS: 'false' });
    try {
      for (const perHost of [concurrency, 4]) {
        const queuedAt = performance.now();
        const ids = await inParallel(events, QUEUE_PARALLEL, () => queueTest(queueing.url, merchantId, receiver.url));
        const queueSeconds = (performance.now() - queuedAt) / 1000;
        expected.push(...ids);
        const spawnedAt = performance.now();
        const worker = await start(
          { ...env, CALLBACK_CONCURRENCY: String(concurrency), CALLBACK_CONCURRENCY_PER_HOST: String(perHost) },
          'worker',
        );
        try {
          const cpuAtReady = cpuSeconds(worker.child.pid);
          const readyAt = performance.now();
          await receiver.waitFor(ids);
          const arrived = ids.map((id) => receiver.arrivals.get(id)?.at ?? Number.NaN);
          const last = Math.max(...arrived);
          const first = Math.min(...arrived);
          const cpu = cpuSeconds(worker.child.pid);
          const seconds = (last - spawnedAt) / 1000;
          rows.push({
            database: label,
            scenario: `drain, concurrency ${concurrency}, per host ${perHost}${perHost === 4 ? ' (default)' : ''}`,
            events: ids.length,
            seconds,
            perSecond: ids.length / seconds,
            ...(cpu !== undefined &&
              cpuAtReady !== undefined && { workerCpu: (cpu - cpuAtReady) / ((last - readyAt) / 1000) }),
          });
          notes.push(
            `${label}, per host ${perHost}: queued ${ids.length} in ${queueSeconds.toFixed(1)} s (${(ids.length / queueSeconds).toFixed(0)}/s); ` +
              `worker ready after ${((readyAt - spawnedAt) / 1000).toFixed(2)} s, first delivery after ${((first - spawnedAt) / 1000).toFixed(2)} s, ` +
              `first→last ${((last - first) / 1000).toFixed(2)} s (${((ids.length - 1) / ((last - first) / 1000)).toFixed(0)}/s)`,
          );
        } finally {
          await stop(worker);
        }
      }
    } finally {
      await stop(queueing);
    }

    // (b) latency: a normal server delivers each test callback right after its commit.
    const server = await start({ ...env, CALLBACK_CONCURRENCY: String(concurrency) });
    try {
      for (const parallel of latencyParallel) {
        const { ids, row } = await measureLatency(label, parallel, server.url, merchantId, receiver);
        expected.push(...ids);
        rows.push(row);
      }
    } finally {
      await stop(server);
    }

    // Late duplicates would come from a redelivery; give any straggler a moment to show up.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const wanted = new Set(expected);
    let received = 0;
    let lost = 0;
    let duplicates = 0;
    for (const id of wanted) {
      const arrival = receiver.arrivals.get(id);
      if (arrival === undefined) lost++;
      else {
        received++;
        duplicates += arrival.count - 1;
      }
    }
    const unexpected = [...receiver.arrivals.keys()].filter((id) => !wanted.has(id)).length + receiver.anonymous;
    return { rows, check: { database: label, expected: wanted.size, received, lost, duplicates, unexpected } };
  } finally {
    killChildren();
    await receiver.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function printTable(rows: readonly Row[], checks: readonly Check[]): void {
  const ms = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(1));
  const header = ['database', 'scenario', 'events', 'seconds', 'deliv/s', 'p50 ms', 'p99 ms', 'worker cpu'];
  const widths = [10, 56, 7, 8, 8, 7, 7, 10];
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' ');
  console.log(
    `\nCallback delivery to a local receiver (drain: one \`cashgate worker\`, CALLBACK_CONCURRENCY=${concurrency}; ` +
      `per host ${concurrency} = all of it, since every callback goes to one host; the default per-host limit is 4)`,
  );
  console.log(line(header));
  for (const row of rows) {
    console.log(
      line([
        row.database,
        row.scenario,
        String(row.events),
        row.seconds.toFixed(2),
        row.perSecond.toFixed(0),
        ms(row.p50),
        ms(row.p99),
        row.workerCpu === undefined ? '–' : `${(row.workerCpu * 100).toFixed(0)}%`,
      ]),
    );
  }
  console.log(
    "seconds: drain from the worker's spawn to the last arrival; latency from the first admin call to the last arrival.",
  );
  console.log(
    'p50/p99: admin call start → receiver has the request. worker cpu: worker process CPU time ÷ wall time after it was ready.',
  );
  for (const check of checks) {
    console.log(
      `${check.database}: ${check.received} of ${check.expected} notify_ids received, ${check.lost} lost, ` +
        `${check.duplicates} duplicates, ${check.unexpected} unexpected`,
    );
  }
  for (const note of notes) console.log(`  ${note}`);
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), node ${process.version}, ${process.platform}`,
  );
}

const results: { rows: Row[]; check: Check }[] = [];
try {
  results.push(await benchDatabase('SQLite', undefined));
  const pgUrl = process.env.BENCH_DATABASE_URL?.trim();
  if (pgUrl !== undefined && pgUrl !== '') results.push(await benchDatabase('PostgreSQL', pgUrl));
} catch (error) {
  console.error(error);
  process.exitCode = 1;
}
printTable(
  results.flatMap((r) => r.rows),
  results.map((r) => r.check),
);
if (results.some(({ check }) => check.lost > 0 || check.duplicates > 0 || check.unexpected > 0)) {
  console.error('FAILED: some callbacks were lost or delivered more than once');
  process.exitCode = 1;
}
