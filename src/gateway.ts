import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { buildApp } from './http/app.js';
import type { SignedRouteDef } from './http/signed-route.js';
import { MerchantService } from './merchants/service.js';
import { loadMasterKey, SecretBox } from './store/secret-box.js';
import { Store } from './store/store.js';
import { noncePruner } from './workers/nonce-pruner.js';
import { startWorkers } from './workers/worker.js';

export interface Gateway {
  app: FastifyInstance;
  store: Store;
  merchants: MerchantService;
  /** Base URL the server listens on, once started. */
  url: string;
  close(): Promise<void>;
}

export interface GatewayOptions {
  clock?: Clock;
  /** Run the background workers in this process (default true). */
  workers?: boolean;
  extraSignedRoutes?: readonly SignedRouteDef[];
}

/** Opens the store, applies migrations and wires the services that both the server and the CLI use. */
export async function openServices(config: Config, logger: Logger, clock: Clock = systemClock) {
  const store = Store.open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onConnectionError: (error) => logger.warn({ err: error }, 'an idle database connection failed; it will be replaced'),
  });
  try {
    const applied = await store.migrate();
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied migrations');
  } catch (error) {
    await store.close();
    throw error;
  }
  const secrets = new SecretBox(loadMasterKey(config.masterKey, config.dataDir));
  const merchants = new MerchantService(store, secrets, clock, config.keyActivationDelayMs);
  return { store, merchants };
}

/** Starts the whole gateway: storage, HTTP server and in-process workers. */
export async function startGateway(config: Config, logger: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  const { store, merchants } = await openServices(config, logger, clock);
  const app = await buildApp({
    config,
    store,
    merchants,
    clock,
    logger,
    ...(options.extraSignedRoutes !== undefined && { extraSignedRoutes: options.extraSignedRoutes }),
  });
  const workers = options.workers === false ? undefined : startWorkers([noncePruner({ store, clock, logger })], logger);
  let url: string;
  try {
    url = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await workers?.stop();
    await app.close();
    await store.close();
    throw error;
  }
  logger.info({ url, database: store.dialect }, 'Cashgate is serving');
  return {
    app,
    store,
    merchants,
    url,
    async close() {
      await app.close();
      await workers?.stop();
      await store.close();
    },
  };
}
