import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { MerchantLanguage } from '../merchants/schemas.js';
import { ConsoleInputError, type ConsoleAccounts } from './accounts.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';

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

const CreateConsoleUserBody = Type.Object(
  {
    email: Type.String({
      minLength: 3,
      maxLength: 254,
      description: 'the login; unique across merchants (compared lower-cased)',
    }),
    password: Type.String({
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
      description: `at least ${PASSWORD_MIN_LENGTH} characters; stored as a scrypt hash`,
    }),
    name: Type.Optional(Type.String({ maxLength: 100 })),
    language: Type.Optional(MerchantLanguage),
  },
  { additionalProperties: false },
);

const PasswordBody = Type.Object(
  {
    password: Type.String({
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
      description: 'the new password; every session of the user ends',
    }),
  },
  { additionalProperties: false },
);

const PROBLEMS: Record<string, string> = {
  format: 'not an e-mail address',
  tooShort: `at least ${PASSWORD_MIN_LENGTH} characters`,
  tooLong: `at most ${PASSWORD_MAX_LENGTH} characters`,
};

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
    handle: async ({ params, body }) => {
      try {
        return await accounts.createUser(params.merchantId ?? '', body);
      } catch (error) {
        if (!(error instanceof ConsoleInputError)) throw error;
        if (error.problem === 'taken')
          throw new OperatorError({ kind: 'console_user_exists', email: body.email.trim().toLowerCase() });
        throw new OperatorError({
          kind: 'invalid_console_user',
          field: error.field,
          detail: PROBLEMS[error.problem] ?? error.problem,
        });
      }
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/merchants/:merchantId/users/:userId/password',
    tag: TAG,
    summary: "Set a console user's password (a user who forgot it); every session of the user ends",
    body: PasswordBody,
    response: ConsoleUserView,
    handle: async ({ params, body }) => {
      const userId = params.userId ?? '';
      const user = await accounts.resetPassword({ merchantId: params.merchantId ?? '', userId }, body.password);
      if (user === undefined) throw new OperatorError({ kind: 'console_user_not_found', userId });
      return user;
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'DELETE',
    path: '/admin/v1/merchants/:merchantId/users/:userId',
    tag: TAG,
    summary: 'Remove a console user (someone who left); their sessions end at once',
    response: ConsoleUserView,
    handle: async ({ params }) => {
      const userId = params.userId ?? '';
      const user = await accounts.deleteUser(params.merchantId ?? '', userId);
      if (user === undefined) throw new OperatorError({ kind: 'console_user_not_found', userId });
      return user;
    },
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
