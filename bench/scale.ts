// Whether Cashgate's latency stays flat as its database grows. For each size (10^4 then 10^6 orders
// by default) a fresh database is seeded with orders of every area, kind and status over 50 merchants,
// with their order events, ledger journals, entries and settlements, and callback events and attempts;
// then the real server is started on it and the merchant API and console are measured:
//   npm run bench:scale                               (SQLite in a temporary directory)
//   BENCH_DATABASE_URL=postgres://… npm run bench:scale   (also PostgreSQL: one fresh database per size,
//                                                      cashgate_scale_<n>, on that URL's server)
// Environment: BENCH_SCALE_SIZES (default 10000,1000000), BENCH_SECONDS (default 5), BENCH_CONNECTIONS
// (default 32), BENCH_SCALE_MERCHANTS (default 50), BENCH_SCALE_SHARE (the measured merchant's share of
// the orders, default 0.1), BENCH_SCALE_KEEP=1 (keep the seeded databases and their data directories),
// BENCH_SCALE_ONLY=sqlite|postgres, BENCH_SCALE_REUSE=<data directory a KEEP run printed> (measure a
// copy of that seeded database, without seeding a new one: a million orders are seeded once and
// measured before and after a change, each from the same state; the server applies any new migration
// to the copy when it starts).
//
// Every run first measures the floor (bench/harness.ts: a bare Fastify route that verifies a signed
// request, for BENCH_SECONDS or 10 s) and gives each case's p99 as a ratio to the floor's.
//
// How the seed is made: the measured merchant and its key come from the CLI (which runs the
// migrations); the server then creates the other merchants, fee schedules and, through the signed API,
// a few real orders of every kind. Those orders are the templates of the seeded ones: each seeded order
// is a copy of one (its details, create result and codes, with its own ids), moved to a status along
// the transitions of src/orders/state-machine.ts with the ledger postings of src/orders/effects.ts and
// src/exchange/service.ts. The rows go in with the server stopped, through Store.transact, one unit of
// work per batch; the ledger accounts' balances are set to the sums of the seeded entries.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql, type Selectable } from 'kysely';
import pg from 'pg';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { backofficeCookie, consoleCookie } from './console-session.js';
import { measureFloor, type Figures as FloorFigures } from './harness.js';
import { adminCall, CLI, runCli } from '../test/support/process.js';
import { Store, type Tx } from '../src/store/store.js';
import type {
  CallbackAttemptTable,
  CallbackEventTable,
  Database,
  LedgerAccountKind,
  LedgerEntryTable,
  LedgerJournalTable,
  LedgerSettlementTable,
  OrderEventTable,
  OrderTable,
} from '../src/store/schema.js';
import type { Currency } from '../src/money.js';
import { formatMoney, fromDb } from '../src/money.js';
import { feeFor } from '../src/ledger/fees.js';
import { storedFeeRule, withDetails } from '../src/orders/details.js';
import { paymentCallbackPayload } from '../src/orders/records.js';
import { INITIAL_STATUS, statusText } from '../src/orders/state-machine.js';
import { successDetails } from '../src/brazil/kinds.js';
import * as orderQueries from '../src/orders/queries.js';
import * as consoleQueries from '../src/console/queries.js';
import * as backofficeQueries from '../src/backoffice/queries.js';
import * as callbackQueries from '../src/callbacks/queries.js';
import * as ledgerQueries from '../src/ledger/queries.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const sizes = (process.env.BENCH_SCALE_SIZES ?? '10000,1000000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
const merchantCount = Math.max(2, Number(process.env.BENCH_SCALE_MERCHANTS ?? 50));
const measuredShare = Math.min(1, Math.max(1 / merchantCount, Number(process.env.BENCH_SCALE_SHARE ?? 0.1)));
const keep = process.env.BENCH_SCALE_KEEP === '1';
const only = process.env.BENCH_SCALE_ONLY;
const reuse = process.env.BENCH_SCALE_REUSE;
/** What a kept data directory says about its seed, for BENCH_SCALE_REUSE. */
const KEPT_FILE = 'bench-scale.json';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const MINUTE = 60_000;
const DAY = 86_400_000;
/** Orders are spread over this much time before the seed starts. */
const SPAN_MS = 90 * DAY;
/** Orders per unit of work while seeding. */
const BATCH_ORDERS = 2_000;
/** Bound parameters per statement (SQLite's limit is 32,766). */
const MAX_PARAMS = 30_000;
/** The merchants' default settlement delay (D+1). */
const SETTLEMENT_DELAY_MS = DAY;
/** Collections younger than this still wait for their payer; transfers younger than a tenth of it are in progress. */
const PENDING_WINDOW_MS = 30 * MINUTE;
const TRON_ADDRESS = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';

type OrderRow = Selectable<OrderTable>;
type OrderEventRow = Selectable<OrderEventTable>;
type JournalRow = Selectable<LedgerJournalTable>;
type EntryRow = Selectable<LedgerEntryTable>;
type SettlementRow = Selectable<LedgerSettlementTable>;
type CallbackEventRow = Selectable<CallbackEventTable>;
type CallbackAttemptRow = Selectable<CallbackAttemptTable>;

// ---------------------------------------------------------------------------------------------------
// Randomness: fast ids in the formats of src/store/ids.ts and newOrderId.

let pool = randomBytes(0);
let poolAt = 0;
function random(bytes: number): Buffer {
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(1 << 20);
    poolAt = 0;
  }
  poolAt += bytes;
  return pool.subarray(poolAt - bytes, poolAt);
}
const rid = (prefix: string, bytes = 12) => `${prefix}_${random(bytes).toString('hex')}`;
const orderId = (prefix: string) => `${prefix}${random(12).toString('hex').toUpperCase()}`;
const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));
const chance = (p: number) => Math.random() < p;

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** A fresh value in the same shape as `value` (digits stay digits, hex stays hex, else Base58). */
function sameShape(value: string): string {
  const alphabet = /^\d+$/.test(value)
    ? '0123456789'
    : /^[0-9a-f]+$/.test(value)
      ? '0123456789abcdef'
      : /^[0-9A-F]+$/.test(value)
        ? '0123456789ABCDEF'
        : BASE58;
  let out = '';
  for (const byte of random(value.length)) out += alphabet[byte % alphabet.length] ?? '0';
  return out;
}

// ---------------------------------------------------------------------------------------------------
// HTTP helpers.

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
  /** The server's CPU time (user + system) per request, in µs: what a request costs, whatever else runs on the machine. */
  cpuMicros?: number | undefined;
}

/** A process's CPU time so far (user + system), in µs, from /proc (Linux), as bench/harness.ts reads it. */
function cpuMicrosOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime, the 12th and 13th fields after the command name, in clock ticks (100 a second).
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
  } catch {
    return undefined;
  }
}

async function measure(url: string, request: autocannon.Request): Promise<Figures> {
  // A generous timeout: a request given up on would be sent again while the server still works on it.
  const result = await autocannon({ url, connections, duration: seconds, timeout: 300, requests: [request] });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    requests: result.requests.total,
  };
}

/** An admin API call that must answer 200: its body. */
async function admin<T>(baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await adminCall({ url: baseUrl }, ADMIN_TOKEN, method, path, body);
  if (answer.status !== 200)
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as T;
}

interface Envelope<T> {
  code: string;
  msgEn?: string;
  data: T;
}

async function signedCall<T>(
  baseUrl: string,
  credentials: Credentials,
  method: 'GET' | 'POST',
  path: string,
  body: Record<string, unknown> = {},
): Promise<{ status: number; text: string; json: Envelope<T> }> {
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers: {
      ...signedHeaders(credentials, body),
      ...(method === 'POST' && { 'content-type': 'application/json;charset=utf-8' }),
    },
    ...(method === 'POST' && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Envelope<T> };
}

/** A signed request whose body (or query) is made afresh for every request. */
function signedRequest(
  method: 'GET' | 'POST',
  path: string,
  credentials: Credentials,
  makeBody: () => Record<string, unknown>,
  onBadAnswer: () => void,
): autocannon.Request {
  return {
    method,
    path,
    setupRequest: (request) => {
      const body = makeBody();
      return method === 'GET'
        ? { ...request, headers: { ...signedHeaders(credentials, body) } }
        : {
            ...request,
            headers: { ...signedHeaders(credentials, body), 'content-type': 'application/json;charset=utf-8' },
            body: JSON.stringify(body),
          };
    },
    // A 200 carrying another code (e.g. 300 "order not found") is an error too.
    onResponse: (status, body) => {
      if (status !== 200 || !body.includes('"code":"200"')) onBadAnswer();
    },
  };
}

interface Server {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * `cashgate serve` on a port of its own, ready once /ping answers: at LOG_LEVEL=warn the server does
 * not log its ready line, which test/support/process.ts waits for.
 */
async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keepTail = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout.on('data', keepTail);
  child.stderr.on('data', keepTail);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((done) =>
    child.on('close', (code) => {
      exitCode = code;
      done();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`the server exited with ${exitCode}:\n${output}`);
    try {
      if ((await fetch(new URL('/ping', url))).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not start in 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The merchants, keys and template orders, made through the CLI and the server.

interface OtherMerchant {
  merchantId: string;
  accessKey: string;
  callbackUrl: string | null;
}

interface Setup {
  merchantId: string;
  credentials: Credentials;
  callbackUrl: string;
  others: OtherMerchant[];
}

const callbackUrlOf = (n: number) => `https://shop-${n}.example.com/cashgate/callback`;

const FEES: Record<string, { percentBps: number; fixed?: string; minimum?: string }> = {
  'bra.collection.PIX': { percentBps: 150, minimum: '0.50' },
  'bra.collection.PIX_DYNAMIC': { percentBps: 150, minimum: '0.50' },
  'bra.collection.BOLETO': { percentBps: 0, fixed: '2.50' },
  'bra.transfer.PIX': { percentBps: 0, fixed: '1.00' },
  'bra.transfer.BANK': { percentBps: 0, fixed: '3.00' },
  'ken.collection.CHARGE': { percentBps: 200, minimum: '5' },
  'ken.collection.BANK': { percentBps: 150 },
  'ken.transfer.BANK': { percentBps: 0, fixed: '15' },
  'exchange.fiat_to_token.BRL': { percentBps: 100 },
  'exchange.token_to_fiat.BRL': { percentBps: 100 },
};

let templateSeq = 0;
const ext = (kind: string) => `tpl-${kind}-${Date.now()}-${++templateSeq}`;
const payer = { userInfoType: 'CPF', userInfoNo: '529.982.247-25', userInfoName: 'Maria da Silva' };

/** The create requests whose orders are the templates: three amounts of every kind and channel. */
const TEMPLATE_REQUESTS: { path: string; bodies: Record<string, unknown>[] }[] = [
  {
    path: '/api/v3/bra/createCollectingOrder',
    bodies: (['PIX', 'PIX_DYNAMIC', 'BOLETO'] as const).flatMap((channelType) =>
      ['125.50', '49.90', '1200.00'].map((amount) => ({
        amount,
        channelType,
        externalOrderId: ext('bc'),
        ...payer,
        remark: 'order 42',
      })),
    ),
  },
  {
    path: '/api/v3/bra/createTransferOrder',
    bodies: ['50.00', '250.00', '980.10'].map((currencyAmount) => ({
      currencyAmount,
      channelType: 'PIX',
      externalOrderId: ext('bt'),
      personIdType: 'CPF',
      personId: '529.982.247-25',
      personName: 'Maria da Silva',
      accountType: 'EMAIL',
      accountId: 'maria@example.com.br',
    })),
  },
  {
    path: '/api/v3/bra/bank/createTransferOrder',
    bodies: ['80.10', '1500.00', '320.00'].map((currencyAmount) => ({
      currencyAmount,
      channelType: 'BANK',
      externalOrderId: ext('bb'),
      personIdType: 'CNPJ',
      personId: '11.222.333/0001-81',
      personName: 'Loja Azul Ltda',
      accountType: 'CC',
      accountId: '12345-6',
      bankName: 'Banco do Brasil S.A.',
      agency: '1234',
    })),
  },
  {
    path: '/api/v3/ken/createCollectingOrder',
    bodies: (['CHARGE', 'BANK'] as const).flatMap((channelType) =>
      ['1500', '350', '12000'].map((amount) => ({
        amount,
        channelType,
        externalOrderId: ext('kc'),
        phone: '254712345678',
        checkingPhone: '254712345123',
        remark: 'order 42',
      })),
    ),
  },
  {
    path: '/api/v3/ken/createTransferOrder',
    bodies: ['700', '100', '5000'].map((currencyAmount) => ({
      channelType: 'BANK',
      currencyAmount,
      externalOrderId: ext('kt'),
      phone: '254712345678',
    })),
  },
  {
    path: '/api/v3/exchange/fiat/to/wallet',
    bodies: ['100', '550', '2000'].map((currencyAmount) => ({
      addressTo: TRON_ADDRESS,
      chainType: 'TRON',
      tokenType: 'USDT',
      currencyAmount,
      currencyType: 'BRL',
      externalOrderId: ext('xf'),
    })),
  },
  {
    path: '/api/v3/exchange/wallet/to/fiat',
    bodies: ['25.5', '10', '100'].map((tokenAmount) => ({
      tokenAmount,
      chainType: 'TRON',
      addressFrom: TRON_ADDRESS,
      currencyType: 'BRL',
      tokenType: 'USDT',
      externalOrderId: ext('xt'),
    })),
  },
];

async function createKey(env: Record<string, string>, merchantId: string): Promise<Credentials> {
  const key = await runCli(['key', 'create', '--merchant', merchantId, '--permissions', 'all'], env);
  if (key.code !== 0) throw new Error(key.stderr);
  return JSON.parse(key.stdout) as Credentials;
}

async function setUp(env: Record<string, string>): Promise<Setup> {
  const created = await runCli(['merchant', 'create', '--name', 'Measured shop'], env);
  if (created.code !== 0) throw new Error(created.stderr);
  const { merchantId } = JSON.parse(created.stdout) as { merchantId: string };
  const credentials = await createKey(env, merchantId);
  const server = await startServer(env);
  try {
    const base = server.url;
    await admin(base, 'PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.40', sell: '5.50' });
    const callbackUrl = callbackUrlOf(0);
    await admin(base, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: callbackUrl });
    for (const [channel, fee] of Object.entries(FEES)) {
      await admin(base, 'PUT', `/admin/v1/merchants/${merchantId}/fees/${channel}`, { reason: 'bench fee', ...fee });
    }
    for (const [currency, amount] of [
      ['BRL', '1000000'],
      ['KES', '100000000'],
    ]) {
      await admin(base, 'POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
        currency,
        amount,
        reason: 'bench opening balance',
      });
    }
    for (const { path, bodies } of TEMPLATE_REQUESTS) {
      for (const body of bodies) {
        const answer = await signedCall(base, credentials, 'POST', path, body);
        if (answer.json.code !== '200') throw new Error(`creating a template order at ${path} failed: ${answer.text}`);
      }
    }
    const others: OtherMerchant[] = [];
    for (let n = 1; n < merchantCount; n++) {
      const merchant = await admin<{ merchantId: string }>(base, 'POST', '/admin/v1/merchants', {
        name: `Shop ${n}`,
      });
      const key = await admin<{ accessKey: string }>(
        base,
        'POST',
        `/admin/v1/merchants/${merchant.merchantId}/api-keys`,
        {
          permissions: ['all'],
          ipWhitelist: '0.0.0.0',
        },
      );
      // One merchant in ten never set a callback address: its callbacks have no target.
      const url = n % 10 === 0 ? null : callbackUrlOf(n);
      if (url !== null) await admin(base, 'PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url });
      others.push({ merchantId: merchant.merchantId, accessKey: key.accessKey, callbackUrl: url });
    }
    return { merchantId, credentials, callbackUrl, others };
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------------
// The seed.

/** How often each area and kind occurs, and within it each channel. */
const KIND_WEIGHTS: Record<string, number> = {
  'bra.collection': 45,
  'bra.transfer': 15,
  'ken.collection': 20,
  'ken.transfer': 10,
  'exchange.fiat_to_token': 5,
  'exchange.token_to_fiat': 5,
};
const CHANNEL_WEIGHTS: Record<string, number> = { PIX: 6, PIX_DYNAMIC: 3, BOLETO: 1.5, CHARGE: 7, BANK: 3 };

const FAILURE_TEXT: Record<string, string> = {
  expired: 'the payer did not pay before the cashier expired',
  cancelled: 'the payer cancelled the payment',
  bank_rejected: 'the receiving bank rejected the transfer',
  failed: 'the transfer failed at the payment rail',
  exchange_failed: 'the fiat was not taken: the order failed before the tokens were sent',
  quote_lapsed: 'no deposit arrived before the quote expired',
};

interface Template {
  row: OrderRow;
  /** The rail reference's own part, when it is not made from the order id (a location id, a barcode, an address). */
  railValue: string | undefined;
}

interface SeedResult {
  /** (orderId, externalOrderId) of the measured merchant's Brazil collections. */
  queryable: { orderId: string; externalOrderId: string }[];
  /** One order of the measured merchant per area, kind and status, for the console detail page check. */
  samples: Map<string, string>;
  rows: Record<string, number>;
  ms: number;
}

class Batch {
  orders: OrderRow[] = [];
  orderEvents: OrderEventRow[] = [];
  journals: JournalRow[] = [];
  entries: EntryRow[] = [];
  settlements: SettlementRow[] = [];
  callbackEvents: CallbackEventRow[] = [];
  callbackAttempts: CallbackAttemptRow[] = [];
}

async function insertAll(tx: Tx, table: keyof Database, rows: readonly object[]): Promise<void> {
  const first = rows[0];
  if (first === undefined) return;
  const per = Math.max(1, Math.floor(MAX_PARAMS / Object.keys(first).length));
  for (let at = 0; at < rows.length; at += per) {
    await tx
      .insertInto(table)
      .values(rows.slice(at, at + per))
      .execute();
  }
}

class Seeder {
  readonly balances = new Map<string, number>();
  readonly result: SeedResult = { queryable: [], samples: new Map(), rows: {}, ms: 0 };
  readonly #picks: { template: Template; weight: number }[] = [];
  readonly #totalWeight: number;
  readonly #now: number;

  constructor(
    private readonly setup: Setup,
    templates: readonly OrderRow[],
    now: number,
  ) {
    this.#now = now;
    const byChannel = new Map<string, OrderRow[]>();
    for (const row of templates) {
      const key = `${row.area}.${row.kind}.${row.channel_type}`;
      byChannel.set(key, [...(byChannel.get(key) ?? []), row]);
    }
    const channelsOfKind = new Map<string, number>();
    for (const key of byChannel.keys()) {
      const kind = key.split('.').slice(0, 2).join('.');
      channelsOfKind.set(kind, (channelsOfKind.get(kind) ?? 0) + (CHANNEL_WEIGHTS[key.split('.')[2] ?? ''] ?? 1));
    }
    for (const [key, rows] of byChannel) {
      const kind = key.split('.').slice(0, 2).join('.');
      const kindWeight = KIND_WEIGHTS[kind] ?? 0;
      const channelWeight = (CHANNEL_WEIGHTS[key.split('.')[2] ?? ''] ?? 1) / (channelsOfKind.get(kind) ?? 1);
      for (const row of rows) {
        const railValue =
          row.rail_ref?.includes(row.id.slice(0, 25)) === true ? undefined : row.rail_ref?.split(':').at(-1);
        this.#picks.push({ template: { row, railValue }, weight: (kindWeight * channelWeight) / rows.length });
      }
    }
    this.#totalWeight = this.#picks.reduce((sum, p) => sum + p.weight, 0);
    if (this.#picks.length === 0) throw new Error('no template orders were found');
  }

  #pick(): Template {
    let at = Math.random() * this.#totalWeight;
    for (const p of this.#picks) {
      at -= p.weight;
      if (at <= 0) return p.template;
    }
    return (this.#picks.at(-1) as { template: Template }).template;
  }

  #post(
    batch: Batch,
    journal: {
      kind: string;
      merchantId: string;
      orderId: string | null;
      currency: Currency;
      at: number;
      memo?: string;
    },
    entries: [string, number][],
  ): void {
    const moving = entries.filter(([, amount]) => amount !== 0);
    if (moving.length === 0) return;
    const id = rid('jnl');
    batch.journals.push({
      id,
      kind: journal.kind,
      merchant_id: journal.merchantId,
      order_id: journal.orderId,
      currency: journal.currency,
      memo: journal.memo ?? null,
      created_at: journal.at,
    });
    for (const [code, amount] of moving.sort(([a], [b]) => (a < b ? -1 : 1))) {
      this.balances.set(code, (this.balances.get(code) ?? 0) + amount);
      batch.entries.push({
        id: rid('ent'),
        journal_id: id,
        account_code: code,
        merchant_id: code.startsWith('system/') ? null : journal.merchantId,
        currency: journal.currency,
        amount,
        created_at: journal.at,
      });
    }
  }

  /** One seeded order at `createdAt` with every row it would have by now. */
  add(batch: Batch, createdAt: number, seq: number): void {
    const template = this.#pick();
    const t = template.row;
    const measured = chance(measuredShare);
    const other = this.setup.others[Math.floor(Math.random() * this.setup.others.length)];
    const merchantId = measured || other === undefined ? this.setup.merchantId : other.merchantId;
    const accessKey = measured || other === undefined ? this.setup.credentials.accessKey : other.accessKey;
    // The measured merchant set its callback address 80 days ago: its earlier callbacks had no target.
    const callbackUrl =
      measured || other === undefined
        ? createdAt < this.#now - 80 * DAY
          ? null
          : this.setup.callbackUrl
        : other.callbackUrl;
    const id = orderId(t.id.slice(0, 2));
    const externalOrderId = `ord-${seq}-${random(4).toString('hex')}`;
    const cashierId = t.cashier_id === null ? null : rid('csh', 16);
    const railValue = template.railValue === undefined ? undefined : sameShape(template.railValue);
    const lifetime = t.cashier_expire_at === null ? null : t.cashier_expire_at - t.created_at;
    const pending = createdAt > this.#now - PENDING_WINDOW_MS;
    const cashierExpireAt = lifetime === null ? null : pending ? this.#now + 3 * 60 * MINUTE : createdAt + lifetime;
    const replace = (text: string): string => {
      let out = text.split(t.id).join(id).split(t.id.slice(0, 25)).join(id.slice(0, 25));
      out = out.split(t.external_order_id).join(externalOrderId);
      if (t.cashier_id !== null && cashierId !== null) out = out.split(t.cashier_id).join(cashierId);
      if (template.railValue !== undefined && railValue !== undefined)
        out = out.split(template.railValue).join(railValue);
      out = out.split(String(t.created_at)).join(String(createdAt));
      if (t.cashier_expire_at !== null && cashierExpireAt !== null)
        out = out.split(String(t.cashier_expire_at)).join(String(cashierExpireAt));
      return out;
    };
    const order: OrderRow = {
      ...t,
      status: INITIAL_STATUS[t.kind],
      actual_amount: null,
      pay_time: null,
      complete_time: null,
      error_msg: null,
      error_msg_en: null,
      id,
      merchant_id: merchantId,
      access_key: accessKey,
      external_order_id: externalOrderId,
      request_hash: random(32).toString('hex'),
      create_result: replace(t.create_result),
      details: replace(t.details),
      cashier_id: cashierId,
      cashier_expire_at: cashierExpireAt,
      channel_order_id: `CH${random(10).toString('hex').toUpperCase()}`,
      rail_ref: t.rail_ref === null ? null : replace(t.rail_ref),
      created_at: createdAt,
      updated_at: createdAt,
    };
    const currency = order.currency;
    const acct = (kind: LedgerAccountKind) =>
      kind === 'available' || kind === 'frozen' || kind === 'awaiting_settlement'
        ? `${merchantId}/${currency}/${kind}`
        : `system/${currency}/${kind}`;
    const events: [string, number | null, number, string, number][] = [
      ['created', null, order.status, 'api', createdAt],
    ];
    const move = (event: string, to: number, source: string, at: number) => {
      events.push([event, order.status, to, source, at]);
      order.status = to;
      order.updated_at = at;
    };
    const fail = (event: string, at: number) => {
      order.complete_time = at;
      order.error_msg = FAILURE_TEXT[event] ?? event;
      order.error_msg_en = order.error_msg;
    };
    const journal = (kind: string, at: number) => ({ kind, merchantId, orderId: id, currency, at });
    const amount = order.amount;
    const soon = (low: number, high: number) => Math.min(this.#now - 1_000, createdAt + between(low, high));
    let final = false;

    if (order.kind === 'collection') {
      if (!pending) {
        final = true;
        const roll = Math.random();
        if (roll < 0.7) {
          const paidAt = soon(10_000, 20 * MINUTE);
          const fee = Number(feeFor(BigInt(amount), storedFeeRule(order)));
          move('paid', 2, 'rail', paidAt);
          Object.assign(order, { actual_amount: amount, fee, pay_time: paidAt, complete_time: paidAt });
          if (order.area === 'bra') order.details = withDetails(order.details, successDetails(order, paidAt));
          this.#post(batch, journal('collection.paid', paidAt), [
            [acct('rail_clearing'), -amount],
            [acct('awaiting_settlement'), amount - fee],
            [acct('fee_income'), fee],
          ]);
          if (amount - fee > 0) {
            const due = paidAt + SETTLEMENT_DELAY_MS;
            const settledAt = due <= this.#now ? due + between(0, 5_000) : null;
            batch.settlements.push({
              id: rid('stl'),
              merchant_id: merchantId,
              currency,
              amount: amount - fee,
              order_id: id,
              due_at: due,
              settled_at: settledAt,
              created_at: paidAt,
            });
            if (settledAt !== null) {
              this.#post(batch, journal('settlement', settledAt), [
                [acct('awaiting_settlement'), -(amount - fee)],
                [acct('available'), amount - fee],
              ]);
            }
          }
        } else if (roll < 0.95) {
          const at = order.cashier_expire_at ?? soon(30 * MINUTE, 30 * MINUTE);
          move('expired', 3, 'expiry', at);
          fail('expired', at);
        } else {
          const at = soon(MINUTE, 10 * MINUTE);
          move('cancelled', 4, 'rail', at);
          fail('cancelled', at);
        }
      }
    } else if (order.kind === 'transfer') {
      const total = amount + order.fee;
      this.#post(batch, journal('transfer.freeze', createdAt), [
        [acct('available'), -total],
        [acct('frozen'), total],
      ]);
      const young = createdAt > this.#now - PENDING_WINDOW_MS / 10;
      if (!young || chance(0.5)) move('processing', 2, 'rail', soon(1_000, 5_000));
      if (!young) {
        final = true;
        const at = soon(MINUTE, 10 * MINUTE);
        const roll = Math.random();
        if (roll < 0.9) {
          move('succeeded', 8, 'rail', at);
          Object.assign(order, { actual_amount: amount, pay_time: at, complete_time: at });
          if (order.area === 'bra') order.details = withDetails(order.details, successDetails(order, at));
          this.#post(batch, journal('transfer.paid', at), [
            [acct('frozen'), -total],
            [acct('rail_clearing'), amount],
            [acct('fee_income'), order.fee],
          ]);
        } else {
          const event = roll < 0.94 ? 'bank_rejected' : 'failed';
          move(event, event === 'bank_rejected' ? 4 : 16, 'rail', at);
          fail(event, at);
          order.fee = 0;
          this.#post(batch, journal('transfer.released', at), [
            [acct('frozen'), -total],
            [acct('available'), total],
          ]);
        }
      }
    } else if (order.kind === 'fiat_to_token') {
      final = true;
      this.#post(batch, journal('exchange.freeze', createdAt), [
        [acct('available'), -amount],
        [acct('frozen'), amount],
      ]);
      if (chance(0.85)) {
        const paidAt = soon(5_000, 60_000);
        move('paid', 2, 'rail', paidAt);
        order.actual_amount = amount;
        order.pay_time = paidAt;
        this.#post(batch, journal('exchange.fiat_taken', paidAt), [
          [acct('frozen'), -amount],
          [acct('token_clearing'), amount - order.fee],
          [acct('fee_income'), order.fee],
        ]);
        const sentAt = soon(60_000, 5 * MINUTE);
        move('token_sent', 4, 'rail', sentAt);
        order.details = withDetails(order.details, { tradeHash: random(32).toString('hex') });
        const doneAt = soon(5 * MINUTE, 10 * MINUTE);
        move('token_received', 8, 'rail', doneAt);
        order.complete_time = doneAt;
      } else {
        const at = soon(MINUTE, 10 * MINUTE);
        move('failed', 32, 'rail', at);
        fail('exchange_failed', at);
        order.fee = 0;
        this.#post(batch, journal('exchange.released', at), [
          [acct('frozen'), -amount],
          [acct('available'), amount],
        ]);
      }
    } else {
      final = true;
      if (chance(0.8)) {
        const at = soon(2 * MINUTE, 20 * MINUTE);
        move('token_received', 8, 'rail', at);
        Object.assign(order, { actual_amount: amount - order.fee, pay_time: at, complete_time: at });
        order.details = withDetails(order.details, {
          tradeHash: random(32).toString('hex'),
          receivedUnits: (JSON.parse(order.details) as { tokenUnits?: string }).tokenUnits,
          receivedFrom: TRON_ADDRESS,
        });
        this.#post(batch, journal('exchange.credited', at), [
          [acct('token_clearing'), -amount],
          [acct('available'), amount - order.fee],
          [acct('fee_income'), order.fee],
        ]);
      } else {
        const at = order.cashier_expire_at ?? soon(30 * MINUTE, 30 * MINUTE);
        move('expired', 32, 'expiry', at);
        fail('quote_lapsed', at);
        order.fee = 0;
      }
    }

    batch.orders.push(order);
    for (const [event, from, to, source, at] of events) {
      batch.orderEvents.push({ id: rid('oev'), order_id: id, event, from_status: from, to_status: to, source, at });
    }
    if (final) this.#callback(batch, order, callbackUrl);
    if (measured) {
      if (order.area === 'bra' && order.kind === 'collection')
        this.result.queryable.push({ orderId: id, externalOrderId });
      const kindKey = `${order.area}.${order.kind}.${order.status}`;
      if (!this.result.samples.has(kindKey)) this.result.samples.set(kindKey, id);
    }
  }

  /** The order's automatic callback: delivered (mostly at once), failed after its retries, or without a target. */
  #callback(batch: Batch, order: OrderRow, target: string | null): void {
    const at = order.complete_time ?? order.updated_at;
    const payload =
      order.kind === 'collection'
        ? paymentCallbackPayload(order, (JSON.parse(order.details) as { payParam?: string }).payParam ?? '')
        : {
            currencyType: order.currency,
            orderId: order.id,
            externalOrderId: order.external_order_id,
            orderStatus: statusText(order.kind, order.status),
            orderStatusCode: order.status,
            orderAmount: formatMoney(fromDb(order.amount), order.currency),
            orderFee: formatMoney(fromDb(order.fee), order.currency),
            orderTime: order.created_at,
            orderPayTime: order.pay_time,
            errorMsg: order.error_msg,
            errorMsgEn: order.error_msg_en,
          };
    const id = rid('cbe');
    const event: CallbackEventRow = {
      id,
      notify_id: rid('ntf'),
      order_id: order.id,
      order_kind: `${order.area}.${order.kind}`,
      merchant_id: order.merchant_id,
      access_key: order.access_key,
      trigger: 'automatic',
      payload: JSON.stringify(payload),
      target_url: target,
      target_host: target === null ? null : new URL(target).host,
      state: target === null ? 'no_target' : 'delivered',
      attempts: 0,
      next_attempt_at: null,
      first_attempt_at: null,
      lease_token: null,
      lease_owner: null,
      created_at: at,
      updated_at: at,
    };
    if (target !== null) {
      const roll = Math.random();
      // Delivered at the first try, after a few failures, or never (the retry window closed).
      const failures = roll < 0.9 ? 0 : roll < 0.96 ? between(1, 3) : 10;
      const delivered = failures < 10;
      let startedAt = at + between(5, 200);
      for (let n = 1; n <= failures + (delivered ? 1 : 0); n++) {
        const ok = delivered && n === failures + 1;
        const timedOut = !ok && chance(0.3);
        const latency = ok ? between(40, 600) : timedOut ? 10_000 : between(20, 900);
        batch.callbackAttempts.push({
          id: rid('cba'),
          event_id: id,
          merchant_id: order.merchant_id,
          attempt_no: n,
          url: target,
          started_at: startedAt,
          latency_ms: latency,
          http_status: ok ? 200 : timedOut ? null : 502,
          outcome: ok ? 'delivered' : 'failed',
          error: ok ? null : timedOut ? 'timeout after 10000 ms' : 'HTTP 502: only 200 acknowledges a callback',
          response_excerpt: ok ? 'success' : timedOut ? null : '<html><body>502 Bad Gateway</body></html>',
        });
        event.first_attempt_at ??= startedAt;
        event.attempts = n;
        event.updated_at = startedAt + latency;
        startedAt += 180_000 + between(0, 2_000);
      }
      event.state = delivered ? 'delivered' : 'failed';
    }
    batch.callbackEvents.push(event);
  }
}

const CURRENCIES_SEEDED: readonly Currency[] = ['BRL', 'KES'];
const MERCHANT_ACCOUNTS: readonly LedgerAccountKind[] = ['available', 'frozen', 'awaiting_settlement'];
const SYSTEM_ACCOUNTS: readonly LedgerAccountKind[] = ['fee_income', 'rail_clearing', 'token_clearing', 'adjustments'];

async function seed(store: Store, setup: Setup, total: number): Promise<SeedResult> {
  const started = Date.now();
  const templates = await store.read
    .selectFrom('orders')
    .selectAll()
    .where('merchant_id', '=', setup.merchantId)
    .execute();
  const toSeed = Math.max(0, total - templates.length);
  const now = Date.now();
  const seeder = new Seeder(setup, templates, now);
  const merchants = [setup.merchantId, ...setup.others.map((o) => o.merchantId)];
  // Every account the seed posts to, so that the entries' foreign keys hold from the first batch.
  await store.transact(async (tx) => {
    if (store.dialect === 'sqlite') await sql`pragma cache_size = -262144`.execute(tx);
    const accounts = [
      ...merchants.flatMap((m) =>
        CURRENCIES_SEEDED.flatMap((c) => MERCHANT_ACCOUNTS.map((kind) => ({ code: `${m}/${c}/${kind}`, m, c, kind }))),
      ),
      ...CURRENCIES_SEEDED.flatMap((c) =>
        SYSTEM_ACCOUNTS.map((kind) => ({ code: `system/${c}/${kind}`, m: null, c, kind })),
      ),
    ];
    await tx
      .insertInto('ledger_accounts')
      .values(
        accounts.map((a) => ({
          code: a.code,
          merchant_id: a.m,
          currency: a.c,
          kind: a.kind,
          balance: 0,
          created_at: now - SPAN_MS - DAY,
          updated_at: now - SPAN_MS - DAY,
        })),
      )
      .onConflict((oc) => oc.column('code').doNothing())
      .execute();
  });
  const counts: Record<string, number> = {};
  const count = (name: string, n: number) => (counts[name] = (counts[name] ?? 0) + n);
  let lastReport = Date.now();
  for (let from = 0; from < toSeed; from += BATCH_ORDERS) {
    const batch = new Batch();
    const until = Math.min(toSeed, from + BATCH_ORDERS);
    for (let i = from; i < until; i++) {
      const createdAt = Math.floor(now - SPAN_MS + ((i + Math.random()) * SPAN_MS) / toSeed);
      seeder.add(batch, createdAt, i);
    }
    await store.transact(async (tx) => {
      await insertAll(tx, 'orders', batch.orders);
      await insertAll(tx, 'order_events', batch.orderEvents);
      await insertAll(tx, 'ledger_journals', batch.journals);
      await insertAll(tx, 'ledger_entries', batch.entries);
      await insertAll(tx, 'ledger_settlements', batch.settlements);
      await insertAll(tx, 'callback_events', batch.callbackEvents);
      await insertAll(tx, 'callback_attempts', batch.callbackAttempts);
    });
    count('orders', batch.orders.length);
    count('order_events', batch.orderEvents.length);
    count('ledger_journals', batch.journals.length);
    count('ledger_entries', batch.entries.length);
    count('ledger_settlements', batch.settlements.length);
    count('callback_events', batch.callbackEvents.length);
    count('callback_attempts', batch.callbackAttempts.length);
    if (Date.now() - lastReport > 10_000 || until === toSeed) {
      lastReport = Date.now();
      const elapsed = (Date.now() - started) / 1000;
      console.log(
        `  seeded ${until.toLocaleString('en')} / ${toSeed.toLocaleString('en')} orders in ${elapsed.toFixed(0)} s (${Math.round(until / elapsed).toLocaleString('en')} orders/s)`,
      );
    }
  }
  // Opening balances, then every account's balance = the sum of its entries (as Ledger.post keeps it).
  await store.transact(async (tx) => {
    const opening = new Batch();
    for (const merchantId of merchants) {
      for (const currency of CURRENCIES_SEEDED) {
        const available = seeder.balances.get(`${merchantId}/${currency}/available`) ?? 0;
        const amount = Math.max(0, -available) + (currency === 'BRL' ? 10_000_000 : 1_000_000);
        seeder.balances.set(`${merchantId}/${currency}/available`, available + amount);
        seeder.balances.set(
          `system/${currency}/adjustments`,
          (seeder.balances.get(`system/${currency}/adjustments`) ?? 0) - amount,
        );
        const id = rid('jnl');
        const at = now - SPAN_MS - DAY;
        opening.journals.push({
          id,
          kind: 'adjustment',
          merchant_id: merchantId,
          order_id: null,
          currency,
          memo: 'opening balance',
          created_at: at,
        });
        opening.entries.push(
          {
            id: rid('ent'),
            journal_id: id,
            account_code: `${merchantId}/${currency}/available`,
            merchant_id: merchantId,
            currency,
            amount,
            created_at: at,
          },
          {
            id: rid('ent'),
            journal_id: id,
            account_code: `system/${currency}/adjustments`,
            merchant_id: null,
            currency,
            amount: -amount,
            created_at: at,
          },
        );
      }
    }
    await insertAll(tx, 'ledger_journals', opening.journals);
    await insertAll(tx, 'ledger_entries', opening.entries);
    for (const [code, delta] of seeder.balances) {
      await tx
        .updateTable('ledger_accounts')
        .set({ balance: sql<number>`balance + ${delta}`, updated_at: now })
        .where('code', '=', code)
        .execute();
    }
  });
  seeder.result.rows = counts;
  seeder.result.ms = Date.now() - started;
  return seeder.result;
}

// ---------------------------------------------------------------------------------------------------
// One size: set up, seed, check, measure, explain.

const CASES = [
  { key: 'create', name: '1  signed PIX collection create' },
  { key: 'query', name: '2  signed Brazil collection query (orderId + externalOrderId)' },
  { key: 'balance', name: '3  signed BRL balance query' },
  { key: 'list', name: '4a console orders, 50 newest' },
  { key: 'filtered', name: '4b console orders ?area=bra&kind=collection&status=1' },
  { key: 'search', name: '4c console orders ?q=<externalOrderId>' },
  { key: 'totals', name: '4d console orders, totals of the last 31 days (asked for)' },
  { key: 'callbacks', name: '5  console callback log' },
  { key: 'boList', name: '6a back office orders, 50 newest of all merchants' },
  { key: 'boSearch', name: '6b back office orders ?q=<externalOrderId>' },
  { key: 'boFiltered', name: '6c back office orders ?merchant=<id>&status=1' },
  { key: 'boToday', name: '7  back office Today' },
] as const;
type CaseKey = (typeof CASES)[number]['key'];

interface SizeResult {
  size: number;
  setupMs: number;
  seed: SeedResult;
  figures: Map<CaseKey, Figures>;
}

interface Backend {
  label: string;
  /** The server's URL to make each size's database on; undefined: SQLite. */
  serverUrl: string | undefined;
}

const fmtSize = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

async function freshPostgresDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropPostgresDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}

/** Every measured endpoint must answer 200 (and code "200") before it is measured. */
async function preflight(base: string, setup: Setup, cookie: string, seeded: SeedResult): Promise<void> {
  const sample = seeded.queryable[0];
  if (sample === undefined) throw new Error('the measured merchant has no Brazil collection to query');
  const api: [string, 'GET' | 'POST', string, Record<string, unknown>][] = [
    ['create', 'POST', '/api/v3/bra/createCollectingOrder', pixCollection()],
    ['query', 'POST', '/api/v3/bra/query/collectingOrder', sample],
    ['balance', 'GET', '/api/v3/bra/query/balance', {}],
  ];
  for (const [name, method, path, body] of api) {
    const answer = await signedCall(base, setup.credentials, method, path, body);
    if (answer.status !== 200 || answer.json.code !== '200') {
      console.log(`${name}: ${method} ${path} answered ${answer.status}:\n${answer.text}`);
      throw new Error(`${path} does not answer 200`);
    }
  }
  const pages = [
    '/console/orders',
    '/console/orders?area=bra&kind=collection&status=1',
    `/console/orders?q=${encodeURIComponent(sample.externalOrderId)}`,
    '/console/callbacks',
    ...[...seeded.samples.values()].map((id) => `/console/orders/${id}`),
  ];
  for (const path of pages) {
    const response = await fetch(new URL(path, base), { headers: { cookie } });
    const text = await response.text();
    if (response.status !== 200) {
      console.log(`GET ${path} answered ${response.status}:\n${text.slice(0, 4000)}`);
      throw new Error(`${path} does not answer 200`);
    }
  }
  console.log(
    `  checked: 3 signed endpoints, 4 console pages and ${seeded.samples.size} seeded order pages answer 200`,
  );
}

/**
 * The back-office pages measured answer 200 as a viewer; a search by an externalOrderId of the
 * measured merchant finds it (one order: 303 to its timeline, or a list that holds it).
 */
async function preflightBackoffice(base: string, setup: Setup, cookie: string, seeded: SeedResult): Promise<void> {
  const sample = seeded.queryable[0];
  if (sample === undefined) throw new Error('the measured merchant has no order to search for');
  const pages = ['/backoffice/orders', `/backoffice/orders?merchant=${setup.merchantId}&status=1`, '/backoffice'];
  for (const path of pages) {
    const response = await fetch(new URL(path, base), { headers: { cookie } });
    const text = await response.text();
    if (response.status !== 200) {
      console.log(`GET ${path} answered ${response.status}:\n${text.slice(0, 4000)}`);
      throw new Error(`${path} does not answer 200`);
    }
  }
  const search = `/backoffice/orders?q=${encodeURIComponent(sample.externalOrderId)}`;
  const found = await fetch(new URL(search, base), { headers: { cookie }, redirect: 'manual' });
  const text = await found.text();
  if (!(found.status === 303 || (found.status === 200 && text.includes(sample.orderId)))) {
    throw new Error(`${search} did not find order ${sample.orderId} (answered ${found.status})`);
  }
  console.log(
    `  checked: 3 back-office pages answer 200; a search by externalOrderId finds its order (${found.status})`,
  );
}

/** The console's date filters for the last `n` UTC days, today included. */
function lastDays(n: number): string {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return `from=${day(Date.now() - (n - 1) * DAY)}&to=${day(Date.now())}`;
}

let orderSeq = 0;
const pixCollection = () => ({
  amount: '125.50',
  channelType: 'PIX',
  externalOrderId: `bench-${process.pid}-${Date.now()}-${++orderSeq}`,
});

async function measureAll(
  base: string,
  serverPid: number | undefined,
  setup: Setup,
  cookie: string,
  staffCookie: string,
  seeded: SeedResult,
): Promise<Map<CaseKey, Figures>> {
  const figures = new Map<CaseKey, Figures>();
  const anyOrder = () =>
    seeded.queryable[Math.floor(Math.random() * seeded.queryable.length)] ?? { orderId: '', externalOrderId: '' };
  const drain = () => fetch(new URL('/ping', base), { signal: AbortSignal.timeout(900_000) });
  const run = async (key: CaseKey, request: (bad: () => void) => autocannon.Request) => {
    // A second of the same load first, not counted: the server's code and the pages it reads are warm.
    await autocannon({ url: base, connections, duration: 1, timeout: 300, requests: [request(() => undefined)] });
    await drain();
    let bad = 0;
    const cpuBefore = cpuMicrosOf(serverPid);
    const result = await measure(
      base,
      request(() => (bad += 1)),
    );
    // The requests still in the server when the case ended must not count against the next case.
    const drainStarted = Date.now();
    await drain();
    const drainMs = Date.now() - drainStarted;
    const cpuAfter = cpuMicrosOf(serverPid);
    const cpuMicros =
      cpuBefore === undefined || cpuAfter === undefined || result.requests === 0
        ? undefined
        : (cpuAfter - cpuBefore) / result.requests;
    const f: Figures = { ...result, errors: Math.max(result.errors, bad), cpuMicros };
    figures.set(key, f);
    console.log(
      `  ${(CASES.find((c) => c.key === key)?.name ?? key).padEnd(56)} p50 ${f.p50.toFixed(1).padStart(7)} ms  p99 ${f.p99.toFixed(1).padStart(7)} ms  ${f.rps.toFixed(0).padStart(6)} req/s${f.cpuMicros === undefined ? '' : `  ${f.cpuMicros.toFixed(0).padStart(6)} µs CPU/req`}${f.errors > 0 ? `  ${f.errors} errors or bad answers` : ''}${drainMs > 1_000 ? `  (the server was busy ${(drainMs / 1000).toFixed(1)} s more after the case)` : ''}`,
    );
  };
  const page =
    (path: () => string, as = cookie, ok: readonly number[] = [200]) =>
    (bad: () => void): autocannon.Request => ({
      method: 'GET',
      path: path(),
      headers: { cookie: as },
      setupRequest: (request) => ({ ...request, path: path() }),
      onResponse: (status) => {
        if (!ok.includes(status)) bad();
      },
    });
  // Reads first: the creates of case 1 would put fresh pending collections at the top of the console's lists.
  await run('query', (bad) =>
    signedRequest('POST', '/api/v3/bra/query/collectingOrder', setup.credentials, () => ({ ...anyOrder() }), bad),
  );
  await run('balance', (bad) => signedRequest('GET', '/api/v3/bra/query/balance', setup.credentials, () => ({}), bad));
  await run(
    'list',
    page(() => '/console/orders'),
  );
  await run(
    'filtered',
    page(() => '/console/orders?area=bra&kind=collection&status=1'),
  );
  await run(
    'search',
    page(() => `/console/orders?q=${encodeURIComponent(anyOrder().externalOrderId)}`),
  );
  await run(
    'totals',
    page(() => `/console/orders?${lastDays(31)}&totals=1`),
  );
  await run(
    'callbacks',
    page(() => '/console/callbacks'),
  );
  await run(
    'boList',
    page(() => '/backoffice/orders', staffCookie),
  );
  await run(
    'boSearch',
    // One order found answers 303 to its timeline (the search, not the timeline, is measured); an
    // externalOrderId that several merchants used answers the list of them.
    page(() => `/backoffice/orders?q=${encodeURIComponent(anyOrder().externalOrderId)}`, staffCookie, [200, 303]),
  );
  await run(
    'boFiltered',
    page(() => `/backoffice/orders?merchant=${setup.merchantId}&status=1`, staffCookie),
  );
  await run(
    'boToday',
    page(() => '/backoffice', staffCookie),
  );
  await run('create', (bad) =>
    signedRequest('POST', '/api/v3/bra/createCollectingOrder', setup.credentials, pixCollection, bad),
  );
  return figures;
}

/** A seeded database and what the bench knows of it: the measured merchant, its key and orders. */
interface Seeded {
  size: number;
  dataDir: string;
  databaseUrl: string | undefined;
  setupMs: number;
  setup: Setup;
  seeded: SeedResult;
}

/** The server's environment on a seeded database. */
function envOf(dataDir: string, databaseUrl: string | undefined): Record<string, string> {
  return {
    CASHGATE_DATA_DIR: dataDir,
    KEY_ACTIVATION_DELAY_MS: '0',
    RATE_LIMIT_PER_KEY_PER_MINUTE: '100000000',
    LOG_LEVEL: 'warn',
    CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
  };
}

async function runSize(backend: Backend, size: number, explain: boolean): Promise<SizeResult> {
  console.log(`\n${backend.label}, ${size.toLocaleString('en')} orders`);
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-scale-'));
  const dbName = `cashgate_scale_${size}`;
  const databaseUrl =
    backend.serverUrl === undefined ? undefined : await freshPostgresDatabase(backend.serverUrl, dbName);
  const env = envOf(dataDir, databaseUrl);
  try {
    const setupStarted = Date.now();
    const setup = await setUp(env);
    const setupMs = Date.now() - setupStarted;
    console.log(`  ${merchantCount} merchants, keys and template orders made in ${(setupMs / 1000).toFixed(1)} s`);
    const store = Store.open({ databaseUrl, dataDir });
    let seeded: SeedResult;
    try {
      seeded = await seed(store, setup, size);
    } finally {
      await store.close();
    }
    if (databaseUrl !== undefined) {
      // PostgreSQL's autovacuum would vacuum and analyze the new rows soon after such a load (its
      // visibility map lets an index answer alone, as on a database in service); do it now.
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query('vacuum analyze');
      } finally {
        await client.end();
      }
    }
    console.log(
      `  seeding took ${(seeded.ms / 1000).toFixed(1)} s: ${Object.entries(seeded.rows)
        .map(([table, n]) => `${n.toLocaleString('en')} ${table}`)
        .join(', ')}; the measured merchant has ${seeded.queryable.length.toLocaleString('en')} Brazil collections`,
    );
    const run: Seeded = { size, dataDir, databaseUrl, setupMs, setup, seeded };
    if (keep) {
      writeFileSync(
        join(dataDir, KEPT_FILE),
        JSON.stringify({ ...run, label: backend.label, seeded: { ...seeded, samples: [...seeded.samples] } }),
      );
    }
    const result = await measureSeeded(backend, run, explain);
    if (keep) console.log(`  kept: ${databaseUrl ?? join(dataDir, 'cashgate.sqlite')}; BENCH_SCALE_REUSE=${dataDir}`);
    return result;
  } finally {
    if (!keep) {
      rmSync(dataDir, { recursive: true, force: true });
      if (backend.serverUrl !== undefined) await dropPostgresDatabase(backend.serverUrl, dbName);
    }
  }
}

/**
 * A copy of the database a BENCH_SCALE_KEEP run left (its data directory, and its PostgreSQL database
 * when it had one), as that run wrote it down: every measurement starts from the same seeded state,
 * whatever the creates of an earlier measurement and the migrations of the code measured did to a copy.
 */
async function copyOfKept(keptDir: string): Promise<{ backend: Backend; run: Seeded; drop(): Promise<void> }> {
  const kept = JSON.parse(readFileSync(join(keptDir, KEPT_FILE), 'utf8')) as Omit<Seeded, 'seeded' | 'dataDir'> & {
    label: string;
    seeded: Omit<SeedResult, 'samples'> & { samples: [string, string][] };
  };
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-scale-copy-'));
  cpSync(keptDir, dataDir, { recursive: true });
  let databaseUrl: string | undefined;
  if (kept.databaseUrl !== undefined) {
    const url = new URL(kept.databaseUrl);
    const keptName = url.pathname.slice(1);
    const server = new URL(kept.databaseUrl);
    server.pathname = '/postgres';
    const client = new pg.Client({ connectionString: server.toString() });
    await client.connect();
    try {
      await client.query(`drop database if exists ${keptName}_copy with (force)`);
      await client.query(`create database ${keptName}_copy template ${keptName}`);
    } finally {
      await client.end();
    }
    url.pathname = `/${keptName}_copy`;
    databaseUrl = url.toString();
  }
  return {
    backend: { label: `${kept.label}, a copy of ${keptDir}`, serverUrl: databaseUrl },
    run: {
      ...kept,
      dataDir,
      databaseUrl,
      seeded: { ...kept.seeded, samples: new Map(kept.seeded.samples) },
    },
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      if (databaseUrl !== undefined && kept.databaseUrl !== undefined) {
        const name = new URL(databaseUrl).pathname.slice(1);
        await dropPostgresDatabase(kept.databaseUrl, name);
      }
    },
  };
}

/** Starts the server on a seeded database, checks the measured pages, measures every case, then explains. */
async function measureSeeded(backend: Backend, run: Seeded, explain: boolean): Promise<SizeResult> {
  const { dataDir, databaseUrl, setup, seeded } = run;
  const server = await startServer(envOf(dataDir, databaseUrl));
  let figures: Map<CaseKey, Figures>;
  try {
    const cookie = await consoleCookie(server.url, setup.merchantId, ADMIN_TOKEN);
    const staffCookie = await backofficeCookie(server.url, ADMIN_TOKEN);
    await preflight(server.url, setup, cookie, seeded);
    await preflightBackoffice(server.url, setup, staffCookie, seeded);
    figures = await measureAll(server.url, server.pid, setup, cookie, staffCookie, seeded);
  } finally {
    await server.stop();
  }
  if (explain) await explainQueries(backend, dataDir, databaseUrl, setup, seeded);
  return { size: run.size, setupMs: run.setupMs, seed: seeded, figures };
}

// ---------------------------------------------------------------------------------------------------
// The queries behind the measured cases, with their plans and times, run by the project's own query
// functions on a connection that records what they send.

interface Captured {
  sql: string;
  parameters: readonly unknown[];
  ms: number;
}

async function explainQueries(
  backend: Backend,
  dataDir: string,
  databaseUrl: string | undefined,
  setup: Setup,
  seeded: SeedResult,
): Promise<void> {
  const captured: Captured[] = [];
  const log = (event: {
    level: string;
    query: { sql: string; parameters: readonly unknown[] };
    queryDurationMillis: number;
  }) => {
    if (event.level === 'query')
      captured.push({ sql: event.query.sql, parameters: event.query.parameters, ms: event.queryDurationMillis });
  };
  const pgPool = databaseUrl === undefined ? undefined : new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const db = new Kysely<Database>({
    dialect:
      pgPool === undefined
        ? new SqliteDialect({ database: new SqliteDatabase(join(dataDir, 'cashgate.sqlite'), { readonly: true }) })
        : new PostgresDialect({ pool: pgPool }),
    log,
  });
  const dialect = pgPool === undefined ? 'sqlite' : 'postgres';
  const merchantId = setup.merchantId;
  const sample = seeded.queryable[Math.floor(seeded.queryable.length / 2)] ?? { orderId: '', externalOrderId: '' };
  const today = Math.floor(Date.now() / DAY) * DAY;
  const probes: [string, () => Promise<unknown>][] = [
    ['2  orders.findOrder (collection query by orderId)', () => orderQueries.findOrder(db, sample.orderId)],
    [
      "1  orders.findByExternalId (a create's repeat check, by externalOrderId)",
      () =>
        orderQueries.findByExternalId(db, {
          merchantId,
          area: 'bra',
          kind: 'collection',
          externalOrderId: sample.externalOrderId,
        }),
    ],
    ['3  ledger.accountsOfMerchant (balance query)', () => ledgerQueries.accountsOfMerchant(db, merchantId)],
    ['4a console.searchOrders, 50 newest', () => consoleQueries.searchOrders(db, { merchantId, limit: 51 })],
    [
      '4b console.searchOrders area=bra kind=collection status=1',
      () => consoleQueries.searchOrders(db, { merchantId, area: 'bra', kind: 'collection', status: 1, limit: 51 }),
    ],
    [
      '4c console.searchOrders q=<externalOrderId>',
      () => consoleQueries.searchOrders(db, { merchantId, q: sample.externalOrderId, limit: 51 }),
    ],
    [
      '4c console.searchOrders q=<externalOrderId> status=2',
      () => consoleQueries.searchOrders(db, { merchantId, q: sample.externalOrderId, status: 2, limit: 51 }),
    ],
    [
      '4d console.orderTotals, the last 31 days (one statement a day)',
      () => consoleQueries.orderTotals(db, { merchantId, from: today - 30 * DAY, until: today + DAY, limit: 51 }),
    ],
    [
      '4d console.orderTotals, the last 31 days, area=bra kind=collection status=1',
      () =>
        consoleQueries.orderTotals(db, {
          merchantId,
          area: 'bra',
          kind: 'collection',
          status: 1,
          from: today - 30 * DAY,
          until: today + DAY,
          limit: 51,
        }),
    ],
    [
      '4  console.searchOrders status=success (any kind)',
      () => consoleQueries.searchOrders(db, { merchantId, statuses: consoleQueries.SUCCEEDED, limit: 51 }),
    ],
    [
      '4  console.searchOrders area=cashier (none)',
      () => consoleQueries.searchOrders(db, { merchantId, area: 'cashier', limit: 51 }),
    ],
    [
      '4  console.searchOrders, the last 31 days, page 2',
      () =>
        consoleQueries.searchOrders(db, {
          merchantId,
          from: today - 30 * DAY,
          until: today + DAY,
          before: { createdAt: today - DAY, id: '' },
          limit: 51,
        }),
    ],
    [
      '4  console.searchOrders differs=1 (a chunk of orders at a time)',
      () => consoleQueries.searchOrders(db, { merchantId, differentAmount: true, limit: 51 }),
    ],
    [
      '4  console.searchOrders q=<a text no order has> (a chunk of orders at a time)',
      () => consoleQueries.searchOrders(db, { merchantId, q: 'no-such-text', limit: 51 }),
    ],
    ['6a backoffice.backofficeOrders, 50 newest', () => backofficeQueries.backofficeOrders(db, {}, { limit: 51 })],
    [
      '6c backoffice.backofficeOrders merchant=<id> status=1',
      () => backofficeQueries.backofficeOrders(db, { merchantId, status: 1 }, { limit: 51 }),
    ],
    ['5  callbacks.attemptsOfMerchant (log page)', () => callbackQueries.attemptsOfMerchant(db, merchantId, {}, 51)],
    [
      '5  callbacks.attemptsOfMerchant orderId=… (log page of one order)',
      () => callbackQueries.attemptsOfMerchant(db, merchantId, { orderId: sample.orderId }, 51),
    ],
    [
      '5  callbacks.noTargetEventsOfMerchant (log page)',
      () => callbackQueries.noTargetEventsOfMerchant(db, merchantId, {}, 10),
    ],
    ['bg orders.expiredOrders (expiry worker, every 5 s)', () => orderQueries.expiredOrders(db, Date.now(), 100)],
    [
      'bg callbacks.selectDueEvents (dispatcher, every 1 s)',
      () => callbackQueries.selectDueEvents(db, dialect, Date.now(), 50, []),
    ],
    [
      'bg ledger.dueSettlements (settlement worker, every 5 s)',
      () => ledgerQueries.dueSettlements(db, dialect === 'postgres', Date.now(), 500),
    ],
    ['metrics callbacks.queueStats (/metrics)', () => callbackQueries.queueStats(db, Date.now())],
  ];
  console.log(
    `\n  ${backend.label}: the queries behind the cases at ${fmtSize(seeded.rows.orders ?? 0)} orders (median of 5 runs)`,
  );
  try {
    for (const [name, probe] of probes) {
      const runs: Captured[][] = [];
      for (let n = 0; n < 5; n++) {
        captured.length = 0;
        await probe();
        runs.push([...captured]);
      }
      const last = runs.at(-1) ?? [];
      if (last.length > 3) {
        // A read in chunks (a day, or some orders, at a time): the whole, the longest, the first two.
        const median = (values: number[]) => values.sort((a, b) => a - b)[2] ?? 0;
        const all = median(runs.map((r) => r.reduce((sum, q) => sum + q.ms, 0)));
        const longest = median(runs.map((r) => Math.max(...r.map((q) => q.ms))));
        console.log(
          `\n  ${name}: ${last.length} statements, ${all.toFixed(2)} ms in all, the longest ${longest.toFixed(2)} ms; the first two:`,
        );
        last.length = 2;
      }
      for (const [i, query] of last.entries()) {
        const times = runs.map((r) => r[i]?.ms ?? 0).sort((a, b) => a - b);
        console.log(`\n  ${name}${last.length > 1 ? ` [statement ${i + 1}]` : ''}: ${(times[2] ?? 0).toFixed(2)} ms`);
        console.log(`    ${query.sql}`);
        for (const line of await planOf(db, dialect, query)) console.log(`      ${line}`);
      }
    }
  } finally {
    await db.destroy();
  }
}

async function planOf(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', query: Captured): Promise<string[]> {
  if (dialect === 'sqlite') {
    const { rows } = await db.executeQuery<{ id: number; parent: number; detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    const depth = new Map<number, number>([[0, 0]]);
    return rows.map((row) => {
      const level = (depth.get(row.parent) ?? 0) + 1;
      depth.set(row.id, level);
      return `${'  '.repeat(level - 1)}${row.detail}`;
    });
  }
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>(
    CompiledQuery.raw(`explain (analyze, buffers) ${query.sql}`, [...query.parameters]),
  );
  return rows.map((row) => row['QUERY PLAN']);
}

// ---------------------------------------------------------------------------------------------------

function printTable(backend: Backend, results: readonly SizeResult[], floor: FloorFigures): void {
  const first = results[0];
  const last = results.at(-1);
  if (first === undefined || last === undefined) return;
  console.log(
    `\n${backend.label}: ${connections} connections, ${seconds} s per case; ${merchantCount} merchants, the measured one holds ${(measuredShare * 100).toFixed(0)} % of the orders`,
  );
  console.log(
    `seeding: ${results.map((r) => `${fmtSize(r.size)} orders in ${(r.seed.ms / 1000).toFixed(1)} s`).join(', ')}`,
  );
  console.log(
    `the floor: p50 ${floor.p50.toFixed(1)} ms, p99 ${floor.p99.toFixed(1)} ms, ${floor.rps.toFixed(0)} req/s${floor.cpuMicros === undefined ? '' : `, ${floor.cpuMicros.toFixed(0)} µs CPU/req`}; ×floor is each p99 ÷ the floor's; µs/req is the server's CPU per request`,
  );
  const head = results.map(
    (r) =>
      `${`p50@${fmtSize(r.size)}`.padStart(9)} ${`p99@${fmtSize(r.size)}`.padStart(9)} ${`rps@${fmtSize(r.size)}`.padStart(9)} ${'×floor'.padStart(7)} ${'µs/req'.padStart(7)}`,
  );
  const ratioHead = `p99 ${fmtSize(last.size)}/${fmtSize(first.size)}`;
  console.log(`${'case'.padEnd(56)} ${head.join(' | ')} | ${ratioHead}`);
  for (const c of CASES) {
    const cells = results.map((r) => {
      const f = r.figures.get(c.key);
      return f === undefined
        ? ' '.repeat(45)
        : `${f.p50.toFixed(1).padStart(9)} ${f.p99.toFixed(1).padStart(9)} ${f.rps.toFixed(0).padStart(9)} ${(f.p99 / Math.max(floor.p99, 1)).toFixed(1).padStart(7)} ${(f.cpuMicros === undefined ? '' : f.cpuMicros.toFixed(0)).padStart(7)}`;
    });
    const a = first.figures.get(c.key);
    const b = last.figures.get(c.key);
    const ratio = a === undefined || b === undefined ? undefined : b.p99 / Math.max(a.p99, 1);
    const errors = results.reduce((sum, r) => sum + (r.figures.get(c.key)?.errors ?? 0), 0);
    console.log(
      `${c.name.padEnd(56)} ${cells.join(' | ')} | ${(ratio === undefined ? '' : ratio.toFixed(2)).padStart(ratioHead.length)}${ratio !== undefined && ratio > 1.5 ? '  << above 1.5' : ''}${errors > 0 ? `  (${errors} errors)` : ''}`,
    );
  }
}

console.log(`The floor (${connections} connections): a bare Fastify route verifying a signed request`);
const floor = await measureFloor();
console.log(
  `  p50 ${floor.p50.toFixed(1)} ms  p99 ${floor.p99.toFixed(1)} ms  ${floor.rps.toFixed(0)} req/s  ${floor.cpuMicros?.toFixed(0) ?? '?'} µs CPU/req`,
);
const tables: [Backend, SizeResult[]][] = [];
if (reuse !== undefined) {
  const copy = await copyOfKept(reuse);
  console.log(`\n${copy.backend.label}, ${copy.run.size.toLocaleString('en')} orders`);
  try {
    tables.push([copy.backend, [await measureSeeded(copy.backend, copy.run, true)]]);
  } finally {
    await copy.drop();
  }
} else {
  const backends: Backend[] = [];
  if (only !== 'postgres') backends.push({ label: 'SQLite (WAL, synchronous=FULL)', serverUrl: undefined });
  if (process.env.BENCH_DATABASE_URL !== undefined && only !== 'sqlite')
    backends.push({ label: 'PostgreSQL', serverUrl: process.env.BENCH_DATABASE_URL });
  const largest = Math.max(...sizes);
  for (const backend of backends) {
    const results: SizeResult[] = [];
    for (const size of sizes) results.push(await runSize(backend, size, size === largest));
    tables.push([backend, results]);
    printTable(backend, results, floor);
  }
}
for (const [backend, results] of tables)
  if (reuse !== undefined || tables.length > 1) printTable(backend, results, floor);
