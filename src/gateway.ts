import { ConsoleAccounts } from './console/accounts.js';
import { RequestLog } from './console/request-log.js';
import { consolePruner } from './workers/console-pruner.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { openCallbacks, type Callbacks } from './callbacks/module.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { SignedRouteDef } from './auth/signed-route.js';
import { LedgerService } from './ledger/service.js';
import { brazilKinds } from './brazil/kinds.js';
import { PixLocationSigner } from './brazil/pix-location.js';
import { ApiPixBrazil } from './brazil/api-pix.js';
import { BoletoLive } from './brazil/boleto-live.js';
import { MexicoCollections } from './mexico/collections.js';
import { OxxoLive } from './mexico/oxxo-live.js';
import { SpeiLive } from './mexico/spei-live.js';
import { StpClient } from './rails/stp/client.js';
import { loadStpPrivateKey } from './rails/stp/firma.js';
import { StripeClient } from './rails/stripe/client.js';
import { mexicoReconcileWorker } from './workers/mexico-reconcile.js';
import { EfiIssuer } from './rails/boleto/efi-client.js';
import { InterIssuer } from './rails/boleto/inter-client.js';
import type { BoletoIssuer } from './rails/boleto/issuer.js';
import { DarajaKenya } from './kenya/daraja.js';
import { kenyaKinds } from './kenya/kinds.js';
import { DarajaClient } from './rails/daraja/client.js';
import { ApiPixClient } from './rails/pix/api-pix-client.js';
import { MerchantService } from './merchants/service.js';
import { DepositAddresses } from './exchange/deposit-addresses.js';
import { OperatorRates } from './exchange/rates.js';
import { ExchangeService } from './exchange/service.js';
import { CheckoutService } from './cashier/checkout.js';
import { OrderSandbox } from './orders/sandbox.js';
import { CHAINS, type Chain } from './rails/chain/addresses.js';
import { ACCOUNT_PATHS, DepositAddressDeriver } from './rails/chain/derivation.js';
import { sandboxChainRail, type ChainRail } from './rails/chain/rail.js';
import { LiveChains } from './chains.js';
import { sandboxRails, type Rails } from './rails/rails.js';
import { buildApp } from './server.js';
import type { OrderKinds, Services } from './services.js';
import { OrderService } from './orders/service.js';
import { loadMasterKey, SecretBox } from './store/secret-box.js';
import { Store } from './store/store.js';
import { noncePruner } from './workers/nonce-pruner.js';
import { expiryWorker } from './workers/expiry.js';
import { darajaReconcileWorker } from './workers/daraja-reconcile.js';
import { pixReconcileWorker } from './workers/pix-reconcile.js';
import { boletoReconcileWorker } from './workers/boleto-reconcile.js';
import { railHandOverWorker } from './workers/rail-hand-over.js';
import { settlementWorker } from './workers/settlement.js';
import { depositAddressPoolWorker } from './workers/deposit-address-pool.js';
import { startWorkers } from './workers/worker.js';
import { NodeIdentity, NodeLiveness, type NodeStart } from './nodes/liveness.js';
import { SERVICE_VERSION } from './version.js';
import { OperatorService } from './operators/service.js';
import { OperatorSignIn } from './operators/signin.js';
import { AdjustmentApprovals } from './ledger/approvals.js';

export interface Gateway {
  app: FastifyInstance;
  store: Store;
  merchants: MerchantService;
  ledger: LedgerService;
  orders: OrderService;
  callbacks: Callbacks;
  consoleAccounts: ConsoleAccounts;
  /** The fiat rails this gateway's orders are handed to (tests may wrap one). */
  rails: Rails;
  /** Base URL the server listens on, once started. */
  url: string;
  /** The Prometheus registry served at /metrics. */
  metrics: Registry;
  /** This process as a node: its heartbeat, and the leases it frees and releases. */
  nodes: NodeLiveness;
  /** The people who operate Cashgate, and their sign-in. */
  operators: OperatorService;
  operatorSignIn: OperatorSignIn;
  /** Boletos at an issuer (BRAZIL_BOLETO_RAIL=efi|inter), when they are live. */
  boleto: BoletoLive | undefined;
  /** Mexico's live rails and their webhook path tokens (MEXICO_SPEI_RAIL=stp, MEXICO_OXXO_RAIL=stripe). */
  mexico: Services['mexico'];
  close(): Promise<void>;
}

export interface GatewayOptions {
  clock?: Clock;
  /** Run the background workers in this process (default: CASHGATE_WORKERS, true unless set false). */
  workers?: boolean;
  extraSignedRoutes?: readonly SignedRouteDef[];
  /** This process alone uses the database (SQLite with its data directory locked): see `NodeStart.soleNode`. */
  soleNode?: boolean;
}

export type { OrderKinds, Services } from './services.js';

/** How many units of work each database commit carries (group commit on SQLite). */
function registerStoreMetrics(registry: Registry, store: Store): void {
  new Counter({
    name: 'cashgate_store_commits_total',
    help: 'Database commits of units of work (on SQLite one commit carries every unit of a group)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(store.commitStats.commits);
    },
  });
  new Counter({
    name: 'cashgate_store_units_total',
    help: 'Units of work committed or rolled back; divided by cashgate_store_commits_total, the mean group size',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(store.commitStats.units);
    },
  });
  new Counter({
    name: 'cashgate_store_checkpoints_total',
    help: 'SQLite: checkpoints of the WAL into the database file, on their own thread; waited: those a group of writes waited for',
    labelNames: ['waited'],
    registers: [registry],
    collect() {
      this.reset();
      const { checkpoints, waited } = store.checkpointStats;
      this.inc({ waited: 'false' }, checkpoints - waited);
      this.inc({ waited: 'true' }, waited);
    },
  });
}

/** Opens the store, applies migrations and wires the services that the server, the worker and the CLI use. */
export async function openServices(config: Config, logger: Logger, clock: Clock = systemClock): Promise<Services> {
  const store = Store.open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    onConnectionError: (error) =>
      logger.warn({ err: error }, 'an idle database connection failed; it will be replaced'),
    onCheckpointError: (error) =>
      logger.warn({ err: error }, 'a checkpoint of the database log failed; the next one copies what it left'),
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
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics, prefix: 'cashgate_' });
  registerStoreMetrics(metrics, store);
  const node = new NodeIdentity();
  const callbacks = openCallbacks({ config, store, clock, logger, merchants, registry: metrics, node });
  const ledger = new LedgerService(store, clock, metrics);
  const orders = new OrderService(store, clock, ledger, callbacks.outbox, logger.child({ component: 'orders' }), {
    railLeaseMs: config.railLeaseMs,
    node,
    registry: metrics,
  });
  const rates = new OperatorRates(store, clock);
  const addresses = new DepositAddresses({
    store,
    clock,
    derivers: {
      tron: new DepositAddressDeriver('tron', config.exchange.xpubs.tron),
      ...(config.exchange.xpubs.evm !== undefined && {
        evm: new DepositAddressDeriver('evm', config.exchange.xpubs.evm),
      }),
    },
    poolSize: config.exchange.depositAddressPoolSize,
  });
  const chains =
    config.chain.rail === 'live'
      ? new LiveChains({
          config: config.chain,
          store,
          clock,
          logger,
          registry: metrics,
          railLeaseMs: config.railLeaseMs,
          node,
        })
      : undefined;
  const chainRails =
    chains?.rails ??
    (Object.fromEntries(CHAINS.map((chain) => [chain, sandboxChainRail(chain)])) as Record<Chain, ChainRail>);
  const publicBaseUrl = config.publicBaseUrl;
  const kenya = config.kenya;
  // The token in Daraja's callback paths: derived from the master key, so every node has the same one.
  const darajaToken = secrets.derive('cashgate daraja callback path');
  const daraja =
    kenya.rail === 'daraja'
      ? new DarajaKenya(
          {
            client: new DarajaClient(kenya.daraja, () => clock.now(), metrics),
            store,
            orders,
            clock,
            logger: logger.child({ component: 'daraja' }),
            node,
            registry: metrics,
          },
          {
            callbackBase: `${publicBaseUrl}/rails/daraja/${darajaToken}`,
            stkQueryAfterMs: kenya.stkQueryAfterMs,
            resultTimeoutMs: kenya.resultTimeoutMs,
          },
        )
      : undefined;
  const brazil = config.brazil;
  // The token in the Pix webhook's path, derived like Daraja's.
  const pixToken = secrets.derive('cashgate pix webhook path');
  const apiPix =
    brazil.rail === 'apipix'
      ? new ApiPixBrazil(
          {
            client: new ApiPixClient(brazil.apiPix, () => clock.now(), metrics),
            store,
            orders,
            ledger: ledger.ledger,
            clock,
            logger: logger.child({ component: 'apipix' }),
            registry: metrics,
          },
          {
            webhookBase: `${publicBaseUrl}/rails/pix/${pixToken}`,
            pixKey: config.pix.key,
            resultTimeoutMs: brazil.resultTimeoutMs,
            reconcileIntervalMs: brazil.reconcileIntervalMs,
          },
        )
      : undefined;
  // Boletos at an issuer, independent of the Pix rail; the token in the notification path is derived like Pix's.
  const boletoToken = secrets.derive('cashgate boleto notification path');
  const boletoConfig = config.boleto;
  const issuer: BoletoIssuer | undefined =
    boletoConfig.efi !== undefined
      ? new EfiIssuer(boletoConfig.efi, () => clock.now(), metrics)
      : boletoConfig.inter !== undefined
        ? new InterIssuer(boletoConfig.inter, () => clock.now(), metrics)
        : undefined;
  const boleto =
    issuer === undefined
      ? undefined
      : new BoletoLive(
          {
            issuer,
            store,
            orders,
            ledger: ledger.ledger,
            clock,
            logger: logger.child({ component: 'boleto', issuer: issuer.name }),
            registry: metrics,
          },
          {
            notificationUrl: `${publicBaseUrl}/rails/boleto/${boletoToken}/${issuer.name}`,
            issueWaitMs: boletoConfig.issueWaitMs,
            reconcileIntervalMs: boletoConfig.reconcileIntervalMs,
          },
        );
  // Mexico's live rails, each independent of the other; their webhook paths carry tokens derived like Pix's.
  const mexico = config.mexico;
  const stpToken = secrets.derive('cashgate stp webhook path');
  const stripeToken = secrets.derive('cashgate stripe webhook path');
  const spei =
    mexico.spei.rail !== 'stp'
      ? undefined
      : new SpeiLive(
          {
            client: new StpClient({
              baseUrl: mexico.spei.baseUrl,
              queryUrl: mexico.spei.queryUrl,
              empresa: mexico.spei.empresa,
              privateKey: loadStpPrivateKey(mexico.spei.privateKeyPem, mexico.spei.passphrase),
              timeoutMs: mexico.spei.timeoutMs,
              registry: metrics,
              now: () => clock.now(),
            }),
            store,
            orders,
            ledger: ledger.ledger,
            clock,
            logger: logger.child({ component: 'spei' }),
            registry: metrics,
          },
          { empresa: mexico.spei.empresa, clabePrefix: mexico.spei.clabePrefix },
        );
  const oxxo =
    mexico.oxxo.rail !== 'stripe'
      ? undefined
      : new OxxoLive(
          {
            client: new StripeClient({
              baseUrl: mexico.oxxo.baseUrl,
              secretKey: mexico.oxxo.secretKey,
              timeoutMs: mexico.oxxo.timeoutMs,
              registry: metrics,
            }),
            store,
            orders,
            clock,
            logger: logger.child({ component: 'oxxo' }),
            registry: metrics,
          },
          { webhookSecret: mexico.oxxo.webhookSecret },
        );
  const rails: Rails = {
    ...sandboxRails(),
    ...daraja?.rails(),
    ...apiPix?.rails(),
    ...(boleto !== undefined && { boleto: boleto.rail() }),
    ...(spei !== undefined && { spei: spei.rail() }),
    ...(oxxo !== undefined && { oxxo: oxxo.rail() }),
  };
  const kinds: OrderKinds = {
    kenya: kenyaKinds({ rails, ledger: ledger.ledger, publicBaseUrl }),
    brazil: brazilKinds({
      rails,
      ledger: ledger.ledger,
      publicBaseUrl,
      codes: {
        pix: config.pix,
        boletoBankCode: config.boletoBankCode,
        live: config.brazil.rail === 'apipix',
        boleto: { dueDays: boletoConfig.dueDays, issuer: boleto?.issuer },
      },
      boletoLimits: boleto?.limits,
      clock,
    }),
  };
  const exchange = new ExchangeService({
    orders,
    store,
    ledger: ledger.ledger,
    rates,
    addresses,
    rails: chainRails,
    clock,
    quoteTtlMs: config.exchange.quoteTtlMs,
  });
  const checkouts = new CheckoutService({
    store,
    orders,
    merchants,
    rates,
    addresses,
    chain: chainRails.TRON,
    clock,
    publicBaseUrl,
    ledger: ledger.ledger,
    rails,
    brazil: kinds.brazil,
    mexico: new MexicoCollections({
      clabePrefix: config.mexico.spei.clabePrefix,
      oxxoExpiresAfterDays: config.mexico.oxxo.expiresAfterDays,
    }),
  });
  for (const kind of [
    kinds.kenya.collection,
    kinds.kenya.transfer,
    kinds.brazil.collection,
    kinds.brazil.transfer,
    exchange.kinds.fiatToToken,
    exchange.kinds.tokenToFiat,
    checkouts.orderKind,
  ])
    orders.register(kind);
  callbacks.outbox.register(orders);
  const sandbox = new OrderSandbox(
    orders,
    config.sandbox,
    clock,
    new Set([
      ...(daraja === undefined ? [] : (['ken'] as const)),
      ...(apiPix === undefined ? [] : (['bra'] as const)),
      ...(chains === undefined ? [] : (['exchange'] as const)),
    ]),
    new Set([
      ...(boleto === undefined ? [] : ['BOLETO']),
      ...(spei === undefined ? [] : ['SPEI']),
      ...(oxxo === undefined ? [] : ['OXXO']),
    ]),
  );
  sandbox.registerDriver(
    ['fiat_to_token', 'token_to_fiat'],
    (order, event, input) => exchange.sandboxEvent(order, event, input),
    {
      extra: ['complete'],
      internal: ['deposit_refused'],
    },
  );
  sandbox.registerDriver(['cashier.collection'], (order, event, input) => checkouts.sandboxEvent(order, event, input));
  const nodes = new NodeLiveness(
    { store, clock, logger: logger.child({ component: 'nodes' }), identity: node, registry: metrics },
    { heartbeatMs: config.nodes.heartbeatMs, deadAfterMs: config.nodes.deadAfterMs, version: SERVICE_VERSION },
  );
  const operators = new OperatorService(store, clock);
  nodes.register(orders.handOver.leases, callbacks.dispatcher.leases, daraja?.leases, ...(chains?.leases ?? []));
  return {
    store,
    nodes,
    merchants,
    ledger,
    orders,
    kinds,
    rails,
    daraja:
      daraja === undefined
        ? undefined
        : {
            connector: daraja,
            token: darajaToken,
            reconcileIntervalMs: kenya.rail === 'daraja' ? kenya.reconcileIntervalMs : 0,
          },
    apiPix:
      apiPix === undefined || brazil.rail !== 'apipix'
        ? undefined
        : { connector: apiPix, token: pixToken, reconcileIntervalMs: brazil.reconcileIntervalMs },
    boleto:
      boleto === undefined
        ? undefined
        : { connector: boleto, token: boletoToken, reconcileIntervalMs: boletoConfig.reconcileIntervalMs },
    mexico: {
      spei: spei === undefined ? undefined : { connector: spei, token: stpToken },
      oxxo: oxxo === undefined ? undefined : { connector: oxxo, token: stripeToken },
      reconcileIntervalMs: mexico.reconcileIntervalMs,
    },
    chains,
    sandbox,
    exchange,
    checkouts,
    rates,
    pixSigner: new PixLocationSigner({
      privateKeyPem: config.pix.jwsPrivateKeyPem,
      dataDir: config.dataDir,
      publicBaseUrl: config.publicBaseUrl,
    }),
    callbacks,
    metrics,
    consoleAccounts: new ConsoleAccounts(store, secrets, clock),
    requestLog: new RequestLog(store, clock, config.publicBaseUrl),
    operators,
    operatorSignIn: new OperatorSignIn(store, secrets, clock),
    approvals: new AdjustmentApprovals(store, clock, ledger, config.approvalThreshold),
    clock,
    async close() {
      await orders.drain();
      await merchants.close();
      await callbacks.close();
      await daraja?.close();
      await apiPix?.close();
      await boleto?.close();
      await spei?.close();
      await oxxo?.close();
      await chains?.close();
      await nodes.stop();
      await store.close();
    },
  };
}

/** Starts the background workers of this process: the callback dispatcher and periodic jobs. */
export function startBackgroundWork(
  services: Services,
  config: Pick<Config, 'railPollIntervalMs'>,
  logger: Logger,
): { wake(): void; stop(): Promise<void> } {
  const periodic = startWorkers(
    [
      noncePruner({ store: services.store, clock: services.clock, logger, registry: services.metrics }),
      settlementWorker({ ledger: services.ledger, logger }),
      expiryWorker({ orders: services.orders, logger }),
      railHandOverWorker({ handOver: services.orders.handOver, logger }, config.railPollIntervalMs),
      consolePruner({ accounts: services.consoleAccounts, requestLog: services.requestLog, logger }),
      depositAddressPoolWorker({ addresses: services.exchange.addresses, logger }),
      ...(services.daraja === undefined
        ? []
        : [darajaReconcileWorker({ daraja: services.daraja.connector, logger }, services.daraja.reconcileIntervalMs)]),
      ...(services.apiPix === undefined
        ? []
        : [pixReconcileWorker({ pix: services.apiPix.connector, logger }, services.apiPix.reconcileIntervalMs)]),
      ...(services.boleto === undefined
        ? []
        : [boletoReconcileWorker({ boleto: services.boleto.connector, logger }, services.boleto.reconcileIntervalMs)]),
      ...(services.mexico.spei === undefined && services.mexico.oxxo === undefined
        ? []
        : [
            mexicoReconcileWorker(
              { spei: services.mexico.spei?.connector, oxxo: services.mexico.oxxo?.connector, logger },
              services.mexico.reconcileIntervalMs,
            ),
          ]),
      ...(services.chains?.workers(services) ?? []),
    ],
    logger,
    services.metrics,
  );
  services.callbacks.dispatcher.start();
  return {
    wake() {
      periodic.wake();
      services.callbacks.dispatcher.wake();
    },
    async stop() {
      await services.callbacks.dispatcher.stop();
      await periodic.stop();
    },
  };
}

/**
 * Joins this process to the nodes on the database (its heartbeat; a dead predecessor's leases freed)
 * and, with `workers`, starts its background work, woken whenever leases are freed.
 */
export async function startNode(
  services: Services,
  config: Pick<Config, 'railPollIntervalMs'>,
  logger: Logger,
  how: NodeStart & { workers: boolean },
): Promise<ReturnType<typeof startBackgroundWork> | undefined> {
  await services.nodes.start(how);
  if (!how.workers) return undefined;
  const workers = startBackgroundWork(services, config, logger);
  services.nodes.onFreed(() => workers.wake());
  return workers;
}

/** Starts the whole gateway: storage, HTTP server and (unless turned off) in-process workers. */
export async function startGateway(config: Config, logger: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  const services = await openServices(config, logger, clock);
  const { store, merchants, callbacks } = services;
  try {
    await services.chains?.verify();
  } catch (error) {
    await services.close();
    throw error;
  }
  const app = await buildApp({
    ...services,
    config,
    logger,
    ...(options.extraSignedRoutes !== undefined && { extraSignedRoutes: options.extraSignedRoutes }),
  });
  let workers: ReturnType<typeof startBackgroundWork> | undefined;
  let url: string;
  try {
    workers = await startNode(services, config, logger, {
      role: 'serve',
      soleNode: options.soleNode ?? false,
      workers: options.workers ?? config.workers,
    });
    url = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await workers?.stop();
    await app.close();
    await services.close();
    throw error;
  }
  logger.info(
    {
      url,
      database: store.dialect,
      workers: workers !== undefined,
      sandbox: config.sandbox,
      kenyaRail: config.kenya.rail,
      brazilRail: config.brazil.rail,
      boletoRail: config.boleto.rail,
      speiRail: config.mexico.spei.rail,
      oxxoRail: config.mexico.oxxo.rail,
      chainRail: config.chain.rail,
    },
    'Cashgate is serving',
  );
  // The addresses the operator gives STP and adds in Stripe's dashboard (neither registers them through its API).
  const { spei, oxxo } = services.mexico;
  if (spei !== undefined)
    logger.info(
      {
        abonoUrl: `${config.publicBaseUrl}/rails/stp/${spei.token}/abono`,
        cambioEstadoUrl: `${config.publicBaseUrl}/rails/stp/${spei.token}/cambio-estado`,
      },
      'STP webhook addresses: give both to STP',
    );
  if (oxxo !== undefined)
    logger.info(
      { webhookUrl: `${config.publicBaseUrl}/rails/stripe/${oxxo.token}` },
      "Stripe webhook address: add it as an endpoint in Stripe's dashboard",
    );
  for (const family of config.exchange.sandboxXpubs) {
    logger.warn(
      { family, path: ACCOUNT_PATHS[family] },
      'deposit addresses derive from the published sandbox xpub of the BIP-39 test mnemonic: anyone can spend what ' +
        'is sent to them; set EXCHANGE_TRON_XPUB / EXCHANGE_EVM_XPUB before taking real deposits',
    );
  }
  if (!config.publicBaseUrl.startsWith('https://')) {
    logger.warn(
      { publicBaseUrl: config.publicBaseUrl },
      'PUBLIC_BASE_URL is not https: payers and their banks reach cashier pages and dynamic Pix locations over https in production',
    );
  }
  return {
    app,
    store,
    merchants,
    ledger: services.ledger,
    orders: services.orders,
    callbacks,
    consoleAccounts: services.consoleAccounts,
    rails: services.rails,
    url,
    metrics: services.metrics,
    nodes: services.nodes,
    operators: services.operators,
    operatorSignIn: services.operatorSignIn,
    boleto: services.boleto?.connector,
    mexico: services.mexico,
    async close() {
      // New work stops at once: requests get 503, workers and the dispatcher claim nothing more.
      await Promise.all([app.close(), workers?.stop()]);
      await services.close();
    },
  };
}
