import { auditJsonLines, parseIsoTime, verifyAuditLog } from '../access/audit-log.js';
import type { Services } from '../services.js';
import { printTable, UsageError } from './output.js';
import { option, password, required, type OperatorCommand, type Options } from './commands.js';

/** An ISO 8601 time option as Unix milliseconds. */
function timeOption(values: Options, name: string): number | undefined {
  const value = option(values, name);
  if (value === undefined) return undefined;
  const ms = parseIsoTime(value);
  if (ms === undefined) {
    throw new UsageError(
      `--${name} must be an ISO 8601 date or date-time, e.g. 2026-11-01T00:00:00Z`,
      'invalid_request',
    );
  }
  return ms;
}

function operatorChange(
  command: string,
  change: (services: Services, email: string) => ReturnType<Services['operators']['setEnabled']>,
): OperatorCommand {
  return {
    prepare(values) {
      const email = required(values, 'email', command);
      return async (services) => ({ json: await change(services, email) });
    },
  };
}

/** Operator accounts, their tokens, and the audit log. */
export const OPERATOR_ACCOUNT_COMMANDS: Record<string, OperatorCommand> = {
  'operator create': {
    prepare(values) {
      const input = {
        email: required(values, 'email', 'operator create'),
        role: required(values, 'role', 'operator create'),
        name: option(values, 'name'),
        password: password(values, 'operator create', 'CASHGATE_OPERATOR_PASSWORD'),
      };
      return async ({ operators }) => {
        const { operatorId, email, role } = await operators.create(input);
        return { json: { operatorId, email, role } };
      };
    },
  },
  'operator list': {
    prepare: () => async (services) => {
      const list = await services.operators.list();
      return {
        json: list,
        text: () =>
          printTable(
            ['OPERATOR', 'E-MAIL', 'NAME', 'ROLE', 'STATE', '2FA', 'LAST SIGN-IN'],
            list.map((o) => [
              o.operatorId,
              o.email,
              o.name,
              o.role,
              o.lockedUntil === null ? o.state : `${o.state} (locked)`,
              o.twoFactor ? 'on' : 'off',
              o.lastSignInAt ?? '-',
            ]),
          ),
      };
    },
  },
  'operator role': {
    prepare(values) {
      const email = required(values, 'email', 'operator role');
      const role = required(values, 'role', 'operator role');
      return async ({ operators }) => ({ json: await operators.setRole(email, role) });
    },
  },
  'operator disable': operatorChange('operator disable', ({ operators }, email) => operators.setEnabled(email, false)),
  'operator enable': operatorChange('operator enable', ({ operators }, email) => operators.setEnabled(email, true)),
  'operator token create': {
    prepare(values) {
      const email = required(values, 'email', 'operator token create');
      const days = option(values, 'expires-days');
      if (days !== undefined && !/^\d{1,4}$/.test(days)) {
        throw new UsageError('--expires-days must be a whole number of days', 'invalid_request');
      }
      return async ({ operators }) => ({
        json: await operators.createToken({
          email,
          name: option(values, 'name'),
          expiresDays: days === undefined ? undefined : Number(days),
        }),
      });
    },
  },
  'operator token revoke': {
    prepare(values) {
      const tokenId = required(values, 'token-id', 'operator token revoke');
      return async ({ operators }) => ({ json: await operators.revokeToken(tokenId) });
    },
  },
  'audit-log verify': {
    prepare: () => async (services) => {
      const result = await verifyAuditLog(services.store.read);
      return result.ok
        ? { json: { ok: true, entries: result.entries } }
        : { json: { ok: false, firstBadEntry: result.firstBadEntry, reason: result.reason }, exitCode: 1 };
    },
  },
  'audit-log export': {
    prepare(values) {
      const from = timeOption(values, 'from');
      const to = timeOption(values, 'to');
      return async ({ store }) => {
        let exported = 0;
        for await (const lines of auditJsonLines(store.read, { from, to })) {
          process.stdout.write(lines);
          exported += lines.split('\n').length - 1;
        }
        return { json: { exported }, printed: true };
      };
    },
  },
};
