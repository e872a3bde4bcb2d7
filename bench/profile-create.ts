// A CPU profile of the server while it takes signed creates, for finding what a create costs.
//   npm run bench:profile [-- pix|t2f|kenya]     (SQLite; BENCH_DATABASE_URL=postgres://… for PostgreSQL)
// Writes the server's .cpuprofile into BENCH_PROFILE_DIR (default .prof/) and prints the functions
// with the most self time, and the packages and Cashgate folders that time was spent in.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Credentials } from '@cashgate/sdk';
import { BENCH_ADMIN_TOKEN, measureWithCpu, signedPost } from './harness.js';
import { runCli, startServerProcess } from '../test/support/process.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

let seq = 0;
const bodies: Record<string, { path: string; body: () => Record<string, unknown> }> = {
  pix: {
    path: '/api/v3/bra/createCollectingOrder',
    body: () => ({ amount: '125.50', channelType: 'PIX', externalOrderId: `prof-${process.pid}-${++seq}` }),
  },
  t2f: {
    path: '/api/v3/exchange/wallet/to/fiat',
    body: () => ({
      tokenAmount: '25.5',
      chainType: 'TRON',
      addressFrom: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb',
      currencyType: 'BRL',
      tokenType: 'USDT',
      externalOrderId: `prof-t2f-${process.pid}-${++seq}`,
    }),
  },
  kenya: {
    path: '/api/v3/ken/createTransferOrder',
    body: () => ({
      channelType: 'BANK',
      currencyAmount: '100',
      phone: '254712345678',
      externalOrderId: `prof-kt-${process.pid}-${++seq}`,
    }),
  },
};
const which = process.argv[2] ?? 'pix';
const chosen = bodies[which];
if (chosen === undefined) throw new Error(`unknown case ${which}: pix, t2f or kenya`);

const profileDir = resolve(process.env.BENCH_PROFILE_DIR ?? '.prof');
mkdirSync(profileDir, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-prof-'));
const env: Record<string, string> = {
  CASHGATE_DATA_DIR: dataDir,
  KEY_ACTIVATION_DELAY_MS: '0',
  RATE_LIMIT_PER_KEY_PER_MINUTE: '100000000',
  LOG_LEVEL: 'info',
  CASHGATE_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
  ...(process.env.BENCH_DATABASE_URL !== undefined && { DATABASE_URL: process.env.BENCH_DATABASE_URL }),
};
try {
  const merchant = await runCli(['merchant', 'create', '--name', 'Profile'], env);
  const { merchantId } = JSON.parse(merchant.stdout) as { merchantId: string };
  const key = await runCli(['key', 'create', '--merchant', merchantId, '--permissions', 'all'], env);
  const credentials = JSON.parse(key.stdout) as Credentials;
  const before = new Set(readdirSync(profileDir));
  const server = await startServerProcess(env, 'serve', ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  try {
    const admin = { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    await fetch(new URL('/admin/v1/rates/BRL/USDT', server.url), {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ buy: '5.40', sell: '5.50' }),
    });
    await fetch(new URL(`/admin/v1/merchants/${merchantId}/balance-adjustments`, server.url), {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ currency: 'KES', amount: '1000000000', reason: 'bench' }),
    });
    const figures = await measureWithCpu(
      `${which} create`,
      server.url,
      signedPost(chosen.path, credentials, chosen.body),
      server.child.pid,
    );
    console.log(
      `${figures.name}: ${figures.rps.toFixed(0)} req/s, p99 ${figures.p99} ms, ${figures.cpuMicros?.toFixed(0)} CPU µs/req, ${figures.non2xx} non-2xx`,
    );
  } finally {
    await server.stop();
  }
  const written = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  // Node writes a profile per thread (<pid>.<thread>.<seq>): the main thread's answers the requests.
  for (const file of written.filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))) report(join(profileDir, file));
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

function report(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const self = new Map<number, number>();
  profile.samples.forEach((id, n) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[n] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const node of profile.nodes) {
    const micros = self.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^file:\/\//, '').replace(process.cwd() + '/', '');
    const name = `${functionName || '(anonymous)'} ${where.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    const place =
      where === ''
        ? functionName.startsWith('(')
          ? functionName
          : '(native)'
        : where.includes('node_modules/')
          ? `npm ${where
              .split('node_modules/')
              .pop()
              ?.split('/')
              .slice(0, where.includes('node_modules/@') ? 2 : 1)
              .join('/')}`
          : where.startsWith('node:')
            ? 'node internals'
            : where.split('/').slice(0, -1).join('/');
    byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, micros]) => `${((100 * micros) / total).toFixed(1).padStart(6)} %  ${name}`)
      .join('\n');
  console.log(`\n${file}\nSelf time by place:\n${top(byPlace, 25)}\n\nSelf time by function:\n${top(byFunction, 40)}`);
}
