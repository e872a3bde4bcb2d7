/**
 * The merchant console at /console: server-rendered pages in the merchant's language, behind a
 * sign-in, every form protected against cross-site requests, every lookup scoped to the signed-in
 * user's merchant.
 */
import type { FastifyInstance } from 'fastify';
import type { Callbacks } from '../callbacks/module.js';
import type { Clock } from '../clock.js';
import type { LedgerService } from '../ledger/service.js';
import type { MerchantService } from '../merchants/service.js';
import type { OrderService } from '../orders/service.js';
import type { Store } from '../store/store.js';
import type { ConsoleAccounts } from './accounts.js';
import { registerAccountPages, registerOverviewPage, registerSignInPages } from './account-pages.js';
import { registerBalancePages } from './balance-pages.js';
import { registerCallbackPages } from './callback-pages.js';
import { registerKeyPages } from './keys-pages.js';
import { registerOrderPages } from './order-pages.js';
import { registerPixPages } from './pix-pages.js';
import type { RequestLog } from './request-log.js';
import { registerRequestPages } from './request-pages.js';
import { registerSignaturePages } from './signature-pages.js';
import { ConsoleRouter, useFormParser } from './router.js';

/** What the console's pages read and change. */
export interface ConsoleServices {
  store: Store;
  merchants: MerchantService;
  ledger: LedgerService;
  orders: OrderService;
  callbacks: Callbacks;
  requestLog: RequestLog;
  accounts: ConsoleAccounts;
  clock: Clock;
  /** Cashgate's public address (links to cashier pages and vouchers). */
  publicBaseUrl: string;
}

export async function registerConsole(parent: FastifyInstance, deps: ConsoleServices): Promise<void> {
  await parent.register(async (scope) => {
    useFormParser(scope);
    const router = new ConsoleRouter(scope, {
      accounts: deps.accounts,
      merchants: deps.merchants,
      clock: deps.clock,
      publicBaseUrl: deps.publicBaseUrl,
    });
    const pageDeps = { accounts: deps.accounts, now: () => deps.clock.now() };
    registerSignInPages(scope, router, pageDeps);
    registerAccountPages(router, pageDeps);
    registerOverviewPage(router, deps);
    registerKeyPages(router, deps);
    registerCallbackPages(router, deps);
    registerOrderPages(router, deps);
    registerPixPages(router, deps);
    registerBalancePages(router, deps);
    registerSignaturePages(router, deps);
    registerRequestPages(router, deps);
  });
}
