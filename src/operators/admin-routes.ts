import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { auditView, parseIsoTime } from '../access/audit-log.js';
import { findAuditRows } from '../access/queries.js';
import { ROLES } from '../access/permissions.js';
import { Reason, registerAdminRoute } from '../admin/admin-route.js';
import { OperatorError } from '../admin/failures.js';
import type { RouteCatalog } from '../http/route-catalog.js';
import { StringEnum } from '../http/validation.js';
import type { Store } from '../store/store.js';
import type { OperatorService } from './service.js';

const TAG = 'Admin: operators and audit log';
const PAGE_SIZE = 100;

export const AuditEntryView = Type.Object({
  id: Type.String(),
  seq: Type.Integer({ description: 'position in the chain, from 1' }),
  at: Type.String({ description: 'ISO 8601, UTC' }),
  actor: Type.Object({
    type: Type.String({ description: 'operator, root-token or cli' }),
    id: Type.Union([Type.String(), Type.Null()], { description: 'operator id, or the OS user for cli' }),
    email: Type.Union([Type.String(), Type.Null()]),
  }),
  action: Type.String(),
  target: Type.Union([Type.Object({ type: Type.String(), id: Type.Union([Type.String(), Type.Null()]) }), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
  changes: Type.Unknown({ description: '{before, after} of the fields that changed, or {request}; redacted' }),
  requestId: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  prevHash: Type.String(),
  hash: Type.String({ description: 'SHA-256 over the canonical form, chaining this record to the one before' }),
});

const OperatorViewSchema = Type.Object({
  operatorId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Type.String(),
  state: Type.String(),
  twoFactor: Type.Boolean(),
  lockedUntil: Type.Union([Type.String(), Type.Null()]),
  lastSignInAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});

const TokenViewSchema = Type.Object({
  tokenId: Type.String(),
  name: Type.String(),
  createdAt: Type.String(),
  expiresAt: Type.String(),
  revokedAt: Type.Union([Type.String(), Type.Null()]),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});

const Role = StringEnum(ROLES, { description: ROLES.join(', ') });

/** An ISO 8601 time as Unix milliseconds; a field error naming the parameter otherwise. */
function timeParam(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseIsoTime(value);
  if (ms === undefined) {
    throw new OperatorError({ kind: 'invalid_parameter', field, detail: 'must be an ISO 8601 date or date-time' });
  }
  return ms;
}

function cursorParam(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) {
    throw new OperatorError({
      kind: 'invalid_parameter',
      field: 'cursor',
      detail: 'must be a nextCursor of this list',
    });
  }
  return Number(value);
}

/** Operator routes for the audit log and the operators themselves. */
export function registerOperatorAdminRoutes(
  scope: FastifyInstance,
  catalog: RouteCatalog,
  deps: { store: Store; operators: OperatorService },
): void {
  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/audit-log',
    tag: TAG,
    summary: 'Staff actions, newest first, 100 a page (admin and auditor)',
    description:
      'Filters combine. actor: an operator id or e-mail, root-token or cli; from (inclusive) and to (exclusive): ' +
      'ISO 8601. Give nextCursor back as cursor for the page after. `cashgate audit-log verify` checks the hash ' +
      'chain.',
    query: Type.Object(
      {
        actor: Type.Optional(Type.String({ maxLength: 254 })),
        action: Type.Optional(Type.String({ maxLength: 48 })),
        targetType: Type.Optional(Type.String({ maxLength: 32 })),
        targetId: Type.Optional(Type.String({ maxLength: 200 })),
        from: Type.Optional(Type.String({ maxLength: 40 })),
        to: Type.Optional(Type.String({ maxLength: 40 })),
        cursor: Type.Optional(Type.String({ maxLength: 20 })),
      },
      { additionalProperties: false },
    ),
    response: Type.Object({
      entries: Type.Array(AuditEntryView),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' }),
    }),
    handle: async ({ query }) => {
      const rows = await findAuditRows(
        deps.store.read,
        {
          actor: query.actor,
          action: query.action,
          targetType: query.targetType,
          targetId: query.targetId,
          from: timeParam('from', query.from),
          to: timeParam('to', query.to),
          beforeSeq: cursorParam(query.cursor),
        },
        PAGE_SIZE + 1,
        'newest',
      );
      const page = rows.slice(0, PAGE_SIZE);
      const last = page.at(-1);
      return {
        entries: page.map(auditView),
        nextCursor: rows.length > PAGE_SIZE && last !== undefined ? String(last.seq) : null,
      };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/operators',
    tag: TAG,
    summary: 'The operators, with their roles and state (never a password, secret or token)',
    response: Type.Object({ operators: Type.Array(OperatorViewSchema) }),
    handle: async () => ({ operators: await deps.operators.list() }),
  });

  const { operators } = deps;
  const operatorId = (params: Record<string, string>) => ({ operatorId: params.operatorId ?? '' });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/operators',
    tag: TAG,
    summary: 'Create an operator (active; the second factor is enrolled at first sign-in)',
    description:
      'The e-mail is stored trimmed and lower-cased, and is unique. The password is never shown again nor kept ' +
      'in the audit log. 409 operator_exists for an e-mail taken.',
    body: Type.Object({
      email: Type.String({ maxLength: 254 }),
      role: Role,
      name: Type.Optional(Type.String({ maxLength: 200 })),
      password: Type.String({ maxLength: 1024, description: 'its length is checked as for console users' }),
    }),
    response: OperatorViewSchema,
    handle: ({ body }) => operators.create(body),
  });

  registerAdminRoute(scope, catalog, {
    method: 'PUT',
    path: '/admin/v1/operators/:operatorId/role',
    tag: TAG,
    summary: "Change an operator's role (it applies to their next request)",
    description: '403 operator_self_change when an admin would take the admin role away from themself.',
    body: Type.Object({ role: Role, reason: Reason }),
    response: OperatorViewSchema,
    handle: ({ params, body, actor }) => operators.setRole(operatorId(params), body.role, actor),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/operators/:operatorId/disable',
    tag: TAG,
    summary: 'Disable an operator: signed out everywhere, their tokens refused until enabled again',
    description: '403 operator_self_change for your own account.',
    body: Type.Object({ reason: Reason }),
    response: OperatorViewSchema,
    handle: ({ params, actor }) => operators.setEnabled(operatorId(params), false, actor),
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/operators/:operatorId/enable',
    tag: TAG,
    summary: 'Enable a disabled operator again (their tokens that are not revoked or expired work again)',
    body: Type.Object({ reason: Reason }),
    response: OperatorViewSchema,
    handle: ({ params, actor }) => operators.setEnabled(operatorId(params), true, actor),
  });

  registerAdminRoute(scope, catalog, {
    method: 'GET',
    path: '/admin/v1/operators/:operatorId/tokens',
    tag: TAG,
    summary: "An operator's personal tokens, oldest first (never the secret)",
    response: Type.Object({ operatorId: Type.String(), tokens: Type.Array(TokenViewSchema) }),
    handle: async ({ params }) => {
      const id = operatorId(params).operatorId;
      return { operatorId: id, tokens: await operators.tokens(id) };
    },
  });

  registerAdminRoute(scope, catalog, {
    method: 'POST',
    path: '/admin/v1/operators/:operatorId/tokens/:tokenId/revoke',
    tag: TAG,
    summary: "Revoke one of an operator's tokens: refused from its next request, on every node",
    description: 'Revoking a token revoked already changes nothing and answers it as it is.',
    body: Type.Object({ reason: Reason }),
    response: TokenViewSchema,
    handle: ({ params }) => operators.revokeToken(params.tokenId ?? '', operatorId(params).operatorId),
  });
}
