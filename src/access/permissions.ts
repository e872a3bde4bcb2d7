/**
 * Who may do what, in one place: the roles, their permissions, and the permission and audit action
 * of every admin route and operator command. Registering an admin route without an entry here fails
 * at start-up; a test walks /openapi.json against it.
 */
import type { OperatorRole } from '../store/schema.js';

export const ROLES = ['viewer', 'support', 'finance', 'admin', 'auditor'] as const satisfies readonly OperatorRole[];
export type Role = OperatorRole;

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export const PERMISSIONS = {
  read: 'read what the admin routes show, personal data masked, never a secret',
  'personal_data.read': 'see personal data unmasked wherever it is shown',
  'personal_data.reveal': "reveal one order's personal data unmasked (audited)",
  'callbacks.send': 're-trigger an order’s callback, send a test callback',
  'orders.requery': "ask an order's live rail again now",
  'console_users.password': "reset a merchant console user's password",
  'console_users.write': 'create and delete merchant console users',
  'balances.adjust': 'adjust a balance (at or above APPROVAL_THRESHOLD, as a request)',
  'approvals.decide': "approve or reject another operator's pending money action",
  'fees.write': "set a merchant's fees",
  'rates.write': 'set exchange prices',
  'settlement.write': "set a merchant's settlement delay",
  'payments.return': 'return an unmatched incoming payment',
  'payments.assign':
    "assign an unmatched incoming payment to a merchant's order (at or above APPROVAL_THRESHOLD, as a request)",
  'merchants.pause': "pause and resume a merchant's payments or payouts",
  'orders.settle_by_hand': 'mark a payout in doubt paid or failed after checking with the provider out of band',
  'merchants.write': 'create merchants, set their callback address and cashier settings',
  'apikeys.write': 'create, edit, disable, enable and delete API keys (a new secret is shown once)',
  'operators.write': 'create operators, change roles, disable and enable them, issue and revoke tokens',
  'sandbox.drive': 'drive sandbox orders',
  'audit.read': 'read and export the audit log',
} as const;
export type Permission = keyof typeof PERMISSIONS;

const VIEWER: readonly Permission[] = ['read'];

/** The roles (fixed names) and what each may do. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  viewer: VIEWER,
  support: [
    ...VIEWER,
    'callbacks.send',
    'orders.requery',
    'console_users.password',
    'personal_data.reveal',
    'merchants.pause',
  ],
  finance: [
    ...VIEWER,
    'balances.adjust',
    'approvals.decide',
    'fees.write',
    'rates.write',
    'settlement.write',
    'payments.return',
    'payments.assign',
  ],
  admin: Object.keys(PERMISSIONS) as Permission[],
  auditor: [...VIEWER, 'audit.read'],
};

/** Roles that can change something: they must sign in with a second factor. */
export const WRITING_ROLES: readonly Role[] = ROLES.filter((role) =>
  ROLE_PERMISSIONS[role].some((p) => p !== 'read' && p !== 'audit.read'),
);

export function roleCan(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}

/** The fixed names of audited actions. */
export const AUDIT_ACTIONS = [
  'admin.read',
  'access.denied',
  'merchant.create',
  'merchant.callback.set',
  'merchant.cashier.set',
  'merchant.settlement.set',
  'apikey.create',
  'apikey.edit',
  'apikey.disable',
  'apikey.enable',
  'apikey.delete',
  'console_user.create',
  'console_user.password.reset',
  'console_user.delete',
  'balance.adjust',
  'balance.adjust.request',
  'balance.adjust.approve',
  'balance.adjust.reject',
  'fee.set',
  'rate.set',
  'payment.return',
  'payment.assign',
  'payment.assign.request',
  'merchant.pause',
  'merchant.resume',
  'order.settle_by_hand',
  'order.export',
  'money.export',
  'callback.retrigger',
  'callback.test',
  'order.rail.query',
  'sandbox.event',
  'operator.create',
  'operator.role.change',
  'operator.disable',
  'operator.enable',
  'operator.token.create',
  'operator.token.revoke',
  'operator.totp.enrol',
  'operator.recovery_code.use',
  'pii.reveal',
  'secret.view',
  'audit.export',
  'signin.success',
  'signin.failure',
  'signin.locked',
  'signout',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What a target's id is called in a route's path. */
export type TargetType =
  | 'merchant'
  | 'apikey'
  | 'console_user'
  | 'order'
  | 'payment'
  | 'rate'
  | 'approval'
  | 'fee'
  | 'operator'
  | 'operator_token';

export interface Access {
  permission: Permission;
  /** The action a successful call records; reads record none (except through the root token). */
  action?: AuditAction;
  /** The target's type and the path parameter that names it. */
  target?: readonly [TargetType, string];
  /** The route exists to show personal data unmasked (its use is the audited action). */
  reveals?: true;
}

const MERCHANT = ['merchant', 'merchantId'] as const;
const KEY = ['apikey', 'accessKey'] as const;
const ORDER = ['order', 'orderId'] as const;
const OPERATOR = ['operator', 'operatorId'] as const;

/** Every admin route, `METHOD path` as registered, with what it needs and what it records. */
export const ADMIN_ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  'GET /admin/v1/merchants': { permission: 'read' },
  'GET /admin/v1/merchants/:merchantId': { permission: 'read' },
  'GET /admin/v1/merchants/:merchantId/api-keys': { permission: 'read' },
  'GET /admin/v1/merchants/:merchantId/users': { permission: 'read' },
  'GET /admin/v1/merchants/:merchantId/balances': { permission: 'read' },
  'GET /admin/v1/merchants/:merchantId/fees': { permission: 'read' },
  'GET /admin/v1/orders/:orderId/callbacks': { permission: 'read' },
  'GET /admin/v1/orders/:orderId/chain': { permission: 'read' },
  'GET /admin/v1/orders/:orderId/rail-messages': { permission: 'read' },
  'GET /admin/v1/rail-messages/unmatched': { permission: 'read' },
  'GET /admin/v1/pix/received': { permission: 'read' },
  'GET /admin/v1/boleto/suspense': { permission: 'read' },
  'GET /admin/v1/spei/unmatched': { permission: 'read' },
  'GET /admin/v1/rates': { permission: 'read' },
  'GET /admin/v1/nodes': { permission: 'read' },
  'GET /admin/v1/approvals': { permission: 'read' },
  'GET /admin/v1/orders/:orderId/personal-data': {
    permission: 'personal_data.reveal',
    action: 'pii.reveal',
    target: ORDER,
    reveals: true,
  },
  'GET /admin/v1/operators': { permission: 'read' },
  'GET /admin/v1/audit-log': { permission: 'audit.read' },
  'POST /admin/v1/merchants': { permission: 'merchants.write', action: 'merchant.create' },
  'PUT /admin/v1/merchants/:merchantId/callback': {
    permission: 'merchants.write',
    action: 'merchant.callback.set',
    target: MERCHANT,
  },
  'PUT /admin/v1/merchants/:merchantId/cashier': {
    permission: 'merchants.write',
    action: 'merchant.cashier.set',
    target: MERCHANT,
  },
  'PUT /admin/v1/merchants/:merchantId/settlement': {
    permission: 'settlement.write',
    action: 'merchant.settlement.set',
    target: MERCHANT,
  },
  'POST /admin/v1/merchants/:merchantId/api-keys': { permission: 'apikeys.write', action: 'apikey.create' },
  'PATCH /admin/v1/merchants/:merchantId/api-keys/:accessKey': {
    permission: 'apikeys.write',
    action: 'apikey.edit',
    target: KEY,
  },
  'POST /admin/v1/merchants/:merchantId/api-keys/:accessKey/disable': {
    permission: 'apikeys.write',
    action: 'apikey.disable',
    target: KEY,
  },
  'POST /admin/v1/merchants/:merchantId/api-keys/:accessKey/enable': {
    permission: 'apikeys.write',
    action: 'apikey.enable',
    target: KEY,
  },
  'DELETE /admin/v1/merchants/:merchantId/api-keys/:accessKey': {
    permission: 'apikeys.write',
    action: 'apikey.delete',
    target: KEY,
  },
  'POST /admin/v1/merchants/:merchantId/users': { permission: 'console_users.write', action: 'console_user.create' },
  'PUT /admin/v1/merchants/:merchantId/users/:userId/password': {
    permission: 'console_users.password',
    action: 'console_user.password.reset',
    target: ['console_user', 'userId'],
  },
  'DELETE /admin/v1/merchants/:merchantId/users/:userId': {
    permission: 'console_users.write',
    action: 'console_user.delete',
    target: ['console_user', 'userId'],
  },
  'POST /admin/v1/merchants/:merchantId/balance-adjustments': {
    permission: 'balances.adjust',
    action: 'balance.adjust',
    target: MERCHANT,
  },
  'POST /admin/v1/approvals/:approvalId/approve': {
    permission: 'approvals.decide',
    action: 'balance.adjust.approve',
    target: ['approval', 'approvalId'],
  },
  'POST /admin/v1/approvals/:approvalId/reject': {
    permission: 'approvals.decide',
    action: 'balance.adjust.reject',
    target: ['approval', 'approvalId'],
  },
  'PUT /admin/v1/merchants/:merchantId/fees/:channel': {
    permission: 'fees.write',
    action: 'fee.set',
    target: MERCHANT,
  },
  'PUT /admin/v1/rates/:currency/:token': { permission: 'rates.write', action: 'rate.set' },
  'POST /admin/v1/pix/received/:e2eid/return': {
    permission: 'payments.return',
    action: 'payment.return',
    target: ['payment', 'e2eid'],
  },
  'POST /admin/v1/pix/received/:e2eid/assign': {
    permission: 'payments.assign',
    action: 'payment.assign',
    target: ['payment', 'e2eid'],
  },
  'POST /admin/v1/merchants/:merchantId/pause': {
    permission: 'merchants.pause',
    action: 'merchant.pause',
    target: MERCHANT,
  },
  'POST /admin/v1/merchants/:merchantId/resume': {
    permission: 'merchants.pause',
    action: 'merchant.resume',
    target: MERCHANT,
  },
  'POST /admin/v1/orders/:orderId/settle-by-hand': {
    permission: 'orders.settle_by_hand',
    action: 'order.settle_by_hand',
    target: ORDER,
  },
  'POST /admin/v1/operators': { permission: 'operators.write', action: 'operator.create' },
  'PUT /admin/v1/operators/:operatorId/role': {
    permission: 'operators.write',
    action: 'operator.role.change',
    target: OPERATOR,
  },
  'POST /admin/v1/operators/:operatorId/disable': {
    permission: 'operators.write',
    action: 'operator.disable',
    target: OPERATOR,
  },
  'POST /admin/v1/operators/:operatorId/enable': {
    permission: 'operators.write',
    action: 'operator.enable',
    target: OPERATOR,
  },
  'GET /admin/v1/operators/:operatorId/tokens': { permission: 'read' },
  'POST /admin/v1/operators/:operatorId/tokens/:tokenId/revoke': {
    permission: 'operators.write',
    action: 'operator.token.revoke',
    target: ['operator_token', 'tokenId'],
  },
  'POST /admin/v1/orders/:orderId/callbacks': {
    permission: 'callbacks.send',
    action: 'callback.retrigger',
    target: ORDER,
  },
  'POST /admin/v1/merchants/:merchantId/callback/test': {
    permission: 'callbacks.send',
    action: 'callback.test',
    target: MERCHANT,
  },
  'POST /admin/v1/orders/:orderId/rail-query': {
    permission: 'orders.requery',
    action: 'order.rail.query',
    target: ORDER,
  },
  'POST /admin/v1/sandbox/orders/:orderId/events': {
    permission: 'sandbox.drive',
    action: 'sandbox.event',
    target: ORDER,
  },
};

/** Every operator command: the permission it stands for (the CLI runs as the `cli` actor, with all of them). */
export const CLI_COMMAND_ACCESS: Readonly<Record<string, Access>> = {
  'merchant create': { permission: 'merchants.write', action: 'merchant.create' },
  'merchant list': { permission: 'read' },
  'merchant show': { permission: 'read' },
  'callback set': { permission: 'merchants.write', action: 'merchant.callback.set' },
  'callback clear': { permission: 'merchants.write', action: 'merchant.callback.set' },
  'callback show': { permission: 'read' },
  'key create': { permission: 'apikeys.write', action: 'apikey.create' },
  'key list': { permission: 'read' },
  'key edit': { permission: 'apikeys.write', action: 'apikey.edit' },
  'key disable': { permission: 'apikeys.write', action: 'apikey.disable' },
  'key enable': { permission: 'apikeys.write', action: 'apikey.enable' },
  'key delete': { permission: 'apikeys.write', action: 'apikey.delete' },
  'fee set': { permission: 'fees.write', action: 'fee.set' },
  'fee list': { permission: 'read' },
  'rate set': { permission: 'rates.write', action: 'rate.set' },
  'rate list': { permission: 'read' },
  'user create': { permission: 'console_users.write', action: 'console_user.create' },
  'user list': { permission: 'read' },
  'user password': { permission: 'console_users.password', action: 'console_user.password.reset' },
  'user delete': { permission: 'console_users.write', action: 'console_user.delete' },
  audit: { permission: 'read' },
  'operator create': { permission: 'operators.write', action: 'operator.create' },
  'operator list': { permission: 'read' },
  'operator role': { permission: 'operators.write', action: 'operator.role.change' },
  'operator disable': { permission: 'operators.write', action: 'operator.disable' },
  'operator enable': { permission: 'operators.write', action: 'operator.enable' },
  'operator token create': { permission: 'operators.write', action: 'operator.token.create' },
  'operator token revoke': { permission: 'operators.write', action: 'operator.token.revoke' },
  'audit-log verify': { permission: 'audit.read' },
  'audit-log export': { permission: 'audit.read', action: 'audit.export' },
};

/** The back office's pages: the permission each needs to be seen (its actions are admin routes above). */
export const BACKOFFICE_PAGE_ACCESS = {
  today: { permission: 'read' },
  orders: { permission: 'read' },
  queues: { permission: 'read' },
  merchants: { permission: 'read' },
  money: { permission: 'read' },
  operators: { permission: 'operators.write' },
  audit: { permission: 'audit.read' },
  system: { permission: 'read' },
} as const satisfies Readonly<Record<string, Access>>;
export type BackofficePage = keyof typeof BACKOFFICE_PAGE_ACCESS;

/** The back office's own actions that are not admin routes: exports and the audit chain's check. */
export const BACKOFFICE_ACTION_ACCESS = {
  'orders.export': { permission: 'read', action: 'order.export' },
  'money.export': { permission: 'read', action: 'money.export' },
  'audit.export': { permission: 'audit.read', action: 'audit.export' },
  'audit.verify': { permission: 'audit.read' },
} as const satisfies Readonly<Record<string, Access>>;
export type BackofficeAction = keyof typeof BACKOFFICE_ACTION_ACCESS;
