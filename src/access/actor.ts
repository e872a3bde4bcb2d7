import { roleCan, type Permission, type Role } from './permissions.js';

/** Who acts: an operator (through a personal token or a back-office session), the root token, or the CLI. */
export type Actor =
  | { type: 'operator'; operatorId: string; email: string; role: Role; tokenId?: string }
  | { type: 'root-token' }
  | { type: 'cli'; osUser: string };

/** The root token and the CLI hold every permission; an operator those of their role. */
export function actorCan(actor: Actor, permission: Permission): boolean {
  return actor.type === 'operator' ? roleCan(actor.role, permission) : true;
}

/** The actor's name in messages and in the audit log's `actor` field. */
export function actorName(actor: Actor): string {
  if (actor.type === 'operator') return actor.email;
  if (actor.type === 'cli') return `cli:${actor.osUser}`;
  return 'root-token';
}

/** The id that stands for an actor in approvals (the requester cannot approve their own). */
export function actorId(actor: Actor): string {
  if (actor.type === 'operator') return actor.operatorId;
  if (actor.type === 'cli') return `cli:${actor.osUser}`;
  return 'root-token';
}
