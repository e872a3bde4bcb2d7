import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it, test } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { HDKey } from '@scure/bip32';
import SqliteDatabase from 'better-sqlite3';
import { HDNodeWallet } from 'ethers';
import fc from 'fast-check';
import pg from 'pg';
import { evmChecksumAddress, tronAddress } from '../src/rails/chain/addresses.js';
import { DepositAddressDeriver, MAX_ADDRESS_INDEX, SANDBOX_XPUBS } from '../src/rails/chain/derivation.js';
import { startCrashRig, type CrashRig } from './support/crash-rig.js';
import { databaseLabel, TEST_DATABASE_URL } from './support/database.js';
import { TO_FIAT, TRON_FROM, tronAddressAt } from './support/exchange.js';
import { ADMIN_TOKEN, signedCall, type EnvelopeResponse } from './support/gateway.js';
import { adminCall, type ServerProcess } from './support/process.js';

/* The deposit address pool, from the outside: real server processes, signed HTTP, kill -9, and the
   database read directly; every address checked against ethers' derivation (test/support/exchange.ts). */

/** The sandbox TRON xpub's counter key: the first 8 bytes of the SHA-256 of the xpub text, in hex. */
const KEY_ID = createHash('sha256').update(SANDBOX_XPUBS.tron).digest('hex').slice(0, 16);

const TWO_NODES =
  TEST_DATABASE_URL === undefined &&
  'needs PostgreSQL: on SQLite one data directory is one node (set TEST_DATABASE_URL)';

const oracle = new Map<number, string>();
/** The TRON address of the sandbox xpub at index i, by ethers and bs58check alone. */
function addressAt(index: number): string {
  let address = oracle.get(index);
  if (address === undefined) {
    address = tronAddressAt(SANDBOX_XPUBS.tron, index);
    oracle.set(index, address);
  }
  return address;
}

/** Reads the server's database from the test process (read-only on SQLite). */
interface Reader {
  rows(text: string): Promise<Record<string, unknown>[]>;
  /** Several reads from one snapshot of the database. */
  snapshot(texts: readonly string[]): Promise<Record<string, unknown>[][]>;
  close(): Promise<void>;
}

async function openReader(rig: CrashRig): Promise<Reader> {
  const url = rig.env.DATABASE_URL;
  if (url === undefined) {
    let db: SqliteDatabase.Database | undefined;
    // Opened once the server has made the file; a read-only connection never checkpoints or locks it.
    const open = () =>
      (db ??= new SqliteDatabase(join(rig.env.CASHGATE_DATA_DIR ?? '', 'cashgate.sqlite'), { readonly: true }));
    return {
      rows: (text) => Promise.resolve(open().prepare(text).all() as Record<string, unknown>[]),
      snapshot: (texts) => {
        const connection = open();
        const read = connection.transaction(() =>
          texts.map((text) => connection.prepare(text).all() as Record<string, unknown>[]),
        );
        return Promise.resolve(read());
      },
      close: () => {
        db?.close();
        return Promise.resolve();
      },
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    rows: async (text) => (await client.query(text)).rows as Record<string, unknown>[],
    snapshot: async (texts) => {
      await client.query('begin isolation level repeatable read read only');
      try {
        const results: Record<string, unknown>[][] = [];
        for (const text of texts) results.push((await client.query(text)).rows as Record<string, unknown>[]);
        return results;
      } finally {
        await client.query('commit');
      }
    },
    close: () => client.end(),
  };
}

interface IndexBook {
  counter: number;
  /** Pooled indexes: their address, null while pending (claimed, not yet derived). */
  pool: Map<number, string | null>;
  /** Indexes handed to orders. */
  taken: Map<number, { address: string; orderId: string }>;
}

async function readBook(db: Reader): Promise<IndexBook> {
  // One snapshot: a worker claiming indexes between two reads would look like a lost index.
  const [counters = [], pooled = [], handedOut = []] = await db.snapshot([
    `select next_index from address_counters where key_id = '${KEY_ID}'`,
    `select path_index, address from deposit_address_pool where key_id = '${KEY_ID}'`,
    `select path_index, address, order_id from deposit_addresses where key_id = '${KEY_ID}'`,
  ]);
  const counter = Number(counters[0]?.next_index ?? 0);
  const pool = new Map<number, string | null>();
  for (const row of pooled) pool.set(Number(row.path_index), (row.address as string | null) ?? null);
  const taken = new Map<number, { address: string; orderId: string }>();
  for (const row of handedOut)
    taken.set(Number(row.path_index), { address: row.address as string, orderId: row.order_id as string });
  return { counter, pool, taken };
}

/**
 * The pool's invariant: every index below the counter is either pooled or an order's, never both,
 * never neither, none above it; every address is the xpub's at its index (pooled ones sampled).
 */
async function assertIndexesAccounted(db: Reader, label: string): Promise<IndexBook> {
  const book = await readBook(db);
  for (let index = 0; index < book.counter; index++) {
    const where = Number(book.pool.has(index)) + Number(book.taken.has(index));
    assert.equal(where, 1, `${label}: index ${index} is ${where === 0 ? 'lost' : 'both pooled and taken'}`);
  }
  for (const index of [...book.pool.keys(), ...book.taken.keys()])
    assert.ok(index < book.counter, `${label}: index ${index} at or above the counter ${book.counter}`);
  for (const [index, { address }] of book.taken) assert.equal(address, addressAt(index), `${label}: taken ${index}`);
  const derived = [...book.pool].filter((entry): entry is [number, string] => entry[1] !== null);
  const step = Math.max(1, Math.floor(derived.length / 60));
  for (let n = 0; n < derived.length; n += step) {
    const [index, address] = derived[n] as [number, string];
    assert.equal(address, addressAt(index), `${label}: pooled ${index}`);
  }
  const addresses = [...book.taken.values()].map((t) => t.address);
  assert.equal(new Set(addresses).size, addresses.length, `${label}: an address handed out twice`);
  return book;
}

/** The last log lines of the servers a test started, for a failure's message. */
let serverLogs: () => string = () => '';

async function until<T>(label: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}; the servers said:\n${serverLogs()}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/**
 * Waits until the pool is topped up: nothing pending, and at least what the worker refills to (it
 * tops up once a tenth of the pool, at most 100, is missing, so it may rest just under `size`).
 */
function poolFull(db: Reader, size: number): Promise<IndexBook> {
  const floor = size - Math.min(100, Math.ceil(size / 10)) + 1;
  return until(`a pool of ${size}`, async () => {
    const book = await readBook(db);
    const derived = [...book.pool.values()].filter((a) => a !== null).length;
    return derived >= floor && derived === book.pool.size ? book : undefined;
  });
}

const sorted = (indexes: Iterable<number>): number[] => [...indexes].sort((a, b) => a - b);
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, n) => from + n);

type Credentials = { accessKey: string; secretKey: string };

/** A merchant with an exchange key, and the BRL/USDT price, through the admin API. */
async function merchantOn(server: ServerProcess): Promise<Credentials> {
  const admin = (method: string, path: string, body?: unknown) => adminCall(server, ADMIN_TOKEN, method, path, body);
  const merchant = await admin('POST', '/admin/v1/merchants', { name: 'Pool' });
  const key = await admin('POST', `/admin/v1/merchants/${merchant.body.merchantId}/api-keys`, {
    permissions: ['exchange', 'query'],
    ipWhitelist: ['0.0.0.0'],
    debug: false,
  });
  assert.equal(key.status, 200, JSON.stringify(key.body));
  assert.equal((await admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.40', sell: '5.50' })).status, 200);
  return { accessKey: key.body.accessKey as string, secretKey: key.body.secretKey as string };
}

let seq = 0;
function tokenToFiat(server: ServerProcess, credentials: Credentials, externalOrderId = `pool-${++seq}`) {
  const body = {
    tokenAmount: '25',
    chainType: 'TRON',
    addressFrom: TRON_FROM,
    currencyType: 'BRL',
    tokenType: 'USDT',
    externalOrderId,
  };
  return signedCall(server.url, credentials, { path: TO_FIAT, body }, Date.now());
}

function created(response: EnvelopeResponse): { orderId: string; addressTo: string } {
  assert.equal(response.body.code, '200', JSON.stringify(response.body));
  const data = response.body.data as { orderId: string; addressTo: string };
  return { orderId: data.orderId, addressTo: data.addressTo };
}

test('the deriver gives the addresses of HDKey.deriveChild and of ethers at any index', () => {
  for (const family of ['tron', 'evm'] as const) {
    const deriver = new DepositAddressDeriver(family, SANDBOX_XPUBS[family]);
    const external = HDKey.fromExtendedKey(SANDBOX_XPUBS[family]).deriveChild(0);
    const account = HDNodeWallet.fromExtendedKey(SANDBOX_XPUBS[family]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_ADDRESS_INDEX }), (index) => {
        const key = external.deriveChild(index).publicKey;
        assert.ok(key !== null);
        const body = keccak_256(secp256k1.Point.fromBytes(key).toBytes(false).subarray(1)).subarray(-20);
        const ours = deriver.address(index);
        assert.equal(ours, family === 'tron' ? tronAddress(body) : evmChecksumAddress(body), `HDKey, ${index}`);
        const byEthers =
          family === 'tron' ? tronAddressAt(SANDBOX_XPUBS.tron, index) : account.derivePath(`0/${index}`).address;
        assert.equal(ours, byEthers, `ethers, ${index}`);
      }),
      { numRuns: 100 },
    );
  }
});

describe(`deposit address pool (${databaseLabel})`, () => {
  let rig: CrashRig;
  let db: Reader;
  const started: ServerProcess[] = [];
  const start = async (size: number) => {
    const server = await rig.start({ ...rig.env, DEPOSIT_ADDRESS_POOL_SIZE: String(size) });
    started.push(server);
    return server;
  };
  serverLogs = () => started.map((server) => server.output().split('\n').slice(-15).join('\n')).join('\n---\n');

  beforeEach(async () => {
    rig = await startCrashRig('pool');
    db = await openReader(rig);
  });
  afterEach(async () => {
    started.length = 0;
    await db.close();
    await rig.close();
  });

  it('the worker fills the pool with the next indexes of the xpub, and creates take them lowest first', async () => {
    const server = await start(40);
    const full = await poolFull(db, 40);
    assert.deepEqual(sorted(full.pool.keys()), range(0, 40), 'indexes 0 to 39, claimed in one batch');
    assert.equal(full.counter, 40);
    for (const [index, address] of full.pool) assert.equal(address, addressAt(index), `pooled ${index}`);

    const credentials = await merchantOn(server);
    for (let index = 0; index < 10; index++) {
      const order = created(await tokenToFiat(server, credentials));
      assert.equal(order.addressTo, addressAt(index), `create ${index} takes pooled index ${index}`);
    }
    // The worker tops the pool up again with the next indexes, from 40 on.
    const topped = await poolFull(db, 40);
    assert.deepEqual(sorted(topped.pool.keys()), range(10, topped.pool.size), 'the untaken indexes and the next ones');
    assert.ok(topped.counter > 40, 'new indexes were claimed');
    const book = await assertIndexesAccounted(db, 'after 10 creates');
    assert.equal(book.taken.size, 10);
    assert.doesNotMatch(server.output(), /pool ran dry/, 'no create had to derive inline');
  });

  it('concurrent creates, more than the pool holds, each get their own address; the dry pool falls back to inline derivation and says so', async () => {
    const server = await start(20);
    await poolFull(db, 20);
    const credentials = await merchantOn(server);
    const orders = (await Promise.all(Array.from({ length: 80 }, () => tokenToFiat(server, credentials)))).map(created);
    assert.equal(new Set(orders.map((o) => o.addressTo)).size, 80, 'no address was handed out twice');
    const book = await assertIndexesAccounted(db, 'after 80 concurrent creates');
    assert.equal(book.taken.size, 80);
    for (const order of orders) {
      const entry = [...book.taken.values()].find((t) => t.orderId === order.orderId);
      assert.equal(entry?.address, order.addressTo, `${order.orderId} is recorded with its address`);
    }
    // 80 creates at once against a pool of 20: some found it empty and derived their own.
    await until('the dry-pool warning', async () => (/pool ran dry/.test(server.output()) ? true : undefined));
  });

  it('identical requests racing take one address: the loser puts its pooled address back', async () => {
    const server = await start(10);
    await poolFull(db, 10);
    const credentials = await merchantOn(server);
    const answers = (
      await Promise.all(Array.from({ length: 8 }, () => tokenToFiat(server, credentials, 'same-order')))
    ).map(created);
    assert.equal(new Set(answers.map((a) => a.orderId)).size, 1, 'one order');
    assert.equal(new Set(answers.map((a) => a.addressTo)).size, 1, 'one address');
    const book = await assertIndexesAccounted(db, 'after the race');
    assert.equal(book.taken.size, 1);
    // Each racer took a pooled address (on PostgreSQL a different one each, SKIP LOCKED); the winner's
    // is the order's, and every other one is back in the pool.
    const [index = -1, taken] = [...book.taken][0] ?? [];
    assert.ok(index >= 0 && index < 8, `a racer's pooled index, ${index}`);
    assert.equal(answers[0]?.addressTo, taken?.address);
    for (let other = 0; other < 10; other++)
      if (other !== index) assert.equal(book.pool.get(other), addressAt(other), `index ${other} is back in the pool`);
  });

  it('with DEPOSIT_ADDRESS_POOL_SIZE=0 nothing is pooled and every create derives its address inline', async () => {
    const server = await start(0);
    const credentials = await merchantOn(server);
    for (let index = 0; index < 3; index++)
      assert.equal(created(await tokenToFiat(server, credentials)).addressTo, addressAt(index));
    const book = await assertIndexesAccounted(db, 'no pool');
    assert.equal(book.pool.size, 0);
    assert.equal(book.counter, 3);
    assert.doesNotMatch(server.output(), /pool ran dry/, 'no pool, no warning');
  });

  it('kill -9 between claiming indexes and deriving them: a successor derives the pending ones, none lost or handed out twice', async () => {
    // A large pool: many claim-then-derive batches to kill the server in the middle of.
    let pending = 0;
    for (let attempt = 0; attempt < 5 && pending === 0; attempt++) {
      const server = await start(3000);
      await until('a pending batch', async () => {
        const rows = await db.rows(`select count(*) as n from deposit_address_pool where address is null`);
        return Number(rows[0]?.n) > 0 ? true : undefined;
      });
      await rig.crash(server);
      const book = await assertIndexesAccounted(db, `after kill -9 (attempt ${attempt + 1})`);
      pending = [...book.pool.values()].filter((a) => a === null).length;
    }
    assert.ok(pending > 0, 'the kill landed between a claim and its derivation');

    const successor = await start(3000);
    const book = await poolFull(db, 3000);
    await assertIndexesAccounted(db, 'after the successor filled the pool');
    assert.equal(book.counter, book.pool.size, 'no order yet: every claimed index is pooled');
    // The successor's creates take the lowest pooled addresses, the formerly pending ones among them.
    const credentials = await merchantOn(successor);
    const lowest = [...book.pool.keys()].sort((a, b) => a - b).slice(0, 5);
    for (const index of lowest)
      assert.equal(created(await tokenToFiat(successor, credentials)).addressTo, addressAt(index));
    await assertIndexesAccounted(db, 'after creates on the successor');
  });

  it('kill -9 during concurrent creates: every committed order keeps its own address, the others go back to the pool', async () => {
    const server = await start(30);
    await poolFull(db, 30);
    const credentials = await merchantOn(server);
    let answered = 0;
    // Each call settles to its answer, or to undefined when the kill cut it off.
    const calls = Array.from({ length: 60 }, () =>
      tokenToFiat(server, credentials).then(
        (response) => {
          answered += 1;
          return response;
        },
        () => undefined,
      ),
    );
    await until('the first answers', async () => (answered >= 5 ? true : undefined));
    await rig.crash(server);
    const answeredOrders = (await Promise.all(calls)).flatMap((r) => (r === undefined ? [] : [created(r)]));
    assert.ok(answeredOrders.length >= 5 && answeredOrders.length < 60, `${answeredOrders.length} answered`);

    const book = await assertIndexesAccounted(db, 'after kill -9 during creates');
    const byOrder = new Map([...book.taken.values()].map((t) => [t.orderId, t.address]));
    for (const order of answeredOrders) assert.equal(byOrder.get(order.orderId), order.addressTo, order.orderId);

    const successor = await start(30);
    const more = (await Promise.all(Array.from({ length: 20 }, () => tokenToFiat(successor, credentials)))).map(
      created,
    );
    const after = await assertIndexesAccounted(db, 'after creates on the successor');
    const before = new Set([...book.taken.values()].map((t) => t.address));
    for (const order of more) assert.ok(!before.has(order.addressTo), `${order.addressTo} was not handed out before`);
    assert.equal(after.taken.size, book.taken.size + 20);
  });

  it('two server processes on one database never hand out one address twice', { skip: TWO_NODES }, async () => {
    const a = await start(25);
    const b = await start(25);
    await poolFull(db, 25);
    const credentials = await merchantOn(a);
    const orders = (
      await Promise.all(Array.from({ length: 100 }, (_, i) => tokenToFiat(i % 2 === 0 ? a : b, credentials)))
    ).map(created);
    assert.equal(new Set(orders.map((o) => o.addressTo)).size, 100, 'no address was handed out twice');
    const book = await assertIndexesAccounted(db, 'after 100 creates on two nodes');
    assert.equal(book.taken.size, 100);
    // Both workers top the shared pool up; their claims never overlap.
    await poolFull(db, 25);
    await assertIndexesAccounted(db, 'after both workers refilled');
  });
});
