import { randomBytes } from 'node:crypto';
import type { TestGateway } from './gateway.js';

export interface ConsolePage {
  status: number;
  text: string;
  headers: Headers;
  /** The Location header of a redirect, as a path. */
  location: string | undefined;
}

/** A browser-like HTTP client of the console: it keeps the session cookie and fills in the CSRF field. */
export interface ConsoleClient {
  email: string;
  password: string;
  userId: string;
  merchantId: string;
  /** The session's CSRF token (read from a page once signed in). */
  csrf: string;
  cookie: string;
  get(path: string): Promise<ConsolePage>;
  /** Posts a url-encoded form with the session's `_csrf` unless `csrf` is given (null leaves it out). */
  post(
    path: string,
    fields: Record<string, string | string[]>,
    options?: { csrf?: string | null; headers?: Record<string, string> },
  ): Promise<ConsolePage>;
}

export const TEST_PASSWORD = 'correct horse battery staple';

/** Makes a console user of the merchant through the admin API. */
export async function createConsoleUser(
  gw: TestGateway,
  merchantId: string,
  input: { email?: string; password?: string; name?: string; language?: string } = {},
) {
  const email = input.email ?? `user-${randomBytes(4).toString('hex')}@example.com`;
  const password = input.password ?? TEST_PASSWORD;
  const created = await gw.admin('POST', `/admin/v1/merchants/${merchantId}/users`, {
    email,
    password,
    ...(input.name !== undefined && { name: input.name }),
    ...(input.language !== undefined && { language: input.language }),
  });
  if (created.status !== 200) throw new Error(`console user create failed: ${JSON.stringify(created.body)}`);
  return { email, password, userId: created.body.userId as string };
}

export function hiddenCsrf(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
}

function cookiesOf(headers: Headers): Record<string, string> {
  const jar: Record<string, string> = {};
  for (const line of headers.getSetCookie()) {
    const [pair = ''] = line.split(';');
    const eq = pair.indexOf('=');
    jar[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return jar;
}

async function request(
  gw: TestGateway,
  path: string,
  init: RequestInit,
  jar: Record<string, string>,
): Promise<ConsolePage> {
  const cookie = Object.entries(jar)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
  const response = await fetch(new URL(path, gw.url), {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), ...(cookie !== '' && { cookie }) },
  });
  Object.assign(jar, cookiesOf(response.headers));
  const location = response.headers.get('location') ?? undefined;
  return { status: response.status, text: await response.text(), headers: response.headers, location };
}

function formBody(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

/** Signs in through the real sign-in form (a new user of the merchant unless `user` is given). */
export async function consoleSignIn(
  gw: TestGateway,
  merchantId: string,
  user?: { email: string; password: string; userId: string },
): Promise<ConsoleClient> {
  const who = user ?? (await createConsoleUser(gw, merchantId));
  const jar: Record<string, string> = {};
  const form = await request(gw, '/console/sign-in', { method: 'GET' }, jar);
  const signInCsrf = hiddenCsrf(form.text);
  const signedIn = await request(
    gw,
    '/console/sign-in',
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: formBody({ _csrf: signInCsrf ?? '', email: who.email, password: who.password }),
    },
    jar,
  );
  if (signedIn.status !== 303 || signedIn.location !== '/console')
    throw new Error(`sign-in failed: ${signedIn.status} ${signedIn.text.slice(0, 300)}`);
  const overview = await request(gw, '/console', { method: 'GET' }, jar);
  const csrf = hiddenCsrf(overview.text);
  if (csrf === undefined) throw new Error('no CSRF token on the overview page');
  const client: ConsoleClient = {
    ...who,
    merchantId,
    csrf,
    get cookie() {
      return `cashgate_session=${jar.cashgate_session ?? ''}`;
    },
    get: (path) => request(gw, path, { method: 'GET' }, jar),
    post: (path, fields, options = {}) => {
      const token = options.csrf === undefined ? csrf : options.csrf;
      return request(
        gw,
        path,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
          body: formBody({ ...(token !== null && { _csrf: token }), ...fields }),
        },
        jar,
      );
    },
  };
  return client;
}
