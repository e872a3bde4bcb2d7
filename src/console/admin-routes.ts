import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { MerchantLanguage } from '../merchants/schemas.js';
import type { ConsoleAccounts } from './accounts.js';
import {
  createConsoleUser,
  CreateConsoleUserBody,
  deleteConsoleUser,
  PasswordBody,
  resetConsolePassword,
} from './operator-users.js';

const TAG = 'Admin: console users';

const ConsoleUserView = Type.Object({
  userId: Type.String(),
  merchantId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  language: MerchantLanguage,
  totpEnabled: Type.Boolean({ description: 'two-step verification is on (the user turns it on in the console)' }),
  createdAt: Type.Integer({ description: 'Unix milliseconds' }),
});

/** Operator routes: the people of a merchant who sign in to the console. */
export function registerConsoleAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  accounts: ConsoleAccounts,
): void {
  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/merchants/:merchantId/users',
    tag: TAG,
    summary: 'Create a console user for a merchant',
    description:
      'The user signs in at /console with this e-mail address and password, and can change the password and turn on TOTP there.',
    body: CreateConsoleUserBody,
    response: ConsoleUserView,
    handle: ({ params, body }) => createConsoleUser(accounts, params.merchantId ?? '', body),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/merchants/:merchantId/users/:userId/password',
    tag: TAG,
    summary: "Set a console user's password (a user who forgot it); every session of the user ends",
    body: PasswordBody,
    response: ConsoleUserView,
    handle: ({ params, body }) =>
      resetConsolePassword(accounts, params.merchantId ?? '', params.userId ?? '', body.password),
  });

  registerAdminRoute(scope, catalog, {
    method: 'DELETE',
    path: '/admin/v1/merchants/:merchantId/users/:userId',
    tag: TAG,
    summary: 'Remove a console user (someone who left); their sessions end at once',
    response: ConsoleUserView,
    handle: ({ params }) => deleteConsoleUser(accounts, params.merchantId ?? '', params.userId ?? ''),
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/merchants/:merchantId/users',
    tag: TAG,
    summary: "A merchant's console users",
    response: Type.Object({ users: Type.Array(ConsoleUserView) }),
    handle: async ({ params }) => ({ users: await accounts.listUsers(params.merchantId ?? '') }),
  });
}
