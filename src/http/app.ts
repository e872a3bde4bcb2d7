import { randomBytes } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { registerAdminAuth, sendAdminError } from '../admin/plugin.js';
import { registerMerchantAuth } from '../auth/plugin.js';
import { KeyRateLimiter } from '../auth/rate-limit.js';
import { bankListRoute } from '../banks/routes.js';
import { registerCallbackAdminRoutes } from '../callbacks/admin-routes.js';
import type { Config } from '../config.js';
import { registerMerchantAdminRoutes } from '../merchants/admin-routes.js';
import { registerLedgerAdminRoutes } from '../ledger/admin-routes.js';
import { balanceRoutes } from '../ledger/balance-routes.js';
import { registerCashierPages } from '../cashier/pages.js';
import { registerConsoleAdminRoutes } from '../console/admin-routes.js';
import { registerConsole } from '../console/plugin.js';
import { RequestLog } from '../console/request-log.js';
import { sendConsoleNotFound } from '../console/router.js';
import { checkoutRoute } from '../cashier/checkout-route.js';
import { kenyaRoutes } from '../kenya/routes.js';
import { registerPixLocationRoutes } from '../brazil/pix-location.js';
import { brazilRoutes } from '../brazil/routes.js';
import { registerVoucherRoutes, voucherRoute } from '../brazil/voucher.js';
import { registerOrderAdminRoutes } from '../orders/admin-routes.js';
import { registerExchangeAdminRoutes } from '../exchange/admin-routes.js';
import { exchangeRoutes } from '../exchange/routes.js';
import { sendFailure } from './envelope.js';
import { ApiError, type ApiFailure } from './failures.js';
import { languageFromAcceptLanguage } from './language.js';
import { registerPublicRoutes } from './public-routes.js';
import { RouteCatalog } from './route-catalog.js';
import { registerSignedRoute, type SignedRouteDef } from './signed-route.js';
import type { Services } from '../gateway.js';

/** Failures found while reading the body, before the access key is looked up. */
const REFUSED_BEFORE_AUTH: ReadonlySet<ApiFailure['kind']> = new Set([
  'body_not_json',
  'body_too_large',
  'unsupported_media_type',
  'body_not_object',
]);

/** Request bodies above this size are refused with code 300. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The services the server routes to (those the gateway opens), and what the server alone needs. */
export interface AppDeps extends Omit<Services, 'close'> {
  config: Config;
  logger: Logger;
  /** Extra signed routes (tests exercise the auth plugin on a GET route through this). */
  extraSignedRoutes?: readonly SignedRouteDef[];
}

/** Every merchant API endpoint implemented so far. */
function signedRoutes(deps: AppDeps): readonly SignedRouteDef[] {
  return [
    ...exchangeRoutes(deps.exchange),
    ...kenyaRoutes({ orders: deps.orders, merchants: deps.merchants, publicBaseUrl: deps.config.publicBaseUrl }),
    ...brazilRoutes({
      orders: deps.orders,
      merchants: deps.merchants,
      publicBaseUrl: deps.config.publicBaseUrl,
      rails: { pix: deps.config.pix, boletoBankCode: deps.config.boletoBankCode },
      now: () => deps.clock.now(),
    }),
    voucherRoute({
      store: deps.store,
      orders: deps.orders,
      publicBaseUrl: deps.config.publicBaseUrl,
      clock: deps.clock,
    }),
    bankListRoute,
    ...balanceRoutes(deps.ledger),
    checkoutRoute(deps.checkouts),
  ];
}

/** Maps Fastify's own request errors (parsing, size, media type) to the merchant API's failures. */
function failureOfFastifyError(error: FastifyError, request: FastifyRequest): ApiFailure | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { kind: 'body_too_large', limitBytes: BODY_LIMIT_BYTES };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { kind: 'unsupported_media_type', contentType: request.headers['content-type'] ?? '(none)' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { kind: 'body_not_json', detail: 'the body is empty' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { kind: 'body_not_json', detail: error.message };
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|proto/i.test(error.message))) {
    return { kind: 'body_not_json', detail: error.message };
  }
  return undefined;
}

/** The HTTP server of a worker node: health, readiness and metrics only. */
export async function buildWorkerApp(
  deps: Pick<AppDeps, 'store' | 'metrics' | 'clock' | 'logger'>,
): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger = deps.logger;
  const app = Fastify({ loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) });
  registerPublicRoutes(app, new RouteCatalog(), {
    clock: deps.clock,
    store: deps.store,
    metrics: deps.metrics,
    publicBaseUrl: '',
  });
  await app.ready();
  return app;
}

/** The HTTP server: public routes, the signed merchant API and the admin API. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, clock } = deps;
  const logger: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Fastify accepts a hop count at run time; its typings omit it.
    trustProxy: config.trustProxy as boolean | string | string[],
    genReqId: () => `req_${randomBytes(8).toString('hex')}`,
    requestTimeout: 30_000,
    connectionTimeout: 30_000,
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
  });
  app.removeContentTypeParser('text/plain');
  // The default JSON parser, keeping the text as sent: amount rules read numbers as written.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    void parseJson(request, body as string, done);
  });
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('merchantCaller', null);
  app.decorateRequest('callerHints', null as never);
  app.decorateRequest('apiCode', null);
  app.decorateRequest('apiMessage', null);
  app.addHook('onRequest', async (request, reply) => {
    request.callerHints = { language: undefined, debug: false };
    void reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? request.url.split('?')[0],
        status: reply.statusCode,
        code: request.apiCode ?? undefined,
        merchantId: request.merchantCaller?.merchantId,
        accessKey: request.merchantCaller?.accessKey ?? headerValue(request, 'access_key'),
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });
  // The request log of debug-mode keys is written before the answer leaves, so the log address an
  // error carries already leads to its entry when the merchant follows it.
  app.addHook('onSend', async (request, reply, payload) => {
    const debugKey = request.callerHints.debugKey;
    // Requests whose signature was not verified could come from anyone who knows the access key:
    // they are recorded up to a cap per key, so they cannot flood the merchant's log.
    if (
      debugKey !== undefined &&
      (debugKey.verified || deps.requestLog.admitUnverified(debugKey.accessKey, clock.now()))
    ) {
      await deps.requestLog
        .record({
          request_id: request.id,
          merchant_id: debugKey.merchantId,
          access_key: debugKey.accessKey,
          method: request.method,
          path: request.url.split('?')[0] ?? request.url,
          http_status: reply.statusCode,
          code: request.apiCode ?? String(reply.statusCode),
          msg_en: request.apiMessage ?? '',
          signed_string: debugKey.signedString ?? null,
        })
        .catch((error: unknown) => request.log.error({ err: error }, 'recording the request log failed'));
    }
    return payload;
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const failure = error instanceof ApiError ? error.failure : failureOfFastifyError(error, request);
    const apiError = error instanceof ApiError ? error : failure !== undefined ? new ApiError(failure) : undefined;
    // A body refused before authentication (not JSON, too large, not an object) still belongs in a
    // debug-mode key's request log: those are the commonest integration mistakes.
    if (apiError !== undefined && REFUSED_BEFORE_AUTH.has(apiError.failure.kind) && request.url.startsWith('/api/')) {
      const key = await deps.merchants.findKeyForAuth(headerValue(request, 'access_key') ?? '').catch(() => undefined);
      if (key?.debug === true) {
        request.callerHints = {
          language: key.merchantLanguage,
          debug: true,
          debugKey: { accessKey: key.accessKey, merchantId: key.merchantId, signedString: undefined, verified: false },
        };
      }
    }
    const context = {
      language: request.callerHints.language ?? languageFromAcceptLanguage(request.headers['accept-language']),
      debug: request.callerHints.debug,
      requestId: request.id,
      logViewUrl:
        request.callerHints.debugKey === undefined
          ? undefined
          : `${config.publicBaseUrl}${RequestLog.viewPath(request.id)}`,
    };
    if (apiError !== undefined) return sendFailure(reply, apiError, context);
    request.log.error({ err: error }, 'request failed unexpectedly');
    return sendFailure(reply, new ApiError({ kind: 'internal_error', requestId: request.id }), context);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (path.startsWith('/admin/')) {
      return sendAdminError(reply, 404, 'not_found', `no admin route ${request.method} ${path}`);
    }
    if (path === '/console' || path.startsWith('/console/')) return sendConsoleNotFound(request, reply, clock.now());
    return sendFailure(reply, new ApiError({ kind: 'route_not_found', method: request.method, path }), {
      language: languageFromAcceptLanguage(request.headers['accept-language']),
      debug: false,
      requestId: request.id,
    });
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
    pix: deps.config.pix,
    boletoBankCode: deps.config.boletoBankCode,
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
    });
    for (const route of [...signedRoutes(deps), ...(deps.extraSignedRoutes ?? [])])
      registerSignedRoute(api, catalog, route);
  });

  await app.register(async (admin) => {
    registerAdminAuth(admin, config.adminToken);
    registerMerchantAdminRoutes(admin, catalog, deps.merchants);
    registerConsoleAdminRoutes(admin, catalog, deps.consoleAccounts);
    registerCallbackAdminRoutes(admin, catalog, {
      outbox: deps.callbacks.outbox,
      dispatcher: deps.callbacks.dispatcher,
      tests: deps.callbacks.tests,
      merchants: deps.merchants,
    });
    registerLedgerAdminRoutes(admin, catalog, { ledger: deps.ledger, merchants: deps.merchants });
    registerOrderAdminRoutes(admin, catalog, deps.sandbox);
    registerExchangeAdminRoutes(admin, catalog, deps.rates);
  });

  return app;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.slice(0, 64) : undefined;
}
