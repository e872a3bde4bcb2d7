// What every benchmark shares: autocannon runs reported as figures, signed POSTs made afresh per
// request, and the floor case every ratio is taken to: a bare Fastify route that only verifies the
// signature (bench/floor-server.ts, in a child process).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { adminCall, runCli, startServerProcess } from '../test/support/process.js';
import type { CallbackReceiver } from '../test/support/receiver.js';

export const seconds = Number(process.env.BENCH_SECONDS ?? 10);
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** The server's CPU time (user + system) per request, in µs, where the server's process was known. */
  cpuMicros?: number;
}

/** A process's CPU time so far (user + system), in µs, from /proc (Linux). */
function cpuMicrosOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are the 12th and 13th fields after the command name, in clock ticks (100 a second).
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
  } catch {
    return undefined;
  }
}

/** `measure`, with the CPU time the server's process `pid` spent per request. */
export async function measureWithCpu(
  name: string,
  url: string,
  request: autocannon.Request,
  pid: number | undefined,
): Promise<Figures> {
  const before = pid === undefined ? undefined : cpuMicrosOf(pid);
  const figures = await measure(name, url, request);
  const after = pid === undefined ? undefined : cpuMicrosOf(pid);
  const requests = figures.rps * seconds;
  if (before === undefined || after === undefined || requests === 0) return figures;
  return { ...figures, cpuMicros: (after - before) / requests };
}

export async function measure(name: string, url: string, request: autocannon.Request): Promise<Figures> {
  const result = await autocannon({ url, connections, duration: seconds, requests: [request] });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** The same case driven against two server processes at once (half the connections each): summed req/s, the worse p99. */
export async function measureTwo(name: string, urls: [string, string], request: autocannon.Request): Promise<Figures> {
  const half = Math.max(1, Math.floor(connections / 2));
  const results = await Promise.all(
    urls.map((url) => autocannon({ url, connections: half, duration: seconds, requests: [request] })),
  );
  return {
    name,
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

/** A signed POST whose body is made afresh for every request (e.g. a new externalOrderId). */
export function signedPost(
  path: string,
  credentials: Credentials,
  makeBody: () => Record<string, unknown>,
): autocannon.Request {
  return {
    method: 'POST',
    path,
    setupRequest: (request) => {
      const body = makeBody();
      return {
        ...request,
        headers: { ...signedHeaders(credentials, body), 'content-type': 'application/json;charset=utf-8' },
        body: JSON.stringify(body),
      };
    },
  };
}

let floorSeq = 0;
const FLOOR_KEY: Credentials = { accessKey: 'AKfloor0123456789', secretKey: 'floor-secret-0123456789abcdef' };

/** Signed PIX-shaped creates at a floor server started as a child process from `script`. */
async function measureChildFloor(name: string, script: string): Promise<Figures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-floor-'));
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(script, import.meta.url).pathname], {
    env: {
      ...process.env,
      FLOOR_ACCESS_KEY: FLOOR_KEY.accessKey,
      FLOOR_SECRET_KEY: FLOOR_KEY.secretKey,
      FLOOR_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [first] = (await once(child.stdout, 'data')) as [Buffer];
    const url = first.toString('utf8').trim().split('\n')[0] ?? '';
    return await measureWithCpu(
      name,
      url,
      signedPost('/floor', FLOOR_KEY, () => ({
        amount: '125.50',
        channelType: 'PIX',
        externalOrderId: `floor-${process.pid}-${++floorSeq}`,
      })),
      child.pid,
    );
  } finally {
    child.kill();
    await once(child, 'exit');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The floor case: signed requests to a bare route that verifies the signature, and nothing else. */
export function measureFloor(): Promise<Figures> {
  return measureChildFloor('floor: bare Fastify route verifying the signature', './floor-server.ts');
}

/**
 * The durable floor: the bare floor, plus one prepared insert into SQLite (WAL, synchronous=FULL)
 * in Cashgate's group commit, answered after its commit (bench/durable-floor-server.ts).
 */
export function measureDurableFloor(): Promise<Figures> {
  return measureChildFloor('durable floor: + one SQLite row, group commit', './durable-floor-server.ts');
}

/**
 * Prints the rows as a table with each one's ratios to the floor (first row) and, when given, to
 * the durable floor.
 */
export function printTable(title: string, base: Figures, rows: readonly Figures[], durable?: Figures): void {
  console.log(`\n${title}; ratios to the floor (first row)${durable === undefined ? '' : ' and to the durable floor'}`);
  const ratioHeads = durable === undefined ? [] : ['rps÷durable'.padStart(12), 'p99÷durable'.padStart(12)];
  console.log(
    'case'.padEnd(54),
    'req/s'.padStart(8),
    'p50 ms'.padStart(8),
    'p99 ms'.padStart(8),
    'rps÷floor'.padStart(10),
    'p99÷floor'.padStart(10),
    ...ratioHeads,
    'CPU µs/req'.padStart(11),
  );
  for (const row of rows) {
    const durableRatios =
      durable === undefined
        ? []
        : [
            (row.rps / durable.rps).toFixed(3).padStart(12),
            (row.p99 / Math.max(durable.p99, 1)).toFixed(2).padStart(12),
          ];
    console.log(
      row.name.padEnd(54),
      row.rps.toFixed(0).padStart(8),
      row.p50.toFixed(1).padStart(8),
      row.p99.toFixed(1).padStart(8),
      (row.rps / base.rps).toFixed(3).padStart(10),
      (row.p99 / Math.max(base.p99, 1)).toFixed(2).padStart(10),
      ...durableRatios,
      (row.cpuMicros === undefined ? '' : row.cpuMicros.toFixed(0)).padStart(11),
      row.name.startsWith('GET') || row.non2xx === 0 || row.name.includes('refused')
        ? ''
        : `  (${row.non2xx} non-2xx!)`,
    );
  }
}

/** The admin token of the servers `withBenchServer` starts. */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/**
 * Runs `run` against a fresh server process on a temporary SQLite data directory, with a merchant
 * and an API key of every permission made by the CLI; removes the directory afterwards.
 */
export async function withBenchServer<T>(
  env: Record<string, string>,
  run: (url: string, credentials: Credentials, merchantId: string) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-'));
  // The caller's `env` last: a benchmark may set its own poll intervals.
  const full = {
    KEY_ACTIVATION_DELAY_MS: '0',
    RATE_LIMIT_PER_KEY_PER_MINUTE: '100000000',
    LOG_LEVEL: 'info',
    CASHGATE_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    CALLBACK_POLL_INTERVAL_MS: '50',
    ...env,
    CASHGATE_DATA_DIR: dataDir,
  };
  try {
    const merchant = await runCli(['merchant', 'create', '--name', 'Bench'], full);
    if (merchant.code !== 0) throw new Error(merchant.stderr);
    const { merchantId } = JSON.parse(merchant.stdout) as { merchantId: string };
    const key = await runCli(['key', 'create', '--merchant', merchantId, '--permissions', 'all'], full);
    if (key.code !== 0) throw new Error(key.stderr);
    const server = await startServerProcess(full);
    try {
      return await run(server.url, JSON.parse(key.stdout) as Credentials, merchantId);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Points the merchant's callbacks at `receiver`, creates `count` orders through the signed `path`,
 * ten at a time, each followed by `afterCreate` with the answer's data (a payment made at the
 * rail's fake, say), then waits (up to 30 s) for as many merchant callbacks at `receiver`.
 */
export async function createAndAwaitCallbacks(options: {
  url: string;
  credentials: Credentials;
  merchantId: string;
  path: string;
  makeBody: () => Record<string, unknown>;
  count: number;
  receiver: CallbackReceiver;
  /** Called with the answer's `data` member, as JSON. */
  afterCreate?: (data: unknown) => Promise<void>;
}): Promise<void> {
  const { url, credentials, receiver, count } = options;
  await adminCall({ url }, BENCH_ADMIN_TOKEN, 'PUT', `/admin/v1/merchants/${options.merchantId}/callback`, {
    url: `${receiver.url}/cb`,
  });
  for (let batch = 0; batch < count / 10; batch++) {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const body = options.makeBody();
        const answer = await fetch(new URL(options.path, url), {
          method: 'POST',
          headers: { ...signedHeaders(credentials, body), 'content-type': 'application/json;charset=utf-8' },
          body: JSON.stringify(body),
        });
        const json = (await answer.json()) as { data: unknown };
        await options.afterCreate?.(json.data);
      }),
    );
  }
  const deadline = Date.now() + 30_000;
  while (receiver.received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/**
 * Prints p50/p99 of the time from when the rail reported each order (`reportedAt`, from the
 * merchant callback's JSON; undefined skips it) to when its merchant callback arrived.
 */
export function printCallbackLatency(
  label: string,
  receiver: CallbackReceiver,
  reportedAt: (callback: Record<string, unknown>) => number | undefined,
  floor: Figures,
): void {
  const latencies = receiver.received
    .map((r) => {
      const at = reportedAt(JSON.parse(r.body) as Record<string, unknown>);
      return at === undefined ? undefined : r.at - at;
    })
    .filter((ms): ms is number => ms !== undefined)
    .sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  console.log(
    `\n${label} over ${latencies.length} orders: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (the floor's p99: ${floor.p99} ms, ratio ${(at(0.99) / Math.max(floor.p99, 1)).toFixed(2)})`,
  );
}
