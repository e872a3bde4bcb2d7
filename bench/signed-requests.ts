// Throughput and latency of signed merchant requests (PIX collection and token → fiat creates among
// them), of a payer's cashier page and its status poll, and of the merchant console's order list, as
// ratios to a floor measured in the same run: a bare Fastify route that only verifies the signature
// (bench/floor-server.ts, in a child process).
//   npm run bench                      (SQLite in a temporary directory)
//   BENCH_DATABASE_URL=postgres://… npm run bench   (also PostgreSQL; the database must be empty or disposable)
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32). On PostgreSQL it also
// drives PIX creates at two server processes on the one database at once (half the connections each).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import {
  connections,
  measure,
  measureDurableFloor,
  measureFloor,
  measureTwo,
  measureWithCpu,
  printTable,
  seconds,
  signedPost,
  type Figures,
} from './harness.js';
import { consoleCookie } from './console-session.js';
import { runCli, startServerProcess } from '../test/support/process.js';

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

let floor: Figures | undefined;
let durableFloor: Figures | undefined;

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
        await measureWithCpu(
          'signed PIX collection create (BR Code, order row)',
          server.url,
          signedPost('/api/v3/bra/createCollectingOrder', full, pixCollection),
          server.child.pid,
        ),
        await measureWithCpu(
          'signed token → fiat create (quote, derived address)',
          server.url,
          signedPost('/api/v3/exchange/wallet/to/fiat', full, tokenToFiat),
          server.child.pid,
        ),
        await measureWithCpu(
          'signed Kenya transfer create (balance frozen)',
          server.url,
          signedPost('/api/v3/ken/createTransferOrder', full, kenyaTransfer),
          server.child.pid,
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
      durableFloor ??= await measureDurableFloor();
      const base = floor;
      rows.unshift(base, durableFloor);
      printTable(`${label}: ${connections} connections, ${seconds} s each`, base, rows, durableFloor);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await benchDatabase('SQLite (WAL, each commit flushed before its answer)', undefined);
if (process.env.BENCH_DATABASE_URL !== undefined) await benchDatabase('PostgreSQL', process.env.BENCH_DATABASE_URL);
