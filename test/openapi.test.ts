import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import {
  BrazilTransferCallback,
  KenyaTransferCallback,
  PaymentCallback,
  TestCallback,
} from '../src/http/callback-schemas.js';
import { OPERATIONS } from '../src/http/openapi.js';
import { ADMIN_TOKEN, signedCall, startTestGateway, type TestGateway } from './support/gateway.js';
import { startReceiver, type CallbackReceiver } from './support/receiver.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** Every operation of the document, with its `METHOD path` key in Fastify's syntax. */
function operationsOf(document: any): { key: string; method: string; path: string; op: any }[] {
  return Object.entries(document.paths as Record<string, any>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      key: `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`,
      method,
      path,
      op: item[method],
    })),
  );
}

/** Every `$ref` anywhere below `value`. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') found.push(child);
      else refsIn(child, found);
    }
  }
  return found;
}

function resolve(document: any, pointer: string): unknown {
  assert.ok(pointer.startsWith('#/'), `${pointer} is a local reference`);
  return pointer
    .slice(2)
    .split('/')
    .reduce<any>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}

/** The schema a success answer's `data` (merchant API) or body (others) is named by (`Name[]`: a list of them). */
function successRef(op: any): string | undefined {
  const content = op.responses['200'].content as Record<string, { schema: any }>;
  const schema = Object.values(content)[0]?.schema;
  const named = schema?.allOf?.[1]?.properties?.data ?? schema;
  return named?.$ref ?? (named?.items?.$ref === undefined ? undefined : `${named.items.$ref}[]`);
}

const FAST_CALLBACKS = {
  CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
  CALLBACK_RETRY_INTERVAL_MS: '300',
  CALLBACK_RETRY_WINDOW_MS: '60000',
  CALLBACK_TIMEOUT_MS: '2000',
  CALLBACK_POLL_INTERVAL_MS: '50',
};

describe('the OpenAPI document', () => {
  let gw: TestGateway;
  let document: any;
  let text: string;

  before(async () => {
    gw = await startTestGateway({ env: FAST_CALLBACKS });
    const response = await fetch(new URL('/openapi.json', gw.url));
    assert.equal(response.status, 200, 'the document is served');
    text = await response.text();
    document = JSON.parse(text);
  });
  after(async () => {
    await gw.close();
  });

  it('gives every operation the operationId and schema names of the table, and every schema by reference', () => {
    assert.equal(document.openapi, '3.1.0');
    const operations = operationsOf(document);
    assert.ok(operations.length >= 50, `all operations are listed (${operations.length})`);
    const unnamed = operations.filter(({ key }) => OPERATIONS[key] === undefined).map(({ key }) => key);
    assert.deepEqual(unnamed, [], 'a registered route without an entry in OPERATIONS (src/http/openapi.ts)');
    const ids = operations.map(({ op }) => op.operationId as string);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    for (const { key, op } of operations) {
      const names = OPERATIONS[key] as { id: string; body?: string; data?: string };
      assert.equal(op.operationId, names.id, `${key}: the table's operationId`);
      assert.match(op.operationId, /^[a-z][a-zA-Z0-9]+$/, `${key}: camelCase`);
      if (op.requestBody !== undefined) {
        const body = (Object.values(op.requestBody.content)[0] as { schema: any }).schema;
        assert.ok(typeof body.$ref === 'string', `${key}: the request body is a named schema`);
        if (names.body !== undefined)
          assert.equal(body.$ref, `#/components/schemas/${names.body}`, `${key}: body name`);
      }
      const data = successRef(op);
      assert.ok(data !== undefined, `${key}: the success answer is a named schema`);
      if (names.data !== undefined) {
        assert.equal(data, `#/components/schemas/${names.data}`, `${key}: the table's name fits its schema`);
      }
    }
    // No route of the table has disappeared (the Pix-received routes exist only with a Pix rail that reports them).
    const served = new Set(operations.map(({ key }) => key));
    const stale = Object.keys(OPERATIONS).filter((key) => !served.has(key) && !key.includes('/admin/v1/pix/'));
    assert.deepEqual(stale, [], 'OPERATIONS entries without a route');

    const refs = refsIn(document);
    for (const pointer of new Set(refs)) assert.ok(resolve(document, pointer) !== undefined, `${pointer} resolves`);
    const schemas = Object.keys(document.components.schemas as Record<string, unknown>);
    assert.ok(schemas.length >= 40, `components.schemas holds the named schemas (${schemas.length})`);
    for (const name of schemas) {
      assert.ok(refs.includes(`#/components/schemas/${name}`), `${name} is used by reference`);
    }
    for (const required of ['Envelope', 'FailureEnvelope', 'AdminError', 'OrderRecord', 'AdminMerchant']) {
      assert.ok(schemas.includes(required), `components.schemas.${required}`);
    }
  });

  it('passes Redocly’s recommended rules: no errors, and warnings only where no such answer exists', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
    const where = (p: (typeof problems)[number]) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;
    assert.deepEqual(problems.filter((p) => p.severity === 'error').map(where), [], 'no errors');
    const warnings = problems.filter((p) => p.severity === 'warn');
    // Tolerated, each for a reason: the public routes answer no 4xx (declaring one would be false),
    // and the project has not chosen a licence yet (info.license would name one).
    const tolerated = (p: (typeof problems)[number]) =>
      (p.ruleId === 'operation-4xx-response' &&
        /^#\/paths\/~1(ping|healthz|readyz|metrics|openapi\.json)\//.test(p.location[0]?.pointer ?? '')) ||
      p.ruleId === 'info-license';
    assert.deepEqual(warnings.filter((p) => !tolerated(p)).map(where), [], 'no other warnings');
  });

  it('declares the media types and the statuses the routes really answer with', async () => {
    const op = (method: string, path: string) => document.paths[path][method];
    // Media types, as served.
    for (const [path, expected] of [
      ['/metrics', 'text/plain; version=0.0.4'],
      ['/openapi.json', 'application/json'],
      ['/ping', 'application/json'],
    ] as const) {
      const declared = Object.keys(op('get', path).responses['200'].content);
      assert.deepEqual(declared, [expected], `${path} declares ${expected}`);
      const served = (await fetch(new URL(path, gw.url))).headers.get('content-type') ?? '';
      assert.ok(served.replace(/\s/g, '').startsWith(expected.replace(/\s/g, '')), `${path} serves ${served}`);
    }

    // Admin answers, provoked for real: each status must be declared by its operation, in the admin error format.
    const merchant = await gw.merchantWithKey();
    const base = `/admin/v1/merchants/${merchant.merchantId}`;
    const keys = await gw.admin('GET', `${base}/api-keys`);
    const accessKey = keys.body.apiKeys[0].accessKey as string;
    await gw.admin('DELETE', `${base}/api-keys/${accessKey}`);
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const cases: { what: string; method: string; path: string; init: RequestInit; status: number }[] = [
      { what: 'no token', method: 'get', path: '/admin/v1/merchants', init: {}, status: 401 },
      {
        what: 'unknown merchant',
        method: 'get',
        path: '/admin/v1/merchants/{merchantId}',
        init: { headers: auth },
        status: 404,
      },
      {
        what: 'a deleted key edited',
        method: 'patch',
        path: '/admin/v1/merchants/{merchantId}/api-keys/{accessKey}',
        init: { method: 'PATCH', headers: json, body: JSON.stringify({ label: 'x' }) },
        status: 409,
      },
      {
        what: 'a body too large',
        method: 'post',
        path: '/admin/v1/merchants',
        init: { method: 'POST', headers: json, body: JSON.stringify({ name: 'x'.repeat(70_000) }) },
        status: 413,
      },
      {
        what: 'a body not JSON',
        method: 'post',
        path: '/admin/v1/merchants',
        init: { method: 'POST', headers: { ...auth, 'content-type': 'text/xml' }, body: '<merchant/>' },
        status: 415,
      },
      {
        what: 'an invalid body',
        method: 'post',
        path: '/admin/v1/merchants',
        init: { method: 'POST', headers: json, body: '{}' },
        status: 400,
      },
    ];
    for (const c of cases) {
      const url = c.path
        .replace('{merchantId}', c.what === 'unknown merchant' ? 'mch_000000000000000000000000' : merchant.merchantId)
        .replace('{accessKey}', accessKey);
      const response = await fetch(new URL(url, gw.url), c.init);
      const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
      assert.equal(response.status, c.status, `${c.what}: ${JSON.stringify(body)}`);
      assert.ok(
        typeof body.error?.code === 'string' && typeof body.error.message === 'string',
        `${c.what}: AdminError`,
      );
      const declared = op(c.method, c.path).responses[String(c.status)];
      assert.ok(declared !== undefined, `${c.method.toUpperCase()} ${c.path} declares ${c.status} (${c.what})`);
      assert.equal(
        resolve(document, `${declared.$ref}/content/application~1json/schema/$ref`),
        '#/components/schemas/AdminError',
        `${c.what}: declared as AdminError`,
      );
    }

    // A merchant API refusal: the failure envelope under its status.
    const refused = await signedCall(
      gw.url,
      { accessKey: merchant.credentials.accessKey, secretKey: 'not-the-secret' },
      { path: '/api/v3/ken/query/collectingOrder', body: { externalOrderId: 'none' } },
      gw.clock.now(),
    );
    const failure = op('post', '/api/v3/ken/query/collectingOrder').responses[String(refused.status)];
    assert.ok(failure !== undefined, `the merchant API's ${refused.status} is declared`);
    assert.equal(resolve(document, `${failure.$ref}/description`) !== undefined, true, 'a shared failure response');
  });

  it('describes every callback in webhooks: the real callbacks match their schemas and headers', async () => {
    const hooks = document.webhooks as Record<string, { post: any }>;
    assert.deepEqual(Object.keys(hooks).sort(), [
      'brazilTransferCallback',
      'fiatToTokenExchangeCallback',
      'kenyaTransferCallback',
      'paymentCallback',
      'testCallback',
      'tokenToFiatExchangeCallback',
    ]);
    const bodyRef = (hook: string): string =>
      Object.values(hooks[hook]?.post.requestBody.content as Record<string, { schema: { $ref: string } }>)[0]?.schema
        .$ref ?? '';
    const kinds: Record<string, TSchema> = {
      paymentCallback: PaymentCallback,
      kenyaTransferCallback: KenyaTransferCallback,
      brazilTransferCallback: BrazilTransferCallback,
      testCallback: TestCallback,
    };
    for (const [hook, schema] of Object.entries(kinds)) {
      assert.deepEqual(resolve(document, bodyRef(hook)), JSON.parse(JSON.stringify(schema)), `${hook}: the schema`);
    }
    assert.equal(bodyRef('fiatToTokenExchangeCallback'), '#/components/schemas/FiatToTokenRecord');

    const receiver: CallbackReceiver = await startReceiver();
    try {
      const merchant = await gw.merchantWithKey();
      const base = `/admin/v1/merchants/${merchant.merchantId}`;
      assert.equal((await gw.admin('PUT', `${base}/callback`, { url: receiver.url })).status, 200);
      assert.equal((await gw.admin('POST', `${base}/callback/test`, {})).status, 200, 'a test callback');
      const call = (path: string, body: Record<string, unknown>) =>
        signedCall(gw.url, merchant.credentials, { path, body }, gw.clock.now());
      const collection = await call('/api/v3/ken/createCollectingOrder', {
        amount: '1500',
        channelType: 'CHARGE',
        externalOrderId: `oa-col-${Date.now()}`,
        phone: '254712345678',
        checkingPhone: '254712345123',
      });
      assert.equal(collection.body.code, '200', collection.body.msgEn);
      const collectionId = collection.body.data.currencyOrderVo.orderId as string;
      assert.equal((await gw.sandbox(collectionId, 'paid')).status, 200, 'the collection is paid');
      await gw.admin('POST', `${base}/balance-adjustments`, {
        currency: 'KES',
        amount: '5000',
        reason: 'openapi test',
      });
      const transfer = await call('/api/v3/ken/createTransferOrder', {
        channelType: 'BANK',
        currencyAmount: '700',
        externalOrderId: `oa-trf-${Date.now()}`,
        phone: '254110000001',
      });
      assert.equal(transfer.body.code, '200', transfer.body.msgEn);
      const transferId = transfer.body.data.orderId as string;
      await gw.sandbox(transferId, 'processing');
      assert.equal((await gw.sandbox(transferId, 'succeeded')).status, 200, 'the transfer succeeds');

      const received = await receiver.waitFor(3);
      const seen = new Set<string>();
      for (const got of received) {
        const payload = JSON.parse(got.body) as Record<string, unknown>;
        const hook =
          payload.notifyType === 'test'
            ? 'testCallback'
            : payload.orderId === transferId
              ? 'kenyaTransferCallback'
              : 'paymentCallback';
        seen.add(hook);
        const schema = kinds[hook] as TSchema;
        assert.ok(Value.Check(schema, payload), `${hook}: ${JSON.stringify([...Value.Errors(schema, payload)][0])}`);
        const declared = hooks[hook]?.post;
        assert.equal(got.headers['content-type'], Object.keys(declared.requestBody.content)[0], `${hook}: media type`);
        const security = Object.keys(declared.security[0] as Record<string, unknown>);
        const headerNames = [
          ...security.map((name) => document.components.securitySchemes[name].name as string),
          ...(declared.parameters as { $ref: string }[]).map(({ $ref }) => (resolve(document, $ref) as any).name),
        ];
        for (const name of headerNames) assert.ok(typeof got.headers[name] === 'string', `${hook}: header ${name}`);
      }
      assert.deepEqual([...seen].sort(), ['kenyaTransferCallback', 'paymentCallback', 'testCallback']);
    } finally {
      await receiver.close();
    }
  });

  it('generates a typed client with openapi-typescript that type-checks and creates an order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cashgate-openapi-'));
    try {
      symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(dir, 'node_modules'), 'dir');
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      writeFileSync(join(dir, 'cashgate.ts'), astToString(await openapiTS(text)));
      writeFileSync(join(dir, 'merchant.ts'), MERCHANT_PROGRAM);
      const program = ts.createProgram([join(dir, 'merchant.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: ['node'],
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      assert.deepEqual(diagnostics, [], 'the program type-checks against the generated types');

      const merchant = await gw.merchantWithKey();
      const module = (await import(pathToFileURL(join(dir, 'merchant.ts')).href)) as {
        createAndQuery(
          baseUrl: string,
          credentials: { accessKey: string; secretKey: string },
          now: () => number,
          externalOrderId: string,
        ): Promise<{
          created: { currencyOrderVo: { orderId: string } };
          record: { orderId: string; orderStatus: number };
        }>;
      };
      const externalOrderId = `oa-client-${Date.now()}`;
      const { created, record } = await module.createAndQuery(
        gw.url,
        merchant.credentials,
        () => gw.clock.now(),
        externalOrderId,
      );
      assert.match(created.currencyOrderVo.orderId, /\S/, 'the generated client created an order');
      assert.equal(record.orderId, created.currencyOrderVo.orderId, 'and queried it');
      const check = await signedCall(
        gw.url,
        merchant.credentials,
        {
          path: '/api/v3/ken/query/collectingOrder',
          body: { externalOrderId, orderId: created.currencyOrderVo.orderId },
        },
        gw.clock.now(),
      );
      assert.equal(check.body.data[0]?.orderId, created.currencyOrderVo.orderId, 'the order exists on the server');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A merchant's program against the client generated from the document: openapi-fetch with a
 * middleware that signs each /api/ request with the SDK. The `@ts-expect-error` lines prove the
 * types are real: without the errors they expect, the program does not type-check.
 */
const MERCHANT_PROGRAM = `
import createClient, { type Middleware } from 'openapi-fetch';
import { signedHeaders, type Credentials } from '@cashgate/sdk';
import type { components, paths, webhooks } from './cashgate.ts';

type Schemas = components['schemas'];

export function cashgateClient(baseUrl: string, credentials: Credentials, now: () => number) {
  const signing: Middleware = {
    async onRequest({ request }) {
      const url = new URL(request.url);
      if (!url.pathname.startsWith('/api/')) return request;
      const params =
        request.method === 'GET'
          ? Object.fromEntries(url.searchParams)
          : (JSON.parse(await request.clone().text()) as Record<string, unknown>);
      for (const [name, value] of Object.entries(signedHeaders(credentials, params, now()))) {
        request.headers.set(name, value);
      }
      return request;
    },
  };
  const client = createClient<paths>({ baseUrl, headers: { 'content-type': 'application/json;charset=utf-8' } });
  client.use(signing);
  return client;
}

export async function createAndQuery(
  baseUrl: string,
  credentials: Credentials,
  now: () => number,
  externalOrderId: string,
): Promise<{ created: Schemas['CreateKenyaCollectionResult']; record: Schemas['OrderRecord'] }> {
  const client = cashgateClient(baseUrl, credentials, now);
  const body: Schemas['CreateKenyaCollectionRequest'] = {
    amount: '1500',
    channelType: 'CHARGE',
    externalOrderId,
    phone: '254712345678',
    checkingPhone: '254712345123',
  };
  const created = await client.POST('/api/v3/ken/createCollectingOrder', { body });
  if (created.data === undefined) throw new Error('create refused: ' + JSON.stringify(created.error));
  const code: string = created.data.code;
  if (code !== '200') throw new Error(created.data.msgEn);
  const orderId = created.data.data.currencyOrderVo.orderId;
  const query = await client.POST('/api/v3/ken/query/collectingOrder', { body: { externalOrderId, orderId } });
  if (query.data === undefined) throw new Error('query refused: ' + query.error.msgEn);
  const [record] = query.data.data;
  if (record === undefined) throw new Error('no order record');
  return { created: created.data.data, record };
}

export function onPayment(payload: webhooks['paymentCallback']['post']['requestBody']['content']['application/json;charset=utf-8']): string {
  return payload.orderStatus + ' ' + String(payload.orderActualAmount);
}

export function wrongCalls(client: ReturnType<typeof cashgateClient>): void {
  // @ts-expect-error -- phone is required
  void client.POST('/api/v3/ken/createCollectingOrder', { body: { amount: '1', channelType: 'CHARGE', externalOrderId: 'x', checkingPhone: '254712345123' } });
  // @ts-expect-error -- CARD is no channel of a Kenya collection
  void client.POST('/api/v3/ken/createCollectingOrder', { body: { amount: '1', channelType: 'CARD', externalOrderId: 'x', phone: '254712345678', checkingPhone: '254712345123' } });
  // @ts-expect-error -- no such operation
  void client.POST('/api/v3/ken/deleteOrder', { body: {} });
}
`;
