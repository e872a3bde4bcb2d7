// Throughput and latency of signed merchant requests (PIX collection and token → fiat creates among
// them), of a payer's cashier page and its status poll, and of the merchant console's order list, as
// ratios to a floor measured in the same run: a bare Fastify route that only verifies the signature
// (bench/floor-server.ts, in a child process).
//   npm run bench                      (SQLite in a temporary directory)
//   BENCH_DATABASE_URL=postgres://… npm run bench   (also PostgreSQL; the database must be empty or disposable)
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32). On PostgreSQL it also
// drives PIX creates at two server processes on the one database at once (half the connections each).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { consoleCookie } from './console-session.js';
import { runCli, startServerProcess } from '../test/support/process.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function measure(name: string, url: string, request: autocannon.Request): Promise<Figures> {
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
async function measureTwo(name: string, urls: [string, string], request: autocannon.Request): Promise<Figures> {
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
function signedPost(
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

let orderSeq = 0;
const pixCollection = () => ({
  amount: '125.50',
  channelType: 'PIX',
  externalOrderId: `bench-${process.pid}-${Date.now()}-${++orderSeq}`,
});
const tokenToFiat = () => ({
  tokenAmount: '25.5',
  chainType: 'TRON',
  addressFrom: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb',
  currencyType: 'BRL',
  tokenType: 'USDT',
  externalOrderId: `bench-t2f-${process.pid}-${Date.now()}-${++orderSeq}`,
});
const kenyaTransfer = () => ({
  channelType: 'BANK',
  currencyAmount: '100',
  phone: '254712345678',
  externalOrderId: `bench-kt-${process.pid}-${Date.now()}-${++orderSeq}`,
});
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

async function createKey(env: Record<string, string>, merchantId: string, permissions: string): Promise<Credentials> {
  const key = await runCli(['key', 'create', '--merchant', merchantId, '--permissions', permissions], env);
  if (key.code !== 0) throw new Error(key.stderr);
  return JSON.parse(key.stdout) as Credentials;
}

const FLOOR_KEY: Credentials = { accessKey: 'AKfloor0123456789', secretKey: 'floor-secret-0123456789abcdef' };

/** The floor case: signed requests to a bare route that verifies the signature, and nothing else. */
async function measureFloor(): Promise<Figures> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./floor-server.ts', import.meta.url).pathname], {
    env: { ...process.env, FLOOR_ACCESS_KEY: FLOOR_KEY.accessKey, FLOOR_SECRET_KEY: FLOOR_KEY.secretKey },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [first] = (await once(child.stdout, 'data')) as [Buffer];
    const url = first.toString('utf8').trim().split('\n')[0] ?? '';
    return await measure(
      'floor: bare Fastify route verifying the signature',
      url,
      signedPost('/floor', FLOOR_KEY, pixCollection),
    );
  } finally {
    child.kill();
  }
}

let floor: Figures | undefined;

async function benchDatabase(label: string, databaseUrl: string | undefined): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-'));
  const env: Record<string, string> = {
    CASHGATE_DATA_DIR: dataDir,
    KEY_ACTIVATION_DELAY_MS: '0',
    RATE_LIMIT_PER_KEY_PER_MINUTE: '100000000',
    LOG_LEVEL: 'info', // production default: one log line per request is part of the cost
    CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
  };
  try {
    const merchant = await runCli(['merchant', 'create', '--name', 'Bench'], env);
    if (merchant.code !== 0) throw new Error(merchant.stderr);
    const { merchantId } = JSON.parse(merchant.stdout) as { merchantId: string };
    const full = await createKey(env, merchantId, 'all');
    const noQuery = await createKey(env, merchantId, 'balance');
    const server = await startServerProcess(env);
    try {
      const rate = await fetch(new URL('/admin/v1/rates/BRL/USDT', server.url), {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ buy: '5.40', sell: '5.50' }),
      });
      if (rate.status !== 200) throw new Error(`setting the rate failed: ${await rate.text()}`);
      // Enough shillings for every transfer the bench can make (each freezes its amount and fee).
      const funded = await fetch(new URL(`/admin/v1/merchants/${merchantId}/balance-adjustments`, server.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ currency: 'KES', amount: '1000000000', reason: 'bench' }),
      });
      if (funded.status !== 200) throw new Error(`funding the merchant failed: ${await funded.text()}`);
      // One collection whose payer's pages are then read over and over (a phone polls every 3 s).
      const body = pixCollection();
      const created = await fetch(new URL('/api/v3/bra/createCollectingOrder', server.url), {
        method: 'POST',
        headers: { ...signedHeaders(full, body), 'content-type': 'application/json;charset=utf-8' },
        body: JSON.stringify(body),
      });
      const cashierPath = new URL(((await created.json()) as { data: { cashierUrl: string } }).data.cashierUrl)
        .pathname;
      const rows = [
        await measure('GET /ping (public, no auth)', server.url, { method: 'GET', path: '/ping' }),
        await measure('GET /cashier/{id} (Pix page, QR rendered)', server.url, { method: 'GET', path: cashierPath }),
        await measure("GET /cashier/{id}/status (the page's poll)", server.url, {
          method: 'GET',
          path: `${cashierPath}/status`,
        }),
        await measure(
          'signed, refused 301 after full auth (nonce write)',
          server.url,
          signedPost('/api/v3/bra/query/bank', noQuery, () => ({})),
        ),
        await measure(
          'signed POST /api/v3/bra/query/bank (513 banks)',
          server.url,
          signedPost('/api/v3/bra/query/bank', full, () => ({ currencyType: 'BRL' })),
        ),
        await measure(
          'signed PIX collection create (BR Code, order row)',
          server.url,
          signedPost('/api/v3/bra/createCollectingOrder', full, pixCollection),
        ),
        await measure(
          'signed token → fiat create (quote, derived address)',
          server.url,
          signedPost('/api/v3/exchange/wallet/to/fiat', full, tokenToFiat),
        ),
        await measure(
          'signed Kenya transfer create (balance frozen)',
          server.url,
          signedPost('/api/v3/ken/createTransferOrder', full, kenyaTransfer),
        ),
      ];
      // PostgreSQL: the same create on two server processes sharing the database.
      if (databaseUrl !== undefined) {
        const second = await startServerProcess(env);
        try {
          rows.push(
            await measureTwo(
              'signed PIX collection create, two server processes',
              [server.url, second.url],
              signedPost('/api/v3/bra/createCollectingOrder', full, pixCollection),
            ),
          );
        } finally {
          await second.stop();
        }
      }
      // The console, signed in, over the thousands of orders the create cases just made.
      const cookie = await consoleCookie(server.url, merchantId, ADMIN_TOKEN);
      rows.push(
        await measure('GET /console/orders (session, 50 newest of all)', server.url, {
          method: 'GET',
          path: '/console/orders',
          headers: { cookie },
        }),
        await measure('GET /console/orders?area=bra&status=1 (filtered)', server.url, {
          method: 'GET',
          path: '/console/orders?area=bra&kind=collection&status=1',
          headers: { cookie },
        }),
      );
      floor ??= await measureFloor();
      const base = floor;
      rows.unshift(base);
      console.log(`\n${label}: ${connections} connections, ${seconds} s each; ratios to the floor (first row)`);
      console.log(
        'case'.padEnd(54),
        'req/s'.padStart(8),
        'p50 ms'.padStart(8),
        'p99 ms'.padStart(8),
        'rps÷floor'.padStart(10),
        'p99÷floor'.padStart(10),
      );
      for (const row of rows) {
        console.log(
          row.name.padEnd(54),
          row.rps.toFixed(0).padStart(8),
          row.p50.toFixed(1).padStart(8),
          row.p99.toFixed(1).padStart(8),
          (row.rps / base.rps).toFixed(3).padStart(10),
          (row.p99 / Math.max(base.p99, 1)).toFixed(2).padStart(10),
          row.name.startsWith('GET') || row.non2xx === 0 || row.name.includes('refused')
            ? ''
            : `  (${row.non2xx} non-2xx!)`,
        );
      }
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await benchDatabase('SQLite (WAL, synchronous=FULL)', undefined);
if (process.env.BENCH_DATABASE_URL !== undefined) await benchDatabase('PostgreSQL', process.env.BENCH_DATABASE_URL);
