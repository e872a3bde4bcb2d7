import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.js';

/** What came back on a raw connection, and whether the server closed it before the client gave up. */
interface RawAnswer {
  statusLine: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  closedByServer: boolean;
}

/**
 * Writes bytes to the server as they are and reads until the connection closes. The client never
 * closes first unless `waitMs` passes: an answer that never comes, or a connection the server keeps
 * open, shows as an empty answer or `closedByServer: false`.
 */
function rawRequest(baseUrl: string, data: string | Buffer, waitMs = 1_500): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closedByServer = true;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = (split === -1 ? text : text.slice(0, split)).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0);
      resolve({ statusLine, status, headers, body: split === -1 ? '' : text.slice(split + 4), closedByServer });
    });
    socket.write(data);
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, waitMs);
  });
}

/** The merchant API's envelope, with nothing else in it. */
function envelope(text: string, where: string): { code: string; msgEn: string } {
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'msg', 'msgEn', 'success'], `${where}: ${text}`);
  return { code: String(body.code), msgEn: String(body.msgEn) };
}

/** The admin API's error format, with nothing else in it. */
function adminError(text: string, where: string): { code: string; message: string } {
  const body = JSON.parse(text) as { error?: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error'], `${where}: ${text}`);
  assert.deepEqual(Object.keys(body.error ?? {}).sort(), ['code', 'message'], `${where}: ${text}`);
  return { code: String(body.error?.code), message: String(body.error?.message) };
}

const request = (method: string, target: string, headers = 'Host: x\r\n') =>
  `${method} ${target} HTTP/1.1\r\n${headers}\r\n`;

describe('HTTP methods and requests at the edge', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ workers: false });
  });
  after(async () => gw.close());

  describe('CONNECT', () => {
    it('is answered on a merchant path like any method no route serves, then the connection closed', async () => {
      const path = '/api/v3/ken/query/balance';
      const answer = await rawRequest(gw.url, request('CONNECT', path));
      assert.equal(answer.status, 400, `no answer: ${JSON.stringify(answer)}`);
      assert.equal(answer.headers['content-type'], 'application/json;charset=utf-8');
      assert.match(answer.headers['x-request-id'] ?? '', /^req_/);
      assert.equal(answer.headers.connection, 'close');
      assert.ok(answer.closedByServer, 'the server closes the connection after the answer');
      assert.deepEqual(JSON.parse(answer.body), {
        code: '300',
        success: false,
        msg: `no endpoint CONNECT ${path}`,
        msgEn: `no endpoint CONNECT ${path}`,
        data: null,
      });
      // The same answer as another method the parser knows and no route serves.
      const propfind = await rawRequest(gw.url, request('PROPFIND', path, 'Host: x\r\nConnection: close\r\n'));
      assert.equal(propfind.status, answer.status);
      assert.equal(propfind.body.replaceAll('PROPFIND', 'CONNECT'), answer.body);
    });

    it('is answered on an admin path in the admin format', async () => {
      const path = '/admin/v1/merchants';
      const answer = await rawRequest(
        gw.url,
        request('CONNECT', path, `Host: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n`),
      );
      assert.equal(answer.status, 404, `no answer: ${JSON.stringify(answer)}`);
      assert.equal(answer.headers.connection, 'close');
      assert.ok(answer.closedByServer);
      assert.deepEqual(adminError(answer.body, 'admin CONNECT'), {
        code: 'not_found',
        message: `no admin route CONNECT ${path}`,
      });
      const propfind = await rawRequest(gw.url, request('PROPFIND', path, 'Host: x\r\nConnection: close\r\n'));
      assert.equal(propfind.status, 404);
      assert.equal(propfind.body.replaceAll('PROPFIND', 'CONNECT'), answer.body);
    });

    it('is answered on a console path with the console’s not-found page', async () => {
      const answer = await rawRequest(gw.url, request('CONNECT', '/console/orders'));
      assert.equal(answer.status, 404, `no answer: ${JSON.stringify(answer)}`);
      assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
      assert.match(answer.body, /<title>Not found · Cashgate console<\/title>/);
      assert.ok(answer.closedByServer);
    });

    it('is answered for a proxy target (host:port) in the envelope, and opens no tunnel', async () => {
      const answer = await rawRequest(
        gw.url,
        `${request('CONNECT', 'example.com:443', 'Host: example.com:443\r\n')}\x16\x03\x01\x00\x05hello`,
      );
      assert.equal(answer.status, 400, `no answer: ${JSON.stringify(answer)}`);
      assert.deepEqual(envelope(answer.body, 'proxy CONNECT'), {
        code: '300',
        msgEn: 'no endpoint CONNECT example.com:443',
      });
      assert.ok(answer.closedByServer);
      assert.equal(answer.body.includes('hello'), false);
    });

    it('keeps serving after a client that resets its CONNECT at once', async () => {
      const { hostname, port } = new URL(gw.url);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(request('CONNECT', '/api/v3/ken/query/balance'), () => {
            socket.resetAndDestroy();
            resolve();
          });
        });
        socket.on('error', () => undefined);
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const ping = await fetch(new URL('/ping', gw.url));
      assert.equal(ping.status, 200);
    });
  });

  describe('requests Node’s parser refuses, in the format of their path', () => {
    const nulHeader = (path: string) =>
      Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Note: a\0b\r\n\r\n`, 'latin1');
    const longAuthorization = (path: string) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`;
    const framing =
      'the request is not well-formed HTTP/1.1 (request line, headers, Content-Length or chunked encoding)';

    it('answers an admin path in the admin error format', async () => {
      const cases: [string, string | Buffer, string][] = [
        ['NUL in a header value', nulHeader('/admin/v1/merchants'), framing],
        ['NUL, with a query', nulHeader('/admin/v1/merchants?limit=5'), framing],
        ['NUL, doubled slash', nulHeader('//admin/v1/merchants'), framing],
        [
          'over-long Authorization',
          longAuthorization('/admin/v1/merchants'),
          'the request line and headers are larger than 16 KB',
        ],
        ['unknown method', request('BREW', '/admin/v1/merchants'), 'the HTTP method is not one this server knows'],
      ];
      for (const [name, data, message] of cases) {
        const answer = await rawRequest(gw.url, data);
        assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer)}`);
        assert.equal(answer.headers['content-type'], 'application/json;charset=utf-8', name);
        assert.equal(answer.headers.connection, 'close', name);
        assert.deepEqual(adminError(answer.body, name), { code: 'invalid_request', message }, name);
      }
    });

    it('keeps the envelope on other paths and when the request line cannot be read', async () => {
      const cases: [string, string | Buffer, string][] = [
        ['merchant path', nulHeader('/api/v3/ken/query/balance'), framing],
        ['console path (HTML pages answer refusals in the envelope)', nulHeader('/console/orders'), framing],
        ['cashier path', nulHeader('/cashier/abc'), framing],
        [
          'merchant path, over-long header',
          longAuthorization('/api/v3/ken/query/balance'),
          'the request line and headers are larger than 16 KB',
        ],
        ['absolute-form admin URL', nulHeader('http://x/admin/v1/merchants'), framing],
        [
          'no request line',
          Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]),
          'the HTTP method is not one this server knows',
        ],
        [
          'request line with a control character',
          Buffer.from('GET /admin/v1/\x01 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
          framing,
        ],
        ['request line without a version', Buffer.from('GET /admin/v1/merchants\x00\r\n\r\n', 'latin1'), framing],
      ];
      for (const [name, data, message] of cases) {
        const answer = await rawRequest(gw.url, data);
        assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer)}`);
        assert.equal(answer.headers['content-type'], 'application/json;charset=utf-8', name);
        assert.deepEqual(envelope(answer.body, name), { code: '300', msgEn: message }, name);
      }
    });
  });
});
