import { createHash, randomBytes } from 'node:crypto';
import type { Actor } from '../access/actor.js';
import { noteAudit } from '../access/audit-log.js';
import { isRole, ROLES, type Role } from '../access/permissions.js';
import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from '../console/passwords.js';
import { newId } from '../store/ids.js';
import type { ReadDb, Store } from '../store/store.js';
import { outsideUnitScope } from '../store/unit-scope.js';
import * as q from './queries.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const TOKEN_PREFIX = 'cgo_';
export const TOKEN_DEFAULT_DAYS = 90;
export const TOKEN_MAX_DAYS = 365;
const DAY_MS = 86_400_000;
/** A token's last use is written at most this often (one write per token per period, never per request). */
const LAST_USED_PRECISION_MS = 5 * 60_000;

export interface OperatorView {
  operatorId: string;
  email: string;
  name: string;
  role: Role;
  state: 'active' | 'disabled';
  twoFactor: boolean;
  lockedUntil: string | null;
  lastSignInAt: string | null;
  createdAt: string;
}

export interface TokenView {
  tokenId: string;
  name: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** An operator named by e-mail (the CLI) or by id (the admin API). */
export type OperatorRef = { email: string } | { operatorId: string };

const refOf = (who: string | OperatorRef): OperatorRef => (typeof who === 'string' ? { email: who } : who);

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An e-mail address as operators are stored and found by it: trimmed and lower-cased. */
export function normalizeEmail(input: string): string {
  return input.trim().toLowerCase();
}

/** An operator as listed; `now` tells a lock still running from one that ran out. */
export function operatorView(row: q.OperatorRow, now: number): OperatorView {
  return {
    operatorId: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    state: row.state,
    twoFactor: row.totp_secret_sealed !== null,
    lockedUntil: row.locked_until !== null && row.locked_until > now ? iso(row.locked_until) : null,
    lastSignInAt: iso(row.last_sign_in_at),
    createdAt: iso(row.created_at) ?? '',
  };
}

export function tokenView(row: q.OperatorTokenRow): TokenView {
  return {
    tokenId: row.id,
    name: row.name,
    createdAt: iso(row.created_at) ?? '',
    expiresAt: iso(row.expires_at) ?? '',
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function invalid(field: string, detail: string): OperatorError {
  return new OperatorError({ kind: 'invalid_operator', field, detail });
}

function checkRole(role: string): Role {
  if (!isRole(role)) throw invalid('role', `must be one of ${ROLES.join(', ')}`);
  return role;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem === 'tooShort') throw invalid('password', `at least ${PASSWORD_MIN_LENGTH} characters`);
  if (problem === 'tooLong') throw invalid('password', `at most ${PASSWORD_MAX_LENGTH} characters`);
}

/** The people who operate Cashgate: their accounts and personal admin tokens. */
export class OperatorService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** A new operator, active, without a second factor yet (enrolled at first sign-in); its view. */
  async create(input: {
    email: string;
    role: string;
    name?: string | undefined;
    password: string;
  }): Promise<OperatorView> {
    const email = normalizeEmail(input.email);
    if (!EMAIL.test(email) || email.length > 254) throw invalid('email', 'not an e-mail address');
    const role = checkRole(input.role);
    checkPassword(input.password);
    const name = (input.name ?? '').trim().slice(0, 200) || email;
    const passwordHash = await hashPassword(input.password);
    const now = this.clock.now();
    const row: q.OperatorRow = {
      id: newId('opr'),
      email,
      name,
      role,
      password_hash: passwordHash,
      totp_secret_sealed: null,
      totp_pending_sealed: null,
      totp_last_step: null,
      state: 'active',
      failed_sign_ins: 0,
      locked_until: null,
      last_sign_in_at: null,
      created_at: now,
      updated_at: now,
    };
    await this.store.transact(async (tx) => {
      if ((await q.findOperatorByEmail(tx, email)) !== undefined)
        throw new OperatorError({ kind: 'operator_exists', email });
      await q.insertOperator(tx, row);
      noteAudit({
        targetType: 'operator',
        targetId: row.id,
        before: null,
        after: { email, name, role, state: 'active' },
      });
    });
    return operatorView(row, now);
  }

  async list(): Promise<OperatorView[]> {
    const now = this.clock.now();
    return (await q.listOperators(this.store.read)).map((row) => operatorView(row, now));
  }

  async get(operatorId: string): Promise<q.OperatorRow | undefined> {
    return q.findOperator(this.store.read, operatorId);
  }

  /** The operator found by e-mail or by id, in `db`; operator_not_found / operator_id_not_found otherwise. */
  async #find(db: ReadDb, who: OperatorRef): Promise<q.OperatorRow> {
    if ('email' in who) {
      const email = normalizeEmail(who.email);
      const row = await q.findOperatorByEmail(db, email);
      if (row === undefined) throw new OperatorError({ kind: 'operator_not_found', email });
      return row;
    }
    const row = await q.findOperator(db, who.operatorId);
    if (row === undefined) throw new OperatorError({ kind: 'operator_id_not_found', operatorId: who.operatorId });
    return row;
  }

  /**
   * Changes one operator, noting the fields before and after for the audit log. `by` is who asks:
   * an operator may not disable themself nor take away their own admin role, so that someone who
   * can undo a mistake is always left.
   */
  async #change(
    who: OperatorRef,
    change: (row: q.OperatorRow) => Partial<Pick<q.OperatorRow, 'role' | 'state'>>,
    by?: Actor,
  ): Promise<OperatorView> {
    return this.store.transact(async (tx) => {
      const row = await this.#find(tx, who);
      const changes = change(row);
      if (by?.type === 'operator' && by.operatorId === row.id) {
        if (changes.state === 'disabled' && row.state !== 'disabled')
          throw new OperatorError({ kind: 'operator_self_change', operatorId: row.id, change: 'disable' });
        if (row.role === 'admin' && changes.role !== undefined && changes.role !== 'admin')
          throw new OperatorError({
            kind: 'operator_self_change',
            operatorId: row.id,
            change: 'take the admin role away from',
          });
      }
      const updated = { ...row, ...changes, updated_at: this.clock.now() };
      await q.updateOperator(tx, row.id, { ...changes, updated_at: updated.updated_at });
      // A disabled operator is signed out everywhere; their tokens are refused while they are disabled.
      if (changes.state === 'disabled') await q.deleteSessionsOf(tx, row.id);
      noteAudit({
        targetType: 'operator',
        targetId: row.id,
        before: { role: row.role, state: row.state },
        after: { role: updated.role, state: updated.state },
      });
      return operatorView(updated, updated.updated_at);
    });
  }

  /** Sets the role of the operator with this e-mail (or `{ operatorId }`); `by`: who asks (see #change). */
  setRole(who: string | OperatorRef, role: string, by?: Actor): Promise<OperatorView> {
    const checked = checkRole(role);
    return this.#change(refOf(who), () => ({ role: checked }), by);
  }

  /**
   * Enables or disables the operator with this e-mail (or `{ operatorId }`); `by`: who asks. A
   * disabled operator's sessions end, and their tokens are refused while they are disabled.
   */
  setEnabled(who: string | OperatorRef, enabled: boolean, by?: Actor): Promise<OperatorView> {
    return this.#change(refOf(who), () => ({ state: enabled ? 'active' : 'disabled' }), by);
  }

  /** A new personal token (shown this once; only its hash is kept). */
  async createToken(input: { email: string; name?: string | undefined; expiresDays?: number | undefined }): Promise<{
    tokenId: string;
    token: string;
    role: Role;
    expiresAt: string;
  }> {
    const email = normalizeEmail(input.email);
    const days = input.expiresDays ?? TOKEN_DEFAULT_DAYS;
    if (!Number.isInteger(days) || days < 1 || days > TOKEN_MAX_DAYS) {
      throw invalid('expires-days', `a whole number of days from 1 to ${TOKEN_MAX_DAYS}`);
    }
    const name = (input.name ?? '').trim().slice(0, 100) || 'personal token';
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const now = this.clock.now();
    return this.store.transact(async (tx) => {
      const operator = await this.#find(tx, { email });
      const row: q.OperatorTokenRow = {
        id: newId('otk'),
        operator_id: operator.id,
        name,
        token_hash: sha256Hex(token),
        created_at: now,
        expires_at: now + days * DAY_MS,
        revoked_at: null,
        last_used_at: null,
      };
      await q.insertToken(tx, row);
      noteAudit({
        targetType: 'operator_token',
        targetId: row.id,
        before: null,
        after: { operator: operator.email, name, expiresAt: iso(row.expires_at) },
      });
      return { tokenId: row.id, token, role: operator.role, expiresAt: iso(row.expires_at) ?? '' };
    });
  }

  /**
   * Revokes a token: the next request that shows it is refused, on every node (nothing is cached).
   * With `operatorId`, only a token of that operator (another's is not found).
   */
  async revokeToken(tokenId: string, operatorId?: string): Promise<TokenView> {
    return this.store.transact(async (tx) => {
      if (operatorId !== undefined) await this.#find(tx, { operatorId });
      const row = await q.findToken(tx, tokenId);
      if (row === undefined || (operatorId !== undefined && row.operator_id !== operatorId))
        throw new OperatorError({ kind: 'operator_token_not_found', tokenId });
      const now = this.clock.now();
      await q.revokeToken(tx, tokenId, now);
      const revoked = { ...row, revoked_at: row.revoked_at ?? now };
      noteAudit({
        targetType: 'operator_token',
        targetId: tokenId,
        before: { revokedAt: iso(row.revoked_at) },
        after: { revokedAt: iso(revoked.revoked_at) },
      });
      return tokenView(revoked);
    });
  }

  /** The operator's tokens (never a secret); operator_id_not_found for an unknown operator. */
  async tokens(operatorId: string): Promise<TokenView[]> {
    await this.#find(this.store.read, { operatorId });
    return (await q.listTokens(this.store.read, operatorId)).map(tokenView);
  }

  /**
   * The operator a personal token stands for, or undefined (unknown, revoked, expired, or its operator
   * disabled). Read from the database on every request, so a revocation holds at once everywhere.
   */
  async authenticate(token: string): Promise<Actor | undefined> {
    if (!token.startsWith(TOKEN_PREFIX)) return undefined;
    const now = this.clock.now();
    const row = await q.findLiveToken(this.store.read, sha256Hex(token), now);
    if (row === undefined) return undefined;
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_PRECISION_MS) {
      // Not part of the request's work (nor of its audit record): a failure here is only a stale time.
      outsideUnitScope(() => {
        this.store.transact((tx) => q.touchToken(tx, row.id, now)).catch(() => undefined);
      });
    }
    return { type: 'operator', operatorId: row.operator_id, email: row.email, role: row.role, tokenId: row.id };
  }
}
