import assert from 'node:assert/strict';
import type { OrderRow } from '../../src/orders/queries.js';
import { signedCall, type TestGateway } from './gateway.js';

let seq = 0;

/** The payer's form posted to a cashier page (url-encoded, redirects not followed). */
export async function submitForm(
  gw: Pick<TestGateway, 'url'>,
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; text: string; location: string | null }> {
  const response = await fetch(new URL(path, gw.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: response.status, text: await response.text(), location: response.headers.get('location') };
}

/**
 * An aggregate cashier opened by the merchant (endpoint 19, signed) and chosen by the payer on its
 * form: the order it made and the path of its cashier page.
 */
export async function openAndChoose(
  gw: Pick<TestGateway, 'url' | 'clock' | 'gateway'>,
  credentials: { accessKey: string; secretKey: string },
  form: Record<string, string>,
  create: Record<string, unknown> = {},
): Promise<{ order: OrderRow; cashierPath: string }> {
  const created = await signedCall(
    gw.url,
    credentials,
    {
      path: '/api/v3/polymerize/createCollectingOrder',
      body: { externalOrderId: `chk-${Date.now()}-${++seq}`, ...create },
    },
    gw.clock.now(),
  );
  assert.equal(created.body.code, '200', created.body.msgEn);
  const chosen = await submitForm(gw, new URL(created.body.data as string).pathname, form);
  assert.equal(chosen.status, 303, chosen.text.slice(0, 800));
  const cashierPath = (chosen.location ?? '').split('?')[0] ?? '';
  const order = await gw.gateway.orders.findByCashier(cashierPath.replace('/cashier/', ''));
  assert.ok(order !== undefined, `an order behind ${cashierPath}`);
  return { order, cashierPath };
}

/** A merchant whose aggregate cashiers take pesos, its callbacks sent to `callbackUrl`. */
export async function mexicanMerchant(
  gw: Pick<TestGateway, 'admin' | 'merchantWithKey'>,
  callbackUrl: string,
): Promise<Awaited<ReturnType<TestGateway['merchantWithKey']>>> {
  const merchant = await gw.merchantWithKey();
  await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: callbackUrl });
  const set = await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/cashier`, { currency: 'MXN' });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  return merchant;
}
