import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TEST_DATABASE_URL } from './database.js';
import { ADMIN_TOKEN } from './gateway.js';
import { adminCall, startServerProcess, type ServerProcess } from './process.js';

/**
 * What a test that kills server processes needs: a data directory (and, on a PostgreSQL run, a
 * database) that outlives each process, and every process it started killed when the test ends.
 * Leases keep their defaults (RAIL_LEASE_MS 60 s): a successor takes over a dead node's work
 * because the node is found dead (or, on SQLite, started again), as an operator's would.
 */
export interface CrashRig {
  /** The environment every process of the test shares (add the rail's own). */
  env: Record<string, string>;
  start(env: Record<string, string>): Promise<ServerProcess>;
  /** Kills the process at once (SIGKILL), as a crash would. */
  crash(server: ServerProcess): Promise<void>;
  /** Kills whatever is still running (for afterEach). */
  killAll(): Promise<void>;
  close(): Promise<void>;
}

export async function startCrashRig(label: string): Promise<CrashRig> {
  const dataDir = mkdtempSync(join(tmpdir(), `cashgate-${label}-`));
  const database = TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
  const running = new Set<ServerProcess>();
  const killAll = async () => {
    await Promise.all([...running].map((server) => server.kill()));
    running.clear();
  };
  return {
    env: {
      CASHGATE_DATA_DIR: dataDir,
      CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_ACTIVATION_DELAY_MS: '0',
      LOG_LEVEL: 'info',
      ...(database !== undefined && { DATABASE_URL: database.url }),
    },
    start: async (env) => {
      const server = await startServerProcess(env);
      running.add(server);
      return server;
    },
    crash: async (server) => {
      await server.kill();
      running.delete(server);
    },
    killAll,
    close: async () => {
      await killAll();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A merchant made through a server process's admin API: its callbacks to `callbackUrl`, a key with
 * every permission, and a float of `amount` in `currency` for its transfers.
 */
export async function processMerchant(
  server: ServerProcess,
  input: { callbackUrl: string; currency: string; amount: string },
): Promise<{ merchantId: string; credentials: { accessKey: string; secretKey: string } }> {
  const merchant = await adminCall(server, ADMIN_TOKEN, 'POST', '/admin/v1/merchants', { name: 'Crash' });
  const merchantId = merchant.body.merchantId as string;
  await adminCall(server, ADMIN_TOKEN, 'PUT', `/admin/v1/merchants/${merchantId}/callback`, { url: input.callbackUrl });
  const key = await adminCall(server, ADMIN_TOKEN, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
    permissions: ['all'],
    ipWhitelist: ['0.0.0.0'],
    debug: false,
  });
  await adminCall(server, ADMIN_TOKEN, 'POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
    currency: input.currency,
    amount: input.amount,
    reason: 'float',
  });
  return {
    merchantId,
    credentials: { accessKey: key.body.accessKey as string, secretKey: key.body.secretKey as string },
  };
}
