import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { adminErrorBody, registerAdminAuth, sendAdminError, type AdminAccess } from './admin/plugin.js';
import { registerBackoffice } from './backoffice/plugin.js';
import { sendBackofficeNotFound } from './backoffice/router.js';
import { registerMerchantAuth } from './auth/plugin.js';
import { KeyRateLimiter } from './auth/rate-limit.js';
import { bankListRoute } from './banks/routes.js';
import { registerPixLocationRoutes } from './brazil/pix-location.js';
import { brazilRoutes } from './brazil/routes.js';
import { registerVoucherRoutes, voucherRoute } from './brazil/voucher.js';
import { registerCallbackAdminRoutes } from './callbacks/admin-routes.js';
import { checkoutRoute } from './cashier/checkout-route.js';
import { registerCashierPages } from './cashier/pages.js';
import type { Config } from './config.js';
import { registerConsoleAdminRoutes } from './console/admin-routes.js';
import { registerConsole } from './console/plugin.js';
import { sendConsoleNotFound } from './console/router.js';
import { registerExchangeAdminRoutes } from './exchange/admin-routes.js';
import { exchangeRoutes } from './exchange/routes.js';
import type { Services } from './services.js';
import { createHttpServer, createWorkerHttpServer } from './http/app.js';
import { describeFailure } from './http/failures.js';
import { registerPublicRoutes } from './http/public-routes.js';
import { RouteCatalog } from './http/route-catalog.js';
import { registerSignedRoute, type SignedRouteDef } from './auth/signed-route.js';
import { kenyaRoutes } from './kenya/routes.js';
import { registerLedgerAdminRoutes } from './ledger/admin-routes.js';
import { balanceRoutes } from './ledger/balance-routes.js';
import { registerMerchantAdminRoutes } from './merchants/admin-routes.js';
import { registerOrderAdminRoutes } from './orders/admin-routes.js';
import { registerOperatorAdminRoutes } from './operators/admin-routes.js';
import { registerOperatorSignInRoutes } from './operators/signin-routes.js';
import { registerNodeAdminRoutes } from './nodes/admin-routes.js';
import { registerDarajaCallbacks } from './kenya/daraja-routes.js';
import { registerBoletoAdminRoutes } from './brazil/boleto-admin-routes.js';
import { registerMexicoAdminRoutes, registerMexicoWebhooks } from './mexico/routes.js';
import { registerPixAdminRoutes } from './brazil/pix-admin-routes.js';
import { registerRailCallbacks } from './rails/callback-routes.js';
import { registerRailMessageAdminRoutes, type RailAsker } from './rails/message-routes.js';

/** The services the server routes to (those the gateway opens), and what the server alone needs. */
export interface AppDeps extends Omit<Services, 'close'> {
  config: Config;
  logger: Logger;
  /** Extra signed routes (tests exercise the auth plugin on a GET route through this). */
  extraSignedRoutes?: readonly SignedRouteDef[];
}

/** Every merchant API endpoint. */
function signedRoutes(deps: AppDeps): readonly SignedRouteDef[] {
  return [
    ...exchangeRoutes(deps.exchange),
    ...kenyaRoutes({ orders: deps.orders, merchants: deps.merchants, kinds: deps.kinds.kenya }),
    ...brazilRoutes({ orders: deps.orders, merchants: deps.merchants, kinds: deps.kinds.brazil }),
    voucherRoute({
      store: deps.store,
      orders: deps.orders,
      publicBaseUrl: deps.config.publicBaseUrl,
      clock: deps.clock,
    }),
    bankListRoute,
    ...balanceRoutes(
      deps.ledger,
      async (merchantId) => (await deps.merchants.getMerchant(merchantId)).cashierCurrency === 'MXN',
    ),
    checkoutRoute(deps.checkouts),
  ];
}

/** The HTTP server of a worker node: health, readiness and metrics only. */
export async function buildWorkerApp(
  deps: Pick<AppDeps, 'store' | 'metrics' | 'clock' | 'logger'>,
): Promise<FastifyInstance> {
  const app = createWorkerHttpServer(deps.logger, deps.metrics);
  registerPublicRoutes(app, new RouteCatalog(), {
    clock: deps.clock,
    store: deps.store,
    metrics: deps.metrics,
    publicBaseUrl: '',
  });
  await app.ready();
  return app;
}

/** The HTTP server: public routes, payer pages, the console, the signed merchant API and the admin API. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, clock } = deps;
  const app = createHttpServer({
    logger: deps.logger,
    clock,
    requestLog: deps.requestLog,
    findDebugKey: async (accessKey) => {
      const key = await deps.merchants.findKeyForAuth(accessKey);
      return key?.debug === true
        ? {
            accessKey: key.accessKey,
            merchantId: key.merchantId,
            language: key.merchantLanguage,
            signedString: undefined,
            verified: false,
          }
        : undefined;
    },
    trustProxy: config.trustProxy,
    hstsMaxAgeSeconds: config.hstsMaxAgeSeconds,
    httpsPublicUrl: config.publicBaseUrl.startsWith('https://'),
    metrics: deps.metrics,
    scopes: [
      {
        matches: (path) => path.startsWith('/admin/'),
        notFound: (request, reply) =>
          sendAdminError(
            reply,
            404,
            'not_found',
            `no admin route ${request.method} ${request.url.split('?')[0] ?? '/'}`,
          ),
        refusal: (error) =>
          JSON.stringify(adminErrorBody('invalid_request', describeFailure(error.failure, 'en').text)),
      },
      {
        matches: (path) => path === '/console' || path.startsWith('/console/'),
        notFound: (request, reply) => sendConsoleNotFound(request, reply, clock.now()),
      },
      {
        matches: (path) =>
          config.backofficeEnabled &&
          (path === '/backoffice' || path.startsWith('/backoffice/')) &&
          !path.startsWith('/backoffice/api/'),
        notFound: (request, reply) => sendBackofficeNotFound(request, reply, clock.now()),
      },
    ],
  });

  const catalog = new RouteCatalog();
  registerPublicRoutes(app, catalog, {
    clock,
    store: deps.store,
    metrics: deps.metrics,
    publicBaseUrl: config.publicBaseUrl,
  });

  await registerCashierPages(app, {
    orders: deps.orders,
    sandbox: deps.sandbox,
    checkouts: deps.checkouts,
    merchants: deps.merchants,
    clock,
    pix: config.pix,
    boletoBankCode: config.boletoBankCode,
    boleto: deps.boleto?.connector,
  });
  await registerConsole(app, {
    store: deps.store,
    merchants: deps.merchants,
    ledger: deps.ledger,
    orders: deps.orders,
    callbacks: deps.callbacks,
    requestLog: deps.requestLog,
    accounts: deps.consoleAccounts,
    clock,
    publicBaseUrl: config.publicBaseUrl,
  });
  registerPixLocationRoutes(app, { orders: deps.orders, signer: deps.pixSigner, pixKey: config.pix.key, clock });
  if (deps.daraja !== undefined)
    await registerDarajaCallbacks(app, {
      daraja: deps.daraja.connector,
      token: deps.daraja.token,
      logger: deps.logger,
    });
  if (deps.apiPix !== undefined) {
    const pix = deps.apiPix.connector;
    // The PSP appends `/pix` to the registered webhook URL.
    await registerRailCallbacks(app, {
      rail: 'pix',
      token: deps.apiPix.token,
      logger: deps.logger,
      answer: {},
      handlers: { pix: (body) => pix.webhook(body) },
    });
  }
  if (deps.boleto !== undefined) {
    const boleto = deps.boleto.connector;
    await registerRailCallbacks(app, {
      rail: 'boleto',
      token: deps.boleto.token,
      logger: deps.logger,
      answer: {},
      handlers: { [boleto.issuer]: (body) => boleto.notified(body) },
    });
  }
  if (deps.mexico.spei !== undefined || deps.mexico.oxxo !== undefined)
    await registerMexicoWebhooks(app, { spei: deps.mexico.spei, oxxo: deps.mexico.oxxo, logger: deps.logger });
  registerOperatorSignInRoutes(app, { signIn: deps.operatorSignIn, publicBaseUrl: config.publicBaseUrl });
  registerVoucherRoutes(app, {
    store: deps.store,
    orders: deps.orders,
    merchants: deps.merchants,
    pixMerchantName: config.pix.merchantName,
  });

  const rateLimiter = new KeyRateLimiter(config.rateLimitPerKeyPerMinute);
  const pruneTimer = setInterval(() => rateLimiter.prune(clock.now()), 60_000);
  pruneTimer.unref();
  app.addHook('onClose', async () => clearInterval(pruneTimer));

  await app.register(async (api) => {
    registerMerchantAuth(api, {
      store: deps.store,
      merchants: deps.merchants,
      clock,
      rateLimiter,
      signatureWindowMs: config.signatureWindowMs,
      metrics: deps.metrics,
    });
    for (const route of [...signedRoutes(deps), ...(deps.extraSignedRoutes ?? [])])
      registerSignedRoute(api, catalog, route);
  });

  const adminAccess: AdminAccess = {
    rootToken: config.adminToken,
    rootTokenDisabled: config.adminRootTokenDisabled,
    authenticate: (token) => deps.operators.authenticate(token),
    store: deps.store,
    clock: deps.clock,
  };
  if (config.backofficeEnabled) await registerBackoffice(app, { ...deps, admin: adminAccess });

  await app.register(async (admin) => {
    registerAdminAuth(admin, adminAccess);
    registerMerchantAdminRoutes(admin, catalog, deps.merchants);
    registerConsoleAdminRoutes(admin, catalog, deps.consoleAccounts);
    registerCallbackAdminRoutes(admin, catalog, {
      outbox: deps.callbacks.outbox,
      dispatcher: deps.callbacks.dispatcher,
      tests: deps.callbacks.tests,
      merchants: deps.merchants,
    });
    registerLedgerAdminRoutes(admin, catalog, {
      ledger: deps.ledger,
      merchants: deps.merchants,
      approvals: deps.approvals,
    });
    registerOrderAdminRoutes(admin, catalog, { sandbox: deps.sandbox, store: deps.store, orders: deps.orders });
    registerOperatorAdminRoutes(admin, catalog, { store: deps.store, operators: deps.operators });
    const askers: RailAsker[] = [];
    const daraja = deps.daraja?.connector;
    if (daraja !== undefined) askers.push({ rail: 'daraja', askAgain: (id) => daraja.askAgain(id) });
    const apiPix = deps.apiPix?.connector;
    if (apiPix !== undefined) askers.push({ rail: 'apipix', askAgain: (id) => apiPix.askAgain(id) });
    const boleto = deps.boleto?.connector;
    if (boleto !== undefined) askers.push({ rail: `boleto-${boleto.issuer}`, askAgain: (id) => boleto.askAgain(id) });
    registerRailMessageAdminRoutes(admin, catalog, { store: deps.store, askers });
    if (deps.apiPix !== undefined)
      registerPixAdminRoutes(admin, catalog, { pix: deps.apiPix.connector, approvals: deps.approvals });
    registerBoletoAdminRoutes(admin, catalog, { store: deps.store });
    registerMexicoAdminRoutes(admin, catalog, { store: deps.store });
    registerExchangeAdminRoutes(admin, catalog, { rates: deps.rates, orders: deps.orders, store: deps.store });
    registerNodeAdminRoutes(admin, catalog, { nodes: deps.nodes, store: deps.store, clock: deps.clock });
  });

  return app;
}
