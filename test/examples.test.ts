// The examples of docs/examples.md, run against a real gateway: the Python, PHP and Java programs
// as child processes (each skipped, with the reason, when its interpreter is missing, and failing
// instead when CI=true), and the Postman collection's scripts in node:vm.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createContext, runInContext } from 'node:vm';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { SIGNING_VECTORS_PATH, signingVectors } from './support/signing-vectors.js';

const VECTORS_PATH = SIGNING_VECTORS_PATH;
const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));

const fixture = signingVectors;

interface Language {
  name: string;
  /** The interpreter, looked up on PATH. */
  command: string;
  versionArgs: string[];
  /** The lowest major version the example needs, read from the version output. */
  minMajor: number;
  versionPattern: RegExp;
  /** The program and its arguments before the vectors path. */
  args: string[];
  install: string;
}

const LANGUAGES: Language[] = [
  {
    name: 'python',
    command: 'python3',
    versionArgs: ['--version'],
    minMajor: 3,
    versionPattern: /Python (\d+)\.(\d+)/,
    args: [join(EXAMPLES, 'python', 'cashgate_example.py')],
    install: 'apt-get install python3',
  },
  {
    name: 'php',
    command: 'php',
    versionArgs: ['--version'],
    minMajor: 8,
    versionPattern: /PHP (\d+)\.(\d+)/,
    args: [join(EXAMPLES, 'php', 'cashgate_example.php')],
    install: 'apt-get install php-cli',
  },
  {
    name: 'java',
    command: 'java',
    versionArgs: ['-version'],
    minMajor: 17,
    versionPattern: /version "(\d+)(?:\.(\d+))?/,
    args: [join(EXAMPLES, 'java', 'CashgateExample.java')],
    install: 'apt-get install default-jre-headless',
  },
];

/** Why a language's tests cannot run here (interpreter missing or too old), or undefined. */
function missingInterpreter(language: Language): string | undefined {
  const probe = spawnSync(language.command, language.versionArgs, { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0)
    return `${language.command} not installed (${language.install}, as .ci/run does)`;
  const match = language.versionPattern.exec(`${probe.stdout}${probe.stderr}`);
  const major = match === null ? NaN : Number(match[1]);
  if (!(major >= language.minMajor))
    return `${language.command} ${match?.[0] ?? 'of unknown version'} is older than ${language.minMajor} (${language.install})`;
  return undefined;
}

interface Summary {
  language: string;
  ok: boolean;
  error?: string;
  vectors: { total: number; passed: number; failures: { name: string; field: string }[] };
  live?: string;
  orderId?: string;
  externalOrderId?: string;
  steps?: Record<string, (Record<string, unknown> & { ok: boolean }) | undefined>;
}

interface Attempt {
  notifyId: string;
  url: string;
  httpStatus: number | null;
  outcome: string;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  summary: Summary;
}

/** Runs an example to completion; its last stdout line is its JSON summary. */
function runExample(language: Language, vectorsPath: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(language.command, [...language.args, vectorsPath], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve({ code, stdout, stderr, summary: JSON.parse(last) as Summary });
      } catch {
        reject(new Error(`${language.name} printed no JSON summary (exit ${String(code)}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The Postman collection, run in node:vm with the parts of Postman's sandbox its scripts use:
// pm.request, pm.variables.replaceIn, pm.collectionVariables, pm.response, pm.test/pm.expect, and
// a CryptoJS whose HmacSHA1 and Base64 are node:crypto's.

const COLLECTION_PATH = join(EXAMPLES, 'postman', 'cashgate.postman_collection.json');

interface PostmanScript {
  listen: string;
  script: { exec: string[] };
}
interface PostmanRequest {
  method: string;
  header: { key: string; value: string }[];
  body?: { mode: string; raw?: string; urlencoded?: { key: string; value: string }[] };
  url: { raw: string; host: string[]; path: string[]; query?: { key: string; value: string; disabled?: boolean }[] };
}
interface PostmanItem {
  name: string;
  item?: PostmanItem[];
  request?: PostmanRequest;
  event?: PostmanScript[];
}
interface PostmanCollection {
  info: { name: string; schema: string };
  event: PostmanScript[];
  variable: { key: string; value: string }[];
  item: PostmanItem[];
}

function requestsOf(items: PostmanItem[]): (PostmanItem & { request: PostmanRequest })[] {
  return items.flatMap((item) =>
    item.request !== undefined ? [{ ...item, request: item.request }] : requestsOf(item.item ?? []),
  );
}

const CRYPTO_JS = {
  HmacSHA1: (message: string, key: string) => ({ digest: createHmac('sha1', key).update(message, 'utf8').digest() }),
  enc: { Base64: { stringify: (words: { digest: Buffer }) => words.digest.toString('base64') } },
};

/** The state of one collection run: its variables. */
class PostmanRun {
  constructor(readonly variables: Map<string, string>) {}

  replaceIn(text: string): string {
    return text.replace(/\{\{([^{}]+)\}\}/g, (whole, name: string) => {
      if (name === '$guid') return randomUUID();
      if (name === '$timestamp') return String(Math.floor(Date.now() / 1000));
      if (name === '$randomInt') return String(randomInt(0, 1001));
      return this.variables.get(name) ?? whole;
    });
  }

  /** Runs one request as Postman would; 'passed' or what went wrong. */
  async send(prerequest: string, item: PostmanItem & { request: PostmanRequest }): Promise<string> {
    const request = structuredClone(item.request);
    const headers = new Map(request.header.map((h) => [h.key, h.value]));
    runPrerequest(prerequest, this, request, headers);
    const init: RequestInit = { method: request.method, redirect: 'manual', headers: {} };
    for (const [key, value] of headers) (init.headers as Record<string, string>)[key] = this.replaceIn(value);
    if (request.body?.mode === 'raw') init.body = this.replaceIn(request.body.raw ?? '');
    if (request.body?.mode === 'urlencoded')
      init.body = new URLSearchParams(
        (request.body.urlencoded ?? []).map((p): [string, string] => [p.key, this.replaceIn(p.value)]),
      );
    const response = await fetch(this.replaceIn(request.url.raw), init);
    const text = await response.text();
    const failures: string[] = [];
    const pm = {
      ...this.pm({ ...request, body: request.body }),
      response: { code: response.status, json: () => JSON.parse(text) as unknown },
      test: (name: string, check: () => void) => {
        try {
          check();
        } catch (error) {
          failures.push(`${name}: ${(error as Error).message}`);
        }
      },
      expect: (actual: unknown, message?: string) => ({
        to: {
          eql: (expected: unknown) => assert.deepEqual(actual, expected, message),
          be: { a: (type: string) => assert.equal(typeof actual, type, message) },
        },
      }),
    };
    const testScript = item.event?.find((e) => e.listen === 'test')?.script.exec.join('\n') ?? '';
    runInContext(testScript, createContext({ pm, console: { log: () => undefined } }));
    return failures.length === 0 ? 'passed' : `HTTP ${response.status} ${failures.join('; ')} ${text.slice(0, 300)}`;
  }

  /** pm.request, pm.variables and pm.collectionVariables over a request. */
  pm(request: PostmanRequest, headers = new Map<string, string>()) {
    const body = request.body;
    return {
      request: {
        method: request.method,
        url: {
          toString: () => request.url.raw,
          query: {
            each: (visit: (p: { key: string; value: string; disabled?: boolean }) => void) =>
              (request.url.query ?? []).forEach(visit),
          },
        },
        body:
          body === undefined
            ? undefined
            : {
                mode: body.mode,
                get raw() {
                  return body.raw;
                },
                update: (text: string) => {
                  body.raw = text;
                },
              },
        headers: { upsert: (header: { key: string; value: string }) => headers.set(header.key, header.value) },
      },
      variables: { replaceIn: (text: string) => this.replaceIn(text) },
      collectionVariables: {
        get: (name: string) => this.variables.get(name),
        set: (name: string, value: unknown) => this.variables.set(name, String(value)),
      },
    };
  }
}

/** Runs the collection's pre-request script for a request; returns the script's context. */
function runPrerequest(
  source: string,
  run: PostmanRun,
  request: PostmanRequest,
  headers = new Map<string, string>(),
): Record<string, unknown> {
  const context = createContext({
    pm: run.pm(request, headers),
    CryptoJS: CRYPTO_JS,
    console: { log: () => undefined },
  });
  runInContext(source, context);
  return context;
}

describe('examples in other languages, against a running gateway', () => {
  let gw: TestGateway;
  let env: Record<string, string>;
  let scratch: string;

  before(async () => {
    gw = await startTestGateway({
      env: {
        // The examples' receivers listen on 127.0.0.1; a window wide enough for the stale-callback test.
        CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
        CALLBACK_POLL_INTERVAL_MS: '50',
        KEY_ACTIVATION_DELAY_MS: '0',
        SIGNATURE_WINDOW_MS: '3600000',
      },
    });
    const { credentials } = await gw.merchantWithKey({ permissions: ['bra.collection', 'query', 'balance'] });
    env = {
      CASHGATE_BASE_URL: gw.url,
      CASHGATE_ACCESS_KEY: credentials.accessKey,
      CASHGATE_SECRET_KEY: credentials.secretKey,
    };
    scratch = mkdtempSync(join(tmpdir(), 'cashgate-examples-'));
  });

  /** The order's callback attempts, once the gateway has recorded the first one. */
  const callbackAttempts = async (orderId: string): Promise<Attempt[]> => {
    for (let polls = 0; ; polls++) {
      const answer = await gw.admin('GET', `/admin/v1/orders/${encodeURIComponent(orderId)}/callbacks`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const attempts = (answer.body as { attempts: Attempt[] }).attempts;
      if (attempts.length > 0 || polls === 400) return attempts;
      await delay(25);
    }
  };

  after(async () => {
    await gw.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  for (const language of LANGUAGES) {
    const missing = missingInterpreter(language);
    const inCi = process.env.CI === 'true';
    if (missing !== undefined && !inCi) console.log(`# ${language.name} example tests skipped: ${missing}`);
    const options = missing !== undefined && !inCi ? { skip: missing } : {};
    const needInterpreter = () => {
      if (missing !== undefined) assert.fail(`${missing}; CI must run the ${language.name} example`);
    };

    test(
      `${language.name}: reproduces every vector, creates, queries and pays an order, verifies its callback`,
      options,
      async () => {
        needInterpreter();
        const run = await runExample(language, VECTORS_PATH, env);
        assert.equal(run.code, 0, `exit code 0 expected:\n${run.stdout}\n${run.stderr}`);
        const { summary } = run;
        assert.equal(summary.ok, true, `summary says ok: ${JSON.stringify(summary)}`);
        assert.deepEqual(summary.vectors, {
          total: fixture.vectors.length,
          passed: fixture.vectors.length,
          failures: [],
        });
        const steps = summary.steps ?? {};
        for (const step of ['balance', 'create', 'query', 'pay', 'callback', 'queryAfterPayment'])
          assert.equal(steps[step]?.ok, true, `step ${step} passed: ${JSON.stringify(summary)}`);
        const callback = steps.callback;
        assert.ok(callback !== undefined, 'a callback step');
        assert.equal(callback.verified, true);
        assert.equal(callback.fresh, true);
        assert.equal(callback.tamperedBodyRejected, true);
        assert.equal(callback.orderActualAmount, '100.50');
        assert.equal(steps.queryAfterPayment?.orderStatus, 2);

        // The gateway's own record: the example's receiver acknowledged the callback it verified.
        const attempt = (await callbackAttempts(summary.orderId ?? '')).at(0);
        assert.ok(attempt !== undefined, 'the gateway recorded an attempt');
        assert.equal(attempt.httpStatus, 200, JSON.stringify(attempt));
        assert.equal(attempt.outcome, 'delivered');
        assert.equal(attempt.notifyId, callback.notifyId);
        assert.match(attempt.url, /^http:\/\/127\.0\.0\.1:\d+\//);
      },
    );

    test(`${language.name}: a vector that does not match makes it exit non-zero`, options, async () => {
      needInterpreter();
      const broken = structuredClone(fixture);
      const victim = broken.vectors[4];
      assert.ok(victim !== undefined, 'the fixture has a fifth vector');
      victim.sign = createHmac('sha1', 'another secret').update(victim.stringToSign).digest('base64');
      const path = join(scratch, `${language.name}-broken-vectors.json`);
      writeFileSync(path, JSON.stringify(broken, null, 2));
      // Without CASHGATE_BASE_URL only the vectors are checked.
      const run = await runExample(language, path, {});
      assert.equal(run.code, 1, `exit code 1 expected:\n${run.stdout}\n${run.stderr}`);
      assert.equal(run.summary.ok, false);
      assert.equal(run.summary.vectors.passed, fixture.vectors.length - 1);
      assert.deepEqual(
        run.summary.vectors.failures.map((f) => [f.name, f.field]),
        [[victim.name, 'sign']],
      );
    });

    test(`${language.name}: a callback whose timestamp is not fresh is refused`, options, async () => {
      needInterpreter();
      // The gateway's clock runs 10 minutes ahead: its requests pass (the window is an hour), but
      // the callback's timestamp is outside the example's 5-minute tolerance.
      gw.clock.advance(600_000);
      try {
        const run = await runExample(language, VECTORS_PATH, env);
        assert.equal(run.code, 1, `exit code 1 expected:\n${run.stdout}\n${run.stderr}`);
        const callback = run.summary.steps?.callback;
        assert.ok(callback !== undefined, `a callback step: ${JSON.stringify(run.summary)}`);
        assert.equal(callback.ok, false);
        assert.match(String(callback.reason), /timestamp/);
        // The receiver refused it, so the gateway keeps it for a retry.
        const attempt = (await callbackAttempts(run.summary.orderId ?? '')).at(0);
        assert.ok(attempt !== undefined, 'the gateway recorded an attempt');
        assert.equal(attempt.httpStatus, 401, JSON.stringify(attempt));
        assert.equal(attempt.outcome, 'failed');
      } finally {
        gw.clock.advance(-600_000);
      }
    });
  }
  describe('the Postman collection', () => {
    const collection = JSON.parse(readFileSync(COLLECTION_PATH, 'utf8')) as PostmanCollection;
    const prerequest = collection.event.find((e) => e.listen === 'prerequest')?.script.exec.join('\n') ?? '';

    test('is a v2.1 collection with a request for every merchant route of /openapi.json', async () => {
      assert.equal(collection.info.schema, 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
      assert.deepEqual(
        collection.variable.map((v) => v.key).filter((k) => ['baseUrl', 'accessKey', 'secretKey'].includes(k)),
        ['baseUrl', 'accessKey', 'secretKey'],
      );
      assert.ok(prerequest.includes('cashgateStringToSign'), 'the collection has the signing pre-request script');
      const openapi = (await (await fetch(new URL('/openapi.json', gw.url))).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const served = Object.entries(openapi.paths)
        .filter(([path]) => path.startsWith('/api/v3/') || path === '/ping')
        .flatMap(([path, operations]) =>
          Object.keys(operations)
            .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
            .map((method) => `${method.toUpperCase()} ${path}`),
        )
        .sort();
      assert.ok(served.length >= 20, `the server lists its merchant routes: ${served.join(', ')}`);
      const inCollection = requestsOf(collection.item)
        .map(({ request }) => `${request.method} /${request.url.path.join('/')}`)
        .filter((route) => !route.includes('/cashier/'));
      assert.deepEqual([...new Set(inCollection)].sort(), served);
    });

    test('its pre-request signing reproduces every worked vector', () => {
      const context = runPrerequest(prerequest, new PostmanRun(new Map()), {
        method: 'GET',
        header: [],
        url: { raw: '{{baseUrl}}/ping', host: ['{{baseUrl}}'], path: ['ping'] },
      });
      const stringToSign = context.cashgateStringToSign as (params: unknown, headers: Record<string, string>) => string;
      const sign = context.cashgateSign as (secret: string, text: string) => string;
      for (const vector of fixture.vectors) {
        const text = stringToSign(vector.params, {
          access_key: fixture.access_key,
          timestamp: vector.timestamp,
          nonce: vector.nonce,
        });
        assert.equal(text, vector.stringToSign, vector.name);
        assert.equal(sign(fixture.secret_key, text), vector.sign, vector.name);
      }
    });

    test('every request, signed by its pre-request script, is answered 200 by the gateway', async () => {
      const { merchantId, credentials } = await gw.merchantWithKey({ permissions: ['all'] });
      for (const [currency, amount] of [
        ['BRL', '1000.00'],
        ['KES', '10000'],
      ] as const) {
        const credit = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/balance-adjustments`, {
          currency,
          amount,
          reason: 'Postman collection test',
        });
        assert.equal(credit.status, 200, JSON.stringify(credit.body));
      }
      // The exchange prices orders only once the operator has set a rate.
      const rate = await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.40', sell: '5.4321' });
      assert.equal(rate.status, 200, JSON.stringify(rate.body));
      const run = new PostmanRun(
        new Map([
          ...collection.variable.map((v) => [v.key, v.value] as [string, string]),
          ['baseUrl', gw.url.replace(/\/$/, '')],
          ['accessKey', credentials.accessKey],
          ['secretKey', credentials.secretKey],
        ]),
      );
      const results: string[] = [];
      for (const item of requestsOf(collection.item)) {
        const outcome = await run.send(prerequest, item);
        results.push(`${item.name}: ${outcome}`);
      }
      const failures = results.filter((line) => !line.endsWith(': passed'));
      assert.deepEqual(failures, [], results.join('\n'));
    });
  });
});
