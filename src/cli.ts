import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openServices, startBackgroundWork, startGateway } from './gateway.js';
import type { Static, TSchema } from '@sinclair/typebox';
import { buildWorkerApp } from './server.js';
import { audit } from './ledger/audit.js';
import { AUDIT_CHECKS } from './orders/audit.js';
import { validateInput } from './http/validation.js';
import { CreateApiKeyBody, CreateMerchantBody } from './merchants/schemas.js';
import { createLogger } from './logger.js';
import { SERVICE_VERSION } from './version.js';

const USAGE = `Cashgate ${SERVICE_VERSION}: self-hostable merchant payment gateway

Usage: cashgate <command> [options]      (from a checkout: npm run cashgate -- <command> …)

  serve                                  start the HTTP server and workers (default)
  worker                                 run only the workers (callbacks, settlement, expiry, pruning); HTTP for health and metrics only
  migrate                                apply database migrations and exit
  merchant create --name NAME [--language en|pt-BR|es]
  merchant list
  key create --merchant ID [--permissions all|p1,p2] [--ip-whitelist 0.0.0.0|a,b/cidr] [--debug] [--label TEXT]
  key list --merchant ID
  audit                                  check the ledger's invariants; exit 1 on any breach

Configuration comes from the environment (see docs/operations.md).`;

async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  let demoToken: string | undefined;
  if (config.demo && config.adminToken === undefined) {
    demoToken = randomBytes(24).toString('base64url');
    config.adminToken = demoToken;
  }
  const gateway = await startGateway(config, logger);
  if (config.demo) await printDemo(gateway, config, demoToken);
  closeOnSignal(logger, () => gateway.close());
}

/** A worker node: the callback dispatcher and periodic jobs; HTTP only for health and metrics. */
async function work(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const services = await openServices(config, logger);
  const workers = startBackgroundWork(services, config, logger);
  const app = await buildWorkerApp({ ...services, logger });
  const url = await app.listen({ host: config.host, port: config.port });
  logger.info({ url, database: services.store.dialect }, 'Cashgate worker is running');
  closeOnSignal(logger, async () => {
    await app.close();
    await workers.stop();
    await services.close();
  });
}

/** On SIGINT or SIGTERM: finish what is in flight, close, exit. */
function closeOnSignal(logger: ReturnType<typeof createLogger>, close: () => Promise<void>): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

const DEMO_CONSOLE_EMAIL = 'demo@cashgate.local';

async function printDemo(
  gateway: Awaited<ReturnType<typeof startGateway>>,
  config: Config,
  demoToken: string | undefined,
): Promise<void> {
  const existing = (await gateway.merchants.listMerchants()).find((m) => m.name === 'Demo Merchant');
  const merchant = existing ?? (await gateway.merchants.createMerchant({ name: 'Demo Merchant', language: 'en' }));
  // The demo key works at once; keys made afterwards follow KEY_ACTIVATION_DELAY_MS.
  const key = await gateway.merchants.createApiKey(
    merchant.merchantId,
    { permissions: ['all'], ipWhitelist: ['0.0.0.0'], debug: true, label: 'demo' },
    0,
  );
  // The demo's console login gets a new password at every start, like the key.
  const password = randomBytes(12).toString('base64url');
  const user =
    (await gateway.consoleAccounts.resetPassword({ email: DEMO_CONSOLE_EMAIL }, password)) ??
    (await gateway.consoleAccounts.createUser(merchant.merchantId, {
      email: DEMO_CONSOLE_EMAIL,
      name: 'Demo User',
      password,
    }));
  const lines = [
    '',
    '  Cashgate demo is running',
    `  URL          ${config.publicBaseUrl}`,
    `  merchant     ${merchant.merchantId} (Demo Merchant)`,
    `  access key   ${key.accessKey}`,
    `  secret key   ${key.secretKey}   (shown once; a new key is made at every demo start)`,
    `  admin token  ${demoToken ?? '(CASHGATE_ADMIN_TOKEN from your environment)'}`,
    `  console      ${config.publicBaseUrl}/console   sign in as ${user.email} / ${password}`,
    '',
    '  Try a signed request (in another terminal, in this directory):',
    `    export CASHGATE_URL=${config.publicBaseUrl} CASHGATE_ACCESS_KEY=${key.accessKey} CASHGATE_SECRET_KEY=${key.secretKey}`,
    '    eval "$(node scripts/signed-curl.mjs POST /api/v3/bra/query/bank \'{"currencyType":"BRL"}\')"',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function option(values: Options, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

async function withServices(
  config: Config,
  work: (services: Awaited<ReturnType<typeof openServices>>) => Promise<unknown>,
): Promise<void> {
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const services = await openServices(config, logger);
  try {
    const result = await work(services);
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await services.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      language: { type: 'string' },
      merchant: { type: 'string' },
      permissions: { type: 'string' },
      'ip-whitelist': { type: 'string' },
      label: { type: 'string' },
      debug: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals.join(' ') || 'serve';
  if (values.help === true || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 78;
    }
    throw error;
  }
  try {
    return await run(command, values, config);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
      return 64;
    }
    throw error;
  }
}

type Options = Record<string, string | boolean | undefined>;

async function run(command: string, values: Options, config: Config): Promise<number> {
  switch (command) {
    case 'serve':
      await serve(config);
      return -1;
    case 'worker':
      await work(config);
      return -1;
    case 'migrate':
      await withServices(config, async () => ({ migrated: true }));
      return 0;
    case 'merchant create': {
      const input: unknown = { name: required(values, 'name', command), language: option(values, 'language') ?? 'en' };
      assertValid(CreateMerchantBody, input);
      await withServices(config, ({ merchants }) => merchants.createMerchant(input));
      return 0;
    }
    case 'merchant list':
      await withServices(config, ({ merchants }) => merchants.listMerchants());
      return 0;
    case 'key create': {
      const merchantId = required(values, 'merchant', command);
      const input: unknown = {
        permissions: (option(values, 'permissions') ?? 'all').split(',').map((p) => p.trim()),
        ipWhitelist: option(values, 'ip-whitelist') ?? '0.0.0.0',
        debug: values.debug === true,
        ...(option(values, 'label') !== undefined && { label: option(values, 'label') }),
      };
      assertValid(CreateApiKeyBody, input);
      await withServices(config, ({ merchants }) => merchants.createApiKey(merchantId, input));
      return 0;
    }
    case 'audit': {
      let breaches = 0;
      await withServices(config, async ({ store }) => {
        for (const result of await audit(store.read, AUDIT_CHECKS)) {
          breaches += result.breaches.length;
          process.stdout.write(`${result.breaches.length === 0 ? 'ok     ' : 'BREACH '} ${result.check}\n`);
          for (const breach of result.breaches) process.stdout.write(`         ${breach.detail}\n`);
        }
      });
      process.stdout.write(breaches === 0 ? 'the ledger is sound\n' : `${breaches} breach(es)\n`);
      return breaches === 0 ? 0 : 1;
    }
    case 'key list': {
      const merchantId = required(values, 'merchant', command);
      await withServices(config, ({ merchants }) => merchants.listApiKeys(merchantId));
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

/** Bad command-line use: printed with exit code 64 (EX_USAGE). */
class UsageError extends Error {}

function required(values: Options, name: string, command: string): string {
  const value = option(values, name);
  if (value === undefined) throw new UsageError(`${command} needs --${name}`);
  return value;
}

/** Applies the admin API's schema to CLI input, so both refuse the same things with the same words. */
function assertValid<T extends TSchema>(schema: T, input: unknown): asserts input is Static<T> {
  const error = validateInput(schema, input);
  if (error !== undefined) throw new UsageError(error.message);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`cashgate: ${message}\n`);
    process.exitCode = 1;
  },
);
