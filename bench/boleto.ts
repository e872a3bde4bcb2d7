// Brazil's boleto at a real issuer, against the local issuers (test/support/fake-efi.ts, then
// test/support/fake-inter.ts, in this process), each behind a real gateway process: boleto
// collections created per second at a fixed concurrency (at Efí the boleto is registered before the
// merchant is answered; at Inter, whose boleto needs the payer's address, the create answers before
// any issue, and the payer's address given on the cashier page is what registers it, measured as
// its own row), then the way from the issuer's notification to the merchant's PAYMENT_SUCCESS
// callback, as p50/p99. Every figure is also a ratio to the floor, measured in the same run: the
// same number of signed PIX collection creates on a gateway with the default sandbox rails, and the
// same number of sandbox Pix collections paid through the admin sandbox route.
//   npm run bench:boleto   (SQLite in temporary directories)
// Environment: BENCH_ORDERS (creates per case, default 400), BENCH_CONCURRENCY (requests in flight,
// default 8), BENCH_CALLBACK_ORDERS (orders paid per case, default 120), BENCH_INTER_ISSUE_DELAY_MS
// (how long the local Inter keeps a charge EM_PROCESSAMENTO, default 100).
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { boletoReference } from '../src/brazil/collection-codes.js';
import { freePort } from '../test/support/fake-daraja.js';
import { EFI_TEST, efiGatewayEnv, startFakeEfi, type FakeEfi } from '../test/support/fake-efi.js';
import { interGatewayEnv, startFakeInter } from '../test/support/fake-inter.js';
import { adminCall } from '../test/support/process.js';
import { startReceiver, type CallbackReceiver } from '../test/support/receiver.js';
import { BENCH_ADMIN_TOKEN, withBenchServer } from './harness.js';
import { latencyRow, payInBatches, pool, quantile, successAt, until, type LatencyRow } from './rail-bench.js';

const orders = Number(process.env.BENCH_ORDERS ?? 400);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const callbackOrders = Math.min(orders, Number(process.env.BENCH_CALLBACK_ORDERS ?? 120));
const interIssueDelayMs = Number(process.env.BENCH_INTER_ISSUE_DELAY_MS ?? 100);
/** Requests made before each case's measurement (JIT, connections, the issuer's OAuth token), not counted. */
const WARM_UP = 2 * concurrency;

const COLLECT = '/api/v3/bra/createCollectingOrder';
const QUERY = '/api/v3/bra/query/collectingOrder';
const PAYER = { userInfoType: 'CPF', userInfoNo: '52998224725', userInfoName: 'Maria Souza' };
const ADDRESS = 'street=Rua+das+Flores&number=120&district=Centro&city=S%C3%A3o+Paulo&uf=SP&cep=01001-000';
/** The same for every gateway, the sandbox floor included: only the boleto rail differs. */
const COMMON_ENV = {
  BOLETO_RECONCILE_INTERVAL_MS: '60000',
  BOLETO_ISSUE_WAIT_MS: '5000',
  CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
  CALLBACK_POLL_INTERVAL_MS: '20',
  RAIL_POLL_INTERVAL_MS: '100',
};

let seq = 0;
const externalOrderId = () => `bb${process.pid}x${++seq}`;
const pixCollection = () => ({ amount: '125.50', channelType: 'PIX', externalOrderId: externalOrderId() });
const boletoCollection = () => ({
  amount: '125.50',
  channelType: 'BOLETO',
  externalOrderId: externalOrderId(),
  remark: 'bench',
  ...PAYER,
});

interface Gateway {
  url: string;
  credentials: Credentials;
  merchantId: string;
}

/** Runs `run` against a fresh gateway process (harness.ts's) with this benchmark's common settings. */
const withGateway = <T>(env: Record<string, string>, run: (gateway: Gateway) => Promise<T>): Promise<T> =>
  withBenchServer({ ...COMMON_ENV, ...env }, (url, credentials, merchantId) => run({ url, credentials, merchantId }));

interface Created {
  orderId: string;
  externalOrderId: string;
  cashierUrl: string;
  payParam: string;
}

async function signed(gateway: Gateway, path: string, body: Record<string, unknown>): Promise<unknown> {
  const answer = await fetch(new URL(path, gateway.url), {
    method: 'POST',
    headers: { ...signedHeaders(gateway.credentials, body), 'content-type': 'application/json;charset=utf-8' },
    body: JSON.stringify(body),
  });
  return answer.json();
}

/** One signed create: the order (undefined unless answered code "200") and the time it took. */
async function createOne(
  gateway: Gateway,
  makeBody: () => Record<string, unknown>,
): Promise<{ ms: number; order?: Created }> {
  const body = makeBody();
  const start = performance.now();
  const json = (await signed(gateway, COLLECT, body)) as {
    code?: string;
    data?: { cashierUrl?: string; currencyOrderVo?: { orderId?: string; payParam?: string } };
  };
  const ms = performance.now() - start;
  const vo = json.data?.currencyOrderVo;
  if (json.code !== '200' || vo?.orderId === undefined) return { ms };
  return {
    ms,
    order: {
      orderId: vo.orderId,
      externalOrderId: String(body.externalOrderId),
      cashierUrl: json.data?.cashierUrl ?? '',
      payParam: vo.payParam ?? '',
    },
  };
}

interface CreateRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** answered code "200" */
  ok: number;
  /** answered code "200" with the payment parameter (BR Code or linha digitável) filled */
  withPayParam: number;
  total: number;
}

/** `orders` creates at `concurrency`, after a warm-up; the figures and the orders created. */
async function measureCreates(
  name: string,
  gateway: Gateway,
  makeBody: () => Record<string, unknown>,
): Promise<{ row: CreateRow; created: Created[] }> {
  await pool(WARM_UP, concurrency, () => createOne(gateway, makeBody));
  const { results, ms } = await pool(orders, concurrency, () => createOne(gateway, makeBody));
  const created = results.flatMap((r) => (r.order === undefined ? [] : [r.order]));
  const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
  return {
    row: {
      name,
      rps: (results.length / ms) * 1000,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      ok: created.length,
      withPayParam: created.filter((c) => c.payParam !== '').length,
      total: results.length,
    },
    created,
  };
}

async function pointCallbacksAt(gateway: Gateway, receiver: CallbackReceiver): Promise<void> {
  const answer = await adminCall(
    gateway,
    BENCH_ADMIN_TOKEN,
    'PUT',
    `/admin/v1/merchants/${gateway.merchantId}/callback`,
    {
      url: `${receiver.url}/cb`,
    },
  );
  if (answer.status !== 200) throw new Error(`callback URL not set: ${answer.status} ${JSON.stringify(answer.body)}`);
}

// ---- the floor: sandbox Pix ------------------------------------------------------------------

async function sandboxFloor(): Promise<{ creates: CreateRow; callbacks: LatencyRow }> {
  const receiver = await startReceiver();
  try {
    return await withGateway({}, async (gateway) => {
      await pointCallbacksAt(gateway, receiver);
      const { row, created } = await measureCreates(
        'floor: PIX collection create, sandbox rail',
        gateway,
        pixCollection,
      );
      const paid = created.slice(0, callbackOrders);
      const paidAt = await payInBatches(receiver, paid, { concurrency, key: 'orderId' }, async (order) => {
        const answer = await adminCall(
          gateway,
          BENCH_ADMIN_TOKEN,
          'POST',
          `/admin/v1/sandbox/orders/${order.orderId}/events`,
          { event: 'paid' },
        );
        if (answer.status !== 200) throw new Error(`sandbox paid: ${answer.status} ${JSON.stringify(answer.body)}`);
      });
      const got = successAt(receiver);
      const callbacks = latencyRow(
        'floor: sandbox Pix paid (admin route) → callback',
        paid.map((o) => {
          const end = got.get(o.orderId);
          const start = paidAt.get(o.orderId);
          return end === undefined || start === undefined ? undefined : end - start;
        }),
      );
      return { creates: row, callbacks };
    });
  } finally {
    await receiver.close();
  }
}

// ---- Efí -------------------------------------------------------------------------------------

/** The order (custom_id) behind each notification token, as Efí's own GET /v1/notification/:token tells. */
async function efiTokenOrders(efi: FakeEfi, tokens: Iterable<string>): Promise<Map<string, string>> {
  const basic = Buffer.from(`${EFI_TEST.clientId}:${EFI_TEST.clientSecret}`).toString('base64');
  const auth = (await (
    await fetch(`${efi.url}/v1/authorize`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    })
  ).json()) as { access_token: string };
  const orderOf = new Map<string, string>();
  for (const token of tokens) {
    const answer = (await (
      await fetch(`${efi.url}/v1/notification/${token}`, { headers: { authorization: `Bearer ${auth.access_token}` } })
    ).json()) as { data?: { custom_id?: string | null }[] };
    const customId = answer.data?.[0]?.custom_id;
    if (typeof customId === 'string') orderOf.set(token, customId);
  }
  return orderOf;
}

async function efiCase(): Promise<{ creates: CreateRow; callbacks: LatencyRow }> {
  const efi = await startFakeEfi();
  const receiver = await startReceiver();
  try {
    const port = await freePort();
    return await withGateway(efiGatewayEnv(efi, port), async (gateway) => {
      await pointCallbacksAt(gateway, receiver);
      const { row, created } = await measureCreates(
        'BOLETO create, Efí (registered before the answer)',
        gateway,
        boletoCollection,
      );
      // Every charge's first notification (waiting) redeemed before any is paid.
      await efi.idle();
      const chargeOf = new Map<string, string>();
      for (const charge of efi.charges.values() as IterableIterator<{ custom_id: string | null; charge_id: number }>)
        if (charge.custom_id !== null) chargeOf.set(charge.custom_id, String(charge.charge_id));
      const paid = created.filter((o) => o.payParam !== '' && chargeOf.has(o.orderId)).slice(0, callbackOrders);
      const firstNotification = efi.notifications.length;
      const paidAt = await payInBatches(receiver, paid, { concurrency, key: 'orderId' }, async (order) => {
        efi.pay(chargeOf.get(order.orderId) ?? '', { method: 'BOLETO' });
      });
      const notifications = efi.notifications.slice(firstNotification);
      const orderOf = await efiTokenOrders(efi, new Set(notifications.map((n) => n.token)));
      // The first notification posted for each order after it was paid.
      const notifiedAt = new Map<string, number>();
      for (const n of notifications) {
        const orderId = orderOf.get(n.token);
        if (orderId === undefined || notifiedAt.has(orderId) || n.at < (paidAt.get(orderId) ?? Infinity)) continue;
        notifiedAt.set(orderId, n.at);
      }
      const got = successAt(receiver);
      const callbacks = latencyRow(
        'Efí notification → callback',
        paid.map((o) => {
          const end = got.get(o.orderId);
          const start = notifiedAt.get(o.orderId);
          return end === undefined || start === undefined ? undefined : end - start;
        }),
      );
      return { creates: row, callbacks };
    });
  } finally {
    await efi.close();
    await receiver.close();
  }
}

// ---- Banco Inter -----------------------------------------------------------------------------

async function interCase(): Promise<{ creates: CreateRow[]; callbacks: LatencyRow }> {
  const inter = await startFakeInter({ allowHttpWebhook: true, issueDelayMs: interIssueDelayMs });
  const receiver = await startReceiver();
  try {
    const port = await freePort();
    return await withGateway(interGatewayEnv(inter, port), async (gateway) => {
      await until(() => inter.webhookUrl !== undefined, 20_000, 'the gateway to register its webhook at Inter');
      await pointCallbacksAt(gateway, receiver);
      const { row, created } = await measureCreates(
        'BOLETO create, Inter (no issue: address not yet known)',
        gateway,
        boletoCollection,
      );
      // The payer gives the address on the cashier page: the boleto is registered (asynchronously at
      // Inter, followed for up to BOLETO_ISSUE_WAIT_MS) before the page answers.
      const giveAddress = async (order: Created) => {
        const start = performance.now();
        const answer = await fetch(`${order.cashierUrl}/boleto-payer?lang=en`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: ADDRESS,
          redirect: 'manual',
        });
        await answer.arrayBuffer();
        const ms = performance.now() - start;
        const queried = (await signed(gateway, QUERY, {
          orderId: order.orderId,
          externalOrderId: order.externalOrderId,
        })) as { data?: { expansionParam?: string }[] | { expansionParam?: string } };
        const record = Array.isArray(queried.data) ? queried.data[0] : queried.data;
        return { ms, ok: answer.status === 303, payParam: record?.expansionParam ?? '' };
      };
      const warm = created.slice(0, WARM_UP);
      const measured = created.slice(WARM_UP);
      await pool(warm.length, concurrency, (i) => giveAddress(warm[i] as Created));
      const registration = await pool(measured.length, concurrency, (i) => giveAddress(measured[i] as Created));
      const latencies = registration.results.map((r) => r.ms).sort((a, b) => a - b);
      const registered = measured.filter((_, i) => registration.results[i]?.payParam !== '');
      const addressRow: CreateRow = {
        name: 'Inter: payer address on cashier → boleto registered',
        rps: (measured.length / registration.ms) * 1000,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        ok: registration.results.filter((r) => r.ok).length,
        withPayParam: registered.length,
        total: measured.length,
      };
      // Issued charges' own callbacks (A_RECEBER) delivered before any is paid.
      await inter.idle();
      const chargeOf = new Map<string, string>();
      for (const charge of inter.charges.values() as IterableIterator<{
        cobranca: { codigoSolicitacao: string; seuNumero: string; situacao: string };
      }>)
        if (charge.cobranca.situacao === 'A_RECEBER')
          chargeOf.set(charge.cobranca.seuNumero, charge.cobranca.codigoSolicitacao);
      const paid = registered.filter((o) => chargeOf.has(boletoReference(o.orderId))).slice(0, callbackOrders);
      const firstCallback = inter.callbacks.length;
      const paidAt = await payInBatches(receiver, paid, { concurrency, key: 'orderId' }, (order) =>
        inter.pay(chargeOf.get(boletoReference(order.orderId)) ?? '', { pagarCom: 'BOLETO' }),
      );
      // The first RECEBIDO callback posted for each order after it was paid.
      const orderOfReference = new Map(paid.map((o) => [boletoReference(o.orderId), o.orderId]));
      const notifiedAt = new Map<string, number>();
      for (const c of inter.callbacks.slice(firstCallback)) {
        const item = (c.body as { seuNumero?: string; situacao?: string }[])[0];
        const orderId = orderOfReference.get(item?.seuNumero ?? '');
        if (orderId === undefined || item?.situacao !== 'RECEBIDO' || notifiedAt.has(orderId)) continue;
        if (c.at >= (paidAt.get(orderId) ?? Infinity)) notifiedAt.set(orderId, c.at);
      }
      const got = successAt(receiver);
      const callbacks = latencyRow(
        'Inter callback → merchant callback',
        paid.map((o) => {
          const end = got.get(o.orderId);
          const start = notifiedAt.get(o.orderId);
          return end === undefined || start === undefined ? undefined : end - start;
        }),
      );
      return { creates: [row, addressRow], callbacks };
    });
  } finally {
    await inter.close();
    await receiver.close();
  }
}

// ---- run and report --------------------------------------------------------------------------

const floor = await sandboxFloor();
const efi = await efiCase();
const inter = await interCase();

const ratio = (value: number, base: number) => (value / Math.max(base, 1)).toFixed(2);

console.log(
  `\nBoleto at a local issuer, SQLite: ${orders} signed creates per case, ${concurrency} in flight; ratios to the floor (first row)`,
);
console.log(
  'case'.padEnd(54),
  'req/s'.padStart(8),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'rps÷floor'.padStart(10),
  'p50÷floor'.padStart(10),
  'p99÷floor'.padStart(10),
  '  payParam',
);
const base = floor.creates;
for (const row of [base, efi.creates, ...inter.creates]) {
  console.log(
    row.name.padEnd(54),
    row.rps.toFixed(0).padStart(8),
    row.p50.toFixed(1).padStart(8),
    row.p99.toFixed(1).padStart(8),
    (row.rps / base.rps).toFixed(3).padStart(10),
    ratio(row.p50, base.p50).padStart(10),
    ratio(row.p99, base.p99).padStart(10),
    `  ${row.withPayParam}/${row.total}`,
    row.ok === row.total ? '' : `  (${row.total - row.ok} not answered code "200"/303!)`,
  );
}

console.log(
  `\nIssuer's notification → merchant's PAYMENT_SUCCESS callback, ${concurrency} orders paid at a time; ratios to the floor (first row)`,
);
console.log(
  'case'.padEnd(54),
  'orders'.padStart(8),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'p50÷floor'.padStart(10),
  'p99÷floor'.padStart(10),
);
const cbBase = floor.callbacks;
for (const row of [cbBase, efi.callbacks, inter.callbacks]) {
  console.log(
    row.name.padEnd(54),
    `${row.count}/${row.total}`.padStart(8),
    row.p50.toFixed(0).padStart(8),
    row.p99.toFixed(0).padStart(8),
    ratio(row.p50, cbBase.p50).padStart(10),
    ratio(row.p99, cbBase.p99).padStart(10),
    row.count === row.total ? '' : `  (${row.total - row.count} without a callback!)`,
  );
}
