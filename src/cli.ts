import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { userInfo } from 'node:os';
import { AuditScope } from './access/audit-log.js';
import { CLI_COMMAND_ACCESS, type AuditAction } from './access/permissions.js';
import { formatOf, OPERATOR_COMMANDS, show, type OperatorCommand, type Options } from './cli/commands.js';
import { OPERATOR_ACCOUNT_COMMANDS } from './cli/operator-commands.js';
import type { Services } from './services.js';
import { failureOf, printJson, UsageError } from './cli/output.js';
import { loadConfig, type Config } from './config.js';
import { openServices, startGateway, startNode } from './gateway.js';
import { buildWorkerApp } from './server.js';
import { createLogger } from './logger.js';
import { loadMasterKey } from './store/secret-box.js';
import { lockDataDir } from './store/dir-lock.js';
import { Store } from './store/store.js';
import { SERVICE_VERSION } from './version.js';

const USAGE = `Cashgate ${SERVICE_VERSION}: self-hostable merchant payment gateway

Usage: cashgate <command> [options]      (from a checkout: npm run -s cashgate -- <command> …)

  serve                                  start the HTTP server and workers (default)
  worker                                 run only the workers (callbacks, settlement, expiry, pruning); HTTP for health and metrics only
  migrate                                apply database migrations and exit; prints {"applied":[…]}

  merchant create --name NAME [--language en|pt-BR|es]
  merchant list
  merchant show --merchant ID
  callback set --merchant ID --url URL   the merchant's unified callback address
  callback clear --merchant ID
  callback show --merchant ID
  key create --merchant ID [--permissions all|p1,p2] [--ip-whitelist 0.0.0.0|a,b/cidr] [--debug] [--label TEXT]
  key list --merchant ID                 a key waiting for its activeAt is "pending"
  key edit --merchant ID --key AK… [--permissions p1,p2] [--ip-whitelist a,b/cidr] [--debug|--no-debug] [--label TEXT]
  key disable|enable|delete --merchant ID --key AK…
  fee set --merchant ID --channel CHANNEL --percent-bps N [--fixed AMOUNT] [--minimum AMOUNT] --reason TEXT
  fee list --merchant ID
  rate set --currency BRL|MXN --token USDT --buy PRICE --sell PRICE [--spread-bps N]
  rate list
  user create --merchant ID --email EMAIL [--name TEXT] [--language en|pt-BR|es] [--password TEXT]
  user list --merchant ID
  user password --merchant ID --user ID [--password TEXT]
  user delete --merchant ID --user ID
  audit                                  check the ledger's invariants; exit 1 on any breach

  operator create --email E --role viewer|support|finance|admin|auditor [--name N] [--password P]
  operator list
  operator role --email E --role ROLE
  operator disable|enable --email E
  operator token create --email E [--name N] [--expires-days D]   the token is shown this once
  operator token revoke --token-id ID
  audit-log verify                       check the audit log's hash chain; exit 1 naming the first bad record
  audit-log export [--from ISO] [--to ISO]   the audit log as JSON lines, oldest first

  --format text                          a table for people (lists) or the audit's lines; JSON is the default
  A console user's password comes from --password or, kept out of the process list, CASHGATE_USER_PASSWORD;
  an operator's from --password or CASHGATE_OPERATOR_PASSWORD. Every command that changes something is
  recorded in the audit log as actor cli with the OS user who ran it.

Results are one JSON document on standard output; errors are {"error":{"code","message"}} on standard
error, with exit code 64 for bad use or input, 78 for bad configuration and 1 otherwise.
Configuration comes from the environment (see docs/operations.md).`;

async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  let demoToken: string | undefined;
  if (config.demo && config.adminToken === undefined) {
    demoToken = randomBytes(24).toString('base64url');
    config.adminToken = demoToken;
  }
  const dirLock = lockSqliteDataDir(config);
  const gateway = await startGateway(config, logger, { soleNode: dirLock !== undefined }).catch((error: unknown) => {
    dirLock?.release();
    throw error;
  });
  if (config.demo) await printDemo(gateway, config, demoToken);
  closeOnSignal(logger, config.nodes.shutdownGraceMs, {
    close: () => gateway.close(),
    abandon: () => gateway.nodes.stop(),
  });
}

/**
 * On SQLite, one data directory is one node: a serve or worker process takes it for itself (a
 * second one is refused with a message that says why). Undefined on PostgreSQL.
 */
function lockSqliteDataDir(config: Config): { release(): void } | undefined {
  return config.databaseUrl === undefined ? lockDataDir(config.dataDir) : undefined;
}

/** A worker node: the callback dispatcher and periodic jobs; HTTP only for health and metrics. */
async function runWorker(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const dirLock = lockSqliteDataDir(config);
  const services = await openServices(config, logger);
  const workers = await startNode(services, config, logger, {
    role: 'worker',
    soleNode: dirLock !== undefined,
    workers: true,
  });
  const app = await buildWorkerApp({ ...services, logger });
  const url = await app.listen({ host: config.host, port: config.port });
  logger.info({ url, database: services.store.dialect, node: services.nodes.id }, 'Cashgate worker is running');
  closeOnSignal(logger, config.nodes.shutdownGraceMs, {
    close: async () => {
      await Promise.all([app.close(), workers?.stop()]);
      await services.close();
    },
    abandon: () => services.nodes.stop(),
  });
}

/**
 * On SIGINT or SIGTERM: a clean stop within `graceMs`. `close` stops taking new work (requests get
 * 503, workers claim nothing), lets what is in flight finish, releases this node's leases and marks
 * it gone. If that has not finished when the last second of the grace begins (a rail or a merchant
 * that does not answer), `abandon` releases the leases still held, so other nodes take that work up
 * at once (what this node was doing records nothing), and the process exits (with 1 only if even
 * that failed: then its leases are freed when another node finds it dead).
 */
function closeOnSignal(
  logger: ReturnType<typeof createLogger>,
  graceMs: number,
  stop: { close(): Promise<void>; abandon(): Promise<void> },
): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    const started = Date.now();
    logger.info({ signal, graceMs }, 'shutting down');
    const abandonAt = graceMs - Math.min(1_000, Math.floor(graceMs / 5));
    const timer = setTimeout(() => {
      logger.error(
        { inFlightForMs: Date.now() - started },
        'work in flight did not finish within SHUTDOWN_GRACE_MS; releasing this node’s leases and exiting',
      );
      const exit = setTimeout(() => process.exit(1), graceMs - abandonAt);
      stop.abandon().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'releasing the leases failed; they are freed when this node is found dead');
          clearTimeout(exit);
          process.exit(1);
        },
      );
    }, abandonAt);
    stop.close().then(
      () => {
        clearTimeout(timer);
        logger.info({ ms: Date.now() - started }, 'stopped cleanly');
        process.exit(0);
      },
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
const DEMO_OPERATOR_EMAIL = 'admin@cashgate.local';

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
  // The demo's back-office admin is made once; its password is shown then (it must enrol an
  // authenticator app at its first sign-in, as every admin must).
  const operatorPassword = randomBytes(12).toString('base64url');
  const operatorMade = !(await gateway.operators.list()).some((o) => o.email === DEMO_OPERATOR_EMAIL);
  if (operatorMade) {
    await gateway.operators.create({
      email: DEMO_OPERATOR_EMAIL,
      role: 'admin',
      name: 'Demo Admin',
      password: operatorPassword,
    });
  }
  const lines = [
    '',
    '  Cashgate demo is running',
    `  URL          ${config.publicBaseUrl}`,
    `  merchant     ${merchant.merchantId} (Demo Merchant)`,
    `  access key   ${key.accessKey}`,
    `  secret key   ${key.secretKey}   (shown once; a new key is made at every demo start)`,
    `  admin token  ${demoToken ?? '(CASHGATE_ADMIN_TOKEN from your environment)'}`,
    `  console      ${config.publicBaseUrl}/console   sign in as ${user.email} / ${password}`,
    `  back office  ${config.publicBaseUrl}/backoffice   sign in as ${DEMO_OPERATOR_EMAIL} / ${
      operatorMade
        ? `${operatorPassword}   (shown once; set up an authenticator app at the first sign-in)`
        : '(the password shown at the first demo start)'
    }`,
    '',
    '  Try a signed request (in another terminal, in this directory):',
    `    export CASHGATE_URL=${config.publicBaseUrl} CASHGATE_ACCESS_KEY=${key.accessKey} CASHGATE_SECRET_KEY=${key.secretKey}`,
    '    eval "$(node scripts/signed-curl.mjs POST /api/v3/bra/query/bank \'{"currencyType":"BRL"}\')"',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Every operator command, by its words. */
const COMMANDS: Record<string, OperatorCommand> = { ...OPERATOR_COMMANDS, ...OPERATOR_ACCOUNT_COMMANDS };

/** The OS user running the CLI: the `cli` actor of the audit log. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? `uid:${process.getuid?.() ?? '?'}`;
  }
}

/** The option that names what a command acts on, in the order they are looked for. */
const TARGET_OPTIONS = [
  ['key', 'apikey'],
  ['user', 'console_user'],
  ['token-id', 'operator_token'],
  ['merchant', 'merchant'],
  ['email', 'operator'],
] as const;

/** Runs a command that changes something as an audited action of the `cli` actor. */
function audited<T>(services: Services, action: AuditAction, values: Options, work: () => Promise<T>): Promise<T> {
  const target = TARGET_OPTIONS.find(([name]) => typeof values[name] === 'string');
  const reason = values.reason;
  const request = Object.fromEntries(Object.entries(values).filter(([name]) => name !== 'format' && name !== 'help'));
  return new AuditScope(services.store, services.clock, {
    actor: { type: 'cli', osUser: osUser() },
    action,
    ...(target !== undefined && { targetType: target[1], targetId: String(values[target[0]]) }),
    ...(typeof reason === 'string' && { reason }),
    changes: { request },
  }).run(work);
}

/** Opens the services (applying pending migrations), runs the work and closes them again. */
async function withServices<T>(
  config: Config,
  work: (services: Awaited<ReturnType<typeof openServices>>) => Promise<T>,
) {
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const services = await openServices(config, logger);
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}

/** Applies pending migrations and says which (none: an empty list); makes the master key if there is none. */
async function migrate(config: Config): Promise<{ applied: string[] }> {
  const store = Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const applied = await store.migrate();
    loadMasterKey(config.masterKey, config.dataDir);
    return { applied };
  } finally {
    await store.close();
  }
}

const OPTIONS = {
  name: { type: 'string' },
  language: { type: 'string' },
  merchant: { type: 'string' },
  key: { type: 'string' },
  permissions: { type: 'string' },
  'ip-whitelist': { type: 'string' },
  label: { type: 'string' },
  debug: { type: 'boolean' },
  'no-debug': { type: 'boolean' },
  url: { type: 'string' },
  channel: { type: 'string' },
  'percent-bps': { type: 'string' },
  fixed: { type: 'string' },
  minimum: { type: 'string' },
  currency: { type: 'string' },
  token: { type: 'string' },
  buy: { type: 'string' },
  sell: { type: 'string' },
  'spread-bps': { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  user: { type: 'string' },
  role: { type: 'string' },
  'token-id': { type: 'string' },
  'expires-days': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  reason: { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
    const command = positionals.join(' ') || 'serve';
    if (values.help === true || command === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    return await run(command, values);
  } catch (error) {
    const { body, exitCode } = failureOf(error);
    process.stderr.write(`${JSON.stringify(body)}\n`);
    return exitCode;
  }
}

async function run(command: string, values: Options): Promise<number> {
  const operator = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (operator === undefined && !['serve', 'worker', 'migrate'].includes(command)) {
    throw new UsageError(`unknown command "${command}": cashgate --help lists the commands`);
  }
  // The command line is checked before the configuration is read or the database opened.
  const format = formatOf(command, values);
  const work = operator?.prepare(values);
  const config = loadConfig();
  switch (command) {
    case 'serve':
      await serve(config);
      return -1;
    case 'worker':
      await runWorker(config);
      return -1;
    case 'migrate':
      printJson(await migrate(config));
      return 0;
  }
  if (work === undefined) throw new UsageError(`unknown command "${command}"`);
  const access = CLI_COMMAND_ACCESS[command];
  const outcome = await withServices(config, (services) =>
    access?.action === undefined ? work(services) : audited(services, access.action, values, () => work(services)),
  );
  show(outcome, format);
  return outcome.exitCode ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${JSON.stringify(failureOf(error).body)}\n`);
    process.exitCode = 1;
  },
);
