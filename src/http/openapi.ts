import { roleCan, ROLES, type Permission } from '../access/permissions.js';
import type { TSchema } from '@sinclair/typebox';
import { SERVICE_VERSION } from '../version.js';
import { BrazilTransferCallback, KenyaTransferCallback, PaymentCallback, TestCallback } from './callback-schemas.js';
import { EnvelopeBase, FailureEnvelope, JSON_UTF8 } from './envelope.js';
import type { RouteCatalog, RouteDoc } from './route-catalog.js';

/** Shared request bodies: the six order queries, the two Pix transfer routes. */
const QUERY = 'OrderQueryRequest';
const PIX_TRANSFER = 'CreateBrazilPixTransferRequest';

/**
 * The name of each operation and of the schemas it uses, keyed by `METHOD path` (Fastify's path
 * syntax). `id` is the operationId: stable, camelCase, what generated clients call the method.
 * `body` and `data` name the request body's and the success answer's schema in
 * `components.schemas` (default: the operationId in PascalCase + `Request` / `Result` for the
 * merchant API's envelope `data`, `Response` for the others). Two routes naming one schema must
 * give it the same content. test/openapi.test.ts fails when a registered route has no entry here.
 */
export const OPERATIONS: Readonly<Record<string, { id: string; body?: string; data?: string }>> = {
  // Public
  'GET /ping': { id: 'ping', data: 'Ping' },
  'GET /healthz': { id: 'checkLiveness', data: 'HealthStatus' },
  'GET /readyz': { id: 'checkReadiness', data: 'HealthStatus' },
  'GET /metrics': { id: 'getMetrics', data: 'PrometheusText' },
  'GET /openapi.json': { id: 'getOpenApiDocument', data: 'OpenApiDocument' },
  // Merchant API: Kenya
  'POST /api/v3/ken/createCollectingOrder': { id: 'createKenyaCollection' },
  'POST /api/v3/ken/createTransferOrder': { id: 'createKenyaTransfer', data: 'TransferCreated' },
  'POST /api/v3/ken/query/collectingOrder': { id: 'queryKenyaCollection', body: QUERY, data: 'OrderRecord[]' },
  'POST /api/v3/ken/query/transferOrder': { id: 'queryKenyaTransfer', body: QUERY, data: 'KenyaTransferRecord[]' },
  'GET /api/v3/ken/query/balance': { id: 'queryKenyaBalance', data: 'Balance' },
  // Merchant API: Brazil
  'POST /api/v3/bra/createCollectingOrder': { id: 'createBrazilCollection' },
  'POST /api/v3/bra/createTransferOrder': { id: 'createBrazilTransfer', body: PIX_TRANSFER, data: 'TransferCreated' },
  'POST /api/v3/bra/pix/createTransferOrder': {
    id: 'createBrazilPixTransfer',
    body: PIX_TRANSFER,
    data: 'TransferCreated',
  },
  'POST /api/v3/bra/bank/createTransferOrder': { id: 'createBrazilBankTransfer', data: 'TransferCreated' },
  'POST /api/v3/bra/query/collectingOrder': {
    id: 'queryBrazilCollection',
    body: QUERY,
    data: 'BrazilCollectionRecord[]',
  },
  'POST /api/v3/bra/query/transferOrder': { id: 'queryBrazilTransfer', body: QUERY, data: 'OrderRecord[]' },
  'POST /api/v3/bra/query/voucher': { id: 'queryBrazilVoucher' },
  'POST /api/v3/bra/query/bank': { id: 'listBrazilBanks' },
  'GET /api/v3/bra/query/balance': { id: 'queryBrazilBalance', data: 'Balance' },
  // Merchant API: aggregate cashier and exchange
  'POST /api/v3/polymerize/createCollectingOrder': { id: 'createAggregateCashier' },
  'POST /api/v3/exchange/fiat/to/wallet': { id: 'createFiatToTokenExchange' },
  'POST /api/v3/exchange/query/exchange/orderinfo': {
    id: 'queryFiatToTokenExchange',
    body: QUERY,
    data: 'FiatToTokenRecord',
  },
  'POST /api/v3/exchange/wallet/to/fiat': { id: 'createTokenToFiatExchange' },
  'POST /api/v3/exchange/query/wallet/exchange/orderinfo': {
    id: 'queryTokenToFiatExchange',
    body: QUERY,
    data: 'TokenToFiatRecord',
  },
  // Admin API: merchants and API keys
  'POST /admin/v1/merchants': { id: 'adminCreateMerchant' },
  'GET /admin/v1/merchants': { id: 'adminListMerchants' },
  'GET /admin/v1/merchants/:merchantId': { id: 'adminGetMerchant', data: 'AdminMerchant' },
  'PUT /admin/v1/merchants/:merchantId/callback': { id: 'adminSetCallbackAddress', data: 'AdminMerchant' },
  'PUT /admin/v1/merchants/:merchantId/cashier': { id: 'adminSetCashierSettings', data: 'AdminMerchant' },
  'POST /admin/v1/merchants/:merchantId/pause': {
    id: 'adminPauseMerchant',
    body: 'AdminPauseRequest',
    data: 'AdminMerchant',
  },
  'POST /admin/v1/merchants/:merchantId/resume': {
    id: 'adminResumeMerchant',
    body: 'AdminPauseRequest',
    data: 'AdminMerchant',
  },
  'POST /admin/v1/merchants/:merchantId/api-keys': { id: 'adminCreateApiKey' },
  'GET /admin/v1/merchants/:merchantId/api-keys': { id: 'adminListApiKeys' },
  'PATCH /admin/v1/merchants/:merchantId/api-keys/:accessKey': { id: 'adminEditApiKey', data: 'AdminApiKey' },
  'DELETE /admin/v1/merchants/:merchantId/api-keys/:accessKey': { id: 'adminDeleteApiKey', data: 'AdminApiKey' },
  'POST /admin/v1/merchants/:merchantId/api-keys/:accessKey/disable': { id: 'adminDisableApiKey', data: 'AdminApiKey' },
  'POST /admin/v1/merchants/:merchantId/api-keys/:accessKey/enable': { id: 'adminEnableApiKey', data: 'AdminApiKey' },
  // Admin API: console users
  'POST /admin/v1/merchants/:merchantId/users': { id: 'adminCreateConsoleUser', data: 'AdminConsoleUser' },
  'GET /admin/v1/merchants/:merchantId/users': { id: 'adminListConsoleUsers' },
  'PUT /admin/v1/merchants/:merchantId/users/:userId/password': {
    id: 'adminSetConsoleUserPassword',
    data: 'AdminConsoleUser',
  },
  'DELETE /admin/v1/merchants/:merchantId/users/:userId': { id: 'adminDeleteConsoleUser', data: 'AdminConsoleUser' },
  // Admin API: callbacks
  'GET /admin/v1/orders/:orderId/callbacks': { id: 'adminListOrderCallbacks' },
  'POST /admin/v1/orders/:orderId/callbacks': { id: 'adminRetriggerOrderCallback' },
  'POST /admin/v1/merchants/:merchantId/callback/test': { id: 'adminSendTestCallback' },
  // Admin API: balances and fees
  'GET /admin/v1/merchants/:merchantId/balances': { id: 'adminListBalances' },
  'POST /admin/v1/merchants/:merchantId/balance-adjustments': { id: 'adminAdjustBalance' },
  'GET /admin/v1/merchants/:merchantId/fees': { id: 'adminListFees' },
  'PUT /admin/v1/merchants/:merchantId/fees/:channel': { id: 'adminSetFee' },
  'PUT /admin/v1/merchants/:merchantId/settlement': { id: 'adminSetSettlementDelay' },
  // Admin API: sandbox, rails, exchange rates, orders, Pix
  'POST /admin/v1/sandbox/orders/:orderId/events': { id: 'adminSandboxOrderEvent' },
  'GET /admin/v1/orders/:orderId/rail-messages': { id: 'adminListOrderRailMessages' },
  'GET /admin/v1/rail-messages/unmatched': { id: 'adminListUnmatchedRailMessages' },
  'PUT /admin/v1/rates/:currency/:token': { id: 'adminSetRate' },
  'GET /admin/v1/rates': { id: 'adminListRates' },
  'GET /admin/v1/orders/:orderId/chain': { id: 'adminGetOrderChain' },
  'GET /admin/v1/pix/received': { id: 'adminListReceivedPix' },
  'POST /admin/v1/pix/received/:e2eid/return': { id: 'adminReturnReceivedPix' },
  'POST /admin/v1/pix/received/:e2eid/assign': { id: 'adminAssignReceivedPix' },
  'GET /admin/v1/boleto/suspense': { id: 'adminListSuspenseBoletos' },
  'GET /admin/v1/spei/unmatched': { id: 'adminListUnmatchedSpei' },
  // Admin API: nodes
  'GET /admin/v1/nodes': { id: 'adminListNodes' },
  'GET /admin/v1/operators': { id: 'adminListOperators' },
  'GET /admin/v1/audit-log': { id: 'adminListAuditLog' },
  'GET /admin/v1/approvals': { id: 'adminListApprovals' },
  'POST /admin/v1/approvals/:approvalId/approve': { id: 'adminApproveAdjustment' },
  'POST /admin/v1/approvals/:approvalId/reject': { id: 'adminRejectAdjustment' },
  'GET /admin/v1/orders/:orderId/personal-data': { id: 'adminRevealOrderPersonalData' },
  'POST /admin/v1/orders/:orderId/rail-query': { id: 'adminAskRailAgain' },
  'POST /admin/v1/orders/:orderId/settle-by-hand': {
    id: 'adminSettleOrderByHand',
    body: 'AdminSettleByHandRequest',
    data: 'AdminSettledByHandOrder',
  },
  'POST /admin/v1/operators': { id: 'adminCreateOperator', body: 'AdminCreateOperatorRequest', data: 'AdminOperator' },
  'PUT /admin/v1/operators/:operatorId/role': {
    id: 'adminSetOperatorRole',
    body: 'AdminOperatorRoleRequest',
    data: 'AdminOperator',
  },
  'POST /admin/v1/operators/:operatorId/disable': {
    id: 'adminDisableOperator',
    body: 'AdminOperatorReasonRequest',
    data: 'AdminOperator',
  },
  'POST /admin/v1/operators/:operatorId/enable': {
    id: 'adminEnableOperator',
    body: 'AdminOperatorReasonRequest',
    data: 'AdminOperator',
  },
  'GET /admin/v1/operators/:operatorId/tokens': { id: 'adminListOperatorTokens' },
  'POST /admin/v1/operators/:operatorId/tokens/:tokenId/revoke': {
    id: 'adminRevokeOperatorToken',
    body: 'AdminOperatorReasonRequest',
    data: 'AdminOperatorToken',
  },
};

const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  Public: 'No authentication: connectivity, health, metrics and this document.',
  Kenya: 'Signed merchant API: M-Pesa collections and transfers in KES.',
  Brazil: 'Signed merchant API: PIX and boleto collections, Pix and TED transfers in BRL.',
  'Aggregate cashier': 'Signed merchant API: a cashier page where the payer chooses the method.',
  Exchange: 'Signed merchant API: fiat ⇄ USDT exchange orders.',
  Callbacks: 'What Cashgate sends to the merchant (see `webhooks`).',
};

/** The route's key in OPERATIONS. */
export function operationKey(route: Pick<RouteDoc, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** Routes of the catalog without an OPERATIONS entry (the test asks for none). */
export function unnamedRoutes(catalog: RouteCatalog): string[] {
  return catalog.routes.map(operationKey).filter((key) => !(key in OPERATIONS));
}

/** An operationId for a route the table does not know (a test's extra route): camelCase of method and path. */
function derivedOperationId(route: Pick<RouteDoc, 'method' | 'path'>): string {
  const words = `${route.method} ${route.path}`
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.map((word, i) => (i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1))).join('');
}

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);
const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

/** TypeBox schemas are JSON Schema; a JSON round trip drops TypeBox's symbol keys. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/** components.schemas, filled as operations name their schemas. */
class SchemaRegistry {
  readonly schemas: Record<string, unknown> = {};
  readonly #texts = new Map<string, string>();

  /**
   * A `$ref` to `schema` under `name` (or its `$id`). One name never stands for two schemas: when
   * `name` already holds another one, `fallback` (the operation's own name) is used, and
   * test/openapi.test.ts reports the table entry that no longer fits.
   */
  ref(name: string, schema: TSchema, fallback?: string): { $ref: string } | { type: 'array'; items: { $ref: string } } {
    // `Name[]`: an array of the named schema (the order queries answer a list of order records).
    const items = (schema as { type?: unknown; items?: TSchema }).items;
    if (name.endsWith('[]') && schema.type === 'array' && items !== undefined) {
      return { type: 'array', items: this.named(name.slice(0, -2), items, fallback) };
    }
    return this.named(name, schema, fallback);
  }

  named(name: string, schema: TSchema, fallback?: string): { $ref: string } {
    const { $id, ...content } = plain(schema);
    const key = typeof $id === 'string' ? $id : name;
    const text = JSON.stringify(content);
    const known = this.#texts.get(key);
    if (known !== undefined && known !== text) {
      if (fallback === undefined || fallback === key) throw new Error(`OpenAPI: two different schemas named ${key}`);
      return this.named(fallback, schema);
    }
    this.#texts.set(key, text);
    this.schemas[key] = content;
    return ref('schemas', key);
  }
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

const REQUEST_ID = { 'X-Request-Id': ref('headers', 'RequestId') };

/** The merchant API's failures: the envelope with `data: null`, each under its HTTP status. */
const MERCHANT_FAILURES: Readonly<Record<string, { name: string; description: string }>> = {
  '400': {
    name: 'ParameterError',
    description:
      'code 300: parameter exception (body, field, content type, body size or an unknown route); msgEn names the field and the rule',
  },
  '401': {
    name: 'SignatureError',
    description: 'code 307: signature error (missing header, unknown key, wrong sign, timestamp window, nonce reuse)',
  },
  '403': {
    name: 'NoAuthority',
    description: 'code 301: no authority (IP whitelist, key not yet active, disabled or deleted, permission)',
  },
  '429': { name: 'TooManyRequests', description: 'code 429: too many requests for this access key' },
  '500': { name: 'SystemError', description: 'code 500: system error (quote the request id)' },
};

/** The admin API's failures: `{ "error": { "code", "message" } }` under a plain HTTP status. */
const ADMIN_FAILURES: Readonly<Record<string, { name: string; description: string }>> = {
  '400': { name: 'AdminBadRequest', description: 'invalid_request: the body, a query parameter or a value is invalid' },
  '401': { name: 'AdminUnauthorized', description: 'unauthorized: missing or wrong bearer token' },
  '403': {
    name: 'AdminForbidden',
    description:
      'forbidden (the role lacks the route’s permission: role and permission named), approval_own, ' +
      'admin_api_disabled (no token sent and no root token), or a refused sandbox action (sandbox_disabled, ' +
      'sandbox_live_rail)',
  },
  '404': {
    name: 'AdminNotFound',
    description: 'the merchant, key, order, user, fee channel, rate pair or Pix does not exist',
  },
  '409': {
    name: 'AdminConflict',
    description:
      'the state forbids it: a deleted key, no signing key, not enough balance, an event the order does not allow, an existing user, a Pix not returnable',
  },
  '413': { name: 'AdminPayloadTooLarge', description: 'the body is larger than the body limit (64 KiB)' },
  '415': { name: 'AdminUnsupportedMediaType', description: 'the body is not sent as application/json' },
  '500': { name: 'AdminInternalError', description: 'internal_error: the message carries the request id' },
};

function adminStatuses(route: RouteDoc, hasPathParams: boolean): string[] {
  const writes = route.method !== 'GET';
  return ['400', '401', '403', ...(hasPathParams ? ['404'] : []), ...(writes ? ['409', '413', '415'] : []), '500'];
}

function operation(route: RouteDoc, registry: SchemaRegistry): Record<string, unknown> {
  const names = OPERATIONS[operationKey(route)];
  const id = names?.id ?? derivedOperationId(route);
  const { params } = openApiPath(route.path);
  const parameters: unknown[] = params.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (route.query !== undefined) parameters.push(...queryParameters(route.query));
  const op: Record<string, unknown> = {
    operationId: id,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description !== undefined && { description: route.description }),
    ...(parameters.length > 0 && { parameters }),
  };
  if (route.body !== undefined) {
    const mediaType = route.security === 'signed' ? JSON_UTF8 : 'application/json';
    const schema = registry.ref(names?.body ?? `${pascal(id)}Request`, route.body, `${pascal(id)}Request`);
    op.requestBody = { required: true, content: { [mediaType]: { schema } } };
  }
  if (route.security === 'signed') {
    op.security = [{ access_key: [], timestamp: [], nonce: [], sign: [] }];
    op['x-permission'] = route.permission;
    const data = registry.ref(names?.data ?? `${pascal(id)}Result`, route.response, `${pascal(id)}Result`);
    const envelope = {
      allOf: [
        ref('schemas', 'Envelope'),
        {
          type: 'object',
          required: route.desc === true ? ['data', 'desc'] : ['data'],
          properties: { data, ...(route.desc === true && { desc: { type: 'null' } }) },
        },
      ],
    };
    op.responses = {
      '200': { description: 'code 200: success', headers: REQUEST_ID, content: { [JSON_UTF8]: { schema: envelope } } },
      ...Object.fromEntries(
        Object.entries(MERCHANT_FAILURES).map(([status, { name }]) => [status, ref('responses', name)]),
      ),
    };
    return op;
  }
  const mediaType = route.mediaType ?? 'application/json';
  const success = {
    schema: registry.ref(names?.data ?? `${pascal(id)}Response`, route.response, `${pascal(id)}Response`),
  };
  op.security = route.security === 'admin' ? [{ adminToken: [] }] : [];
  if (route.security === 'admin') {
    op['x-permission'] = route.permission;
    op['x-roles'] = ROLES.filter(
      (role) => route.permission !== undefined && roleCan(role, route.permission as Permission),
    );
  }
  op.responses = {
    '200': { description: 'success', headers: REQUEST_ID, content: { [mediaType]: success } },
    ...(route.path === '/readyz' && {
      '503': { description: 'the database does not answer', content: { [mediaType]: success } },
    }),
    ...(route.security === 'admin' &&
      Object.fromEntries(
        adminStatuses(route, params.length > 0).map((status) => [
          status,
          ref('responses', (ADMIN_FAILURES[status] as { name: string }).name),
        ]),
      )),
  };
  return op;
}

function failureResponses(): Record<string, unknown> {
  const merchant = Object.values(MERCHANT_FAILURES).map(({ name, description }): [string, unknown] => [
    name,
    {
      description,
      headers: {
        ...REQUEST_ID,
        ...(name === 'TooManyRequests' && { 'Retry-After': ref('headers', 'RetryAfter') }),
      },
      content: { [JSON_UTF8]: { schema: ref('schemas', 'FailureEnvelope') } },
    },
  ]);
  const admin = Object.values(ADMIN_FAILURES).map(({ name, description }): [string, unknown] => [
    name,
    {
      description,
      headers: {
        ...REQUEST_ID,
        ...(name === 'AdminUnauthorized' && { 'WWW-Authenticate': ref('headers', 'WwwAuthenticate') }),
      },
      content: { 'application/json': { schema: ref('schemas', 'AdminError') } },
    },
  ]);
  return Object.fromEntries([...merchant, ...admin]);
}

const CALLBACK_ACK =
  'Acknowledged: only HTTP 200 within 10 seconds counts; the body is ignored (`{"code":"200","success":true}` is a good habit)';

/** The callbacks Cashgate sends (OpenAPI 3.1 `webhooks`): body, signature headers and the expected answer. */
function webhooks(registry: SchemaRegistry, named: ReadonlySet<string>): Record<string, unknown> {
  const hook = (id: string, summary: string, description: string, schema: { $ref: string }) => ({
    post: {
      operationId: id,
      tags: ['Callbacks'],
      summary,
      description:
        `${description} Signed like a request: sign = Base64(HMAC-SHA1(secret key of access_key, string to sign)) over ` +
        'the body members plus access_key, timestamp and nonce (docs/callbacks.md). Drop duplicates by notify_id.',
      security: [{ access_key: [], timestamp: [], nonce: [], sign: [] }],
      parameters: [ref('parameters', 'NotifyId')],
      requestBody: { required: true, content: { [JSON_UTF8]: { schema } } },
      responses: {
        '200': { description: CALLBACK_ACK },
        default: {
          description:
            'Not acknowledged (any other status, a redirect, or no answer within 10 s): the callback is retried with backoff, with the same body and notify_id',
        },
      },
    },
  });
  const exchange = (name: string) => (named.has(name) ? ref('schemas', name) : undefined);
  const fiatToToken = exchange('FiatToTokenRecord');
  const tokenToFiat = exchange('TokenToFiatRecord');
  return {
    paymentCallback: hook(
      'paymentCallback',
      'A collection was paid, expired or was cancelled',
      'Kenya and Brazil collections and orders of an aggregate cashier (paid in USDT: payType 112, payTypeName ' +
        'WALLET, the deposit address as payParam), at status 2, 3 or 4.',
      registry.named('PaymentCallback', PaymentCallback),
    ),
    kenyaTransferCallback: hook(
      'kenyaTransferCallback',
      'A Kenya transfer succeeded, was rejected or failed',
      'At status 8, 4 or 16.',
      registry.named('KenyaTransferCallback', KenyaTransferCallback),
    ),
    brazilTransferCallback: hook(
      'brazilTransferCallback',
      'A Brazil transfer succeeded, was rejected or failed',
      'Pix and TED transfers, at status 8, 4 or 16.',
      registry.named('BrazilTransferCallback', BrazilTransferCallback),
    ),
    ...(fiatToToken !== undefined && {
      fiatToTokenExchangeCallback: hook(
        'fiatToTokenExchangeCallback',
        'A fiat → token exchange completed or failed',
        'The order record, exactly as queryFiatToTokenExchange shows it, at status 8 or 32.',
        fiatToToken,
      ),
    }),
    ...(tokenToFiat !== undefined && {
      tokenToFiatExchangeCallback: hook(
        'tokenToFiatExchangeCallback',
        'A token → fiat exchange completed or failed',
        'The order record, exactly as queryTokenToFiatExchange shows it, at status 8 or 32.',
        tokenToFiat,
      ),
    }),
    testCallback: hook(
      'testCallback',
      'A test callback',
      'Sent on request by an operator (adminSendTestCallback) or from the console, through the same queue, signing and retries.',
      registry.named('TestCallback', TestCallback),
    ),
  };
}

/** The OpenAPI 3.1 document of every route in the catalog, and of the callbacks the gateway sends. */
export function buildOpenApiDocument(catalog: RouteCatalog, serverUrl: string): Record<string, unknown> {
  const registry = new SchemaRegistry();
  registry.ref('Envelope', EnvelopeBase);
  registry.ref('FailureEnvelope', FailureEnvelope);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of catalog.routes) {
    const { path } = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, registry) };
  }
  const security = new Set(catalog.routes.map((route) => route.security));
  const hooks = webhooks(registry, new Set(Object.keys(registry.schemas)));
  if (security.has('admin')) {
    registry.schemas.AdminError = {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', description: 'e.g. invalid_request, unauthorized, merchant_not_found' },
            message: { type: 'string' },
            allowedEvents: { type: 'array', items: { type: 'string' }, description: 'event_not_allowed only' },
          },
        },
      },
    };
  }
  const responses = Object.fromEntries(
    Object.entries(failureResponses()).filter(([name]) => security.has(name.startsWith('Admin') ? 'admin' : 'signed')),
  );
  const tags = [...new Set([...catalog.routes.map((route) => route.tag), 'Callbacks'])].map((name) => ({
    name,
    description: TAG_DESCRIPTIONS[name] ?? `${name.replace(/^Admin: /, 'Operator API: ')} (bearer token).`,
  }));
  const header = (name: string, description: string) => ({ type: 'apiKey', in: 'header', name, description });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cashgate merchant API',
      version: SERVICE_VERSION,
      description:
        'Signed merchant API (/api/v3), public routes and the operator admin API (/admin/v1), and the callbacks ' +
        'Cashgate sends (`webhooks`). Signed requests carry access_key, timestamp, nonce and sign; see docs/api.md ' +
        'for the string to sign.',
    },
    servers: [{ url: serverUrl }],
    tags,
    paths,
    webhooks: hooks,
    components: {
      schemas: registry.schemas,
      responses,
      parameters: {
        NotifyId: {
          name: 'notify_id',
          in: 'header',
          required: true,
          description: 'The callback event (ntf_ + 24 hex digits): the same on every retry and re-trigger of one event',
          schema: { type: 'string', pattern: '^ntf_[0-9a-f]{24}$' },
        },
      },
      headers: {
        RequestId: { description: 'The request id: quote it to the operator', schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait before the next request', schema: { type: 'integer' } },
        WwwAuthenticate: { description: 'Bearer realm="cashgate-admin"', schema: { type: 'string' } },
      },
      securitySchemes: {
        access_key: header('access_key', "The API key's access key"),
        timestamp: header(
          'timestamp',
          '13-digit Unix time in milliseconds, within ±SIGNATURE_WINDOW_MS of server time',
        ),
        nonce: header('nonce', 'UUID (36 characters, 8-4-4-4-12), single use per access key'),
        sign: header(
          'sign',
          'Base64(HMAC-SHA1(secret_key, string to sign)); the string to sign is the sorted k=v&k=v of the body ' +
            'members (or query parameters) plus access_key, timestamp and nonce',
        ),
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <personal token> (cashgate operator token create), acting with its operator’s ' +
            'role; or the break-glass root CASHGATE_ADMIN_TOKEN (every permission, every use audited; refused with ' +
            'ADMIN_ROOT_TOKEN_DISABLED=true). Each operation’s x-permission names the permission it needs and ' +
            'x-roles the roles that hold it.',
        },
      },
    },
  };
}
