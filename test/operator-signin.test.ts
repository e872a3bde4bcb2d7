import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { base32nopad } from '@scure/base';
import { verifyAuditLog } from '../src/access/audit-log.js';
import { hotp, totpStep } from '../src/console/totp.js';
import type { OperatorService } from '../src/operators/service.js';
import { LOCK_MS, SECOND_FACTOR_WINDOW_MS, SignInError, type OperatorSignIn } from '../src/operators/signin.js';
import { databaseLabel } from './support/database.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

const API = '/backoffice/api';
const COOKIE = 'cashgate_operator_session';
const PASSWORD = 'correct horse battery staple';
const RECOVERY_CODE = /^[2-9a-hjkmnp-z]{4}-[2-9a-hjkmnp-z]{4}-[2-9a-hjkmnp-z]{4}$/;

interface Answer {
  status: number;
  body: any;
  headers: Headers;
  setCookies: string[];
}

/** A browser of one operator: keeps the session cookie the routes set. */
class Browser {
  token: string | undefined;

  constructor(private readonly gw: () => TestGateway) {}

  async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const response = await fetch(new URL(`${API}${path}`, this.gw().url), {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(this.token !== undefined && { cookie: `${COOKIE}=${this.token}` }),
        'user-agent': 'operator-signin-test',
        ...headers,
      },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const match = new RegExp(`^${COOKIE}=([^;]*)`).exec(line);
      if (match !== null) this.token = match[1] === '' ? undefined : match[1];
    }
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? undefined : JSON.parse(text),
      headers: response.headers,
      setCookies,
    };
  }

  signIn(email: string, password = PASSWORD): Promise<Answer> {
    return this.call('POST', '/sign-in', { email, password });
  }
}

describe(`operator sign-in (${databaseLabel})`, () => {
  let gw: TestGateway;
  let operators: OperatorService;
  /** The same service as the gateway's (same store, master key and clock), for what HTTP does not show. */
  let service: OperatorSignIn;
  let n = 0;

  const browser = () => new Browser(() => gw);

  async function createOperator(role: string): Promise<{ operatorId: string; email: string }> {
    n += 1;
    const email = `${role}.${n}.${Date.now()}@ops.example`;
    const created = await operators.create({ email, role, name: `${role} ${n}`, password: PASSWORD });
    return { operatorId: created.operatorId, email };
  }

  function auditOf(actorId: string) {
    return gw.gateway.store.read
      .selectFrom('audit_log')
      .selectAll()
      .where('actor_id', '=', actorId)
      .orderBy('seq')
      .execute();
  }

  /** The current code of a TOTP secret, by the gateway's clock. */
  function totpCode(secret: string, offsetSteps = 0): string {
    return hotp(base32nopad.decode(secret), BigInt(totpStep(gw.clock.now()) + offsetSteps));
  }

  /** A finance operator with an authenticator: returns its secret, its recovery codes and the code used to enrol. */
  async function enrolledOperator(role = 'finance') {
    const op = await createOperator(role);
    const b = browser();
    assert.equal((await b.signIn(op.email)).body.stage, 'enrol');
    const enrol = await b.call('POST', '/two-factor/enrol', {});
    assert.equal(enrol.status, 200, JSON.stringify(enrol.body));
    const enrolCode = totpCode(enrol.body.secret);
    const confirmed = await b.call('POST', '/two-factor/enrol/confirm', { code: enrolCode });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    return {
      ...op,
      secret: enrol.body.secret as string,
      recoveryCodes: confirmed.body.recoveryCodes as string[],
      enrolCode,
    };
  }

  before(async () => {
    gw = await startTestGateway({ workers: false });
    // The gateway's own services: what the routes under test use.
    operators = gw.gateway.operators;
    service = gw.gateway.operatorSignIn;
  });

  after(async () => {
    await gw.close();
  });

  it('answers a wrong password and an unknown e-mail address alike, and audits both', async () => {
    const op = await createOperator('viewer');
    const wrong = await browser().signIn(op.email, 'not the password at all');
    const unknownEmail = `nobody.${Date.now()}@ops.example`;
    const unknown = await browser().signIn(unknownEmail.toUpperCase());
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.deepEqual(wrong.body, unknown.body);
    assert.equal(wrong.body.error.code, 'invalid_credentials');
    assert.match(wrong.body.error.message, /email and password/);
    assert.equal(wrong.setCookies.length, 0);

    const [failure] = await auditOf(op.operatorId);
    assert.equal(failure?.action, 'signin.failure');
    assert.equal(failure.actor_type, 'operator');
    assert.equal(failure.actor_email, op.email);
    assert.equal(failure.reason, 'wrong password');
    assert.equal(failure.target_id, op.operatorId);
    assert.equal(failure.user_agent, 'operator-signin-test');
    assert.ok(failure.request_id?.startsWith('req_'));
    assert.ok(failure.ip !== null);
    const unknownRows = await gw.gateway.store.read
      .selectFrom('audit_log')
      .selectAll()
      .where('actor_email', '=', unknownEmail)
      .execute();
    assert.equal(unknownRows.length, 1);
    const [unknownRow] = unknownRows;
    assert.equal(unknownRow?.actor_id, 'unknown');
    assert.equal(unknownRow.action, 'signin.failure');
    assert.equal(unknownRow.reason, 'unknown e-mail address');
  });

  it('signs a viewer without a second factor straight in, with a strict HttpOnly cookie', async () => {
    const op = await createOperator('viewer');
    const b = browser();
    const signedIn = await b.signIn(`  ${op.email.toUpperCase()} `);
    assert.equal(signedIn.status, 200);
    assert.deepEqual(signedIn.body, { stage: 'full' });
    const cookie = signedIn.setCookies.find((line) => line.startsWith(`${COOKIE}=`)) ?? '';
    assert.match(cookie, /; Path=\/backoffice(;|$)/);
    assert.match(cookie, /; HttpOnly(;|$)/);
    assert.match(cookie, /; SameSite=Strict(;|$)/);
    assert.doesNotMatch(cookie, /Secure/, 'plain http: not Secure');
    assert.match(b.token ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(signedIn.headers.get('cache-control'), 'no-store');

    const session = await b.call('GET', '/session');
    assert.equal(session.status, 200);
    assert.equal(session.body.operatorId, op.operatorId);
    assert.equal(session.body.email, op.email);
    assert.equal(session.body.role, 'viewer');
    assert.equal(session.body.stage, 'full');
    const expiresIn = Date.parse(session.body.expiresAt) - gw.clock.now();
    assert.ok(expiresIn > 11.9 * 3600_000 && expiresIn <= 12 * 3600_000, `expires in ${expiresIn} ms`);

    // Only the token's hash is kept.
    const stored = await gw.gateway.store.read
      .selectFrom('operator_sessions')
      .select('id')
      .where('operator_id', '=', op.operatorId)
      .execute();
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0]?.id, b.token);
    assert.match(stored[0]?.id ?? '', /^[0-9a-f]{64}$/);

    const rows = await auditOf(op.operatorId);
    assert.deepEqual(
      rows.map((r) => r.action),
      ['signin.success'],
    );
    const operator = await operators.get(op.operatorId);
    assert.ok(operator?.last_sign_in_at !== null);
  });

  it('locks the account after five failures in a row, audits the lock, and lets the right password in once it passes', async () => {
    const op = await createOperator('viewer');
    const b = browser();
    for (let attempt = 1; attempt <= 4; attempt++) {
      const refused = await b.signIn(op.email, `wrong password ${attempt}`);
      assert.equal(refused.status, 401, `attempt ${attempt}`);
    }
    const fifth = await b.signIn(op.email, 'wrong password 5');
    assert.equal(fifth.status, 429);
    assert.equal(fifth.body.error.code, 'account_locked');
    assert.equal(fifth.body.error.retryAfter, LOCK_MS / 1000);
    assert.equal(fifth.headers.get('retry-after'), String(LOCK_MS / 1000));
    assert.match(fifth.body.error.message, /locked after 5 failed sign-in attempts/);
    assert.ok(Date.parse(fifth.body.error.unlocksAt) > gw.clock.now());

    // The right password is refused while the account is locked, with the same answer.
    gw.clock.advance(LOCK_MS - 60_000);
    const whileLocked = await b.signIn(op.email);
    assert.equal(whileLocked.status, 429);
    assert.equal(whileLocked.body.error.code, 'account_locked');
    const retryAfter = Number(whileLocked.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(b.token, undefined);

    gw.clock.advance(60_001);
    const afterLock = await b.signIn(op.email);
    assert.equal(afterLock.status, 200, JSON.stringify(afterLock.body));
    assert.equal(afterLock.body.stage, 'full');

    const rows = await auditOf(op.operatorId);
    assert.deepEqual(
      rows.map((r) => r.action),
      [
        'signin.failure',
        'signin.failure',
        'signin.failure',
        'signin.failure',
        'signin.failure',
        'signin.locked',
        'signin.failure',
        'signin.success',
      ],
    );
    const locked = rows[5];
    assert.equal(locked?.actor_email, op.email);
    assert.equal(locked.target_id, op.operatorId);
    assert.deepEqual(JSON.parse(locked.changes ?? 'null').before, { lockedUntil: null });
    assert.equal(rows[6]?.reason, 'account locked');
    assert.deepEqual(JSON.parse(rows[4]?.changes ?? 'null'), {
      before: { failedSignIns: 4 },
      after: { failedSignIns: 5 },
    });
    // The sign-in forgave the failures: the counter starts again.
    const row = await operators.get(op.operatorId);
    assert.equal(row?.failed_sign_ins, 0);
    assert.equal(row.locked_until, null);
  });

  it('counts wrong passwords sent at once each, and locks the account once', async () => {
    const op = await createOperator('viewer');
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => browser().signIn(op.email, `wrong password in parallel ${i}`)),
    );
    assert.ok(attempts.every((a) => a.status === 401 || a.status === 429));
    assert.ok(
      attempts.filter((a) => a.status === 429).length >= 4,
      'every attempt from the fifth on is refused as locked',
    );
    const rows = await auditOf(op.operatorId);
    assert.equal(rows.filter((r) => r.action === 'signin.failure').length, 8);
    assert.equal(rows.filter((r) => r.action === 'signin.locked').length, 1);
    assert.equal((await browser().signIn(op.email)).status, 429);
  });

  it('makes a finance operator without a second factor enrol, then asks for the code at every sign-in', async () => {
    const op = await createOperator('finance');
    const b = browser();
    const first = await b.signIn(op.email);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { stage: 'enrol' });
    const halfOpenToken = b.token;
    assert.equal((await b.call('GET', '/session')).body.stage, 'enrol');
    assert.equal((await auditOf(op.operatorId)).length, 0, 'no success until the session is full');

    const early = await b.call('POST', '/two-factor', { code: '123456' });
    assert.equal(early.status, 409);
    assert.equal(early.body.error.code, 'wrong_stage');

    const notBegun = await b.call('POST', '/two-factor/enrol/confirm', { code: '123456' });
    assert.equal(notBegun.status, 409);
    assert.equal(notBegun.body.error.code, 'no_pending_enrolment');

    const enrol = await b.call('POST', '/two-factor/enrol', {});
    assert.equal(enrol.status, 200);
    assert.match(enrol.body.secret, /^[A-Z2-7]{32}$/);
    assert.ok(enrol.body.otpauthUri.startsWith('otpauth://totp/'));
    assert.ok(enrol.body.otpauthUri.includes(`secret=${enrol.body.secret}`));
    const pending = await operators.get(op.operatorId);
    const sealed = pending?.totp_pending_sealed ?? '';
    assert.ok(sealed !== '' && !sealed.includes(enrol.body.secret), 'the pending secret is kept sealed');

    const wrong = await b.call('POST', '/two-factor/enrol/confirm', { code: totpCode(enrol.body.secret, 5) });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'invalid_code');
    assert.match(wrong.body.error.message, /^code: /);

    const enrolCode = totpCode(enrol.body.secret);
    const confirmed = await b.call('POST', '/two-factor/enrol/confirm', { code: enrolCode });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.equal(confirmed.body.stage, 'full');
    const codes: string[] = confirmed.body.recoveryCodes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const code of codes) assert.match(code, RECOVERY_CODE);
    assert.notEqual(b.token, halfOpenToken, 'a new token once the session is full');
    assert.equal((await b.call('GET', '/session')).body.stage, 'full');
    const stale = new Browser(() => gw);
    stale.token = halfOpenToken;
    assert.equal((await stale.call('GET', '/session')).status, 401);

    const stored = await gw.gateway.store.read
      .selectFrom('operator_recovery_codes')
      .select('code_hash')
      .where('operator_id', '=', op.operatorId)
      .execute();
    assert.equal(stored.length, 10);
    assert.ok(stored.every((r) => /^[0-9a-f]{64}$/.test(r.code_hash)));

    // A second sign-in asks for the code.
    const second = browser();
    assert.deepEqual((await second.signIn(op.email)).body, { stage: 'password' });
    assert.equal((await second.call('GET', '/session')).body.stage, 'password');
    assert.equal((await second.call('POST', '/two-factor/enrol', {})).status, 409, 'no enrolment half-way');

    // The code used to enrol is spent: replayed within its window, it is refused.
    const replay = await second.call('POST', '/two-factor', { code: enrolCode });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.error.code, 'invalid_code');

    gw.clock.advance(30_000);
    const code = totpCode(enrol.body.secret);
    const passed = await second.call('POST', '/two-factor', { code });
    assert.equal(passed.status, 200, JSON.stringify(passed.body));
    assert.deepEqual(passed.body, { stage: 'full' });
    assert.equal((await second.call('GET', '/session')).body.stage, 'full');

    // The same code again, on another sign-in, still within its window: refused.
    const third = browser();
    assert.equal((await third.signIn(op.email)).body.stage, 'password');
    const replayed = await third.call('POST', '/two-factor', { code });
    assert.equal(replayed.status, 401);
    assert.equal(replayed.body.error.code, 'invalid_code');

    const rows = await auditOf(op.operatorId);
    assert.deepEqual(
      rows.map((r) => `${r.action}${r.reason === null ? '' : ` (${r.reason})`}`),
      [
        'operator.totp.enrol',
        'signin.success',
        'signin.failure (code already used)',
        'signin.success',
        'signin.failure (code already used)',
      ],
    );
    assert.deepEqual(JSON.parse(rows[1]?.changes ?? 'null').after, { stage: 'full', factor: 'enrolment' });
    assert.deepEqual(JSON.parse(rows[3]?.changes ?? 'null').after, { stage: 'full', factor: 'totp' });
    assert.ok(rows.every((r) => r.actor_type === 'operator' && r.actor_email === op.email));
  });

  it('accepts a recovery code once and only once', async () => {
    const op = await enrolledOperator('admin');
    const [recoveryCode, otherCode] = op.recoveryCodes;
    assert.ok(recoveryCode !== undefined && otherCode !== undefined);

    const b = browser();
    assert.equal((await b.signIn(op.email)).body.stage, 'password');
    const both = await b.call('POST', '/two-factor', { code: '123456', recoveryCode });
    assert.equal(both.status, 400);
    assert.match(both.body.error.message, /code, recoveryCode: send exactly one/);
    // Typed in capitals and without dashes, it is the same code.
    const used = await b.call('POST', '/two-factor', { recoveryCode: recoveryCode.toUpperCase().replaceAll('-', '') });
    assert.equal(used.status, 200, JSON.stringify(used.body));
    assert.equal(used.body.stage, 'full');

    const again = browser();
    assert.equal((await again.signIn(op.email)).body.stage, 'password');
    const reused = await again.call('POST', '/two-factor', { recoveryCode });
    assert.equal(reused.status, 401);
    assert.equal(reused.body.error.code, 'invalid_code');
    assert.match(reused.body.error.message, /^recoveryCode: /);
    const other = await again.call('POST', '/two-factor', { recoveryCode: otherCode });
    assert.equal(other.status, 200);

    const rows = await auditOf(op.operatorId);
    const uses = rows.filter((r) => r.action === 'operator.recovery_code.use');
    assert.equal(uses.length, 2);
    assert.deepEqual(JSON.parse(uses[0]?.changes ?? 'null'), {
      before: { unusedRecoveryCodes: 10 },
      after: { unusedRecoveryCodes: 9 },
    });
    assert.deepEqual(
      rows.slice(2).map((r) => `${r.action}${r.reason === null ? '' : ` (${r.reason})`}`),
      [
        'operator.recovery_code.use',
        'signin.success',
        'signin.failure (wrong or used recovery code)',
        'operator.recovery_code.use',
        'signin.success',
      ],
    );
  });

  it('counts wrong codes like wrong passwords: five lock the account and end the half-open session', async () => {
    const op = await enrolledOperator('support');
    const b = browser();
    assert.equal((await b.signIn(op.email)).body.stage, 'password');
    for (let attempt = 1; attempt <= 4; attempt++) {
      const refused = await b.call('POST', '/two-factor', { code: totpCode(op.secret, 10 + attempt) });
      assert.equal(refused.status, 401, `attempt ${attempt}`);
    }
    const fifth = await b.call('POST', '/two-factor', { code: '000000' });
    assert.equal(fifth.status, 429);
    assert.equal(fifth.body.error.code, 'account_locked');
    assert.ok(Number(fifth.headers.get('retry-after')) > 0);
    assert.equal((await b.call('GET', '/session')).status, 401, 'the half-open session ended');
    assert.equal((await browser().signIn(op.email)).status, 429, 'the right password waits for the lock');

    const actions = (await auditOf(op.operatorId)).map((r) => r.action);
    assert.deepEqual(actions.slice(-7), [
      'signin.failure',
      'signin.failure',
      'signin.failure',
      'signin.failure',
      'signin.failure',
      'signin.locked',
      'signin.failure',
    ]);
  });

  it('refuses a disabled operator like a wrong password, and ends their sessions', async () => {
    const op = await createOperator('viewer');
    const b = browser();
    assert.equal((await b.signIn(op.email)).status, 200);
    await operators.setEnabled(op.email, false);
    assert.equal((await b.call('GET', '/session')).status, 401);
    assert.equal(await service.session(b.token ?? ''), undefined);

    const refused = await browser().signIn(op.email);
    const wrong = await browser().signIn(op.email, 'not the password at all');
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, wrong.body);
    const rows = await auditOf(op.operatorId);
    assert.deepEqual(
      rows.slice(-2).map((r) => `${r.action} (${r.reason})`),
      ['signin.failure (account disabled)', 'signin.failure (account disabled)'],
    );

    await operators.setEnabled(op.email, true);
    assert.equal((await browser().signIn(op.email)).status, 200);
  });

  it('signs out: the session ends, the cookie is cleared, the sign-out is audited', async () => {
    const op = await createOperator('auditor');
    const b = browser();
    assert.equal((await b.signIn(op.email)).body.stage, 'full');
    const token = b.token;
    const out = await b.call('POST', '/sign-out', {});
    assert.equal(out.status, 204);
    assert.ok(out.setCookies.some((line) => line.startsWith(`${COOKIE}=;`) && line.includes('Max-Age=0')));
    assert.equal(b.token, undefined);
    const stale = new Browser(() => gw);
    stale.token = token;
    const session = await stale.call('GET', '/session');
    assert.equal(session.status, 401);
    assert.equal(session.body.error.code, 'session_required');
    assert.equal((await stale.call('POST', '/sign-out', {})).status, 204, 'signing out twice is harmless');
    assert.deepEqual(
      (await auditOf(op.operatorId)).map((r) => r.action),
      ['signin.success', 'signout'],
    );
  });

  it('lets a viewer choose a second factor, and asks a role raised since for one', async () => {
    const viewer = await createOperator('viewer');
    const b = browser();
    assert.equal((await b.signIn(viewer.email)).body.stage, 'full');
    await operators.setRole(viewer.email, 'finance');
    assert.equal((await b.call('GET', '/session')).body.stage, 'enrol', 'a writing role must enrol first');
    const enrol = await b.call('POST', '/two-factor/enrol', {});
    const confirmed = await b.call('POST', '/two-factor/enrol/confirm', { code: totpCode(enrol.body.secret) });
    assert.equal(confirmed.status, 200);
    assert.equal((await b.call('GET', '/session')).body.stage, 'full');

    const optional = await createOperator('viewer');
    const v = browser();
    assert.equal((await v.signIn(optional.email)).body.stage, 'full');
    const token = v.token;
    const chosen = await v.call('POST', '/two-factor/enrol', {});
    const done = await v.call('POST', '/two-factor/enrol/confirm', { code: totpCode(chosen.body.secret) });
    assert.equal(done.status, 200);
    assert.equal(done.body.recoveryCodes.length, 10);
    assert.equal(v.token, token, 'a full session keeps its token');
    assert.equal((await browser().signIn(optional.email)).body.stage, 'password', 'from now on the code is asked');
  });

  it('ends a session that waits too long for its second factor', async () => {
    const op = await enrolledOperator('finance');
    const b = browser();
    assert.equal((await b.signIn(op.email)).body.stage, 'password');
    gw.clock.advance(SECOND_FACTOR_WINDOW_MS + 1);
    const late = await b.call('POST', '/two-factor', { code: totpCode(op.secret) });
    assert.equal(late.status, 401);
    assert.equal(late.body.error.code, 'session_required');
  });

  it('names the field and the rule of a bad request, and refuses what a browser could send cross-site', async () => {
    const b = browser();
    const missing = await b.call('POST', '/sign-in', { email: 'a@b.example' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'invalid_request');
    assert.match(missing.body.error.message, /password/);
    const unknownField = await b.call('POST', '/sign-in', { email: 'a@b.example', password: 'x', remember: true });
    assert.equal(unknownField.status, 400);
    assert.match(unknownField.body.error.message, /remember/);
    const tooLong = await b.call('POST', '/sign-in', { email: 'a@b.example', password: 'x'.repeat(201) });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body.error.message, /password/);

    const form = await b.call('POST', '/sign-in', 'email=a%40b.example&password=x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(form.status, 415);
    assert.equal(form.body.error.code, 'unsupported_media_type');
    const empty = await b.call('POST', '/sign-out', '', { 'content-type': 'application/json' });
    assert.equal(empty.status, 400);
    assert.match(empty.body.error.message, /\{\}/);
    const text = await b.call('POST', '/sign-out', '{}', { 'content-type': 'text/plain' });
    assert.equal(text.status, 415);
    const crossSite = await b.call(
      'POST',
      '/sign-in',
      { email: 'a@b.example', password: PASSWORD },
      { origin: 'https://evil.example' },
    );
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.body.error.code, 'cross_site_request');

    const noSession = await b.call('POST', '/two-factor', { code: '123456' });
    assert.equal(noSession.status, 401);
    assert.equal(noSession.body.error.code, 'session_required');
    assert.equal((await b.call('GET', '/session')).status, 401);
    const unknownRoute = await b.call('GET', '/nothing-here');
    assert.equal(unknownRoute.status, 404);
    assert.equal(unknownRoute.body.error.code, 'not_found');
  });

  it('refuses through the service what the routes refuse, with typed errors', async () => {
    const op = await createOperator('viewer');
    await assert.rejects(service.signIn(op.email, 'wrong password!!', {}), (error: unknown) => {
      assert.ok(error instanceof SignInError);
      assert.equal(error.code, 'invalid_credentials');
      return true;
    });
    const { sessionToken, stage } = await service.signIn(op.email, PASSWORD, {});
    assert.equal(stage, 'full');
    await assert.rejects(service.verifySecondFactor(sessionToken, { code: '123456' }), { code: 'wrong_stage' });
    await assert.rejects(service.beginEnrolment('not-a-token'), { code: 'session_required' });
    assert.equal((await service.session(sessionToken))?.operatorId, op.operatorId);
    await service.signOut(sessionToken);
    assert.equal(await service.session(sessionToken), undefined);
  });

  it('keeps the audit log chain whole', async () => {
    const verified = await verifyAuditLog(gw.gateway.store.read);
    assert.ok(verified.ok, JSON.stringify(verified));
    assert.ok(verified.entries > 40);
  });
});
