/** A console session of a new user of the merchant, made with the admin API and signed in through the real form: its cookie. */
export async function consoleCookie(baseUrl: string, merchantId: string, adminToken: string): Promise<string> {
  const user = { email: `bench-${process.pid}-${Date.now()}@example.com`, password: 'bench console password' };
  const created = await fetch(new URL(`/admin/v1/merchants/${merchantId}/users`, baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  if (created.status !== 200) throw new Error(`creating the console user failed: ${await created.text()}`);
  const form = await fetch(new URL('/console/sign-in', baseUrl));
  const formCookie = (form.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const signedIn = await fetch(new URL('/console/sign-in', baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({ _csrf: csrf, ...user }).toString(),
  });
  const session = signedIn.headers.getSetCookie().find((c) => c.startsWith('cashgate_session='));
  if (session === undefined) throw new Error(`console sign-in failed: ${signedIn.status}`);
  return session.split(';')[0] ?? '';
}

/**
 * A back-office session of a new viewer (an operator role that signs in without a second factor),
 * made with the admin API and signed in through the sign-in route: its cookie.
 */
export async function backofficeCookie(baseUrl: string, adminToken: string): Promise<string> {
  const operator = {
    email: `bench-${process.pid}-${Date.now()}@ops.example`,
    role: 'viewer',
    name: 'Bench Viewer',
    password: 'bench back office password',
  };
  const created = await fetch(new URL('/admin/v1/operators', baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(operator),
  });
  if (created.status !== 200) throw new Error(`creating the operator failed: ${await created.text()}`);
  const signedIn = await fetch(new URL('/backoffice/api/sign-in', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: operator.email, password: operator.password }),
  });
  const session = signedIn.headers.getSetCookie().find((c) => c.startsWith('cashgate_operator_session='));
  if (signedIn.status !== 200 || session === undefined)
    throw new Error(`back-office sign-in failed: ${signedIn.status}`);
  return session.split(';')[0] ?? '';
}
