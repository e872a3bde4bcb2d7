import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { base32nopad } from '@scure/base';
import {
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  SIGN_IN_FAILURES_PER_EMAIL,
  SIGN_IN_WINDOW_MS,
} from '../src/console/accounts.js';
import { hotp } from '../src/console/totp.js';
import { consoleSignIn, createConsoleUser, hiddenCsrf } from './support/console.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

/** RFC 6238 TOTP written out here (independently of the server's), 6 digits, 30 s. */
function totp(secretBase32: string, at: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const mac = createHmac('sha1', base32nopad.decode(secretBase32)).update(counter).digest();
  const offset = (mac.at(-1) ?? 0) & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

async function signInForm(gw: TestGateway, email: string, password: string, headers: Record<string, string> = {}) {
  const form = await fetch(new URL('/console/sign-in', gw.url));
  const cookie = (form.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const csrf = hiddenCsrf(await form.text()) ?? '';
  const response = await fetch(new URL('/console/sign-in', gw.url), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  return {
    status: response.status,
    text: await response.text(),
    headers: response.headers,
    location: response.headers.get('location'),
  };
}

describe('console: TOTP (RFC 6238)', () => {
  it('reproduces the RFC 4226 / 6238 SHA-1 test vectors', () => {
    const secret = Buffer.from('12345678901234567890');
    // RFC 4226 appendix D (6 digits) and RFC 6238 appendix B (8 digits, T = 59 s and 1111111109 s).
    assert.equal(hotp(secret, 0n), '755224', 'HOTP counter 0');
    assert.equal(hotp(secret, 9n), '520489', 'HOTP counter 9');
    assert.equal(hotp(secret, 1n, 8), '94287082', 'TOTP at 59 s');
    assert.equal(hotp(secret, 37037036n, 8), '07081804', 'TOTP at 1111111109 s');
  });
});

describe('console: sign-in and sessions', () => {
  let gw: TestGateway;
  let merchantId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ merchantId } = await gw.merchantWithKey());
  });
  after(() => gw.close());

  it('makes console users through the admin API, with rules named', async () => {
    const ok = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
      email: 'Owner@Example.com',
      password: 'long enough password',
      name: 'Owner',
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.email, 'owner@example.com');
    assert.equal(ok.body.totpEnabled, false);
    const again = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
      email: 'owner@example.com',
      password: 'long enough password',
    });
    assert.equal(again.status, 409, 'an e-mail address signs in to one account');
    const short = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
      email: 'x@example.com',
      password: 'short',
    });
    assert.equal(short.status, 400);
    assert.match(short.body.error.message, /password/, JSON.stringify(short.body));
    const bad = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
      email: 'not-an-address',
      password: 'long enough password',
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /email/, JSON.stringify(bad.body));
    const unknown = await gw.admin('POST', '/admin/v1/merchants/mch_nope/users', {
      email: 'y@example.com',
      password: 'long enough password',
    });
    assert.equal(unknown.status, 404);
    const list = await gw.admin('GET', `/admin/v1/merchants/${merchantId}/users`);
    assert.ok(
      list.body.users.some((u: { email: string }) => u.email === 'owner@example.com'),
      'listed',
    );
  });

  it('lets the operator set a forgotten password and remove a user; both end the user’s sessions', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const session = await consoleSignIn(gw, merchantId, user);
    const { merchantId: otherMerchant } = await gw.merchantWithKey();
    const path = `/admin/v1/merchants/${merchantId}/users/${user.userId}`;
    assert.equal(
      (
        await gw.admin('PUT', `/admin/v1/merchants/${otherMerchant}/users/${user.userId}/password`, {
          password: 'a fresh long password',
        })
      ).status,
      404,
      'not through another merchant',
    );
    assert.equal((await gw.admin('PUT', `${path}/password`, { password: 'short' })).status, 400);
    const reset = await gw.admin('PUT', `${path}/password`, { password: 'a fresh long password' });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.equal((await session.get('/console')).status, 303, 'the old session ended');
    assert.equal((await signInForm(gw, user.email, user.password)).status, 401, 'the old password is refused');
    const again = await consoleSignIn(gw, merchantId, { ...user, password: 'a fresh long password' });
    assert.equal(
      (await gw.admin('DELETE', `/admin/v1/merchants/${otherMerchant}/users/${user.userId}`)).status,
      404,
      'not through another merchant',
    );
    const removed = await gw.admin('DELETE', path);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal((await again.get('/console')).status, 303, 'the session ended with the user');
    assert.equal((await signInForm(gw, user.email, 'a fresh long password')).status, 401, 'the user is gone');
    assert.equal((await gw.admin('DELETE', path)).status, 404, 'gone for good');
  });

  it('signs in with a cookie that is HttpOnly, SameSite=Lax and scoped to /console', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const result = await signInForm(gw, user.email, user.password);
    assert.equal(result.status, 303, result.text);
    assert.equal(result.location, '/console');
    const cookie = result.headers.getSetCookie().find((c) => c.startsWith('cashgate_session='));
    assert.ok(cookie !== undefined, 'session cookie set');
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\/console/);
    assert.doesNotMatch(cookie, /Secure/, 'not Secure over plain http');
  });

  it('refuses a wrong password without saying which part was wrong', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const wrong = await signInForm(gw, user.email, 'not the password at all');
    const unknown = await signInForm(gw, 'nobody@example.com', 'not the password at all');
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.match(wrong.text, /e-mail or the password is wrong/);
    assert.match(unknown.text, /e-mail or the password is wrong/);
  });

  it('needs the sign-in form’s CSRF token, and refuses a form from another origin', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const response = await fetch(new URL('/console/sign-in', gw.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: user.email, password: user.password }).toString(),
    });
    assert.equal(response.status, 403, 'no token');
    const crossSite = await signInForm(gw, user.email, user.password, { origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403, 'another origin');
  });

  it('rate-limits failed sign-ins per e-mail address, even with the right password afterwards', async () => {
    const user = await createConsoleUser(gw, merchantId);
    for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL; i += 1) {
      assert.equal((await signInForm(gw, user.email, `wrong password ${i}`)).status, 401);
    }
    const locked = await signInForm(gw, user.email, user.password);
    assert.equal(locked.status, 429, 'locked');
    assert.match(locked.text, /Too many failed sign-ins/);
    assert.ok(Number(locked.headers.get('retry-after')) > 0, 'Retry-After');
    gw.clock.advance(SIGN_IN_WINDOW_MS + 1000);
    assert.equal((await signInForm(gw, user.email, user.password)).status, 303, 'open again once the window moved on');
  });

  it('counts sign-in attempts that race each other: at most the limit get a password check', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => signInForm(gw, user.email, `racing wrong password ${i}`)),
    );
    const checked = results.filter((r) => r.status === 401).length;
    assert.ok(checked <= SIGN_IN_FAILURES_PER_EMAIL, `${checked} attempts were checked`);
    assert.equal(results.filter((r) => r.status === 429).length, 12 - checked, 'the rest were refused');
    gw.clock.advance(SIGN_IN_WINDOW_MS + 1000);
  });

  it('ends a session after 30 minutes idle, and after its lifetime even when active', async () => {
    const client = await consoleSignIn(gw, merchantId);
    gw.clock.advance(SESSION_IDLE_MS - 60_000);
    assert.equal((await client.get('/console/account')).status, 200, 'still on');
    gw.clock.advance(SESSION_IDLE_MS - 60_000);
    assert.equal((await client.get('/console/account')).status, 200, 'a request restarts the idle time');
    gw.clock.advance(SESSION_IDLE_MS + 1);
    const idle = await client.get('/console/account');
    assert.equal(idle.status, 303, 'idle too long');
    assert.equal(idle.location, `/console/sign-in?next=${encodeURIComponent('/console/account')}`);

    const busy = await consoleSignIn(gw, merchantId);
    for (let spent = 0; spent < SESSION_LIFETIME_MS; spent += SESSION_IDLE_MS / 2) {
      gw.clock.advance(SESSION_IDLE_MS / 2);
      await busy.get('/console');
    }
    assert.equal((await busy.get('/console')).status, 303, 'past its lifetime');
  });

  it('signs out: the cookie no longer opens anything', async () => {
    const client = await consoleSignIn(gw, merchantId);
    const cookie = client.cookie;
    const out = await client.post('/console/sign-out', {});
    assert.equal(out.status, 303);
    assert.equal(out.location, '/console/sign-in?signed-out=1');
    const reuse = await fetch(new URL('/console', gw.url), { redirect: 'manual', headers: { cookie } });
    assert.equal(reuse.status, 303, 'the old cookie is dead');
  });

  it('requires the session’s CSRF token on every form', async () => {
    const client = await consoleSignIn(gw, merchantId);
    assert.equal(
      (await client.post('/console/language', { lang: 'es', back: '/console' }, { csrf: null })).status,
      403,
      'missing',
    );
    assert.equal(
      (await client.post('/console/language', { lang: 'es', back: '/console' }, { csrf: 'x'.repeat(43) })).status,
      403,
      'wrong',
    );
    const crossSite = await client.post(
      '/console/language',
      { lang: 'es', back: '/console' },
      { headers: { origin: 'https://evil.example' } },
    );
    assert.equal(crossSite.status, 403, 'another origin');
    assert.match((await client.get('/console')).text, /<html lang="en"/, 'nothing changed');
    const other = await consoleSignIn(gw, merchantId);
    assert.equal(
      (await client.post('/console/language', { lang: 'es', back: '/console' }, { csrf: other.csrf })).status,
      403,
      'another session’s token',
    );
  });

  it('switches language and keeps it for the user', async () => {
    const client = await consoleSignIn(gw, merchantId);
    const switched = await client.post('/console/language', { lang: 'pt-BR', back: '/console/account' });
    assert.equal(switched.status, 303);
    assert.equal(switched.location, '/console/account');
    const page = await client.get('/console/account');
    assert.match(page.text, /<html lang="pt-BR"/);
    assert.match(page.text, /Alterar senha/);
    const offsite = await client.post('/console/language', { lang: 'es', back: 'https://evil.example/' });
    assert.equal(offsite.location, '/console', 'only console paths are redirect targets');
  });

  it('changes the password: the old one stops working and other sessions end', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const first = await consoleSignIn(gw, merchantId, user);
    const second = await consoleSignIn(gw, merchantId, user);
    const wrong = await first.post('/console/account/password', {
      currentPassword: 'not it at all!',
      newPassword: 'a brand new passphrase',
    });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /current password is wrong/);
    const short = await first.post('/console/account/password', {
      currentPassword: user.password,
      newPassword: 'short',
    });
    assert.equal(short.status, 400);
    assert.match(short.text, /at least 12 characters/);
    const changed = await first.post('/console/account/password', {
      currentPassword: user.password,
      newPassword: 'a brand new passphrase',
    });
    assert.equal(changed.status, 303);
    assert.equal((await first.get('/console')).status, 200, 'this session stays');
    assert.equal((await second.get('/console')).status, 303, 'the other session ended');
    assert.equal((await signInForm(gw, user.email, user.password)).status, 401, 'old password refused');
    assert.equal((await signInForm(gw, user.email, 'a brand new passphrase')).status, 303, 'new password works');
  });

  it('counts wrong current passwords inside a session against the sign-in limit', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const client = await consoleSignIn(gw, merchantId, user);
    for (let i = 0; i < SIGN_IN_FAILURES_PER_EMAIL; i += 1) {
      assert.equal(
        (
          await client.post('/console/account/password', {
            currentPassword: `guess number ${i}`,
            newPassword: 'another long passphrase',
          })
        ).status,
        400,
      );
    }
    const locked = await client.post('/console/account/password', {
      currentPassword: user.password,
      newPassword: 'another long passphrase',
    });
    assert.equal(locked.status, 429, 'locked even with the right password');
    assert.match(locked.text, /Too many wrong passwords/);
    gw.clock.advance(SIGN_IN_WINDOW_MS + 1000);
  });

  it('turns on TOTP and then asks for a code at sign-in; a code is good once', async () => {
    const user = await createConsoleUser(gw, merchantId);
    const client = await consoleSignIn(gw, merchantId, user);
    assert.equal((await client.post('/console/account/totp/start', {})).status, 303);
    const enrol = await client.get('/console/account');
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(enrol.text)?.[1]?.replace(/ /g, '');
    assert.ok(secret !== undefined, 'the setup key is shown');
    assert.match(enrol.text, /<svg[^>]*role="img"/, 'with its QR code');
    const bad = await client.post('/console/account/totp/confirm', {
      code: '000000' === totp(secret, gw.clock.now()) ? '111111' : '000000',
    });
    assert.equal(bad.status, 400);
    const on = await client.post('/console/account/totp/confirm', { code: totp(secret, gw.clock.now()) });
    assert.equal(on.status, 303);

    gw.clock.advance(60_000);
    const first = await signInForm(gw, user.email, user.password);
    assert.equal(first.status, 303);
    assert.equal(first.location, '/console/sign-in/totp');
    const cookie =
      (first.headers.getSetCookie().find((c) => c.startsWith('cashgate_session=')) ?? '').split(';')[0] ?? '';
    const halfOpen = await fetch(new URL('/console/account', gw.url), { redirect: 'manual', headers: { cookie } });
    assert.equal(halfOpen.headers.get('location'), '/console/sign-in/totp', 'nothing opens before the second factor');
    const page = await fetch(new URL('/console/sign-in/totp', gw.url), { headers: { cookie } });
    const csrf = hiddenCsrf(await page.text()) ?? '';
    const submit = (code: string) =>
      fetch(new URL('/console/sign-in/totp', gw.url), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, code }).toString(),
      });
    const code = totp(secret, gw.clock.now());
    assert.equal((await submit(code === '123456' ? '654321' : '123456')).status, 401, 'wrong code');
    const done = await submit(code);
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), '/console');
    const full = (done.headers.getSetCookie().find((c) => c.startsWith('cashgate_session=')) ?? '').split(';')[0] ?? '';
    assert.notEqual(full, cookie, 'a new session token after the second factor');
    assert.equal(
      (await fetch(new URL('/console/account', gw.url), { redirect: 'manual', headers: { cookie: full } })).status,
      200,
    );

    // The same code again, in a new sign-in: refused (a code is good once).
    const second = await signInForm(gw, user.email, user.password);
    const cookie2 =
      (second.headers.getSetCookie().find((c) => c.startsWith('cashgate_session=')) ?? '').split(';')[0] ?? '';
    const csrf2 =
      hiddenCsrf(
        await (await fetch(new URL('/console/sign-in/totp', gw.url), { headers: { cookie: cookie2 } })).text(),
      ) ?? '';
    const replay = await fetch(new URL('/console/sign-in/totp', gw.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie2 },
      body: new URLSearchParams({ _csrf: csrf2, code }).toString(),
    });
    assert.equal(replay.status, 401, 'replayed code refused');
  });

  it('marks the cookie Secure behind an https proxy', async () => {
    const proxied = await startTestGateway({ env: { TRUST_PROXY: 'true' } });
    try {
      const { merchantId: id } = await proxied.merchantWithKey();
      const user = await createConsoleUser(proxied, id);
      const result = await signInForm(proxied, user.email, user.password, { 'x-forwarded-proto': 'https' });
      assert.equal(result.status, 303, result.text);
      assert.match(result.headers.getSetCookie().find((c) => c.startsWith('cashgate_session=')) ?? '', /; Secure/);
    } finally {
      await proxied.close();
    }
  });
});

describe('console: pages without a session', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  it('sends every console page to the sign-in form, keeping where it was going', async () => {
    const response = await fetch(new URL('/console/account?from=mail', gw.url), { redirect: 'manual' });
    assert.equal(response.status, 303);
    assert.equal(
      response.headers.get('location'),
      `/console/sign-in?next=${encodeURIComponent('/console/account?from=mail')}`,
    );
  });

  it('serves the sign-in page with a strict CSP, in the browser’s language', async () => {
    const response = await fetch(new URL('/console/sign-in', gw.url), {
      headers: { 'accept-language': 'es-MX,es;q=0.9' },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    const text = await response.text();
    assert.match(text, /<html lang="es"/);
    assert.match(text, /Iniciar sesión/);
  });

  it('answers an unknown console path with the console’s 404 page', async () => {
    const response = await fetch(new URL('/console/no-such-page', gw.url));
    assert.equal(response.status, 404);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
  });
});
