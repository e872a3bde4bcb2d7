/**
 * An operator's browser on the back office's pages, without a browser: it keeps the cookies the
 * pages set, reads the CSRF token of a page's form, and signs in through the pages (password, then
 * the second factor or its enrolment) with real TOTP codes computed from the gateway's clock.
 */
import assert from 'node:assert/strict';
import { base32nopad } from '@scure/base';
import { hotp, totpStep } from '../../src/console/totp.js';
import type { TestGateway } from './gateway.js';

export const OPERATOR_PASSWORD = 'correct horse battery staple';

export interface TestOperator {
  operatorId: string;
  email: string;
  role: string;
  /** The authenticator secret once enrolled (Base32). */
  secret?: string;
}

let seq = 0;

/** An operator of `role` made through the gateway's own service (as `cashgate operator create` does). */
export async function createOperator(gw: TestGateway, role: string, name?: string): Promise<TestOperator> {
  seq += 1;
  const email = `${role}.${seq}.${Date.now()}@ops.example`;
  const created = await gw.gateway.operators.create({
    email,
    role,
    name: name ?? `${role[0]?.toUpperCase() ?? ''}${role.slice(1)} ${seq}`,
    password: OPERATOR_PASSWORD,
  });
  return { operatorId: created.operatorId, email, role };
}

/** The current TOTP code of a Base32 secret by the gateway's clock (`offsetSteps` 30-second steps away). */
export function totpCode(gw: TestGateway, secret: string, offsetSteps = 0): string {
  return hotp(base32nopad.decode(secret.replace(/\s+/g, '')), BigInt(totpStep(gw.clock.now()) + offsetSteps));
}

/** The value of a named hidden or text input on a page ('' when absent). */
export function inputValue(page: string, name: string): string {
  const tag = new RegExp(`<input[^>]*\\bname="${name}"[^>]*>`).exec(page)?.[0];
  return tag === undefined
    ? ''
    : (/\bvalue="([^"]*)"/.exec(tag)?.[1] ?? '').replace(/&amp;/g, '&').replace(/&quot;/g, '"');
}

export interface PageAnswer {
  status: number;
  text: string;
  location: string | null;
  headers: Headers;
}

export class BackofficeClient {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly gw: TestGateway,
    readonly userAgent = 'backoffice-test',
  ) {}

  #cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const match = /^([^=]+)=([^;]*)/.exec(line);
      if (match === null) continue;
      const [, name, value] = match as unknown as [string, string, string];
      if (value === '' || /Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async #request(path: string, init: { method: 'GET' } | { method: 'POST'; body: string }): Promise<PageAnswer> {
    const response = await fetch(new URL(path, this.gw.url), {
      ...init,
      redirect: 'manual',
      headers: {
        cookie: this.#cookieHeader(),
        'user-agent': this.userAgent,
        ...(init.method === 'POST' && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
    });
    this.#keep(response);
    return {
      status: response.status,
      text: await response.text(),
      location: response.headers.get('location'),
      headers: response.headers,
    };
  }

  get(path: string): Promise<PageAnswer> {
    return this.#request(path, { method: 'GET' });
  }

  /** Posts a form; `_csrf` is added from `csrfFrom` (a page's text) unless given in `fields`. */
  post(path: string, fields: Record<string, string>, csrfFrom?: string): Promise<PageAnswer> {
    const form = new URLSearchParams(fields);
    if (!form.has('_csrf') && csrfFrom !== undefined) form.set('_csrf', inputValue(csrfFrom, '_csrf'));
    return this.#request(path, { method: 'POST', body: form.toString() });
  }

  /** A page's form token: GETs `path` and reads its `_csrf` field. */
  async csrf(path = '/backoffice'): Promise<string> {
    const page = await this.get(path);
    const token = inputValue(page.text, '_csrf');
    assert.notEqual(token, '', `no _csrf field on ${path} (status ${page.status})`);
    return token;
  }

  /**
   * Signs `operator` in through the pages: password, then the second factor (enrolling it first
   * when the role must have one: the secret is kept on `operator`). The clock moves one TOTP step
   * before each code, so that two sign-ins of one operator never reuse a code.
   */
  async signIn(operator: TestOperator): Promise<void> {
    const form = await this.get('/backoffice/sign-in');
    const signedIn = await this.post(
      '/backoffice/sign-in',
      { email: operator.email, password: OPERATOR_PASSWORD, next: '/backoffice' },
      form.text,
    );
    assert.equal(signedIn.status, 303, signedIn.text.slice(0, 500));
    if (signedIn.location === '/backoffice') return;
    assert.equal(signedIn.location, '/backoffice/two-factor');
    const step = await this.get('/backoffice/two-factor');
    assert.equal(step.status, 200, step.text.slice(0, 500));
    if (operator.secret === undefined) {
      operator.secret =
        inputValue(step.text, 'secret-raw') || (/id="secret-raw" value="([A-Z2-7]+)"/.exec(step.text)?.[1] ?? '');
      assert.notEqual(operator.secret, '', 'the enrolment page shows the secret');
    }
    this.gw.clock.advance(30_000);
    const done = await this.post('/backoffice/two-factor', { code: totpCode(this.gw, operator.secret) }, step.text);
    assert.ok(done.status === 303 || done.status === 200, done.text.slice(0, 500));
    const home = await this.get('/backoffice');
    assert.notEqual(home.status, 303, `signed in (went to ${home.location ?? ''})`);
  }
}

/** The audit records of an action, newest first (the first page), through the admin API. */
export async function auditRecords(gw: TestGateway, action: string): Promise<any[]> {
  const answer = await gw.admin('GET', `/admin/v1/audit-log?action=${encodeURIComponent(action)}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.entries as any[];
}

/** A client signed in as a new operator of `role`. */
export async function signedInAs(
  gw: TestGateway,
  role: string,
): Promise<{ client: BackofficeClient; operator: TestOperator }> {
  const operator = await createOperator(gw, role);
  const client = new BackofficeClient(gw);
  await client.signIn(operator);
  return { client, operator };
}
