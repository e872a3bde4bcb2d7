// What the permission and audit step costs an admin write, per request, measured in one run against
// its floor: the same write without it.
//   - floor: a merchant's settlement delay set through the service (one unit of work);
//   - audited: the same write inside an audit scope (the record chained and written in that unit);
//   - authentication: a personal token looked up (what every request with one pays) and the role checked;
//   - over HTTP: PUT /admin/v1/merchants/{id}/settlement with a personal token, end to end, for scale.
// Each case runs BENCH_ITERATIONS writes one after the other (default 1000) and reports µs per write (p50, mean).
//   npm run bench:admin                       (SQLite in a temporary directory)
//   TEST_DATABASE_URL=postgres://… npm run bench:admin   (PostgreSQL, on a database of its own)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actorCan, type Actor } from '../src/access/actor.js';
import { AuditScope } from '../src/access/audit-log.js';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/gateway.js';
import { createLogger } from '../src/logger.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../test/support/database.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 1000);

interface Case {
  name: string;
  p50: number;
  mean: number;
}

async function timed(name: string, run: (n: number) => Promise<unknown>): Promise<Case> {
  for (let n = 0; n < Math.min(50, ITERATIONS); n++) await run(n); // warm-up
  const micros: number[] = [];
  for (let n = 0; n < ITERATIONS; n++) {
    const start = process.hrtime.bigint();
    await run(n);
    micros.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  micros.sort((a, b) => a - b);
  return {
    name,
    p50: micros[Math.floor(micros.length / 2)] ?? 0,
    mean: micros.reduce((sum, m) => sum + m, 0) / micros.length,
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashgate-bench-admin-'));
  const database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    CASHGATE_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    CASHGATE_WORKERS: 'false',
    ...(database !== undefined && { DATABASE_URL: database.url }),
  });
  const gateway = await startGateway(config, createLogger('silent'));
  try {
    const { merchantId } = await gateway.merchants.createMerchant({ name: 'Bench' });
    await gateway.operators.create({ email: 'bench@ops.example', role: 'finance', password: 'a bench password!' });
    const { token } = await gateway.operators.createToken({ email: 'bench@ops.example' });
    const actor = (await gateway.operators.authenticate(token)) as Actor;
    const write = (n: number) => gateway.merchants.setSettlementDelay(merchantId, 1000 + n);

    const floor = await timed('floor: the write alone', write);
    const audited = await timed('the write with its audit record', (n) =>
      new AuditScope(
        gateway.store,
        { now: () => Date.now() },
        {
          actor,
          action: 'merchant.settlement.set',
          targetType: 'merchant',
          targetId: merchantId,
          changes: { request: { delayMs: 1000 + n } },
          origin: { requestId: `req-${n}`, ip: '127.0.0.1', userAgent: 'bench' },
        },
      ).run(() => write(n)),
    );
    const auth = await timed('personal token looked up, role checked', async () => {
      const who = await gateway.operators.authenticate(token);
      if (who === undefined || !actorCan(who, 'settlement.write')) throw new Error('refused');
    });
    const http = await timed('PUT …/settlement over HTTP, personal token', async (n) => {
      const response = await fetch(new URL(`/admin/v1/merchants/${merchantId}/settlement`, gateway.url), {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ delayMs: 5000 + n }),
      });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      await response.arrayBuffer();
    });

    const label = database === undefined ? 'SQLite' : 'PostgreSQL';
    console.log(`\nAdmin write: the permission and audit step (${label}, ${ITERATIONS} writes each, one at a time)\n`);
    console.log(`${'case'.padEnd(48)} ${'p50 µs'.padStart(10)} ${'mean µs'.padStart(10)} ${'× floor'.padStart(8)}`);
    for (const c of [floor, audited, auth, http]) {
      console.log(
        `${c.name.padEnd(48)} ${c.p50.toFixed(0).padStart(10)} ${c.mean.toFixed(0).padStart(10)} ${(c.mean / floor.mean).toFixed(2).padStart(8)}`,
      );
    }
    const auditCost = audited.mean - floor.mean;
    console.log(
      `\nper admin write: audit record +${auditCost.toFixed(0)} µs (mean), token and permission ${auth.mean.toFixed(0)} µs (mean): ` +
        `${(auditCost + auth.mean).toFixed(0)} µs of an HTTP write's ${http.mean.toFixed(0)} µs`,
    );
  } finally {
    await gateway.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
