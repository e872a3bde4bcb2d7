import type { Static, TSchema } from '@sinclair/typebox';
import {
  createConsoleUser,
  CreateConsoleUserBody,
  deleteConsoleUser,
  PasswordBody,
  resetConsolePassword,
} from '../console/operator-users.js';
import { SetRateBody } from '../exchange/admin-routes.js';
import { validateInput } from '../http/validation.js';
import { audit } from '../ledger/audit.js';
import { SetFeeBody } from '../ledger/admin-routes.js';
import { CallbackAddressBody, CreateApiKeyBody, CreateMerchantBody, EditApiKeyBody } from '../merchants/schemas.js';
import type { OperatorKeyView } from '../merchants/service.js';
import { AUDIT_CHECKS } from '../orders/audit.js';
import type { Services } from '../services.js';
import { isoTime, printJson, printTable, UsageError } from './output.js';

export type Options = Record<string, string | boolean | undefined>;

/** How a command's result is shown: JSON (always one document) or, for lists and the audit, text for people. */
export type Format = 'json' | 'text';

/** What a command prints and the exit code it ends with (0 unless said). */
export interface Outcome {
  json: unknown;
  /** The text form; commands without one refuse `--format text`. */
  text?: () => void;
  exitCode?: number;
  /** The command wrote its own output as it went (e.g. JSON lines); `json` is not printed. */
  printed?: boolean;
}

export interface OperatorCommand {
  /** Checks the command line before anything is opened (a usage error changes nothing). */
  prepare(values: Options): (services: Services) => Promise<Outcome>;
}

export function option(values: Options, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function required(values: Options, name: string, command: string): string {
  const value = option(values, name);
  if (value === undefined) throw new UsageError(`${command} needs --${name}`);
  return value;
}

/** A whole number as a number; anything else as written, for the schema to name the rule it breaks. */
function integerOption(value: string): number | string {
  return /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}

/** Applies the admin API's schema to CLI input, so both refuse the same things with the same words. */
function assertValid<T extends TSchema>(schema: T, input: unknown): asserts input is Static<T> {
  const error = validateInput(schema, input);
  if (error !== undefined) throw new UsageError(error.message, 'invalid_request');
}

function keyRows(keys: readonly OperatorKeyView[]): string[][] {
  return keys.map((k) => [
    k.accessKey,
    k.status,
    isoTime(k.activeAt),
    k.permissions.join(','),
    k.ipWhitelist.join(','),
    k.debug ? 'on' : 'off',
    k.label,
  ]);
}

const KEY_COLUMNS = ['ACCESS KEY', 'STATUS', 'ACTIVE AT', 'PERMISSIONS', 'IP WHITELIST', 'DEBUG', 'LABEL'];

/** A key command that changes one key: disable, enable, delete. */
function keyChange(
  command: string,
  change: (
    services: Services,
    merchantId: string,
    accessKey: string,
  ) => ReturnType<Services['merchants']['deleteApiKey']>,
): OperatorCommand {
  return {
    prepare(values) {
      const merchantId = required(values, 'merchant', command);
      const accessKey = required(values, 'key', command);
      return async (services) => ({
        json: services.merchants.asOperatorKey(await change(services, merchantId, accessKey)),
      });
    },
  };
}

/**
 * A password option: --password, or the environment variable `fallback` (kept out of `ps`):
 * CASHGATE_USER_PASSWORD for console users, CASHGATE_OPERATOR_PASSWORD for operators.
 */
export function password(values: Options, command: string, fallback = 'CASHGATE_USER_PASSWORD'): string {
  const value = option(values, 'password') ?? process.env[fallback];
  if (value === undefined) throw new UsageError(`${command} needs --password (or ${fallback})`);
  return value;
}

/** Every operator command (those that open the database, do one thing and exit), by its words. */
export const OPERATOR_COMMANDS: Record<string, OperatorCommand> = {
  'merchant create': {
    prepare(values) {
      const input: unknown = {
        name: required(values, 'name', 'merchant create'),
        language: option(values, 'language') ?? 'en',
      };
      assertValid(CreateMerchantBody, input);
      return async ({ merchants }) => ({ json: await merchants.createMerchant(input) });
    },
  },
  'merchant list': {
    prepare: () => async (services) => {
      const list = await services.merchants.listMerchants();
      return {
        json: list,
        text: () =>
          printTable(
            ['MERCHANT', 'NAME', 'LANGUAGE', 'CALLBACK URL', 'CREATED AT'],
            list.map((m) => [m.merchantId, m.name, m.language, m.callbackUrl ?? '-', isoTime(m.createdAt)]),
          ),
      };
    },
  },
  'merchant show': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'merchant show');
      return async ({ merchants }) => ({ json: await merchants.getMerchant(merchantId) });
    },
  },
  'callback set': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'callback set');
      const input: unknown = { url: required(values, 'url', 'callback set') };
      assertValid(CallbackAddressBody, input);
      return async ({ merchants }) => ({ json: await merchants.setCallbackUrl(merchantId, input.url) });
    },
  },
  'callback clear': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'callback clear');
      return async ({ merchants }) => ({ json: await merchants.setCallbackUrl(merchantId, null) });
    },
  },
  'callback show': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'callback show');
      return async ({ merchants }) => {
        const merchant = await merchants.getMerchant(merchantId);
        return { json: { merchantId: merchant.merchantId, callbackUrl: merchant.callbackUrl } };
      };
    },
  },
  'key create': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'key create');
      const input: unknown = {
        permissions: (option(values, 'permissions') ?? 'all').split(',').map((p) => p.trim()),
        ipWhitelist: option(values, 'ip-whitelist') ?? '0.0.0.0',
        debug: values.debug === true,
        ...(option(values, 'label') !== undefined && { label: option(values, 'label') }),
      };
      assertValid(CreateApiKeyBody, input);
      return async ({ merchants }) => ({ json: await merchants.createApiKey(merchantId, input) });
    },
  },
  'key list': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'key list');
      return async ({ merchants }) => {
        const keys = await merchants.listOperatorKeys(merchantId);
        return { json: keys, text: () => printTable(KEY_COLUMNS, keyRows(keys)) };
      };
    },
  },
  'key edit': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'key edit');
      const accessKey = required(values, 'key', 'key edit');
      if (values.debug === true && values['no-debug'] === true) {
        throw new UsageError('key edit takes --debug or --no-debug, not both');
      }
      const permissions = option(values, 'permissions');
      const input: unknown = {
        ...(permissions !== undefined && { permissions: permissions.split(',').map((p) => p.trim()) }),
        ...(option(values, 'ip-whitelist') !== undefined && { ipWhitelist: option(values, 'ip-whitelist') }),
        ...(values.debug === true && { debug: true }),
        ...(values['no-debug'] === true && { debug: false }),
        ...(option(values, 'label') !== undefined && { label: option(values, 'label') }),
      };
      assertValid(EditApiKeyBody, input);
      if (Object.keys(input).length === 0) {
        throw new UsageError(
          'key edit needs at least one of --permissions, --ip-whitelist, --label, --debug, --no-debug',
        );
      }
      return async ({ merchants }) => ({
        json: merchants.asOperatorKey(await merchants.editApiKey(merchantId, accessKey, input)),
      });
    },
  },
  'key disable': keyChange('key disable', ({ merchants }, m, k) => merchants.setApiKeyEnabled(m, k, false)),
  'key enable': keyChange('key enable', ({ merchants }, m, k) => merchants.setApiKeyEnabled(m, k, true)),
  'key delete': keyChange('key delete', ({ merchants }, m, k) => merchants.deleteApiKey(m, k)),
  'fee set': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'fee set');
      const channel = required(values, 'channel', 'fee set');
      const input: unknown = {
        percentBps: integerOption(required(values, 'percent-bps', 'fee set')),
        ...(option(values, 'fixed') !== undefined && { fixed: option(values, 'fixed') }),
        ...(option(values, 'minimum') !== undefined && { minimum: option(values, 'minimum') }),
        reason: required(values, 'reason', 'fee set'),
      };
      assertValid(SetFeeBody, input);
      return async ({ merchants, ledger }) => ({
        json: await ledger.setFee((await merchants.getMerchant(merchantId)).merchantId, channel, input),
      });
    },
  },
  'fee list': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'fee list');
      return async ({ merchants, ledger }) => {
        const fees = await ledger.fees((await merchants.getMerchant(merchantId)).merchantId);
        return {
          json: fees,
          text: () =>
            printTable(
              ['CHANNEL', 'CURRENCY', 'PERCENT BPS', 'FIXED', 'MINIMUM'],
              fees.map((f) => [f.channel, f.currency, String(f.percentBps), f.fixed, f.minimum]),
            ),
        };
      };
    },
  },
  'rate set': {
    prepare(values) {
      const currency = required(values, 'currency', 'rate set');
      const token = required(values, 'token', 'rate set');
      const spread = option(values, 'spread-bps');
      const input: unknown = {
        buy: required(values, 'buy', 'rate set'),
        sell: required(values, 'sell', 'rate set'),
        ...(spread !== undefined && { spreadBps: integerOption(spread) }),
      };
      assertValid(SetRateBody, input);
      return async ({ rates }) => ({ json: await rates.setPrices(currency, token, input) });
    },
  },
  'rate list': {
    prepare:
      () =>
      async ({ rates }) => {
        const list = await rates.list();
        return {
          json: list,
          text: () =>
            printTable(
              ['PAIR', 'BUY', 'SELL', 'SPREAD BPS', 'FIAT→TOKEN', 'TOKEN→FIAT', 'UPDATED AT'],
              list.map((r) => [
                `${r.currency}/${r.token}`,
                r.buy,
                r.sell,
                String(r.spreadBps),
                r.fiatToTokenRate,
                r.tokenToFiatRate,
                isoTime(r.updatedAt),
              ]),
            ),
        };
      },
  },
  'user create': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'user create');
      const input: unknown = {
        email: required(values, 'email', 'user create'),
        password: password(values, 'user create'),
        ...(option(values, 'name') !== undefined && { name: option(values, 'name') }),
        ...(option(values, 'language') !== undefined && { language: option(values, 'language') }),
      };
      assertValid(CreateConsoleUserBody, input);
      return async ({ consoleAccounts }) => ({ json: await createConsoleUser(consoleAccounts, merchantId, input) });
    },
  },
  'user list': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'user list');
      return async ({ consoleAccounts }) => {
        const users = await consoleAccounts.listUsers(merchantId);
        return {
          json: users,
          text: () =>
            printTable(
              ['USER', 'E-MAIL', 'NAME', 'LANGUAGE', 'TOTP', 'CREATED AT'],
              users.map((u) => [
                u.userId,
                u.email,
                u.name,
                u.language,
                u.totpEnabled ? 'on' : 'off',
                isoTime(u.createdAt),
              ]),
            ),
        };
      };
    },
  },
  'user password': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'user password');
      const userId = required(values, 'user', 'user password');
      const input: unknown = { password: password(values, 'user password') };
      assertValid(PasswordBody, input);
      return async ({ consoleAccounts }) => ({
        json: await resetConsolePassword(consoleAccounts, merchantId, userId, input.password),
      });
    },
  },
  'user delete': {
    prepare(values) {
      const merchantId = required(values, 'merchant', 'user delete');
      const userId = required(values, 'user', 'user delete');
      return async ({ consoleAccounts }) => ({ json: await deleteConsoleUser(consoleAccounts, merchantId, userId) });
    },
  },
  audit: {
    prepare:
      () =>
      async ({ store }) => {
        const results = await audit(store.read, AUDIT_CHECKS);
        const breaches = results.reduce((sum, r) => sum + r.breaches.length, 0);
        return {
          json: {
            sound: breaches === 0,
            breaches,
            checks: results.map((r) => ({
              check: r.check,
              ok: r.breaches.length === 0,
              breaches: r.breaches.map((b) => b.detail),
            })),
          },
          text: () => {
            for (const result of results) {
              process.stdout.write(`${result.breaches.length === 0 ? 'ok     ' : 'BREACH '} ${result.check}\n`);
              for (const breach of result.breaches) process.stdout.write(`         ${breach.detail}\n`);
            }
            process.stdout.write(breaches === 0 ? 'the ledger is sound\n' : `${breaches} breach(es)\n`);
          },
          exitCode: breaches === 0 ? 0 : 1,
        };
      },
  },
};

/** The commands with a text form for people (`--format text`). */
export const TEXT_COMMANDS: ReadonlySet<string> = new Set([
  'merchant list',
  'key list',
  'fee list',
  'rate list',
  'user list',
  'audit',
  'operator list',
]);

/** Reads --format: json (the default) or, for the commands that have one, text. */
export function formatOf(command: string, values: Options): Format {
  const format = option(values, 'format') ?? 'json';
  if (format !== 'json' && format !== 'text') throw new UsageError('--format must be json or text');
  if (format === 'text' && !TEXT_COMMANDS.has(command)) {
    throw new UsageError(`${command} prints JSON only; --format text is for ${[...TEXT_COMMANDS].join(', ')}`);
  }
  return format;
}

/** Prints an outcome in the format asked for (checked by formatOf before the command ran). */
export function show(outcome: Outcome, format: Format): void {
  if (outcome.printed === true) return;
  if (format === 'text' && outcome.text !== undefined) outcome.text();
  else printJson(outcome.json);
}
