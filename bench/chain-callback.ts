// USDT live on TRON against the local TronGrid-compatible API (test/support/tron-api-fake.ts, in
// this process): the time from the block that makes a deposit final to the merchant's callback.
// Token → fiat orders are created through the API, each paid by a deposit to its derived address;
// the blocks under the final one are mined, then the final block, and each order's callback is
// timed from that block. The deposit watcher polls every CHAIN_POLL_INTERVAL_MS (default here
// 1,000 ms, a third of TRON's block time), which bounds the figure from below on average.
// Reported as p50/p99 over BENCH_CALLBACK_ORDERS orders (default 300), with the ratio to the floor's
// p99 (a bare route verifying a signature) measured in the same run.
//   npm run bench:chain-callback      (SQLite in a temporary directory)
import { randomBytes } from 'node:crypto';
import { signedHeaders } from '@cashgate/sdk';
import { TronWeb } from 'tronweb';
import { adminCall } from '../test/support/process.js';
import { startReceiver } from '../test/support/receiver.js';
import { startTronApi } from '../test/support/tron-api-fake.js';
import { BENCH_ADMIN_TOKEN, measureFloor, withBenchServer } from './harness.js';

const orders = Number(process.env.BENCH_CALLBACK_ORDERS ?? 300);
const pollMs = process.env.CHAIN_POLL_INTERVAL_MS ?? '1000';
const PER_ROUND = 30;
const CONFIRMATIONS = 19;

const tron = await startTronApi();
const receiver = await startReceiver();
const payer = TronWeb.address.fromPrivateKey(randomBytes(32).toString('hex')) as string;
tron.mint(payer, BigInt(orders) * 10_000_000n);
const latencies: number[] = [];
try {
  await withBenchServer(
    {
      CHAIN_RAIL: 'live',
      TRON_API_URL: tron.url,
      TRON_CONFIRMATIONS: String(CONFIRMATIONS),
      CHAIN_POLL_INTERVAL_MS: pollMs,
    },
    async (url, credentials, merchantId) => {
      await adminCall({ url }, BENCH_ADMIN_TOKEN, 'PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.00', sell: '5.00' });
      await adminCall({ url }, BENCH_ADMIN_TOKEN, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, {
        url: `${receiver.url}/cb`,
      });
      let seq = 0;
      for (let round = 0; round < orders / PER_ROUND; round++) {
        const ids = await Promise.all(
          Array.from({ length: PER_ROUND }, async () => {
            const body = {
              tokenAmount: '10',
              chainType: 'TRON',
              addressFrom: payer,
              currencyType: 'BRL',
              tokenType: 'USDT',
              externalOrderId: `bc${process.pid}x${++seq}`,
            };
            const answer = await fetch(new URL('/api/v3/exchange/wallet/to/fiat', url), {
              method: 'POST',
              headers: { ...signedHeaders(credentials, body), 'content-type': 'application/json;charset=utf-8' },
              body: JSON.stringify(body),
            });
            const data = ((await answer.json()) as { data: { orderId: string; addressTo: string } }).data;
            tron.deposit(payer, data.addressTo, 10_000_000n);
            return data.orderId;
          }),
        );
        const expected = receiver.received.length + ids.length;
        tron.mine(CONFIRMATIONS - 1);
        // Let the watcher see the deposits before the block that makes them final, and land that
        // block at a random point of the watcher's poll (a fixed wait would lock onto its period).
        await new Promise((resolve) => setTimeout(resolve, (3 + Math.random()) * Number(pollMs)));
        const finalAt = Date.now();
        tron.mine(1);
        const deadline = Date.now() + 30_000;
        while (receiver.received.length < expected && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
        for (const callback of receiver.received.slice(expected - ids.length)) latencies.push(callback.at - finalAt);
      }
    },
  );
} finally {
  await tron.close();
  await receiver.close();
}
const floor = await measureFloor();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
console.log(
  `\nTRON deposit final block → merchant callback (CHAIN_POLL_INTERVAL_MS ${pollMs}, ${CONFIRMATIONS} confirmations) over ${latencies.length} orders: ` +
    `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (the floor's p99: ${floor.p99} ms, ratio ${(at(0.99) / Math.max(floor.p99, 1)).toFixed(1)})`,
);
