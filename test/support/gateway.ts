import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import { OffsetClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import type { SignedRouteDef } from '../../src/auth/signed-route.js';
import { audit } from '../../src/ledger/audit.js';
import { createLogger } from '../../src/logger.js';
import { AUDIT_CHECKS } from '../../src/orders/audit.js';
import { createTestDatabase, TEST_DATABASE_URL } from './database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestGateway {
  url: string;
  clock: OffsetClock;
  gateway: Gateway;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Calls the admin API with the bearer token. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Drives an order one step through the admin sandbox route. */
  sandbox(orderId: string, event: string, extra?: Record<string, unknown>): Promise<{ status: number; body: any }>;
  /** Every breach `cashgate audit` would report on this gateway's database (its details). */
  auditBreaches(): Promise<string[]>;
  /** A merchant and a key that is already active (the clock is moved past the activation delay). */
  merchantWithKey(settings?: {
    permissions?: string[];
    ipWhitelist?: string[] | string;
    debug?: boolean;
    language?: string;
  }): Promise<{
    merchantId: string;
    credentials: Credentials;
  }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  env?: Record<string, string>;
  /** Receives the server's JSON log lines (default: discarded unless TEST_LOG_LEVEL is set). */
  logDestination?: { write(line: string): void };
  extraSignedRoutes?: readonly SignedRouteDef[];
  /** Start a second node on the same database (and master key) as this gateway. */
  sameDatabaseAs?: TestGateway;
  /** Run the background workers (default true). */
  workers?: boolean;
}

/** Starts the real gateway on a free port with its own empty database (SQLite, or PostgreSQL when TEST_DATABASE_URL is set). */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const shared = options.sameDatabaseAs;
  const dataDir = shared?.dataDir ?? mkdtempSync(join(tmpdir(), 'cashgate-test-'));
  const database = shared !== undefined || TEST_DATABASE_URL === undefined ? undefined : await createTestDatabase();
  const databaseUrl = shared?.databaseUrl ?? database?.url;
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    CASHGATE_DATA_DIR: dataDir,
    CASHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
    ...options.env,
  });
  const clock = new OffsetClock();
  const logger =
    options.logDestination === undefined
      ? createLogger(config.logLevel, process.stderr)
      : createLogger('info', options.logDestination);
  const gateway = await startGateway(config, logger, {
    clock,
    ...(options.workers !== undefined && { workers: options.workers }),
    ...(options.extraSignedRoutes !== undefined && { extraSignedRoutes: options.extraSignedRoutes }),
  });
  const url = gateway.url;

  const admin: TestGateway['admin'] = async (method, path, body) => {
    const response = await fetch(new URL(path, url), {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };

  return {
    url,
    clock,
    gateway,
    dataDir,
    databaseUrl,
    admin,
    sandbox: (orderId, event, extra = {}) =>
      admin('POST', `/admin/v1/sandbox/orders/${orderId}/events`, { event, ...extra }),
    auditBreaches: async () =>
      (await audit(gateway.store.read, AUDIT_CHECKS)).flatMap((r) => r.breaches.map((b) => b.detail)),
    async merchantWithKey(settings = {}) {
      const merchant = await admin('POST', '/admin/v1/merchants', {
        name: 'Test Merchant',
        ...(settings.language !== undefined && { language: settings.language }),
      });
      if (merchant.status !== 200) throw new Error(`merchant create failed: ${JSON.stringify(merchant.body)}`);
      const key = await admin('POST', `/admin/v1/merchants/${merchant.body.merchantId}/api-keys`, {
        permissions: settings.permissions ?? ['all'],
        ipWhitelist: settings.ipWhitelist ?? ['0.0.0.0'],
        debug: settings.debug ?? false,
      });
      if (key.status !== 200) throw new Error(`key create failed: ${JSON.stringify(key.body)}`);
      const wait = key.body.activeAt - clock.now();
      if (wait >= 0) clock.advance(wait + 1);
      return {
        merchantId: merchant.body.merchantId,
        credentials: { accessKey: key.body.accessKey, secretKey: key.body.secretKey },
      };
    },
    async close() {
      await gateway.close();
      if (shared !== undefined) return;
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SignedCall {
  method?: 'GET' | 'POST';
  path: string;
  body?: unknown;
  query?: Record<string, string>;
  /** Headers to replace (undefined removes one) after signing. */
  headers?: Record<string, string | undefined>;
  /** Raw body text sent instead of JSON.stringify(body). */
  rawBody?: string;
  timestamp?: number;
  nonce?: string;
}

export interface EnvelopeResponse {
  status: number;
  contentType: string | null;
  requestId: string | null;
  body: { code: string; success: boolean; msg: string; msgEn: string; data: any };
  /** The response body as sent (numbers with every digit). */
  text: string;
}

/** Sends a request signed the way a merchant would, with the SDK. */
export async function signedCall(
  baseUrl: string,
  credentials: Credentials,
  call: SignedCall,
  now: number,
): Promise<EnvelopeResponse> {
  const method = call.method ?? 'POST';
  const url = new URL(call.path, baseUrl);
  for (const [k, v] of Object.entries(call.query ?? {})) url.searchParams.set(k, v);
  const params = method === 'GET' ? (call.query ?? null) : ((call.body ?? null) as Record<string, unknown> | null);
  const signed: Record<string, string | undefined> = {
    ...signedHeaders(credentials, params, call.timestamp ?? now, call.nonce),
    ...(method === 'POST' && { 'content-type': 'application/json;charset=utf-8' }),
  };
  for (const [name, value] of Object.entries(call.headers ?? {})) signed[name] = value;
  const headers = Object.fromEntries(Object.entries(signed).filter((e): e is [string, string] => e[1] !== undefined));
  const response = await fetch(url, {
    method,
    headers,
    ...(method === 'POST' && { body: call.rawBody ?? JSON.stringify(call.body ?? {}) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    requestId: response.headers.get('x-request-id'),
    body: JSON.parse(text) as EnvelopeResponse['body'],
    text,
  };
}
