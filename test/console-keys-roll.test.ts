import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dateTime } from '../src/console/i18n.js';
import { LAST_USE_PRECISION_MS } from '../src/merchants/service.js';
import { consoleSignIn, type ConsoleClient } from './support/console.js';
import { databaseLabel } from './support/database.js';
import { signedCall, startTestGateway, type TestGateway } from './support/gateway.js';

const BANKS = '/api/v3/bra/query/bank';
const DELAY_MS = 90_000;
const HOUR_MS = 3_600_000;

function inputValue(page: string, id: string): string {
  const match = new RegExp(`id="${id}" value="([^"]*)"`).exec(page);
  assert.ok(match, `no input #${id} on the page`);
  return match[1] ?? '';
}

describe(`console: API key permissions in words, last use and key roll (${databaseLabel})`, () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ env: { KEY_ACTIVATION_DELAY_MS: String(DELAY_MS) } });
  });
  after(async () => {
    await gw.close();
  });

  const call = (credentials: { accessKey: string; secretKey: string }) =>
    signedCall(gw.url, credentials, { path: BANKS, body: { currencyType: 'BRL' } }, gw.clock.now());
  const storedLastUse = async (accessKey: string): Promise<number | null> =>
    (
      await gw.gateway.store.read
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('access_key', '=', accessKey)
        .executeTakeFirstOrThrow()
    ).last_used_at;

  it('describes each permission in words, in the list, on the key page and in the form, in every language', async () => {
    const merchant = await gw.merchantWithKey({ permissions: ['bra.collection', 'query'] });
    const client = await consoleSignIn(gw, merchant.merchantId);
    const list = await client.get('/console/keys');
    assert.equal(list.status, 200, list.text.slice(0, 300));
    assert.ok(list.text.includes('Brazil collections, Queries'), 'the list names the permissions in words');
    const page = await client.get(`/console/keys/${merchant.credentials.accessKey}`);
    assert.ok(
      page.text.includes(
        '<strong>Brazil collections</strong> <span class="mono">(bra.collection)</span>: Ask payers in Brazil to pay by Pix (collection orders).',
      ),
      'the key page says what bra.collection lets the key do',
    );
    assert.ok(page.text.includes('Read orders, their vouchers and the list of banks.'), 'and what query does');
    assert.ok(
      page.text.includes('Send money out in Kenya (M-Pesa and bank transfers) from your balance.'),
      'the form describes the permissions it offers',
    );
    await client.post('/console/language', { lang: 'pt-BR', back: '/console/keys' });
    const pt = await client.get(`/console/keys/${merchant.credentials.accessKey}`);
    assert.ok(pt.text.includes('Recebimentos no Brasil'), 'in Portuguese');
    assert.ok(pt.text.includes('Pedir pagamentos por Pix a pagadores no Brasil'), 'with what it allows');
    await client.post('/console/language', { lang: 'es', back: '/console/keys' });
    const es = await client.get('/console/keys');
    assert.ok(es.text.includes('Cobros en Brasil, Consultas'), 'in Spanish');
  });

  it('shows "never", then the last use after an API call; writes it at most once per key per precision window', async () => {
    const merchant = await gw.merchantWithKey();
    const { accessKey } = merchant.credentials;
    const client: ConsoleClient = await consoleSignIn(gw, merchant.merchantId);
    const fresh = await client.get('/console/keys');
    assert.match(fresh.text, new RegExp(`${accessKey}[\\s\\S]*?<td>never</td>`), 'a key never used says "never"');
    assert.ok(fresh.text.includes('at most once every 5 minutes per key'), 'the list states the precision');

    // A request that fails authentication (a wrong secret) is not a use.
    const wrong = await call({ ...merchant.credentials, secretKey: '0'.repeat(64) });
    assert.equal(wrong.body.code, '307', `a wrongly signed call is refused: ${wrong.text}`);
    await gw.gateway.merchants.flushKeyUses();
    assert.equal(await storedLastUse(accessKey), null, 'a refused request is not written as a use');
    assert.match(
      (await client.get('/console/keys')).text,
      new RegExp(`${accessKey}[\\s\\S]*?<td>never</td>`),
      'nor shown',
    );

    const usedAt = gw.clock.now();
    assert.equal((await call(merchant.credentials)).body.code, '200', 'an API call');
    const seen = await client.get('/console/keys');
    const listed = new RegExp(
      `${accessKey}[\\s\\S]*?<td>([^<]*)</td>\\s*<td><a href="/console/keys/${accessKey}"`,
    ).exec(seen.text)?.[1];
    assert.ok(listed !== undefined && listed !== 'never', `the list shows a last use (${listed})`);
    assert.ok(Math.abs(Date.parse(listed) - usedAt) < 2_000, `the list shows the call's time (${listed})`);
    const lastUse = /<dt>Last used<\/dt><dd>([^<]*)</.exec((await client.get(`/console/keys/${accessKey}`)).text)?.[1];
    assert.ok(lastUse !== undefined && lastUse !== 'never', `the key page shows a last use (${lastUse})`);
    assert.ok(Math.abs(Date.parse(lastUse) - usedAt) < 2_000, `the last use is the call's time (${lastUse})`);

    // Durable: written in a batch, not by the request.
    await gw.gateway.merchants.flushKeyUses();
    const written = await storedLastUse(accessKey);
    assert.ok(written !== null && Math.abs(written - usedAt) < 2_000, 'the flush wrote the use');

    // More calls within the precision window write nothing more.
    gw.clock.advance(60_000);
    for (let i = 0; i < 3; i++) assert.equal((await call(merchant.credentials)).body.code, '200');
    await gw.gateway.merchants.flushKeyUses();
    assert.equal(await storedLastUse(accessKey), written, 'no write for uses within the precision window');

    // Past the window, the next call is written again.
    gw.clock.advance(LAST_USE_PRECISION_MS);
    const laterAt = gw.clock.now();
    assert.equal((await call(merchant.credentials)).body.code, '200');
    await gw.gateway.merchants.flushKeyUses();
    const later = await storedLastUse(accessKey);
    assert.ok(later !== null && later >= laterAt - 1_000 && later > written, 'a use past the window is written');
  });

  it('two rolls of one key at once (a double click): one succeeds, the other is refused, one new key', async () => {
    const merchant = await gw.merchantWithKey();
    const client = await consoleSignIn(gw, merchant.merchantId);
    const { accessKey } = merchant.credentials;
    const roll = () => client.post(`/console/keys/${accessKey}/roll`, { overlap: String(HOUR_MS) });
    const statuses = (await Promise.all([roll(), roll(), roll()])).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 409, 409], 'exactly one roll succeeds');
    const keys = await gw.gateway.merchants.listApiKeys(merchant.merchantId);
    assert.equal(keys.length, 2, 'the old key and one new key');
    const old = keys.find((k) => k.accessKey === accessKey);
    assert.equal(old?.replacedBy, keys.find((k) => k.accessKey !== accessKey)?.accessKey, 'replaced by that key');

    // Keeping the old key cancels its stop at once, with no new activation delay.
    const page = await client.get(`/console/keys/${accessKey}`);
    assert.ok(page.text.includes('Keep this key (cancel the stop)'), 'the rolled key offers to keep it');
    const kept = await client.post(`/console/keys/${accessKey}/enabled`, { enabled: '1' });
    assert.equal(kept.location, `/console/keys/${accessKey}?done=rollCancelled`, kept.text.slice(0, 200));
    assert.ok(
      (await client.get(kept.location)).text.includes('The scheduled stop is cancelled'),
      'the page says the stop is cancelled',
    );
    const after = await gw.gateway.merchants.findApiKey(merchant.merchantId, accessKey);
    assert.equal(after?.disableAt, null, 'no stop is scheduled any more');
    assert.equal((await call(merchant.credentials)).body.code, '200', 'the key works without a new delay');
    gw.clock.advance(DELAY_MS + HOUR_MS + 1_000);
    assert.equal((await call(merchant.credentials)).body.code, '200', 'and goes on working past the old stop time');
  });

  it('rolls a key: the new key (secret shown once) and the old one both work during the overlap, and the old one is refused after it', async () => {
    const merchant = await gw.merchantWithKey({ permissions: ['query', 'bra.collection'], ipWhitelist: '0.0.0.0' });
    const old = merchant.credentials;
    const client = await consoleSignIn(gw, merchant.merchantId);
    const other = await consoleSignIn(gw, (await gw.merchantWithKey()).merchantId);

    const page = await client.get(`/console/keys/${old.accessKey}`);
    assert.match(page.text, new RegExp(`action="/console/keys/${old.accessKey}/roll"`), 'the key page offers a roll');
    assert.ok(page.text.includes('<option value="3600000">1 hour</option>'), 'the overlap is chosen');
    assert.equal(
      (await other.post(`/console/keys/${old.accessKey}/roll`, { overlap: String(HOUR_MS) })).status,
      404,
      "another merchant's key is not found",
    );
    const bad = await client.post(`/console/keys/${old.accessKey}/roll`, { overlap: String(30 * 86_400_000) });
    assert.equal(bad.status, 400, 'an overlap over 7 days is refused');
    assert.match(bad.text, /id="overlap"[^>]*aria-invalid="true"/, 'the overlap field is marked');

    const rolledAt = gw.clock.now();
    const posted = await client.post(`/console/keys/${old.accessKey}/roll`, { overlap: String(HOUR_MS) });
    assert.equal(posted.status, 303, posted.text.slice(0, 300));
    const location = posted.location ?? '';
    const match = /^\/console\/keys\/(AK[0-9a-f]{32})\/created$/.exec(location);
    assert.ok(match !== null, `the roll answers with a redirect to the new key (${location})`);
    const created = await client.get(location);
    assert.equal(created.status, 200, created.text.slice(0, 300));
    const fresh = {
      accessKey: inputValue(created.text, 'new-access-key'),
      secretKey: inputValue(created.text, 'new-secret-key'),
    };
    assert.equal(fresh.accessKey, match[1], 'the new key is shown');
    assert.match(fresh.secretKey, /^[0-9a-f]{64}$/, 'with its secret, once');
    assert.ok(created.text.includes(`This key replaces ${old.accessKey}`), 'the page says which key it replaces');
    const reload = await client.get(location);
    assert.ok(!reload.text.includes(fresh.secretKey), 'a reload does not show the secret again');

    const keys = await gw.gateway.merchants.listApiKeys(merchant.merchantId);
    const oldView = keys.find((k) => k.accessKey === old.accessKey);
    const newView = keys.find((k) => k.accessKey === fresh.accessKey);
    assert.ok(oldView !== undefined && newView !== undefined, 'both keys are listed');
    assert.deepEqual(newView.permissions, ['query', 'bra.collection'], 'the new key has the old one’s permissions');
    assert.ok(
      newView.activeAt >= rolledAt + DELAY_MS && newView.activeAt <= gw.clock.now() + DELAY_MS,
      'the new key takes effect after the activation delay',
    );
    const disableAt = newView.activeAt + HOUR_MS;
    assert.equal(oldView.disableAt, disableAt, 'the old key stops an hour after the new one takes effect');
    assert.equal(oldView.replacedBy, fresh.accessKey, 'and names its replacement');

    const list = await client.get('/console/keys');
    assert.ok(list.text.includes(`stops ${dateTime('en', disableAt)}`), 'the list shows when the old key stops');
    assert.ok(
      list.text.includes(`pending until ${dateTime('en', newView.activeAt)}`),
      'the new key shows as pending with its activation time',
    );
    const again = await client.post(`/console/keys/${old.accessKey}/roll`, { overlap: String(HOUR_MS) });
    assert.equal(again.status, 409, 'a key being replaced cannot be rolled again');

    assert.equal((await call(old)).body.code, '200', 'the old key works while the new one waits');
    assert.equal((await call(fresh)).body.code, '301', 'the new key waits for its activation');
    gw.clock.advance(DELAY_MS + 1);
    assert.equal((await call(fresh)).body.code, '200', 'the new key works');
    assert.equal((await call(old)).body.code, '200', 'and so does the old one, during the overlap');
    gw.clock.advance(disableAt - gw.clock.now() - 1_000);
    assert.equal((await call(old)).body.code, '200', 'a second before the end, the old key still works');

    gw.clock.advance(1_001);
    const refused = await call(old);
    assert.equal(refused.body.code, '301', `after the overlap the old key is refused: ${refused.text}`);
    assert.match(refused.body.msgEn, /disabled/, refused.body.msgEn);
    assert.equal((await call(fresh)).body.code, '200', 'the new key goes on working');
    // The hour went by on the test clock: the console session ran out with it.
    const later = await consoleSignIn(gw, merchant.merchantId);
    const after = await later.get('/console/keys');
    assert.match(
      after.text,
      new RegExp(`${old.accessKey}[\\s\\S]*?badge bad">disabled<`),
      'the old key is listed as disabled',
    );
    const oldPage = await later.get(`/console/keys/${old.accessKey}`);
    assert.ok(oldPage.text.includes('Only an active key'), 'a disabled key offers no roll');
    const enabled = await later.post(`/console/keys/${old.accessKey}/enabled`, { enabled: '1' });
    assert.equal(enabled.status, 303, 'the old key can be enabled again');
    gw.clock.advance(DELAY_MS + 1);
    assert.equal((await call(old)).body.code, '200', 'enabled again, it works (no stale disable time)');
  });
});
