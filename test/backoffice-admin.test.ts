import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  auditRecords,
  BackofficeClient,
  createOperator,
  inputValue,
  signedInAs,
  totpCode,
} from './support/backoffice.js';
import { databaseLabel } from './support/database.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { maskedSettings } from '../src/backoffice/system-pages.js';

describe(`back office: sign-in, operators, audit log, system (${databaseLabel})`, () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  it('signs in with a password, enrols the second factor with a QR code and its Base32 secret, and refuses a wrong code', async () => {
    const operator = await createOperator(gw, 'finance');
    const client = new BackofficeClient(gw);
    const form = await client.get('/backoffice/sign-in');
    assert.equal(form.status, 200);
    assert.match(form.text, /name="email"/);
    assert.match(form.text, /name="password"/);
    const wrongPassword = await client.post(
      '/backoffice/sign-in',
      { email: operator.email, password: 'not the password at all' },
      form.text,
    );
    assert.equal(wrongPassword.status, 401);
    assert.match(wrongPassword.text, /E-mail address or password: they do not match an active operator/);
    const signedIn = await client.post(
      '/backoffice/sign-in',
      { email: operator.email, password: 'correct horse battery staple' },
      form.text,
    );
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.location, '/backoffice/two-factor');
    // Half-way through signing in, the pages are not open.
    assert.equal((await client.get('/backoffice/operators')).location, '/backoffice/two-factor');
    const enrol = await client.get('/backoffice/two-factor');
    assert.match(enrol.text, /<svg[^>]*>/, 'a QR code');
    const secret = /id="secret-raw" value="([A-Z2-7]+)"/.exec(enrol.text)?.[1] ?? '';
    assert.match(secret, /^[A-Z2-7]{16,}$/);
    assert.ok(
      enrol.text.includes(secret.replace(/(.{4})(?=.)/g, '$1 ')),
      'the secret in groups of four beside the QR code',
    );
    const wrong = await client.post('/backoffice/two-factor', { code: '000000' }, enrol.text);
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /Code: it is wrong, or it was used already/);
    assert.ok(wrong.text.includes(`value="${secret}"`), 'the page shown again keeps the secret already scanned');
    operator.secret = secret;
    gw.clock.advance(30_000);
    const confirmed = await client.post('/backoffice/two-factor', { code: totpCode(gw, secret) }, wrong.text);
    assert.equal(confirmed.status, 200);
    const codes = confirmed.text.match(/<code>[2-9a-hjkmnp-z]{4}-[2-9a-hjkmnp-z]{4}-[2-9a-hjkmnp-z]{4}<\/code>/g) ?? [];
    assert.equal(codes.length, 10, 'ten recovery codes, shown once');
    const today = await client.get('/backoffice');
    assert.equal(today.status, 200);
    assert.ok((await auditRecords(gw, 'operator.totp.enrol')).some((e) => e.actor.email === operator.email));
  });

  it('shows operators to an admin only, who adds one, changes a role, disables and enables, each audited', async () => {
    const { client: viewer } = await signedInAs(gw, 'viewer');
    const home = await viewer.get('/backoffice/system');
    assert.doesNotMatch(home.text, /href="\/backoffice\/operators"/, 'not in a viewer’s menu');
    assert.equal((await viewer.get('/backoffice/operators')).status, 403);
    const forged = await viewer.post(
      '/backoffice/operators',
      { email: 'forged@ops.example', role: 'admin', password: 'a long enough password' },
      home.text,
    );
    assert.equal(forged.status, 403);
    assert.match(forged.text, /lacks the permission operators\.write/);
    const denied = await auditRecords(gw, 'access.denied');
    assert.ok(
      denied.some((e) => e.target?.id === 'POST /backoffice/operators'),
      'the forged POST is recorded',
    );

    const { client: admin } = await signedInAs(gw, 'admin');
    const page = await admin.get('/backoffice/operators');
    const email = `new.${Date.now()}@ops.example`;
    const created = await admin.post(
      '/backoffice/operators',
      { email, name: 'New Person', role: 'support', password: 'a long enough password' },
      page.text,
    );
    assert.equal(created.status, 303);
    const listed = await admin.get(created.location ?? '');
    assert.match(listed.text, /The operator was added/);
    assert.ok(listed.text.includes(email));
    const operatorId = new RegExp(`href="/backoffice/operators/([^"]+)">New Person`).exec(listed.text)?.[1] ?? '';
    assert.notEqual(operatorId, '');

    const detail = await admin.get(`/backoffice/operators/${operatorId}`);
    const short = await admin.post(
      `/backoffice/operators/${operatorId}/role`,
      { role: 'finance', reason: '' },
      detail.text,
    );
    assert.equal(short.status, 400, 'a reason is required');
    assert.match(short.text, /reason/);
    const role = await admin.post(
      `/backoffice/operators/${operatorId}/role`,
      { role: 'finance', reason: 'moved to treasury' },
      detail.text,
    );
    assert.equal(role.status, 303);
    const disabled = await admin.post(
      `/backoffice/operators/${operatorId}/disable`,
      { reason: 'left the company' },
      detail.text,
    );
    assert.equal(disabled.status, 303);
    const after = await admin.get(`/backoffice/operators/${operatorId}`);
    assert.match(after.text, /disabled/);
    assert.match(after.text, /action="\/backoffice\/operators\/[^"]+\/enable"/);
    const roleRecord = (await auditRecords(gw, 'operator.role.change')).find((e) => e.target?.id === operatorId);
    assert.equal(roleRecord?.reason, 'moved to treasury');
    assert.ok((await auditRecords(gw, 'operator.disable')).some((e) => e.target?.id === operatorId));
  });

  it('lets an auditor filter the audit log, verify its chain and export it (the export recorded), and keeps a viewer out', async () => {
    const { client: viewer } = await signedInAs(gw, 'viewer');
    const refused = await viewer.get('/backoffice/audit');
    assert.equal(refused.status, 403);
    assert.doesNotMatch(
      (await viewer.get('/backoffice/operators')).text,
      /href="\/backoffice\/audit"/,
      'not in a viewer’s menu',
    );

    const { client: auditor, operator } = await signedInAs(gw, 'auditor');
    const filtered = await auditor.get('/backoffice/audit?action=operator.role.change');
    assert.equal(filtered.status, 200);
    assert.match(filtered.text, /<code>operator\.role\.change<\/code>/);
    assert.doesNotMatch(filtered.text, /<code>signin\.success<\/code>/);
    assert.match(filtered.text, /moved to treasury/);
    const verified = await auditor.post('/backoffice/audit/verify', {}, filtered.text);
    assert.equal(verified.status, 200);
    assert.match(verified.text, /The chain is whole: \d+ records/);
    const exported = await auditor.get('/backoffice/audit.jsonl');
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const lines = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number });
    assert.ok(lines.length > 5);
    assert.ok(
      lines.every((l, i) => i === 0 || l.seq === (lines[i - 1]?.seq ?? 0) + 1),
      'oldest first, whole',
    );
    const record = (await auditRecords(gw, 'audit.export')).find((e) => e.actor.email === operator.email);
    assert.ok(record !== undefined, 'the export is an audited action');
    const bad = await auditor.get('/backoffice/audit?from=yesterday');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /from: must be an ISO 8601 date or date-time/);
  });

  it('masks every secret of the configuration: names that say so, PEM blocks, and URLs beyond their host', () => {
    const shown = new Map(
      maskedSettings({
        databaseUrl: 'postgres://cashgate:hunter2@db.internal:5432/cashgate?password=hunter2',
        publicBaseUrl: 'https://pay.example.com',
        tron: { apiUrl: 'https://api.trongrid.io/v1/KEY123', confirmations: 19 },
        brazil: {
          apiPix: { keyPem: 'ignored by name', certPem: 'x', clientId: 'id-1' },
          note: '-----BEGIN PRIVATE KEY-----\nMIIE',
        },
        masterKey: Buffer.alloc(32),
        adminRootTokenDisabled: false,
        approvalThreshold: new Map([['BRL', 100n]]),
        unset: undefined,
      }),
    );
    assert.equal(shown.get('databaseUrl'), 'postgres://db.internal:5432/••••');
    assert.equal(shown.get('publicBaseUrl'), 'https://pay.example.com');
    assert.equal(shown.get('tron.apiUrl'), 'https://api.trongrid.io/••••');
    assert.equal(shown.get('tron.confirmations'), '19');
    assert.equal(shown.get('brazil.apiPix.keyPem'), '••••');
    assert.equal(shown.get('brazil.apiPix.certPem'), '••••');
    assert.equal(shown.get('brazil.apiPix.clientId'), 'id-1');
    assert.equal(shown.get('brazil.note'), '••••');
    assert.equal(shown.get('masterKey'), '••••');
    assert.equal(shown.get('adminRootTokenDisabled'), 'false');
    assert.equal(shown.get('approvalThreshold[BRL]'), '100');
    assert.equal(shown.get('unset'), '—');
    assert.ok(![...shown.values()].some((v) => v.includes('hunter2') || v.includes('KEY123')));
  });

  it('shows the nodes, the workers’ last runs, the migrations and the configuration with every secret masked', async () => {
    const { client } = await signedInAs(gw, 'viewer');
    const page = await client.get('/backoffice/system');
    assert.equal(page.status, 200);
    assert.match(page.text, /this node/);
    assert.match(page.text, /<code>0021_mexico<\/code>/);
    assert.match(page.text, /<code>pix\.key<\/code><\/td><td><code>••••<\/code>/);
    assert.match(page.text, /<code>adminRootTokenDisabled<\/code><\/td><td><code>false<\/code>/);
    assert.match(page.text, /<code>adminToken<\/code><\/td><td><code>••••<\/code>/);
    assert.ok(!page.text.includes('test-admin-token'), 'the root token is never shown');
    assert.ok(!page.text.includes('PRIVATE KEY'), 'no PEM block');
    assert.match(page.text, /<code>expiry<\/code>/, 'a worker that ran');
    assert.equal(inputValue(page.text, '_csrf').length > 10, true);
  });
});
