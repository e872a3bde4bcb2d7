import { newId } from '../store/ids.js';
import { ServerResponse, type IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { compressed } from './compression.js';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { HttpMetrics } from '../metrics/metrics.js';
import type { RequestLogTable } from '../store/schema.js';
import type { DebugKey } from './caller.js';
import { failureEnvelope, JSON_UTF8, sendFailure } from './envelope.js';
import { bodyProblem, hasControlCharacter, holdsNul } from './body-check.js';
import { ApiError, type ApiFailure, type RequestProblem } from './failures.js';
import { languageFromAcceptLanguage, type Language } from './language.js';

/** Failures found while reading the body, before the access key is looked up. */
const REFUSED_BEFORE_AUTH: ReadonlySet<ApiFailure['kind']> = new Set([
  'body_not_json',
  'body_too_large',
  'unsupported_media_type',
  'body_not_object',
  'body_too_deep',
  'text_not_unicode',
  'charset_not_utf8',
]);

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The charset parameter of a Content-Type, lower-cased and unquoted, if there is one. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? '');
  return match?.[2]?.toLowerCase();
}

/**
 * The body's text: UTF-8 whatever the client declares, since JSON exchanged between systems is
 * UTF-8 (RFC 8259 §8.1). Another declared charset, or bytes that are not UTF-8, are refused rather
 * than read as something else than what was sent.
 */
function bodyText(request: FastifyRequest, body: Buffer): string | ApiError {
  const charset = charsetOf(request.headers['content-type']);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return new ApiError({ kind: 'charset_not_utf8', charset: charset.slice(0, 40) });
  }
  try {
    return UTF8.decode(body);
  } catch {
    return new ApiError({ kind: 'body_not_json', detail: 'the body is not UTF-8 text' });
  }
}

/** How long a refused connection stays open for the client to read its answer. */
const LINGER_MS = 2_000;

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
  /** Path scopes with their own answer formats (the admin API, the console); any other path gets the envelope. */
  scopes: readonly PathScope[];
  /** Strict-Transport-Security max-age for answers over HTTPS; 0 sends none. */
  hstsMaxAgeSeconds: number;
  /** PUBLIC_BASE_URL is https: every answer is reached over HTTPS, whatever the hop before says. */
  httpsPublicUrl: boolean;
  /** The registry of /metrics: every answered request is counted by route pattern, method and status. */
  metrics: Registry;
}

/** Paths that answer in a format of their own. */
export interface PathScope {
  matches(path: string): boolean;
  /** A path none of the scope's routes serves. */
  notFound(request: FastifyRequest, reply: FastifyReply): unknown;
  /**
   * The body (JSON text, HTTP 400) answering a request refused before a route saw it: a malformed
   * path, an over-long path segment, no Host, an unknown Expect, a body that is not JSON. A scope
   * without it (the console's HTML pages) answers those in the envelope.
   */
  refusal?: (error: ApiError) => string;
}

/** What Node's HTTP parser found wrong in a request it could not read (the clientError event). */
function problemOfClientError(code: string | undefined): RequestProblem {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'header_overflow';
    case 'HPE_INVALID_METHOD':
      return 'invalid_method';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'timeout';
    default:
      return 'bad_framing';
  }
}

/** The longest request line read back from a request Node's parser refused (its default header limit). */
const REQUEST_LINE_MAX_BYTES = 16 * 1024;

/**
 * The request target of the request line that starts what Node's parser had read when it refused
 * the request (the clientError's rawPacket), if that line is whole and readable: a method token, a
 * target of visible ASCII, an HTTP version. Undefined for anything else (a TLS handshake, a control
 * character in the target, a line cut short, a later packet of a request split in several).
 */
function requestTargetOf(rawPacket: unknown): string | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const end = rawPacket.subarray(0, REQUEST_LINE_MAX_BYTES).indexOf(0x0a);
  if (end === -1) return undefined;
  const line = rawPacket.subarray(0, end + 1).toString('latin1');
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ ([\x21-\x7e]+) HTTP\/\d\.\d\r?\n$/.exec(line)?.[1];
}

/**
 * Node hands a CONNECT request to the server's `connect` event, not to the application, and closes
 * the connection unanswered when nothing listens. It is routed like a method no route serves (its
 * path's not-found answer), on a connection closed after the answer: no tunnel is ever opened, and
 * whatever the client sends after the request is read and discarded.
 */
function answerConnect(app: FastifyInstance): void {
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    // Node took its own listeners off the socket before handing it over: a reset must not crash.
    socket.on('error', () => socket.destroy());
    if (!(socket instanceof Socket)) {
      socket.destroy();
      return;
    }
    socket.resume();
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.once('finish', () => {
      response.detachSocket(socket);
      socket.end();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    });
    app.routing(request, response);
  });
}

/** A client that stopped sending its body, or whose body broke off: its doing, not the server's. */
function isClientAbort(error: FastifyError): boolean {
  return error.code === 'ECONNRESET' || error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error.message === 'aborted';
}

/** How much of a refused body is read and discarded before answering, at most. */
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Reads and discards the rest of a refused body, so the answer can be read by a client that is
 * still writing: at most DRAIN_MAX_BYTES and LINGER_MS (a larger declared body is not waited for;
 * its connection is closed after the answer, as before).
 */
function drainBody(raw: IncomingMessage, declaredLength: number): Promise<void> {
  if (raw.complete || raw.destroyed || declaredLength > DRAIN_MAX_BYTES) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', finish);
      raw.off('close', finish);
      raw.off('error', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, LINGER_MS);
    raw.on('data', onData);
    raw.once('end', finish);
    raw.once('close', finish);
    raw.once('error', finish);
    raw.resume();
  });
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

/** Counts every answered request of `app` (hooked before any route is registered, so all inherit it). */
function countRequests(app: FastifyInstance, registry: Registry): void {
  const metrics = new HttpMetrics(registry);
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** The HTTP server of a worker node: no request log, no merchant API; the caller adds health and metrics. */
export function createWorkerHttpServer(logger: Logger, metrics?: Registry): FastifyInstance {
  const base: FastifyBaseLogger = logger;
  const app = Fastify({ loggerInstance: base, logController: new LogController({ disableRequestLogging: true }) });
  if (metrics !== undefined) countRequests(app, metrics);
  answerConnect(app);
  return app;
}

/**
 * The Fastify instance a serving node runs: limits, timeouts, request ids, the JSON parser that keeps
 * the body's text, the request log hook, and the error and not-found handlers in the merchant API's
 * envelope. The composition root registers the routes.
 */
export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const { clock } = options;
  const logger: FastifyBaseLogger = options.logger;
  const hsts = options.hstsMaxAgeSeconds > 0 ? `max-age=${options.hstsMaxAgeSeconds}` : undefined;
  const scopeOf = (url: string) => {
    // //admin/v1/… is still an admin path to whoever typed it, though no route serves it.
    const path = (url.split('?')[0] ?? '/').replace(/\/{2,}/g, '/');
    return options.scopes.find((candidate) => candidate.matches(path));
  };
  /** The body (JSON text, HTTP 400) refusing a request on `url` outside Fastify, in the path's format. */
  const refusalBody = (url: string | undefined, error: ApiError, language: Language) => {
    const refusal = url === undefined ? undefined : scopeOf(url)?.refusal;
    return refusal === undefined ? JSON.stringify(failureEnvelope(error, language).body) : refusal(error);
  };
  const envelopeContext = (request: FastifyRequest) => ({
    language: languageFromAcceptLanguage(request.headers['accept-language']),
    debug: false,
    requestId: request.id,
  });
  /** A request refused before any route saw it, in its path's format. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: ApiError) => {
    const refusal = scopeOf(request.url)?.refusal;
    if (refusal === undefined) return sendFailure(reply, error, envelopeContext(request));
    return reply.code(400).type(JSON_UTF8).send(refusal(error));
  };
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Fastify accepts a hop count at run time; its typings omit it.
    trustProxy: options.trustProxy as boolean | string | string[],
    genReqId: () => newId('req', 8),
    requestTimeout: 30_000,
    connectionTimeout: 30_000,
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
    // A request without Host reaches the application, which answers it in the path's format.
    http: { requireHostHeader: false },
    frameworkErrors: (error, request, reply) => {
      const problem: RequestProblem = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'param_too_long' : 'bad_url';
      refuse(request, reply, new ApiError({ kind: 'malformed_request', problem }));
    },
    // What Node's parser cannot read never becomes a request: it is answered on the connection, in
    // the format of the path its request line names when that line is readable (else the
    // envelope), and logged below error level: the client caused it.
    clientErrorHandler: (error, socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const problem = problemOfClientError(error.code);
      logger.info({ code: error.code, problem }, 'unreadable request refused');
      // Node's rawPacket is the Buffer it was parsing (Fastify's typings describe it otherwise).
      const target = requestTargetOf(error.rawPacket);
      const body = refusalBody(target, new ApiError({ kind: 'malformed_request', problem }), 'en');
      if (socket.writable) {
        socket.end(
          `HTTP/1.1 400 Bad Request\r\nContent-Type: ${JSON_UTF8}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      // The client may still be writing: let the answer reach it, then let go of the connection.
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    },
  });
  app.removeContentTypeParser('text/plain');
  // The default JSON parser, keeping the text as sent: amount rules read numbers as written.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = bodyText(request, body as Buffer);
    if (text instanceof ApiError) return done(text, undefined);
    request.rawBody = text;
    void parseJson(request, text, (error, value) => {
      if (error !== null) return done(error, undefined);
      // Refused before anything walks the body: signing, validation and logging stay bounded.
      const problem = bodyProblem(value);
      if (problem !== undefined) return done(new ApiError(problem), undefined);
      return done(null, value);
    });
  });
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('merchantCaller', null);
  app.decorateRequest('callerHints');
  app.decorateRequest('apiCode', null);
  app.decorateRequest('apiMessage', null);
  app.addHook('onRequest', async (request, reply) => {
    request.callerHints = { language: undefined, debug: false };
    void reply.header('x-request-id', request.id);
    if (hsts !== undefined && (options.httpsPublicUrl || request.protocol === 'https')) {
      void reply.header('strict-transport-security', hsts);
    }
    const params = Object.values((request.params ?? {}) as Record<string, unknown>);
    if (params.some((value) => typeof value === 'string' && hasControlCharacter(value))) {
      throw new ApiError({ kind: 'malformed_request', problem: 'control_in_path' });
    }
    const query = Object.values((request.query ?? {}) as Record<string, unknown>).flat();
    if (holdsNul(query.filter((value): value is string => typeof value === 'string'))) {
      throw new ApiError({ kind: 'malformed_request', problem: 'nul_character' });
    }
    // HTTP/1.1 requires Host (RFC 9112 §3.2); an HTTP/1.0 health check may leave it out.
    if (request.headers.host === undefined && request.raw.httpVersion !== '1.0') {
      throw new ApiError({ kind: 'malformed_request', problem: 'host_missing' });
    }
  });
  // Expect: anything but 100-continue is refused in the path's format (Node would answer a bare 417).
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const error = new ApiError({ kind: 'malformed_request', problem: 'expectation' });
    const language = languageFromAcceptLanguage(request.headers['accept-language']);
    const body = refusalBody(request.url ?? '/', error, language);
    response.writeHead(400, {
      'content-type': JSON_UTF8,
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
  });
  answerConnect(app);
  countRequests(app, options.metrics);
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
  // Text answers are compressed when the client asks (br, else gzip): pages, JSON, the OpenAPI
  // document. Last of the onSend hooks, so every other one sees the text as written.
  app.addHook('onSend', async (request, reply, payload) => compressed(request, reply, payload));

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
    if (apiError?.failure.kind === 'body_too_large') {
      // The client may still be sending: read the rest first, or a close with unread data resets the
      // connection and the refusal never reaches it.
      await drainBody(request.raw, Number(request.headers['content-length'] ?? 0));
    }
    // A path no route serves still answers in its scope's format (an admin path's body not JSON).
    if (apiError !== undefined && scopeOf(request.url)?.refusal !== undefined) return refuse(request, reply, apiError);
    if (apiError !== undefined) return sendFailure(reply, apiError, context);
    if (isClientAbort(error)) {
      // The client broke off its own request: worth a line, not an error with a stack.
      request.log.warn({ code: error.code, reason: error.message }, 'request body broke off');
      return sendFailure(reply, new ApiError({ kind: 'malformed_request', problem: 'aborted' }), context);
    }
    request.log.error({ err: error }, 'request failed unexpectedly');
    return sendFailure(reply, new ApiError({ kind: 'internal_error', requestId: request.id }), context);
  });

  app.setNotFoundHandler((request, reply) => {
    const scope = scopeOf(request.url);
    if (scope !== undefined) return scope.notFound(request, reply);
    const path = request.url.split('?')[0] ?? '/';
    return sendFailure(
      reply,
      new ApiError({ kind: 'route_not_found', method: request.method, path }),
      envelopeContext(request),
    );
  });

  return app;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.slice(0, 64) : undefined;
}
