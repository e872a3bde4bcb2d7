import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { signString, stringToSign } from '@cashgate/sdk';
import { type ConsoleClient, consoleSignIn } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type SignedCall, type TestGateway } from './support/gateway.js';

const BANKS = '/api/v3/bra/query/bank';
const DELAY_MS = 90_000;

function unescapeHtml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

function inputValue(page: string, id: string): string {
  const match = new RegExp(`id="${id}" value="([^"]*)"`).exec(page);
  assert.ok(match, `no input #${id} on the page`);
  return unescapeHtml(match[1] ?? '');
}

function elementText(page: string, tag: string, id: string): string {
  const match = new RegExp(`<${tag} id="${id}">([\\s\\S]*?)</${tag}>`).exec(page);
  assert.ok(match, `no <${tag} id="${id}"> on the page`);
  return unescapeHtml(match[1] ?? '');
}

describe(`console: API keys, signature tool, request log (${databaseLabel})`, () => {
  let gw: TestGateway;
  let merchantA: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let merchantB: Awaited<ReturnType<TestGateway['merchantWithKey']>>;
  let a: ConsoleClient;
  let b: ConsoleClient;
  /** The key created through the console's form. */
  let created: { accessKey: string; secretKey: string };
  const call = (credentials: { accessKey: string; secretKey: string }, c: Partial<SignedCall> = {}) =>
    signedCall(gw.url, credentials, { path: BANKS, body: { currencyType: 'BRL' }, ...c }, gw.clock.now());
  const keyOf = async (accessKey: string) =>
    (await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).find((k) => k.accessKey === accessKey);

  before(async () => {
    gw = await startTestGateway({ env: { KEY_ACTIVATION_DELAY_MS: String(DELAY_MS) }, workers: false });
    merchantA = await gw.merchantWithKey();
    merchantB = await gw.merchantWithKey();
    a = await consoleSignIn(gw, merchantA.merchantId);
    b = await consoleSignIn(gw, merchantB.merchantId);
  });

  after(async () => {
    await gw.close();
  });

  it('creates a key through the form (POST, 303, GET), shows its secret once, and the key works once active', async () => {
    const otherSession = await consoleSignIn(gw, merchantA.merchantId);
    const keysBefore = (await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).length;
    const posted = await a.post('/console/keys', {
      label: 'Shop <script>alert(1)</script>',
      permissions: ['all'],
      ipWhitelist: '0.0.0.0',
      debug: '1',
    });
    assert.equal(posted.status, 303, posted.text.slice(0, 500));
    const location = posted.location ?? '';
    assert.match(location, /^\/console\/keys\/AK[0-9a-f]{32}\/created$/, 'the POST answers with a redirect to the key');
    assert.ok(!/[0-9a-f]{64}/.test(location), 'the secret is not in the address');
    assert.ok(
      posted.headers.getSetCookie().every((c) => !/[0-9a-f]{64}/.test(c)),
      'the secret is not in a cookie',
    );
    assert.equal(
      (await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).length,
      keysBefore + 1,
      'the POST created one key',
    );

    const elsewhere = await otherSession.get(location);
    assert.equal(elsewhere.status, 200, elsewhere.text.slice(0, 500));
    assert.ok(!elsewhere.text.includes('id="new-secret-key"'), 'another session of the merchant never gets the secret');

    const page = await a.get(location);
    assert.equal(page.status, 200, page.text.slice(0, 500));
    created = {
      accessKey: inputValue(page.text, 'new-access-key'),
      secretKey: inputValue(page.text, 'new-secret-key'),
    };
    assert.equal(`/console/keys/${created.accessKey}/created`, location, 'the page shows the key redirected to');
    assert.match(created.accessKey, /^AK[0-9a-f]{32}$/, 'an access key is shown');
    assert.match(created.secretKey, /^[0-9a-f]{64}$/, 'the secret key is shown');
    assert.ok(page.text.includes('cannot be shown again'), 'the page warns that the secret is shown once');
    assert.ok(page.text.includes('data-copy="new-secret-key"'), 'the secret has a copy button');
    const countdown =
      /class="badge wait" data-until="\d+" data-template="takes effect in \{s\} s" data-over="active" data-over-class="badge ok">takes effect in (\d+) s</.exec(
        page.text,
      );
    assert.ok(countdown !== null, 'a countdown to activeAt');
    const seconds = Number(countdown[1]);
    assert.ok(seconds >= 1 && seconds <= 90, `the countdown starts from the 90 s delay (${seconds} s)`);
    assert.equal(page.headers.get('cache-control')?.includes('no-store'), true, 'the secret page is not cached');

    const reloaded = await a.get(location);
    assert.equal(reloaded.status, 200, reloaded.text.slice(0, 500));
    assert.ok(!reloaded.text.includes(created.secretKey), 'a reload does not show the secret again');
    assert.ok(!reloaded.text.includes('id="new-secret-key"'), 'a reload has no secret field');
    assert.ok(reloaded.text.includes(created.accessKey), "a reload shows the key's details");
    assert.ok(reloaded.text.includes('was shown once'), 'a reload says the secret was shown once');
    assert.equal(reloaded.headers.get('cache-control')?.includes('no-store'), true, 'the reload is not cached either');
    assert.equal(
      (await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).length,
      keysBefore + 1,
      'no second key was created',
    );
    assert.equal((await b.get(location)).status, 404, "another merchant's user gets 404");

    const badCsrf = await a.post(
      '/console/keys',
      { label: 'x', permissions: ['all'], ipWhitelist: '0.0.0.0' },
      { csrf: 'not-the-token' },
    );
    assert.equal(badCsrf.status, 403, 'a form without the session CSRF token is refused');
    assert.equal(
      (await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).length,
      keysBefore + 1,
      'and creates nothing',
    );

    const list = await a.get('/console/keys');
    assert.equal(list.status, 200, 'the list');
    assert.ok(list.text.includes(created.accessKey), 'the list shows the access key');
    assert.ok(!list.text.includes(created.secretKey), 'the list never shows the secret');
    assert.ok(list.text.includes('Shop &lt;script&gt;alert(1)&lt;/script&gt;'), 'the label is escaped');
    assert.ok(!list.text.includes('<script>alert(1)'), 'no injected script');
    assert.ok(list.text.includes('takes effect in'), 'the new key counts down');

    const early = await call(created);
    assert.equal(early.body.code, '301', `not active yet: ${early.text}`);
    gw.clock.advance(DELAY_MS + 1);
    const ok = await call(created);
    assert.equal(ok.body.code, '200', `active: ${ok.text}`);
  });

  it('edits a key: the whitelist is enforced after the restarted activation delay', async () => {
    const before = await keyOf(created.accessKey);
    assert.ok(before, 'the key exists');
    gw.clock.advance(5_000);
    const editedFrom = gw.clock.now();
    const saved = await a.post(`/console/keys/${created.accessKey}`, {
      label: 'Shop',
      permissions: ['all'],
      ipWhitelist: '10.9.8.7',
      debug: '1',
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 500));
    assert.equal(saved.location, `/console/keys/${created.accessKey}?done=saved`, 'back to the key page');
    const after = await keyOf(created.accessKey);
    assert.ok(after, 'the key still exists');
    assert.deepEqual(after.ipWhitelist, ['10.9.8.7'], 'the whitelist changed');
    assert.ok(
      after.activeAt > before.activeAt &&
        after.activeAt >= editedFrom + DELAY_MS &&
        after.activeAt <= gw.clock.now() + DELAY_MS,
      'the activation delay restarted',
    );

    const page = await a.get(saved.location);
    assert.equal(page.status, 200, 'the key page');
    assert.ok(
      page.text.includes('The activation delay restarted: the changes take effect in 90 s.'),
      'the notice says when it takes effect',
    );
    assert.ok(page.text.includes('value="10.9.8.7"'), 'the form is pre-filled');
    assert.ok(page.text.includes('Saving restarts the activation delay'), 'the form says saving restarts the delay');
    assert.ok(page.text.includes('data-confirm='), 'the delete form asks for confirmation');

    gw.clock.advance(DELAY_MS + 1);
    const refused = await call(created);
    assert.equal(refused.body.code, '301', `refused from 127.0.0.1: ${refused.text}`);
  });

  it('refuses an invalid whitelist or permissions with 400, naming the field, and changes nothing', async () => {
    const before = await keyOf(created.accessKey);
    const badWhitelist = await a.post(`/console/keys/${created.accessKey}`, {
      label: 'x',
      permissions: ['all'],
      ipWhitelist: '10.9.8.300',
      debug: '1',
    });
    assert.equal(badWhitelist.status, 400, 'bad whitelist');
    assert.ok(badWhitelist.text.includes('class="summary"'), 'an error summary');
    assert.ok(badWhitelist.text.includes('ipWhitelist'), 'the field is named');
    assert.match(
      badWhitelist.text,
      /id="ipWhitelist" name="ipWhitelist" value="10.9.8.300"[^>]*aria-invalid="true"/,
      'the field is marked and keeps its value',
    );

    const noPermission = await a.post(`/console/keys/${created.accessKey}`, { label: 'x', ipWhitelist: '0.0.0.0' });
    assert.equal(noPermission.status, 400, 'no permission');
    assert.ok(noPermission.text.includes('permissions'), 'the field is named');
    const bogus = await a.post(`/console/keys/${created.accessKey}`, {
      label: 'x',
      permissions: ['bogus'],
      ipWhitelist: '0.0.0.0',
    });
    assert.equal(bogus.status, 400, 'unknown permission');
    assert.ok(bogus.text.includes('ken.collection'), 'the allowed values are listed');
    const longLabel = await a.post(`/console/keys/${created.accessKey}`, {
      label: 'x'.repeat(101),
      permissions: ['all'],
      ipWhitelist: '0.0.0.0',
    });
    assert.equal(longLabel.status, 400, 'label too long');
    assert.ok(longLabel.text.includes('label'), 'the label is named');
    assert.deepEqual(await keyOf(created.accessKey), before, 'the key did not change');

    const count = (await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).length;
    const badCreate = await a.post('/console/keys', { label: 'y', permissions: ['all'], ipWhitelist: 'not-an-ip' });
    assert.equal(badCreate.status, 400, 'bad create');
    assert.ok(badCreate.text.includes('ipWhitelist'), 'the field is named');
    assert.ok(!badCreate.text.includes('new-secret-key'), 'no key shown');
    assert.equal((await gw.gateway.merchants.listApiKeys(merchantA.merchantId)).length, count, 'nothing created');
  });

  it("answers 404 for another merchant's key on GET and every POST", async () => {
    const theirs = created.accessKey;
    const before = await keyOf(theirs);
    assert.equal((await b.get(`/console/keys/${theirs}`)).status, 404, 'GET');
    assert.equal(
      (await b.post(`/console/keys/${theirs}`, { permissions: ['all'], ipWhitelist: '0.0.0.0' })).status,
      404,
      'edit',
    );
    assert.equal((await b.post(`/console/keys/${theirs}/enabled`, { enabled: '0' })).status, 404, 'disable');
    assert.equal((await b.post(`/console/keys/${theirs}/delete`, {})).status, 404, 'delete');
    assert.equal((await a.get('/console/keys/AKunknown')).status, 404, 'unknown key');
    assert.deepEqual(await keyOf(theirs), before, 'the key did not change');
    const list = await b.get('/console/keys');
    assert.ok(!list.text.includes(theirs), "another merchant's key is not listed");
  });

  it('disables and enables a key', async () => {
    const disabled = await a.post(`/console/keys/${created.accessKey}/enabled`, { enabled: '0' });
    assert.equal(disabled.status, 303, 'disabled');
    assert.equal((await keyOf(created.accessKey))?.status, 'disabled', 'status disabled');
    const page = await a.get(disabled.location ?? '');
    assert.ok(page.text.includes('The key is disabled'), 'notice');
    const bad = await a.post(`/console/keys/${created.accessKey}/enabled`, { enabled: 'yes' });
    assert.equal(bad.status, 400, 'enabled must be 1 or 0');
    const enabled = await a.post(`/console/keys/${created.accessKey}/enabled`, { enabled: '1' });
    assert.equal(enabled.status, 303, 'enabled');
    assert.equal((await keyOf(created.accessKey))?.status, 'active', 'status active');
  });

  it('the signature tool gives the SDK signature, and refuses a key without 0.0.0.0', async () => {
    const form = await a.get('/console/signature');
    assert.equal(form.status, 200, 'the tool');
    assert.ok(
      form.text.includes('0.0.0.0') && form.text.includes('delete it once you are done'),
      'the page states the key rule',
    );
    assert.ok(form.text.includes(`value="${merchantA.credentials.accessKey}"`), 'the 0.0.0.0 key is offered');
    assert.ok(!form.text.includes(`value="${created.accessKey}"`), 'the 10.9.8.7 key is not offered');

    const timestamp = String(gw.clock.now());
    const nonce = randomUUID();
    const body = '{"currencyType":"BRL","amount":12.5,"payer":{"name":"Ana"},"empty":"","none":null}';
    const headers = { access_key: merchantA.credentials.accessKey, timestamp, nonce };
    const expectedString = stringToSign(JSON.parse(body) as Record<string, unknown>, headers);
    const expectedSign = signString(merchantA.credentials.secretKey, expectedString);
    const result = await a.post('/console/signature', {
      method: 'POST',
      params: body,
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
      sign: expectedSign,
    });
    assert.equal(result.status, 200, result.text.slice(0, 800));
    assert.equal(elementText(result.text, 'pre', 'string-to-sign'), expectedString, 'the string to sign');
    assert.equal(elementText(result.text, 'code', 'computed-sign'), expectedSign, 'the sign');
    assert.ok(result.text.includes('Your sign matches.'), 'the pasted sign matches');
    assert.ok(elementText(result.text, 'pre', 'signed-headers').includes(`sign: ${expectedSign}`), 'the headers');

    const wrong = await a.post('/console/signature', {
      method: 'POST',
      params: body,
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
      sign: 'A'.repeat(27) + '=',
    });
    assert.ok(wrong.text.includes('Your sign differs'), 'a different sign is reported');

    const malformed = await a.post('/console/signature', {
      method: 'POST',
      params: body,
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
      sign: 'not a sign',
    });
    assert.equal(malformed.status, 400, 'a malformed sign is a field error');
    assert.match(malformed.text, /id="sign"[^>]*aria-invalid="true"/, 'the sign field is marked');
    const signError = /<p class="error" id="sign-error">([^<]*)<\/p>/.exec(malformed.text)?.[1];
    assert.ok(
      signError !== undefined && unescapeHtml(signError).includes(`The sign these values give is ${expectedSign}.`),
      `the expected sign is shown next to the error: ${signError}`,
    );
    assert.equal(elementText(malformed.text, 'code', 'computed-sign'), expectedSign, 'and in the result');
    assert.equal(elementText(malformed.text, 'pre', 'string-to-sign'), expectedString, 'with the string to sign');

    const query = await a.post('/console/signature', {
      method: 'GET',
      params: '?b=2&a=x%20y',
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
    });
    assert.equal(query.status, 200, 'GET query');
    assert.equal(
      elementText(query.text, 'pre', 'string-to-sign'),
      stringToSign({ b: '2', a: 'x y' }, headers),
      'the GET string to sign',
    );

    const refused = await a.post('/console/signature', {
      method: 'POST',
      params: '{}',
      accessKey: created.accessKey,
      timestamp,
      nonce,
    });
    assert.equal(refused.status, 400, 'a key without 0.0.0.0 is refused');
    assert.ok(
      refused.text.includes('exactly 0.0.0.0') && refused.text.includes('href="#accessKey"'),
      'the key field is named',
    );
    assert.ok(!refused.text.includes('id="string-to-sign"'), 'no signature');
    const foreign = await a.post('/console/signature', {
      method: 'POST',
      params: '{}',
      accessKey: merchantB.credentials.accessKey,
      timestamp,
      nonce,
    });
    assert.equal(foreign.status, 400, "another merchant's key is refused");
    assert.ok(!foreign.text.includes('id="computed-sign"'), 'no signature with their key');

    const badJson = await a.post('/console/signature', {
      method: 'POST',
      params: '{"a":',
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
    });
    assert.equal(badJson.status, 400, 'bad JSON');
    assert.ok(
      badJson.text.includes('not valid JSON') && badJson.text.includes('aria-invalid="true"'),
      'the rule is named and the field marked',
    );
    const array = await a.post('/console/signature', {
      method: 'POST',
      params: '[1]',
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
    });
    assert.equal(array.status, 400, 'not an object');
    assert.ok(array.text.includes('must be a JSON object'), 'the rule is named');
    const duplicate = await a.post('/console/signature', {
      method: 'GET',
      params: 'a=1&a=2',
      accessKey: merchantA.credentials.accessKey,
      timestamp,
      nonce,
    });
    assert.equal(duplicate.status, 400, 'duplicate query parameter');
    assert.ok(duplicate.text.includes('the parameter a appears more than once'), 'the rule is named');
    const badStamp = await a.post('/console/signature', {
      method: 'POST',
      params: '{}',
      accessKey: merchantA.credentials.accessKey,
      timestamp: '123',
      nonce,
    });
    assert.equal(badStamp.status, 400, 'bad timestamp');
    assert.ok(badStamp.text.includes('13-digit'), 'the timestamp rule is named');
  });

  it('[recording, src/http/app.ts] the request log shows a failed debug-key call and its detail; another merchant gets 404', async () => {
    // The created key has debug mode on; a wrong sign is recorded with the string the server signed.
    gw.clock.advance(DELAY_MS + 1);
    const failed = await call(created, { headers: { sign: 'A'.repeat(27) + '=' } });
    assert.equal(failed.body.code, '307', `signature mismatch: ${failed.text}`);
    assert.ok(failed.requestId, 'a request id');
    const requestId = failed.requestId;
    assert.ok(
      failed.body.msgEn.includes(`/console/requests/${requestId}`) ||
        failed.body.msg.includes(`/console/requests/${requestId}`),
      `the error carries the log address: ${failed.text}`,
    );

    const list = await a.get('/console/requests');
    assert.equal(list.status, 200, 'the log');
    assert.ok(list.text.includes(`/console/requests/${requestId}`), 'the failed call is listed');
    const failedOnly = await a.get(`/console/requests?key=${created.accessKey}&failed=1`);
    assert.equal(failedOnly.status, 200, 'filtered');
    assert.ok(failedOnly.text.includes(requestId), 'listed under failed only');
    assert.equal((await a.get('/console/requests?key=AKnotmine')).status, 400, 'an unknown key filter is refused');

    const detail = await a.get(`/console/requests/${requestId}`);
    assert.equal(detail.status, 200, 'the detail');
    const signed = elementText(detail.text, 'pre', 'signed-string');
    assert.ok(
      signed.includes(`access_key=${created.accessKey}`) && signed.includes('currencyType=BRL'),
      `the signed string: ${signed}`,
    );
    assert.ok(detail.text.includes('href="/console/signature"'), 'a hint to the signature tool');
    assert.equal((await b.get(`/console/requests/${requestId}`)).status, 404, "another merchant's request");
    assert.ok(!(await b.get('/console/requests')).text.includes(requestId), 'not in their log');
  });

  it('deletes a key: listed as deleted with no actions, and refused by the API', async () => {
    const deleted = await a.post(`/console/keys/${created.accessKey}/delete`, {});
    assert.equal(deleted.status, 303, 'deleted');
    assert.equal(deleted.location, `/console/keys?deleted=${created.accessKey}`, 'back to the list');
    const list = await a.get(deleted.location);
    assert.ok(list.text.includes('was deleted'), 'notice');
    assert.ok(list.text.includes('badge">deleted<'), 'listed as deleted');
    assert.ok(!list.text.includes(`href="/console/keys/${created.accessKey}"`), 'no actions on a deleted key');
    const page = await a.get(`/console/keys/${created.accessKey}`);
    assert.equal(page.status, 200, 'a deleted key can be viewed');
    assert.ok(!page.text.includes(`action="/console/keys/${created.accessKey}/delete"`), 'no forms');
    assert.equal(
      (await a.post(`/console/keys/${created.accessKey}`, { permissions: ['all'], ipWhitelist: '0.0.0.0' })).status,
      409,
      'a deleted key cannot change',
    );
    const refused = await call(created);
    assert.equal(refused.body.code, '301', `a deleted key is refused: ${refused.text}`);
  });
});
