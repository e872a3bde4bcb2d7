// Brazil on API Pix against the local PSP (test/support/fake-psp.ts, in this process): PIX
// collections created per second, each with its charge (cob) made at the PSP over mutual TLS before
// the merchant is answered, beside the same create on the sandbox rail and the floor (a bare route
// verifying the signature), all in one run; then the way from the PSP's webhook to the merchant's
// callback (the Pix confirmed with GET /pix/{e2eid}, the order paid, the merchant called), as
// p50/p99 over BENCH_CALLBACK_ORDERS orders (default 300).
//   npm run bench:pix      (SQLite in a temporary directory)
// Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32).
import type { Credentials } from '@cashgate/sdk';
import { cobTxid } from '../src/brazil/collection-codes.js';
import { freePort } from '../test/support/fake-daraja.js';
import { apiPixGatewayEnv, startFakePsp } from '../test/support/fake-psp.js';
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
const collection = () => ({ amount: '125.50', channelType: 'PIX', externalOrderId: `bp${process.pid}x${++seq}` });

const create = (name: string, url: string, credentials: Credentials) =>
  measure(name, url, signedPost('/api/v3/bra/createCollectingOrder', credentials, collection));

const rows: Figures[] = [];
rows.push(
  await withBenchServer({}, (url, credentials) => create('PIX collection create, sandbox rail', url, credentials)),
);
const psp = await startFakePsp();
const receiver = await startReceiver();
try {
  const port = await freePort();
  rows.push(
    await withBenchServer(apiPixGatewayEnv(psp, port), async (url, credentials, merchantId) => {
      const figures = await create('PIX collection create, API Pix (local PSP, cob included)', url, credentials);
      // The PSP's webhook → the merchant's callback, order by order, a few at a time.
      await createAndAwaitCallbacks({
        url,
        credentials,
        merchantId,
        path: '/api/v3/bra/createCollectingOrder',
        makeBody: collection,
        count: callbackOrders,
        receiver,
        afterCreate: async (data) => {
          await psp.pay(cobTxid((data as { currencyOrderVo: { orderId: string } }).currencyOrderVo.orderId));
        },
      });
      return figures;
    }),
  );
} finally {
  await psp.close();
  await receiver.close();
}
const base = await measureFloor();
printTable(`Brazil on API Pix, SQLite: ${connections} connections, ${seconds} s each`, base, [base, ...rows]);
const delivered = new Map<string, number>();
for (const delivery of psp.webhookDeliveries) {
  const txid = (delivery.body as { pix?: { txid?: string }[] }).pix?.[0]?.txid;
  if (txid !== undefined && !delivered.has(txid)) delivered.set(txid, delivery.at);
}
printCallbackLatency(
  'PSP webhook → merchant callback',
  receiver,
  (callback) => delivered.get(cobTxid(String(callback.orderId))),
  base,
);
