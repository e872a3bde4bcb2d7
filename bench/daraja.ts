// Kenya on Daraja against the local fake Daraja (test/support/fake-daraja.ts, in this process):
// STK collections created per second, beside the same create on the sandbox rail and the floor
// (a bare route verifying the signature), all in one run; then the way from Daraja's STK callback
// to the merchant's callback (the callback confirmed by STK Push Query, the order paid, the
// merchant called), as p50/p99 over BENCH_CALLBACK_ORDERS orders (default 300).
//   npm run bench:daraja      (SQLite in a temporary directory)
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32).
import type { Credentials } from '@cashgate/sdk';
import { darajaGatewayEnv, freePort, startFakeDaraja } from '../test/support/fake-daraja.js';
import { startReceiver } from '../test/support/receiver.js';
import {
  connections,
  measure,
  measureFloor,
  printTable,
  seconds,
  printCallbackLatency,
  createAndAwaitCallbacks,
  signedPost,
  withBenchServer,
  type Figures,
} from './harness.js';

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
  await withBenchServer({}, (url, credentials) =>
    create('Kenya STK collection create, sandbox rail', url, credentials),
  ),
);
const daraja = await startFakeDaraja();
const receiver = await startReceiver();
try {
  const port = await freePort();
  rows.push(
    await withBenchServer(darajaGatewayEnv(daraja, port), async (url, credentials, merchantId) => {
      const figures = await create('Kenya STK collection create, Daraja (local fake)', url, credentials);
      await daraja.idle();
      // Daraja's callback → the merchant's callback, order by order, a few at a time.
      await createAndAwaitCallbacks({
        url,
        credentials,
        merchantId,
        path: '/api/v3/ken/createCollectingOrder',
        makeBody: collection,
        count: callbackOrders,
        receiver,
      });
      return figures;
    }),
  );
} finally {
  await daraja.close();
  await receiver.close();
}
const base = await measureFloor();
printTable(`Kenya on Daraja, SQLite: ${connections} connections, ${seconds} s each`, base, [base, ...rows]);
const sent = new Map(
  daraja.prompts.map((p) => [(p.body as { AccountReference: string }).AccountReference, p.callbackSentAt]),
);
printCallbackLatency(
  'Daraja STK callback → merchant callback',
  receiver,
  (callback) => sent.get(String(callback.externalOrderId)),
  base,
);
