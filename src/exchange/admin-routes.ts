import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import type { OrderService } from '../orders/service.js';
import { chainView, ChainViewSchema } from '../rails/chain/chain-view.js';
import type { Store } from '../store/store.js';
import { RATE_DECIMALS } from './amounts.js';
import type { OperatorRates } from './rates.js';

const TAG = 'Admin: exchange rates';
const Price = Type.String({
  maxLength: 40,
  description: `fiat per one token, plain decimal, at most ${RATE_DECIMALS} places, e.g. "5.4321"`,
});

export const RateView = Type.Object({
  currency: Type.String(),
  token: Type.String(),
  buy: Type.String({ description: 'what Cashgate pays for one token (token → fiat)' }),
  sell: Type.String({ description: 'what Cashgate asks for one token (fiat → token)' }),
  spreadBps: Type.Integer({ description: 'added to sell and taken off buy, in basis points' }),
  fiatToTokenRate: Type.String({ description: 'the rate a fiat → token order gets now' }),
  tokenToFiatRate: Type.String({ description: 'the rate a token → fiat order gets now' }),
  updatedAt: Type.Integer(),
});

/** Largest spread: 50 %. */
const MAX_SPREAD_BPS = 5_000;

/** The body of PUT /admin/v1/rates/{currency}/{token} (the CLI's `rate set` checks its input with it too). */
export const SetRateBody = Type.Object({
  buy: Price,
  sell: Price,
  spreadBps: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SPREAD_BPS })),
});

/** Operator routes: the prices the exchange quotes from. */
export function registerExchangeAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { rates: OperatorRates; orders: OrderService; store: Store },
): void {
  const { rates } = deps;
  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/rates/:currency/:token',
    tag: TAG,
    summary: 'Set the buy and sell prices of a token in a fiat currency',
    description:
      'New orders are priced from these at once; existing orders keep the rate they were created with. ' +
      'A fiat → token order gets sell raised by the spread (rounded up); a token → fiat order gets buy lowered by it (rounded down). buy may not exceed sell.',
    body: SetRateBody,
    response: RateView,
    handle: ({ params, body }) => rates.setPrices(params.currency ?? '', params.token ?? '', body),
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/rates',
    tag: TAG,
    summary: 'Every configured price, with the rates orders get now',
    response: Type.Object({ rates: Type.Array(RateView) }),
    handle: async () => ({ rates: await rates.list() }),
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/orders/:orderId/chain',
    tag: 'Admin: orders',
    summary: 'What happened on chain for an order: its token send and the deposits to its address',
    description:
      'For a fiat → token order under CHAIN_RAIL=live: the send (state, hot wallet, nonce, the transaction that decided, ' +
      'its block and confirmations, why it failed) and every transaction signed for it (a stuck send is replaced: each ' +
      'replacement is listed, with the fees it offered and what became of it). For a token → fiat order or a cashier USDT ' +
      'payment: every transfer the deposit watcher saw to its deposit address, seen (not yet final) or reported. ' +
      'Amounts are in the token’s base units, as decimal text; times in ms since the epoch. An order with neither answers send null and no deposits.',
    response: ChainViewSchema,
    handle: async ({ params }) => {
      const orderId = params.orderId ?? '';
      const order = await deps.orders.find(orderId);
      if (order === undefined) throw new OperatorError({ kind: 'order_not_found', orderId });
      return chainView(deps.store.read, orderId, order.rail_ref);
    },
  });
}
