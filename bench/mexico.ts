// Mexico's aggregate cashier against the local providers (test/support/fake-stp.ts and
// test/support/fake-stripe.ts, in this process), each behind a real gateway process: cashier
// creates per second at a fixed concurrency (endpoint 19's signed create, then the payer's choice on
// the form, which makes the order: a CLABE of its own for SPEI, a PaymentIntent at Stripe for OXXO),
// then the way from the provider's webhook (STP's abono, Stripe's signed event) to the merchant's
// PAYMENT_SUCCESS callback, as p50/p99. Every figure is also a ratio to the floor, measured in the
// same run: the same cashier creates choosing PIX on a gateway with the default sandbox rails, and
// the same number of those orders paid through the admin sandbox route.
//   npm run bench:mexico   (SQLite in temporary directories)
// Environment: BENCH_ORDERS (cashiers per case, default 300), BENCH_CONCURRENCY (in flight, default
// 8), BENCH_CALLBACK_ORDERS (orders paid per case, default 100).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { SecretBox } from '../src/store/secret-box.js';
import { freePort } from '../test/support/fake-daraja.js';
import { startFakeStp, STP_TEST, stpGatewayEnv, stpTestKeys } from '../test/support/fake-stp.js';
import { startFakeStripe, stripeGatewayEnv } from '../test/support/fake-stripe.js';
import { adminCall } from '../test/support/process.js';
import { startReceiver, type CallbackReceiver } from '../test/support/receiver.js';
import { BENCH_ADMIN_TOKEN, withBenchServer } from './harness.js';
import { latencyRow, payInBatches, pool, quantile, successAt, type LatencyRow } from './rail-bench.js';

const orders = Number(process.env.BENCH_ORDERS ?? 300);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const callbackOrders = Math.min(orders, Number(process.env.BENCH_CALLBACK_ORDERS ?? 100));
const WARM_UP = 2 * concurrency;
const COMMON_ENV = {
  MEXICO_RECONCILE_INTERVAL_MS: '60000',
  CALLBACK_POLL_INTERVAL_MS: '20',
  RAIL_POLL_INTERVAL_MS: '100',
};

interface Gateway {
  url: string;
  credentials: Credentials;
  merchantId: string;
}

interface Made {
  externalOrderId: string;
  /** The order's cashier page (its path), and what it shows. */
  cashierPath: string;
  page: string;
}

interface CreateRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  total: number;
}

let seq = 0;

const admin = (gateway: Gateway, method: string, path: string, body?: unknown) =>
  adminCall(gateway, BENCH_ADMIN_TOKEN, method, path, body);

/** One aggregate cashier opened and chosen: the order (read back through the admin API) and the time both took. */
async function cashier(gateway: Gateway, form: Record<string, string>): Promise<{ ms: number; made?: Made }> {
  const body = { externalOrderId: `mx${process.pid}x${++seq}` };
  const start = performance.now();
  const opened = (await (
    await fetch(new URL('/api/v3/polymerize/createCollectingOrder', gateway.url), {
      method: 'POST',
      headers: { ...signedHeaders(gateway.credentials, body), 'content-type': 'application/json;charset=utf-8' },
      body: JSON.stringify(body),
    })
  ).json()) as { code?: string; data?: string };
  if (opened.code !== '200' || opened.data === undefined) return { ms: performance.now() - start };
  const chosen = await fetch(new URL(new URL(opened.data).pathname, gateway.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  await chosen.arrayBuffer();
  const ms = performance.now() - start;
  const cashierPath = (chosen.headers.get('location') ?? '').split('?')[0] ?? '';
  if (chosen.status !== 303 || cashierPath === '') return { ms };
  const page = await (await fetch(new URL(cashierPath, gateway.url))).text();
  return { ms, made: { externalOrderId: body.externalOrderId, cashierPath, page } };
}

async function measure(name: string, gateway: Gateway, form: Record<string, string>) {
  await pool(WARM_UP, concurrency, () => cashier(gateway, form));
  const { results, ms } = await pool(orders, concurrency, () => cashier(gateway, form));
  const made = results.flatMap((r) => (r.made === undefined ? [] : [r.made]));
  const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
  const row: CreateRow = {
    name,
    rps: (results.length / ms) * 1000,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    ok: made.length,
    total: results.length,
  };
  return { row, made };
}

/** Pays each order (`pay` started at the instant recorded), `concurrency` at a time, awaiting each batch's callbacks. */
/** Pays each order, `concurrency` at a time (rail-bench's batches), and answers each one's time from payment to callback. */
async function payAll(receiver: CallbackReceiver, list: readonly Made[], pay: (made: Made) => Promise<void>) {
  const paidAt = await payInBatches(receiver, list, { concurrency, key: 'externalOrderId' }, pay);
  const got = successAt(receiver, 'externalOrderId');
  return list.map((m) => {
    const end = got.get(m.externalOrderId);
    const start = paidAt.get(m.externalOrderId);
    return end === undefined || start === undefined ? undefined : end - start;
  });
}

async function withMerchant<T>(
  env: Record<string, string>,
  currency: 'BRL' | 'MXN',
  run: (gateway: Gateway, receiver: CallbackReceiver) => Promise<T>,
): Promise<T> {
  const receiver = await startReceiver();
  try {
    return await withBenchServer({ ...COMMON_ENV, ...env }, async (url, credentials, merchantId) => {
      const gateway = { url, credentials, merchantId };
      await admin(gateway, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: `${receiver.url}/cb` });
      await admin(gateway, 'PUT', `/admin/v1/merchants/${merchantId}/cashier`, { currency });
      return await run(gateway, receiver);
    });
  } finally {
    await receiver.close();
  }
}

// ---- the floor: a Brazilian cashier choosing Pix, sandbox rails --------------------------------

const floor = await withMerchant({}, 'BRL', async (gateway, receiver) => {
  const { row, made } = await measure('floor: cashier → PIX, sandbox rail', gateway, {
    amount: '125.50',
    method: 'PIX',
  });
  const latencies = await payAll(receiver, made.slice(0, callbackOrders), async (m) => {
    const paid = await fetch(new URL(`${m.cashierPath}/sandbox`, gateway.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=paid',
      redirect: 'manual',
    });
    await paid.arrayBuffer();
  });
  return { creates: row, callbacks: latencyRow('floor: sandbox panel paid → callback', latencies) };
});

// ---- SPEI through the local STP ----------------------------------------------------------------

/**
 * The webhook paths' token derives from the master key: the benchmark gives its gateways a master
 * key of its own so that it can point the local providers at them (an operator reads the addresses
 * from the start-up log).
 */
const MASTER_KEY = 'ab'.repeat(32);
const secrets = new SecretBox(Buffer.from(MASTER_KEY, 'hex'));

const keys = stpTestKeys();
const keyPath = join(mkdtempSync(join(tmpdir(), 'cashgate-bench-stp-')), 'stp.pem');
writeFileSync(keyPath, keys.privateKeyPem);
const stp = await startFakeStp({ publicKey: keys.publicKey, empresa: STP_TEST.empresa });
const speiPort = await freePort();
stp.abonoWebhookUrl = `http://127.0.0.1:${speiPort}/rails/stp/${secrets.derive('cashgate stp webhook path')}/abono`;
const spei = await withMerchant(
  { ...stpGatewayEnv(stp, speiPort, keyPath), CASHGATE_MASTER_KEY: MASTER_KEY },
  'MXN',
  async (gateway, receiver) => {
    const { row, made } = await measure('cashier → SPEI, STP (a CLABE of its own)', gateway, {
      amount: '125.50',
      method: 'SPEI',
    });
    const latencies = await payAll(receiver, made.slice(0, callbackOrders), async (m) => {
      // The CLABE as the cashier page shows it (18 digits under the prefix).
      const clabe = new RegExp(`${STP_TEST.clabePrefix}\\d{8}`).exec(m.page)?.[0] ?? '';
      await stp.sendAbono({ cuentaBeneficiario: clabe, monto: '125.50' });
    });
    return { creates: row, callbacks: latencyRow('STP abono webhook → callback', latencies) };
  },
);
await stp.close();

// ---- OXXO through the local Stripe -------------------------------------------------------------

const stripe = await startFakeStripe({});
const oxxoPort = await freePort();
stripe.webhookUrl = `http://127.0.0.1:${oxxoPort}/rails/stripe/${secrets.derive('cashgate stripe webhook path')}`;
const oxxo = await withMerchant(
  {
    ...stripeGatewayEnv(stripe, oxxoPort),
    PORT: String(oxxoPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${oxxoPort}`,
    CASHGATE_MASTER_KEY: MASTER_KEY,
  },
  'MXN',
  async (gateway, receiver) => {
    const { row, made } = await measure('cashier → OXXO, Stripe (voucher issued)', gateway, {
      amount: '125.50',
      method: 'OXXO',
      name: 'Ana López',
      email: 'ana@example.mx',
    });
    const latencies = await payAll(receiver, made.slice(0, callbackOrders), async (m) => {
      // The voucher the page shows is the PaymentIntent's.
      const intents = [...stripe.intents.values()] as {
        id: string;
        next_action?: { oxxo_display_details?: { number?: string } } | null;
      }[];
      const intent = intents.find((i) => m.page.includes(i.next_action?.oxxo_display_details?.number ?? '\u0000'));
      stripe.pay(intent?.id ?? '');
    });
    return { creates: row, callbacks: latencyRow('Stripe signed event → callback', latencies) };
  },
);
await stripe.close();

// ---- report ------------------------------------------------------------------------------------

const ratio = (value: number, base: number) => (value / Math.max(base, 1e-9)).toFixed(2);
console.log(
  `\nMexico's cashier against local providers, SQLite: ${orders} cashiers per case, ${concurrency} in flight; ratios to the floor (first row)`,
);
console.log(
  'case'.padEnd(46),
  'per s'.padStart(7),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'rps÷floor'.padStart(10),
  'p99÷floor'.padStart(10),
  '  ok',
);
for (const row of [floor.creates, spei.creates, oxxo.creates])
  console.log(
    row.name.padEnd(46),
    row.rps.toFixed(0).padStart(7),
    row.p50.toFixed(1).padStart(8),
    row.p99.toFixed(1).padStart(8),
    ratio(row.rps, floor.creates.rps).padStart(10),
    ratio(row.p99, floor.creates.p99).padStart(10),
    `  ${row.ok}/${row.total}`,
  );
console.log(`\nWebhook → merchant callback, ${callbackOrders} orders per case`);
console.log(
  'case'.padEnd(46),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'p50÷floor'.padStart(10),
  'p99÷floor'.padStart(10),
  '  seen',
);
for (const row of [floor.callbacks, spei.callbacks, oxxo.callbacks] as LatencyRow[])
  console.log(
    row.name.padEnd(46),
    row.p50.toFixed(1).padStart(8),
    row.p99.toFixed(1).padStart(8),
    ratio(row.p50, floor.callbacks.p50).padStart(10),
    ratio(row.p99, floor.callbacks.p99).padStart(10),
    `  ${row.count}/${row.total}`,
  );
