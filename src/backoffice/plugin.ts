/**
 * The back office at /backoffice: the payment company's staff pages, served by every node
 * (BACKOFFICE_ENABLED=false turns them off). Server-rendered in the operator's language (English,
 * Portuguese, Spanish), behind the operators' sign-in with its second factor; every page is seen and
 * every action taken under the operator's role from the one permission table, the actions through
 * the admin routes themselves (so they are audited alike).
 */
import type { FastifyInstance } from 'fastify';
import { useFormParser } from '../console/router.js';
import { registerAuditPages } from './audit-pages.js';
import { registerMerchantPages } from './merchant-pages.js';
import { registerMoneyPages } from './money-pages.js';
import { registerOperatorPages } from './operator-pages.js';
import { registerOrderPages } from './order-pages.js';
import { registerQueuePages } from './queue-pages.js';
import { BackofficeRouter } from './router.js';
import type { BackofficeServices } from './services.js';
import { registerSignInPages } from './signin-pages.js';
import { registerSystemPages } from './system-pages.js';
import { registerTodayPage } from './today-page.js';

export type { BackofficeServices } from './services.js';

export async function registerBackoffice(parent: FastifyInstance, deps: BackofficeServices): Promise<void> {
  await parent.register(
    async (scope) => {
      useFormParser(scope);
      const routerDeps = {
        signIn: deps.operatorSignIn,
        admin: deps.admin,
        clock: deps.clock,
        publicBaseUrl: deps.config.publicBaseUrl,
      };
      const router = new BackofficeRouter(scope, routerDeps);
      registerSignInPages(scope, router, routerDeps);
      registerTodayPage(router, deps);
      registerOrderPages(router, deps);
      registerQueuePages(router, deps);
      registerMerchantPages(router, deps);
      registerMoneyPages(router, deps);
      registerOperatorPages(router);
      registerAuditPages(router, deps);
      registerSystemPages(router, deps);
    },
    { prefix: '/backoffice' },
  );
}
