import { Type } from '@sinclair/typebox';
import { OperatorError } from '../admin/failures.js';
import type { Language } from '../http/language.js';
import { MerchantLanguage } from '../merchants/schemas.js';
import { ConsoleInputError, type ConsoleAccounts, type ConsoleUser } from './accounts.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';

/** The operator's actions on console users, shared by the admin API and the CLI (same checks, same errors). */

export const CreateConsoleUserBody = Type.Object(
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

export const PasswordBody = Type.Object(
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

function operatorInputError(error: ConsoleInputError, email: string): OperatorError {
  if (error.problem === 'taken') return new OperatorError({ kind: 'console_user_exists', email });
  return new OperatorError({
    kind: 'invalid_console_user',
    field: error.field,
    detail: PROBLEMS[error.problem] ?? error.problem,
  });
}

export async function createConsoleUser(
  accounts: ConsoleAccounts,
  merchantId: string,
  input: { email: string; password: string; name?: string | undefined; language?: Language | undefined },
): Promise<ConsoleUser> {
  try {
    return await accounts.createUser(merchantId, input);
  } catch (error) {
    if (!(error instanceof ConsoleInputError)) throw error;
    throw operatorInputError(error, input.email.trim().toLowerCase());
  }
}

export async function resetConsolePassword(
  accounts: ConsoleAccounts,
  merchantId: string,
  userId: string,
  password: string,
): Promise<ConsoleUser> {
  let user: ConsoleUser | undefined;
  try {
    user = await accounts.resetPassword({ merchantId, userId }, password);
  } catch (error) {
    if (!(error instanceof ConsoleInputError)) throw error;
    throw operatorInputError(error, '');
  }
  if (user === undefined) throw new OperatorError({ kind: 'console_user_not_found', userId });
  return user;
}

export async function deleteConsoleUser(
  accounts: ConsoleAccounts,
  merchantId: string,
  userId: string,
): Promise<ConsoleUser> {
  const user = await accounts.deleteUser(merchantId, userId);
  if (user === undefined) throw new OperatorError({ kind: 'console_user_not_found', userId });
  return user;
}
