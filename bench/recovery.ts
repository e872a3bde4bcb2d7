// How long work a dead node held waits before another node takes it up, with the default lease
// settings (RAIL_LEASE_MS 60 s, NODE_HEARTBEAT_MS 2 s, NODE_DEAD_AFTER_MS 10 s). The work is ten
// Kenya payouts committed on the node that is then killed, whose hand-overs to Daraja (the local
// fake of test/support) it holds without having reached Daraja: Daraja's token answer is held.
//   - SQLite: SIGKILL, then the node started again on the same data directory: the time from its
//     /readyz answering 200 to the last payout reaching Daraja;
//   - PostgreSQL (when TEST_DATABASE_URL is set), two nodes, one SIGKILLed: the time from the kill
//     to the survivor's last payout reaching Daraja.
// Each as p50 and max over BENCH_KILLS kills (default 10), beside the floor measured in the same
// run: ten payouts handed over by a live node, from the last create's answer.
//   npm run bench:recovery
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:recovery
// Then a rolling restart of the two PostgreSQL nodes under load (see rollingRestart).
// BENCH_CASES=sqlite,kill,rolling picks the cases (default all).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TEST_DATABASE_URL } from '../test/support/database.js';
import { darajaNodeEnv, startFakeDaraja, type FakeDaraja } from '../test/support/fake-daraja.js';
import { processMerchant } from '../test/support/crash-rig.js';
import { ADMIN_TOKEN, signedCall } from '../test/support/gateway.js';
import { startServerProcess, type ServerProcess } from '../test/support/process.js';
import { startReceiver } from '../test/support/receiver.js';

const KILLS = Number(process.env.BENCH_KILLS ?? 10);
const ORDERS = 10;

let phoneSeq = 0;
const nextPhone = () => `2547${String(30_000_000 + ++phoneSeq).slice(-8)}`;

type Credentials = { accessKey: string; secretKey: string };

/** The payee (PartyB) of a B2C request's body as the fake recorded it. */
const payeeOf = (body: unknown) => String((body as { PartyB?: unknown }).PartyB);

const nodeEnv = (daraja: FakeDaraja, shared: Record<string, string>) =>
  darajaNodeEnv(daraja, shared, { LOG_LEVEL: 'info' });

/** Commits ORDERS payouts on `node`; with `hold`, Daraja holds the token answer so none reaches it. Answers the payees. */
async function commitPayouts(
  daraja: FakeDaraja,
  node: ServerProcess,
  credentials: Credentials,
  hold: boolean,
): Promise<string[]> {
  // `node` has not asked for a token yet: the one it asks for now is held.
  if (hold) daraja.failNext('oauth', 'timeout');
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
    const got = new Set(daraja.payouts.map((p) => payeeOf(p.body)).filter((payee) => wanted.has(payee)));
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
      // A node that has not talked to Daraja yet commits the payouts and is killed.
      const payees = await commitPayouts(daraja, node, credentials, true);
      await kill(node);
      node = await startServerProcess(env);
      const ready = await readyAt(node);
      recoveries.push((await reached(daraja, payees)) - ready);
      floors.push(await floor(daraja, node, credentials));
      await node.kill();
      node = await startServerProcess(env);
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
      floors.push(await floor(daraja, survivor, credentials));
      victim = await startServerProcess(await nodeEnv(daraja, shared));
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

/**
 * A rolling restart of two PostgreSQL nodes under load: payouts are created at a steady pace on
 * both nodes (a create that finds its node stopping is sent to the other one, as a load balancer
 * would, with the same externalOrderId), while each node in turn gets SIGTERM and is started again.
 * Reports the creates lost (committed but never handed to Daraja) and the delay from each create's
 * answer to Daraja accepting its payout, beside the same load with no restart.
 */
async function rollingRestart(daraja: FakeDaraja, callbackUrl: string): Promise<void> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-rolling-'));
  const shared = {
    CASHGATE_DATA_DIR: dataDir,
    CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    KEY_ACTIVATION_DELAY_MS: '0',
    DATABASE_URL: database.url,
  };
  const nodes: (ServerProcess | undefined)[] = [
    await startServerProcess(await nodeEnv(daraja, shared)),
    await startServerProcess(await nodeEnv(daraja, shared)),
  ];
  try {
    const { credentials } = await processMerchant(nodes[0] as ServerProcess, {
      callbackUrl,
      currency: 'KES',
      amount: '100000000',
    });
    /** Creates one payout every `everyMs` for `ms`, alternating nodes; answers each payee's answer time. */
    const load = async (ms: number, everyMs: number) => {
      const answered = new Map<string, number>();
      let failed = 0;
      const pending: Promise<void>[] = [];
      const end = Date.now() + ms;
      for (let i = 0; Date.now() < end; i += 1) {
        const payee = nextPhone();
        pending.push(
          (async () => {
            for (let attempt = 0; attempt < 20; attempt += 1) {
              const node = nodes[(i + attempt) % 2];
              if (node === undefined) continue;
              const created = await signedCall(
                node.url,
                credentials,
                {
                  path: '/api/v3/ken/createTransferOrder',
                  body: { channelType: 'BANK', currencyAmount: '100', externalOrderId: `roll-${payee}`, phone: payee },
                },
                Date.now(),
              ).catch(() => undefined);
              if (created?.body.code === '200') {
                answered.set(payee, Date.now());
                return;
              }
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            failed += 1;
          })(),
        );
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
      await Promise.all(pending);
      return { answered, failed };
    };
    const delays = async (answered: Map<string, number>) => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const at = new Map<string, number>();
        for (const r of daraja.requests)
          if (r.endpoint === 'b2c' && r.status === 200 && answered.has(payeeOf(r.body)))
            at.set(payeeOf(r.body), Math.min(at.get(payeeOf(r.body)) ?? Infinity, r.at));
        if (at.size === answered.size || Date.now() > deadline)
          return {
            lost: answered.size - at.size,
            values: [...at].map(([payee, time]) => Math.max(0, time - (answered.get(payee) ?? time))),
          };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const quiet = await load(6_000, 50);
    const floorDelays = await delays(quiet.answered);
    const restart = async (i: 0 | 1) => {
      const node = nodes[i] as ServerProcess;
      nodes[i] = undefined;
      await node.stop();
      nodes[i] = await startServerProcess(await nodeEnv(daraja, shared));
    };
    const during = load(12_000, 50);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await restart(0);
    await restart(1);
    const rolled = await during;
    const rolledDelays = await delays(rolled.answered);
    const f = stats(floorDelays.values);
    const r = stats(rolledDelays.values);
    console.log(
      `\nPostgreSQL, two nodes, rolling restart (SIGTERM and start, one node after the other) under a create every 50 ms; ratios to the floor (first row)`,
    );
    console.log(
      'case'.padEnd(58),
      'p50 ms'.padStart(8),
      'max ms'.padStart(8),
      'max÷floor'.padStart(10),
      'lost'.padStart(6),
    );
    console.log(
      `floor: no restart (${quiet.answered.size} payouts)`.padEnd(58),
      String(f.p50).padStart(8),
      String(f.max).padStart(8),
      '1.0'.padStart(10),
      String(floorDelays.lost + quiet.failed).padStart(6),
    );
    console.log(
      `rolling restart (${rolled.answered.size} payouts)`.padEnd(58),
      String(r.p50).padStart(8),
      String(r.max).padStart(8),
      (r.max / Math.max(1, f.max)).toFixed(1).padStart(10),
      String(rolledDelays.lost + rolled.failed).padStart(6),
    );
  } finally {
    await Promise.all(nodes.map(async (node) => node?.kill()));
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const daraja = await startFakeDaraja();
const receiver = await startReceiver();
/** BENCH_CASES: which of sqlite, kill, rolling to run (default all three; the last two need TEST_DATABASE_URL). */
const cases = new Set((process.env.BENCH_CASES ?? 'sqlite,kill,rolling').split(','));
try {
  if (cases.has('sqlite')) await sqlite(daraja, `${receiver.url}/cb`);
  if (TEST_DATABASE_URL === undefined)
    console.log('\nPostgreSQL: skipped (set TEST_DATABASE_URL to measure two nodes)');
  else {
    if (cases.has('kill')) await postgres(daraja, `${receiver.url}/cb`);
    if (cases.has('rolling')) await rollingRestart(daraja, `${receiver.url}/cb`);
  }
} finally {
  await daraja.close();
  await receiver.close();
}
