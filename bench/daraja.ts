// Kenya on Daraja against the local fake Daraja (test/support/fake-daraja.ts, in this process):
// STK collections created per second, beside the same create on the sandbox rail and the floor
// (a bare route verifying the signature), all in one run; then the way from Daraja's STK callback
// to the merchant's callback (the callback confirmed by STK Push Query, the order paid, the
// merchant called), as p50/p99 over BENCH_CALLBACK_ORDERS orders (default 300).
//   npm run bench:daraja      (SQLite in a temporary directory)
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32).
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { darajaGatewayEnv, freePort, startFakeDaraja } from '../test/support/fake-daraja.js';
import { adminCall } from '../test/support/process.js';
import { startReceiver } from '../test/support/receiver.js';
import {
  connections,
  measure,
  measureFloor,
  printTable,
  seconds,
  signedPost,
  withBenchServer,
  type Figures,
} from './harness.js';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const callbackOrders = Number(process.env.BENCH_CALLBACK_ORDERS ?? 300);

let seq = 0;
/** A collection of its own phone (Daraja locks a subscriber with a live prompt) and a short id (its AccountReference). */
const collection = () => {
  seq += 1;
  const phone = `2547${String(seq % 100_000_000).padStart(8, '0')}`;
  return {
    amount: '150',
    channelType: 'CHARGE',
    externalOrderId: `b${process.pid % 1000}x${seq}`,
    phone,
    checkingPhone: phone,
  };
};

const create = (name: string, url: string, credentials: Credentials) =>
  measure(name, url, signedPost('/api/v3/ken/createCollectingOrder', credentials, collection));

const rows: Figures[] = [];
rows.push(
  await withBenchServer({}, ADMIN_TOKEN, (url, credentials) =>
    create('Kenya STK collection create, sandbox rail', url, credentials),
  ),
);
const daraja = await startFakeDaraja();
const receiver = await startReceiver();
let latencies: number[] = [];
try {
  const port = await freePort();
  rows.push(
    await withBenchServer(darajaGatewayEnv(daraja, port), ADMIN_TOKEN, async (url, credentials, merchantId) => {
      const figures = await create('Kenya STK collection create, Daraja (local fake)', url, credentials);
      await daraja.idle();
      // Daraja's callback → the merchant's callback, order by order, a few at a time.
      await adminCall({ url }, ADMIN_TOKEN, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, {
        url: `${receiver.url}/cb`,
      });
      const ids: string[] = [];
      for (let batch = 0; batch < callbackOrders / 10; batch++) {
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            const body = collection();
            ids.push(body.externalOrderId);
            await fetch(new URL('/api/v3/ken/createCollectingOrder', url), {
              method: 'POST',
              headers: { ...signedHeaders(credentials, body), 'content-type': 'application/json;charset=utf-8' },
              body: JSON.stringify(body),
            });
          }),
        );
      }
      const deadline = Date.now() + 30_000;
      while (receiver.received.length < ids.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const sent = new Map(
        daraja.prompts.map((p) => [(p.body as { AccountReference: string }).AccountReference, p.callbackSentAt]),
      );
      latencies = receiver.received
        .map((r) => {
          const { externalOrderId } = JSON.parse(r.body) as { externalOrderId: string };
          const at = sent.get(externalOrderId);
          return at === undefined ? undefined : r.at - at;
        })
        .filter((ms): ms is number => ms !== undefined)
        .sort((a, b) => a - b);
      return figures;
    }),
  );
} finally {
  await daraja.close();
  await receiver.close();
}
const base = await measureFloor();
printTable(`Kenya on Daraja, SQLite: ${connections} connections, ${seconds} s each`, base, [base, ...rows]);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
console.log(
  `\nDaraja STK callback → merchant callback over ${latencies.length} orders: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (the floor's p99: ${base.p99} ms, ratio ${(at(0.99) / Math.max(base.p99, 1)).toFixed(2)})`,
);
