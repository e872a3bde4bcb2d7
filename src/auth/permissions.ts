/** What an API key may be allowed to do (DESIGN §1.7). `all` grants every one. */
export const PERMISSIONS = [
  'exchange',
  'ken.collection',
  'ken.transfer',
  'bra.collection',
  'bra.transfer',
  'polymerize',
  'query',
  'balance',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
export type PermissionGrant = Permission | 'all';
export const PERMISSION_GRANTS: readonly PermissionGrant[] = [...PERMISSIONS, 'all'];

export function isPermissionGrant(value: string): value is PermissionGrant {
  return (PERMISSION_GRANTS as readonly string[]).includes(value);
}

export function grants(granted: readonly PermissionGrant[], needed: Permission): boolean {
  return granted.includes('all') || granted.includes(needed);
}
