import assert from 'node:assert/strict';
import type { TestGateway } from './gateway.js';
import type { CallbackReceiver } from './receiver.js';

/** The environment every CHAIN_RAIL=live suite shares: quick polls, callbacks to a local receiver. */
export const LIVE_CHAIN_ENV = {
  CHAIN_RAIL: 'live',
  CHAIN_POLL_INTERVAL_MS: '100',
  CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
  CALLBACK_POLL_INTERVAL_MS: '50',
  RAIL_POLL_INTERVAL_MS: '100',
} as const;

/**
 * A merchant of a live-chain suite: its callbacks to `receiver`, USDT at 5.00 BRL both ways, a BRL
 * float of `float`; with its BRL balance and the operator's chain view of an order.
 */
export async function liveChainMerchant(gw: TestGateway, receiver: CallbackReceiver, float: string) {
  const merchant = await gw.merchantWithKey();
  await gw.admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/callback`, { url: receiver.url });
  assert.equal((await gw.admin('PUT', '/admin/v1/rates/BRL/USDT', { buy: '5.00', sell: '5.00' })).status, 200);
  await gw.admin('POST', `/admin/v1/merchants/${merchant.merchantId}/balance-adjustments`, {
    currency: 'BRL',
    amount: float,
    reason: 'test funds',
  });
  return {
    merchant,
    balance: async () => {
      const response = await gw.admin('GET', `/admin/v1/merchants/${merchant.merchantId}/balances`);
      return response.body.balances.find((b: { currency: string }) => b.currency === 'BRL') as {
        available: string;
        frozen: string;
      };
    },
    chainView: async (orderId: string) => (await gw.admin('GET', `/admin/v1/orders/${orderId}/chain`)).body,
  };
}
