import type { TSchema } from '@sinclair/typebox';
import { SERVICE_VERSION } from '../version.js';
import { Envelope, EnvelopeWithDesc, FailureEnvelope, JSON_UTF8 } from './envelope.js';
import type { RouteCatalog, RouteDoc } from './route-catalog.js';

/** TypeBox schemas are JSON Schema; a JSON round trip drops TypeBox's symbol keys. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema)) as unknown;
}

function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

function queryParameters(schema: TSchema): unknown[] {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const required = new Set((schema as { required?: string[] }).required ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: plain(property),
  }));
}

const FAILURE_RESPONSES = {
  '400': 'code 300: parameter exception (body, field or route)',
  '401': 'code 307: signature error (headers, unknown key, sign, timestamp window, nonce reuse)',
  '403': 'code 301: no authority (IP whitelist, key not yet active, disabled or deleted, permission)',
  '429': 'code 429: too many requests for this access key',
  '500': 'code 500: system error (quote the request id)',
};

function operation(route: RouteDoc): Record<string, unknown> {
  const { params } = openApiPath(route.path);
  const parameters: unknown[] = params.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (route.query !== undefined) parameters.push(...queryParameters(route.query));
  const op: Record<string, unknown> = {
    tags: [route.tag],
    summary: route.summary,
    ...(route.description !== undefined && { description: route.description }),
    ...(parameters.length > 0 && { parameters }),
  };
  if (route.body !== undefined) {
    const mediaType = route.security === 'signed' ? JSON_UTF8 : 'application/json';
    op.requestBody = { required: true, content: { [mediaType]: { schema: plain(route.body) } } };
  }
  if (route.security === 'signed') {
    op.security = [{ access_key: [], timestamp: [], nonce: [], sign: [] }];
    op['x-permission'] = route.permission;
    op.responses = {
      '200': {
        description: 'code 200',
        content: {
          [JSON_UTF8]: {
            schema: plain(route.desc === true ? EnvelopeWithDesc(route.response) : Envelope(route.response)),
          },
        },
      },
      ...Object.fromEntries(
        Object.entries(FAILURE_RESPONSES).map(([status, description]) => [
          status,
          { description, content: { [JSON_UTF8]: { schema: plain(FailureEnvelope) } } },
        ]),
      ),
    };
  } else {
    op.security = route.security === 'admin' ? [{ adminToken: [] }] : [];
    const errorSchema = {
      type: 'object',
      properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } } },
    };
    op.responses = {
      '200': {
        description: 'success',
        content: { 'application/json': { schema: plain(route.response) } },
      },
      ...(route.security === 'admin' && {
        '400': { description: 'invalid request', content: { 'application/json': { schema: errorSchema } } },
        '401': {
          description: 'missing or wrong bearer token',
          content: { 'application/json': { schema: errorSchema } },
        },
        '404': { description: 'merchant or key not found', content: { 'application/json': { schema: errorSchema } } },
      }),
    };
  }
  return op;
}

/** The OpenAPI 3.1 document of every route in the catalog. */
export function buildOpenApiDocument(catalog: RouteCatalog, serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of catalog.routes) {
    const { path } = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  const header = (name: string, description: string) => ({ type: 'apiKey', in: 'header', name, description });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cashgate merchant API',
      version: SERVICE_VERSION,
      description:
        'Signed merchant API (/api/v3), public routes and the operator admin API (/admin/v1). ' +
        'Signed requests carry access_key, timestamp, nonce and sign; see docs/api.md for the string to sign.',
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        access_key: header('access_key', "The API key's access key"),
        timestamp: header(
          'timestamp',
          '13-digit Unix time in milliseconds, within ±SIGNATURE_WINDOW_MS of server time',
        ),
        nonce: header('nonce', 'UUID (36 characters, 8-4-4-4-12), single use per access key'),
        sign: header(
          'sign',
          'Base64(HMAC-SHA1(secret_key, string to sign)); the string to sign is the sorted k=v&k=v of the body members (or query parameters) plus access_key, timestamp and nonce',
        ),
        adminToken: { type: 'http', scheme: 'bearer', description: 'CASHGATE_ADMIN_TOKEN' },
      },
    },
    paths,
  };
}
