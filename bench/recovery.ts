// How long work a dead node held waits before another node takes it up, with the default lease
// settings (RAIL_LEASE_MS 60 s, NODE_HEARTBEAT_MS 2 s, NODE_DEAD_AFTER_MS 10 s). The work is ten
// Kenya payouts committed on the node that is then killed, whose hand-overs to Daraja (the local
// fake of test/support) it holds without having reached Daraja: Daraja's token answer is held.
//   - SQLite: SIGKILL, then the node started again on the same data directory: the time from its
//     /readyz answering 200 to the last payout reaching Daraja;
//   - PostgreSQL (when TEST_DATABASE_URL is set), two nodes, one SIGKILLed: the time from the kill
//     to the survivor's last payout reaching Daraja.
// Each as p50 and max over BENCH_KILLS kills (default 10), beside the floor measured in the same
// run: the same ten payouts handed over by a live node, from the last create's answer.
//   npm run bench:recovery
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:recovery
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TEST_DATABASE_URL } from '../test/support/database.js';
import { darajaGatewayEnv, freePort, startFakeDaraja, type FakeDaraja } from '../test/support/fake-daraja.js';
import { processMerchant } from '../test/support/crash-rig.js';
import { ADMIN_TOKEN, signedCall } from '../test/support/gateway.js';
import { startServerProcess, type ServerProcess } from '../test/support/process.js';
import { startReceiver } from '../test/support/receiver.js';

const KILLS = Number(process.env.BENCH_KILLS ?? 10);
const ORDERS = 10;

let phoneSeq = 0;
const nextPhone = () => `2547${String(30_000_000 + ++phoneSeq).slice(-8)}`;

type Credentials = { accessKey: string; secretKey: string };

async function nodeEnv(daraja: FakeDaraja, shared: Record<string, string>): Promise<Record<string, string>> {
  return {
    ...shared,
    ...darajaGatewayEnv(daraja, await freePort()),
    DARAJA_TIMEOUT_MS: '30000',
    DARAJA_RESULT_TIMEOUT_MS: '60000',
    CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'info',
  };
}

/** Commits ORDERS payouts on `node`; with `hold`, Daraja holds the token answer so none reaches it. Answers the payees. */
async function commitPayouts(
  daraja: FakeDaraja,
  node: ServerProcess,
  credentials: Credentials,
  hold: boolean,
): Promise<string[]> {
  if (hold) {
    // The node's cached token stops working; the one it asks for next is held.
    daraja.expireTokens();
    daraja.failNext('oauth', 'timeout');
  }
  const payees = Array.from({ length: ORDERS }, nextPhone);
  await Promise.all(
    payees.map(async (payee) => {
      const created = await signedCall(
        node.url,
        credentials,
        {
          path: '/api/v3/ken/createTransferOrder',
          body: { channelType: 'BANK', currencyAmount: '100', externalOrderId: `rec-${payee}`, phone: payee },
        },
        Date.now(),
      );
      if (created.body.code !== '200') throw new Error(JSON.stringify(created.body));
    }),
  );
  return payees;
}

/** Resolves when Daraja has accepted every payee's payout, with the time it did (ms since the epoch). */
async function reached(daraja: FakeDaraja, payees: readonly string[], timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const wanted = new Set(payees);
  for (;;) {
    const got = new Set(daraja.payouts.map((p) => String(p.body.PartyB)).filter((payee) => wanted.has(payee)));
    if (got.size === wanted.size) return Date.now();
    if (Date.now() > deadline) throw new Error(`${got.size} of ${wanted.size} payouts reached Daraja`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function readyAt(node: ServerProcess): Promise<number> {
  for (;;) {
    const answer = await fetch(new URL('/readyz', node.url)).catch(() => undefined);
    if (answer?.status === 200) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const kill = async (node: ServerProcess) => {
  const at = Date.now();
  await node.kill();
  return at;
};

async function floor(daraja: FakeDaraja, node: ServerProcess, credentials: Credentials): Promise<number> {
  const payees = await commitPayouts(daraja, node, credentials, false);
  const answered = Date.now();
  return (await reached(daraja, payees)) - answered;
}

function stats(values: readonly number[]): { p50: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: sorted[Math.floor((sorted.length - 1) / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
}

function report(title: string, floors: readonly number[], recoveries: readonly number[]): void {
  const f = stats(floors);
  const r = stats(recoveries);
  console.log(`\n${title} (${recoveries.length} kills, ${ORDERS} payouts each); ratios to the floor (first row)`);
  console.log('case'.padEnd(58), 'p50 ms'.padStart(8), 'max ms'.padStart(8), 'p50÷floor'.padStart(10));
  console.log(
    'floor: a live node hands over its ten payouts'.padEnd(58),
    String(f.p50).padStart(8),
    String(f.max).padStart(8),
    '1.0'.padStart(10),
  );
  console.log(
    title.startsWith('SQLite')
      ? 'after SIGKILL: from the restarted node’s /readyz'.padEnd(58)
      : 'after SIGKILL of one of two: from the kill'.padEnd(58),
    String(r.p50).padStart(8),
    String(r.max).padStart(8),
    (r.p50 / Math.max(1, f.p50)).toFixed(1).padStart(10),
  );
}

async function sqlite(daraja: FakeDaraja, callbackUrl: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-recovery-'));
  const shared = { CASHGATE_DATA_DIR: dataDir, CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN, KEY_ACTIVATION_DELAY_MS: '0' };
  const env = await nodeEnv(daraja, shared);
  const floors: number[] = [];
  const recoveries: number[] = [];
  let node = await startServerProcess(env);
  try {
    const { credentials } = await processMerchant(node, { callbackUrl, currency: 'KES', amount: '10000000' });
    for (let i = 0; i < KILLS; i += 1) {
      floors.push(await floor(daraja, node, credentials));
      const payees = await commitPayouts(daraja, node, credentials, true);
      await kill(node);
      node = await startServerProcess(env);
      const ready = await readyAt(node);
      recoveries.push((await reached(daraja, payees)) - ready);
    }
  } finally {
    await node.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
  report('SQLite, one node killed and started again', floors, recoveries);
}

async function postgres(daraja: FakeDaraja, callbackUrl: string): Promise<void> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-recovery-'));
  const shared = {
    CASHGATE_DATA_DIR: dataDir,
    CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    KEY_ACTIVATION_DELAY_MS: '0',
    DATABASE_URL: database.url,
  };
  const floors: number[] = [];
  const recoveries: number[] = [];
  const survivor = await startServerProcess(await nodeEnv(daraja, shared));
  let victim: ServerProcess | undefined;
  try {
    const { credentials } = await processMerchant(survivor, { callbackUrl, currency: 'KES', amount: '10000000' });
    for (let i = 0; i < KILLS; i += 1) {
      victim = await startServerProcess(await nodeEnv(daraja, shared));
      floors.push(await floor(daraja, victim, credentials));
      const payees = await commitPayouts(daraja, victim, credentials, true);
      const killedAt = await kill(victim);
      victim = undefined;
      recoveries.push((await reached(daraja, payees)) - killedAt);
    }
  } finally {
    await victim?.kill();
    await survivor.kill();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  report('PostgreSQL, two nodes, one killed', floors, recoveries);
}

const daraja = await startFakeDaraja();
const receiver = await startReceiver();
try {
  await sqlite(daraja, `${receiver.url}/cb`);
  if (TEST_DATABASE_URL === undefined)
    console.log('\nPostgreSQL: skipped (set TEST_DATABASE_URL to measure two nodes)');
  else await postgres(daraja, `${receiver.url}/cb`);
} finally {
  await daraja.close();
  await receiver.close();
}
