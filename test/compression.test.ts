import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { negotiateEncoding } from '../src/http/compression.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

/** A GET with exactly these headers (fetch would add and undo its own Accept-Encoding). */
function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('responses are compressed when the client asks', () => {
  let gw: TestGateway;
  let page: string;

  before(async () => {
    gw = await startTestGateway();
    const merchant = await gw.merchantWithKey({ language: 'pt-BR' });
    const created = await signedCall(
      gw.url,
      merchant.credentials,
      {
        path: '/api/v3/bra/createCollectingOrder',
        body: { amount: '125.50', channelType: 'PIX', externalOrderId: `gz-${Date.now()}` },
      },
      gw.clock.now(),
    );
    assert.equal(created.body.code, '200', JSON.stringify(created.body));
    // The page's own address names PUBLIC_BASE_URL; the test reaches it where the gateway listens.
    const cashier = new URL(created.body.data.cashierUrl as string);
    page = new URL(`${cashier.pathname}${cashier.search}`, gw.url).toString();
  });
  after(async () => {
    await gw.close();
  });

  it('sends the Pix page Brotli-compressed to a browser, gzip to a client without Brotli, and whole otherwise', async () => {
    const plain = await get(page, {});
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /Accept-Encoding/i);
    const br = await get(page, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(br.headers.vary), /Accept-Encoding/i);
    const gz = await get(page, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    // The same page (its countdown aside, the text is the same length) in a fraction of the bytes.
    const unbr = brotliDecompressSync(br.body).toString('utf8');
    const ungz = gunzipSync(gz.body).toString('utf8');
    assert.match(unbr, /^<!doctype html>/i);
    assert.equal(unbr.length, plain.body.toString('utf8').length, 'Brotli carries the whole page');
    assert.equal(ungz.length, plain.body.toString('utf8').length, 'gzip carries the whole page');
    assert.ok(br.body.length * 2 < plain.body.length, `compressed ${br.body.length} B of ${plain.body.length} B`);
    assert.ok(gz.body.length * 2 < plain.body.length, `gzip ${gz.body.length} B of ${plain.body.length} B`);
  });

  it('compresses the OpenAPI document, and leaves small answers and refused encodings alone', async () => {
    const doc = await get(`${gw.url}/openapi.json`, { 'accept-encoding': 'br;q=0, gzip' });
    assert.equal(doc.headers['content-encoding'], 'gzip', 'br refused with q=0');
    assert.ok(JSON.parse(gunzipSync(doc.body).toString('utf8')) !== null, 'the document reads');
    const ping = await get(`${gw.url}/ping`, { 'accept-encoding': 'br' });
    assert.equal(ping.headers['content-encoding'], undefined, 'a small answer goes as it is');
    const none = await get(page, { 'accept-encoding': 'identity' });
    assert.equal(none.headers['content-encoding'], undefined);
  });

  it('reads Accept-Encoding as RFC 9110 says', () => {
    assert.equal(negotiateEncoding(undefined), undefined);
    assert.equal(negotiateEncoding('gzip, br'), 'br');
    assert.equal(negotiateEncoding('br;q=0, gzip;q=0.5'), 'gzip');
    assert.equal(negotiateEncoding('*'), 'br');
    assert.equal(negotiateEncoding('*;q=0, gzip'), 'gzip');
    assert.equal(negotiateEncoding('identity'), undefined);
    assert.equal(negotiateEncoding('deflate'), undefined);
  });
});
