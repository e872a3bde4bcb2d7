import { randomBytes } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { RequestLogTable } from '../store/schema.js';
import type { DebugKey } from './caller.js';
import { sendFailure } from './envelope.js';
import { ApiError, type ApiFailure } from './failures.js';
import { languageFromAcceptLanguage, type Language } from './language.js';

/** Failures found while reading the body, before the access key is looked up. */
const REFUSED_BEFORE_AUTH: ReadonlySet<ApiFailure['kind']> = new Set([
  'body_not_json',
  'body_too_large',
  'unsupported_media_type',
  'body_not_object',
]);

/** Request bodies above this size are refused with code 300. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** One request made with a debug-mode key, as the request log keeps it. */
export type RequestRecord = Omit<RequestLogTable, 'created_at'>;

/** Where the requests of debug-mode keys are recorded (the console's request log). */
export interface RequestRecorder {
  /** Whether one more request whose signature was not verified may be recorded for this key now. */
  admitUnverified(accessKey: string, now: number): boolean;
  record(entry: RequestRecord): Promise<void>;
  /** The address of a request's entry, carried by a debug-mode error. */
  viewUrl(requestId: string): string;
}

/** What the transport needs from the rest of the gateway; the routes are registered by the caller. */
export interface HttpServerOptions {
  logger: Logger;
  clock: Clock;
  /** Proxies trusted for the client address (TRUST_PROXY). */
  trustProxy: boolean | number | string | string[];
  /** The debug-mode key named by an access_key header (undefined for any other key). */
  findDebugKey(accessKey: string): Promise<(DebugKey & { language: Language }) | undefined>;
  requestLog: RequestRecorder;
  /** Scopes that answer an unknown path in their own format (the admin API, the console). */
  notFound: readonly { matches(path: string): boolean; send(request: FastifyRequest, reply: FastifyReply): unknown }[];
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

/** The HTTP server of a worker node: no request log, no merchant API; the caller adds health and metrics. */
export function createWorkerHttpServer(logger: Logger): FastifyInstance {
  const base: FastifyBaseLogger = logger;
  return Fastify({ loggerInstance: base, logController: new LogController({ disableRequestLogging: true }) });
}

/**
 * The Fastify instance a serving node runs: limits, timeouts, request ids, the JSON parser that keeps
 * the body's text, the request log hook, and the error and not-found handlers in the merchant API's
 * envelope. The composition root registers the routes.
 */
export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const { clock } = options;
  const logger: FastifyBaseLogger = options.logger;
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Fastify accepts a hop count at run time; its typings omit it.
    trustProxy: options.trustProxy as boolean | string | string[],
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
  app.decorateRequest('callerHints');
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
      (debugKey.verified || options.requestLog.admitUnverified(debugKey.accessKey, clock.now()))
    ) {
      await options.requestLog
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
      const key = await options.findDebugKey(headerValue(request, 'access_key') ?? '').catch(() => undefined);
      if (key !== undefined) {
        const { language, ...debugKey } = key;
        request.callerHints = { language, debug: true, debugKey };
      }
    }
    const context = {
      language: request.callerHints.language ?? languageFromAcceptLanguage(request.headers['accept-language']),
      debug: request.callerHints.debug,
      requestId: request.id,
      logViewUrl: request.callerHints.debugKey === undefined ? undefined : options.requestLog.viewUrl(request.id),
    };
    if (apiError !== undefined) return sendFailure(reply, apiError, context);
    request.log.error({ err: error }, 'request failed unexpectedly');
    return sendFailure(reply, new ApiError({ kind: 'internal_error', requestId: request.id }), context);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const scope = options.notFound.find((candidate) => candidate.matches(path));
    if (scope !== undefined) return scope.send(request, reply);
    return sendFailure(reply, new ApiError({ kind: 'route_not_found', method: request.method, path }), {
      language: languageFromAcceptLanguage(request.headers['accept-language']),
      debug: false,
      requestId: request.id,
    });
  });

  return app;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.slice(0, 64) : undefined;
}
