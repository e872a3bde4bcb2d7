import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Store } from '../store/store.js';
import { SERVICE_VERSION } from '../version.js';
import { JSON_UTF8 } from './envelope.js';
import { buildOpenApiDocument } from './openapi.js';
import type { RouteCatalog } from './route-catalog.js';

const TAG = 'Public';

/** What /metrics serves: the Prometheus text exposition format (prom-client's content type). */
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4';

/** Routes without authentication: /ping, health, readiness, metrics and the OpenAPI document. */
export function registerPublicRoutes(
  app: FastifyInstance,
  catalog: RouteCatalog,
  deps: { clock: Clock; store: Store; metrics: Registry; publicBaseUrl: string },
): void {
  const Ping = Type.Object({ version: Type.String(), timestamp: Type.Integer({ description: 'Unix milliseconds' }) });
  catalog.add(
    { method: 'GET', path: '/ping', tag: TAG, summary: 'Connectivity check' },
    { security: 'public', response: Ping },
  );
  app.get('/ping', { schema: { response: { 200: Ping } } }, async (_request, reply) =>
    reply.type(JSON_UTF8).send({ version: SERVICE_VERSION, timestamp: deps.clock.now() }),
  );

  const Health = Type.Object({ status: Type.String() });
  catalog.add(
    { method: 'GET', path: '/healthz', tag: TAG, summary: 'Liveness: the process serves HTTP' },
    { security: 'public', response: Health },
  );
  app.get('/healthz', async () => ({ status: 'ok' }));

  catalog.add(
    { method: 'GET', path: '/readyz', tag: TAG, summary: 'Readiness: the database answers (503 when it does not)' },
    { security: 'public', response: Health },
  );
  app.get('/readyz', async (request, reply) => {
    try {
      await deps.store.ping();
      return { status: 'ready' };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed: database unreachable');
      return reply.code(503).send({ status: 'database unreachable' });
    }
  });

  catalog.add(
    {
      method: 'GET',
      path: '/metrics',
      tag: TAG,
      summary: 'Prometheus metrics (text exposition format)',
      description:
        "Cashgate's operator metrics (HTTP, callbacks, orders, ledger; see docs/operations.md) and process figures, in Prometheus's text format.",
    },
    { security: 'public', response: Type.String(), mediaType: PROMETHEUS_TEXT },
  );
  app.get('/metrics', async (_request, reply) =>
    reply.type(deps.metrics.contentType).send(await deps.metrics.metrics()),
  );

  catalog.add(
    { method: 'GET', path: '/openapi.json', tag: TAG, summary: 'This OpenAPI 3.1 document' },
    { security: 'public', response: Type.Object({}, { additionalProperties: true }) },
  );
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', async () => {
    document ??= buildOpenApiDocument(catalog, deps.publicBaseUrl);
    return document;
  });
}
