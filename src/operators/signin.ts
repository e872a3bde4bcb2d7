/**
 * Operators' sign-in: a password, then a second factor (a TOTP code, or a one-time recovery code),
 * mandatory for the roles that can change something. Five failed attempts in a row (passwords and
 * codes alike) lock the account for fifteen minutes. Every success, failure, lock, enrolment, use of
 * a recovery code and sign-out is written to the audit log in the unit of work of the change it
 * records.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { Actor } from '../access/actor.js';
import { appendAudit, type RequestOrigin } from '../access/audit-log.js';
import { WRITING_ROLES, type AuditAction, type Role } from '../access/permissions.js';
import type { Clock } from '../clock.js';
import { verifyPassword } from '../console/passwords.js';
import { matchTotp, newTotpSecret, otpauthUri } from '../console/totp.js';
import { newId } from '../store/ids.js';
import type { OperatorSessionStage } from '../store/schema.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Store, Tx } from '../store/store.js';
import * as q from './queries.js';
import { normalizeEmail, sha256Hex } from './service.js';
import {
  countFailedSignIn,
  deleteEndedSessionsOf,
  deleteOtherSessionsOf,
  takeOperatorTotpStep,
} from './signin-queries.js';

/** Failed attempts in a row (wrong passwords and wrong codes alike) that lock the account… */
export const MAX_FAILED_SIGN_INS = 5;
/** …for this long. */
export const LOCK_MS = 15 * 60_000;
/** A session lasts this long once it is fully signed in, whatever happens. */
export const SESSION_LIFETIME_MS = 12 * 3600_000;
/** A session that still has its second factor to give (or to set up) lasts this long. */
export const SECOND_FACTOR_WINDOW_MS = 15 * 60_000;
/** Recovery codes made at each enrolment (the old ones are replaced). */
export const RECOVERY_CODE_COUNT = 10;
/** Recovery codes are three groups of four from this alphabet: no 0/o, 1/l/i. */
const RECOVERY_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';
const RECOVERY_GROUPS = 3;
const RECOVERY_GROUP_LENGTH = 4;
const RECOVERY_CODE = new RegExp(`^[${RECOVERY_ALPHABET}]{${RECOVERY_GROUPS * RECOVERY_GROUP_LENGTH}}$`);
/** The issuer an authenticator app shows next to the operator's e-mail address. */
const TOTP_ISSUER = 'Cashgate back office';

export type SignInStage = OperatorSessionStage;

/** What a session token stands for. */
export interface OperatorSessionView {
  operatorId: string;
  email: string;
  name: string;
  role: Role;
  /** Only `full` may be let into the back office; `password` and `enrol` are half-way through signing in. */
  stage: SignInStage;
  /** ISO 8601, UTC. */
  expiresAt: string;
}

export type SecondFactor = { code: string } | { recoveryCode: string };

export type SignInErrorCode =
  /** Unknown e-mail address, wrong password, or a disabled account: one answer for all three. */
  | 'invalid_credentials'
  /** Too many failed attempts in a row: `unlocksAt` says until when. */
  | 'account_locked'
  /** A wrong, malformed or already used TOTP code or recovery code. */
  | 'invalid_code'
  /** Confirming an enrolment that was not begun (or was confirmed already). */
  | 'no_pending_enrolment'
  /** The session is not at the stage this step belongs to. */
  | 'wrong_stage'
  /** No session, or one that ended (expired, signed out, operator disabled). */
  | 'session_required';

/** A refused sign-in step: `code` says why, `field` names what was refused, `message` the rule. */
export class SignInError extends Error {
  readonly field: string;
  /** account_locked: when the account unlocks (Unix ms) and how many seconds that is from now. */
  readonly unlocksAt: number | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: SignInErrorCode,
    field: string,
    message: string,
    lock?: { unlocksAt: number; now: number },
  ) {
    super(message);
    this.name = 'SignInError';
    this.field = field;
    this.unlocksAt = lock?.unlocksAt;
    this.retryAfterSeconds =
      lock === undefined ? undefined : Math.max(1, Math.ceil((lock.unlocksAt - lock.now) / 1000));
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

function invalidCredentials(): SignInError {
  return new SignInError(
    'invalid_credentials',
    'email',
    'email and password: no active operator account has this e-mail address and password',
  );
}

function accountLocked(unlocksAt: number, now: number): SignInError {
  return new SignInError(
    'account_locked',
    'email',
    `email: this account is locked after ${MAX_FAILED_SIGN_INS} failed sign-in attempts in a row; it unlocks at ${iso(unlocksAt)}`,
    { unlocksAt, now },
  );
}

function sessionRequired(): SignInError {
  return new SignInError('session_required', 'session', 'session: sign in first (no session, or it has ended)');
}

function wrongStage(stage: SignInStage, allowed: readonly SignInStage[]): SignInError {
  return new SignInError(
    'wrong_stage',
    'session',
    `session: this step belongs to a session at stage ${allowed.join(' or ')}; this one is at stage ${stage}`,
  );
}

function invalidCode(factor: SecondFactor): SignInError {
  return 'code' in factor
    ? new SignInError(
        'invalid_code',
        'code',
        'code: not a current 6-digit code of your authenticator app (each code is accepted once)',
      )
    : new SignInError(
        'invalid_code',
        'recoveryCode',
        'recoveryCode: not an unused recovery code of this account (each is accepted once)',
      );
}

function actorOf(row: q.OperatorRow): Actor {
  return { type: 'operator', operatorId: row.id, email: row.email, role: row.role };
}

function isLocked(row: q.OperatorRow, now: number): row is q.OperatorRow & { locked_until: number } {
  return row.locked_until !== null && row.locked_until > now;
}

/** A role that can change something must sign in with a second factor. */
function mustUseSecondFactor(row: q.OperatorRow): boolean {
  return WRITING_ROLES.includes(row.role);
}

/**
 * The stage a session is really at: a full session of an operator who must use a second factor and
 * has none (their role was raised since) has one to set up first.
 */
function effectiveStage(stage: SignInStage, row: q.OperatorRow): SignInStage {
  return stage === 'full' && row.totp_secret_sealed === null && mustUseSecondFactor(row) ? 'enrol' : stage;
}

const newSessionToken = (): string => randomBytes(32).toString('base64url');

/** A session token's shape (43 base64url characters): anything else is not looked up. */
function plausibleToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{20,100}$/.test(token);
}

function newRecoveryCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < RECOVERY_GROUPS; g++) {
    let group = '';
    for (let i = 0; i < RECOVERY_GROUP_LENGTH; i++)
      group += RECOVERY_ALPHABET.charAt(randomInt(RECOVERY_ALPHABET.length));
    groups.push(group);
  }
  return groups.join('-');
}

/** A recovery code as it is hashed: lower case, without spaces or dashes; undefined when it cannot be one. */
function canonicalRecoveryCode(input: string): string | undefined {
  const code = input.toLowerCase().replace(/[\s-]/g, '');
  return RECOVERY_CODE.test(code) ? code : undefined;
}

/** What a method found of the session token it was given. */
interface Current {
  sessionId: string;
  token: string;
  operator: q.OperatorRow;
  stage: SignInStage;
}

/** Operators' sign-in: passwords, second factors, recovery codes, lock-out and sessions. */
export class OperatorSignIn {
  constructor(
    readonly store: Store,
    readonly secrets: SecretBox,
    readonly clock: Clock,
  ) {}

  /**
   * Checks an e-mail address and password. The password is checked in constant time, against a
   * decoy hash when the address is unknown or the account disabled (both answer invalid_credentials,
   * like a wrong password). A locked account is refused before its password is checked. A right
   * password opens a session: at stage `password` when the operator has a second factor, `enrol`
   * when they must set one up, `full` otherwise.
   */
  async signIn(
    emailInput: string,
    password: string,
    origin: RequestOrigin,
  ): Promise<{ sessionToken: string; stage: SignInStage }> {
    const email = normalizeEmail(emailInput);
    const now = this.clock.now();
    const found = await q.findOperatorByEmail(this.store.read, email);
    if (found !== undefined && found.state === 'active' && isLocked(found, now)) {
      const unlocksAt = found.locked_until;
      await this.store.transact((tx) =>
        this.#record(tx, actorOf(found), 'signin.failure', now, origin, { reason: 'account locked' }),
      );
      throw accountLocked(unlocksAt, now);
    }
    const passwordRight = await verifyPassword(password, found?.state === 'active' ? found.password_hash : undefined);
    const outcome = await this.store.transact(async (tx) => {
      if (found === undefined) {
        const unknown: Actor = { type: 'operator', operatorId: 'unknown', email, role: 'viewer' };
        await this.#record(tx, unknown, 'signin.failure', now, origin, { reason: 'unknown e-mail address' });
        return invalidCredentials();
      }
      // Read again inside the unit: an attempt racing this one may have locked the account.
      const row = await q.findOperator(tx, found.id);
      if (row === undefined || row.state !== 'active') {
        await this.#record(tx, actorOf(found), 'signin.failure', now, origin, { reason: 'account disabled' });
        return invalidCredentials();
      }
      if (isLocked(row, now)) {
        await this.#record(tx, actorOf(row), 'signin.failure', now, origin, { reason: 'account locked' });
        return accountLocked(row.locked_until, now);
      }
      if (!passwordRight) return this.#countFailure(tx, row, now, origin, 'wrong password', invalidCredentials());
      const stage: SignInStage =
        row.totp_secret_sealed !== null ? 'password' : mustUseSecondFactor(row) ? 'enrol' : 'full';
      const sessionToken = await this.#openSession(tx, row, stage, now);
      if (stage === 'full') await this.#completeSignIn(tx, row, now, origin, 'password');
      return { sessionToken, stage };
    });
    if (outcome instanceof SignInError) throw outcome;
    return outcome;
  }

  /**
   * Starts setting up an authenticator app (stage `enrol`, or a full session adding or replacing
   * one): a new secret, kept sealed until a code confirms it. The secret is shown this once.
   */
  async beginEnrolment(sessionToken: string): Promise<{ secret: string; otpauthUri: string }> {
    const current = await this.#current(sessionToken, ['enrol', 'full']);
    const secret = newTotpSecret();
    const sealed = this.secrets.seal(secret, current.operator.id);
    await this.store.transact((tx) =>
      q.updateOperator(tx, current.operator.id, { totp_pending_sealed: sealed, updated_at: this.clock.now() }),
    );
    return { secret, otpauthUri: otpauthUri(secret, current.operator.email, TOTP_ISSUER) };
  }

  /**
   * The enrolment waiting for its first code, as `beginEnrolment` answered it (a page shown again
   * after a wrong code must show the secret the operator already scanned), or undefined.
   */
  async pendingEnrolment(sessionToken: string): Promise<{ secret: string; otpauthUri: string } | undefined> {
    const current = await this.#current(sessionToken, ['enrol', 'full']);
    const sealed = current.operator.totp_pending_sealed;
    if (sealed === null) return undefined;
    const secret = this.secrets.open(sealed, current.operator.id);
    return { secret, otpauthUri: otpauthUri(secret, current.operator.email, TOTP_ISSUER) };
  }

  /**
   * Confirms the enrolment with a code of the new secret: it becomes the operator's second factor,
   * ten new recovery codes replace any older ones (shown this once), the operator's other sessions
   * end, and a session at stage `enrol` becomes a full one under a new token.
   */
  async confirmEnrolment(
    sessionToken: string,
    code: string,
    origin: RequestOrigin = {},
  ): Promise<{ recoveryCodes: string[]; sessionToken: string; stage: 'full' }> {
    const current = await this.#current(sessionToken, ['enrol', 'full']);
    const now = this.clock.now();
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const outcome = await this.store.transact(async (tx) => {
      const row = await q.findOperator(tx, current.operator.id);
      const session = await q.findSession(tx, current.sessionId, now);
      if (row === undefined || row.state !== 'active' || session === undefined) return sessionRequired();
      const stage = effectiveStage(session.stage, row);
      if (stage !== 'enrol' && stage !== 'full') return wrongStage(stage, ['enrol', 'full']);
      if (row.totp_pending_sealed === null) {
        return new SignInError(
          'no_pending_enrolment',
          'code',
          'code: no enrolment is waiting for a code; begin the enrolment first',
        );
      }
      const secret = this.secrets.open(row.totp_pending_sealed, row.id);
      const step = matchTotp(secret, code, now, null);
      if (step === undefined) return invalidCode({ code });
      await q.updateOperator(tx, row.id, {
        totp_secret_sealed: row.totp_pending_sealed,
        totp_pending_sealed: null,
        totp_last_step: step,
        updated_at: now,
      });
      await q.replaceRecoveryCodes(
        tx,
        row.id,
        recoveryCodes.map((recoveryCode) => ({
          id: newId('orc'),
          operator_id: row.id,
          code_hash: sha256Hex(canonicalRecoveryCode(recoveryCode) ?? recoveryCode),
          used_at: null,
          created_at: now,
        })),
      );
      await this.#record(tx, actorOf(row), 'operator.totp.enrol', now, origin, {
        changes: {
          before: { twoFactor: row.totp_secret_sealed !== null },
          after: { twoFactor: true, recoveryCodes: RECOVERY_CODE_COUNT },
        },
      });
      let token = current.token;
      if (stage === 'enrol') {
        // A new token for the full session: one seen before the second factor is worth nothing.
        await q.deleteSession(tx, session.id);
        token = await this.#openSession(tx, row, 'full', now);
        await this.#completeSignIn(tx, row, now, origin, 'enrolment');
      }
      // Sessions opened without this second factor end with it.
      await deleteOtherSessionsOf(tx, row.id, sha256Hex(token));
      return { recoveryCodes, sessionToken: token, stage: 'full' as const };
    });
    if (outcome instanceof SignInError) throw outcome;
    return outcome;
  }

  /**
   * The second step of a sign-in (stage `password`): a TOTP code, accepted once (its time step is
   * taken, so a replay within its window is refused), or an unused recovery code (then used up). A
   * wrong code counts as a failed sign-in, like a wrong password. A right one replaces the session
   * with a full one under a new token.
   */
  async verifySecondFactor(
    sessionToken: string,
    factor: SecondFactor,
    origin: RequestOrigin = {},
  ): Promise<{ sessionToken: string; stage: 'full' }> {
    const current = await this.#current(sessionToken, ['password']);
    const now = this.clock.now();
    const outcome = await this.store.transact(async (tx) => {
      const row = await q.findOperator(tx, current.operator.id);
      const session = await q.findSession(tx, current.sessionId, now);
      if (row === undefined || row.state !== 'active' || session === undefined) return sessionRequired();
      if (session.stage !== 'password') return wrongStage(effectiveStage(session.stage, row), ['password']);
      if (isLocked(row, now)) {
        await this.#record(tx, actorOf(row), 'signin.failure', now, origin, { reason: 'account locked' });
        return accountLocked(row.locked_until, now);
      }
      let failure: string | undefined;
      let unusedRecoveryCodes: number | undefined;
      if ('code' in factor) {
        const secret = row.totp_secret_sealed === null ? undefined : this.secrets.open(row.totp_secret_sealed, row.id);
        const step = secret === undefined ? undefined : matchTotp(secret, factor.code, now, row.totp_last_step);
        if (step === undefined || !(await takeOperatorTotpStep(tx, row.id, step))) {
          const replayed = secret !== undefined && matchTotp(secret, factor.code, now, null) !== undefined;
          failure = replayed ? 'code already used' : 'wrong code';
        }
      } else {
        const canonical = canonicalRecoveryCode(factor.recoveryCode);
        if (canonical === undefined || !(await q.useRecoveryCode(tx, row.id, sha256Hex(canonical), now))) {
          failure = 'wrong or used recovery code';
        } else {
          unusedRecoveryCodes = await q.countUnusedRecoveryCodes(tx, row.id);
        }
      }
      if (failure !== undefined) {
        const refusal = await this.#countFailure(tx, row, now, origin, failure, invalidCode(factor));
        // Locked: the half-open session ends too; the operator signs in again once the lock passes.
        if (refusal.code === 'account_locked') await q.deleteSession(tx, session.id);
        return refusal;
      }
      if (unusedRecoveryCodes !== undefined) {
        await this.#record(tx, actorOf(row), 'operator.recovery_code.use', now, origin, {
          changes: { before: { unusedRecoveryCodes: unusedRecoveryCodes + 1 }, after: { unusedRecoveryCodes } },
        });
      }
      await q.deleteSession(tx, session.id);
      const token = await this.#openSession(tx, row, 'full', now);
      await this.#completeSignIn(tx, row, now, origin, 'code' in factor ? 'totp' : 'recovery_code');
      return { sessionToken: token, stage: 'full' as const };
    });
    if (outcome instanceof SignInError) throw outcome;
    return outcome;
  }

  /** The operator and stage of a session token; undefined when it is unknown, ended, or its operator disabled. */
  async session(sessionToken: string): Promise<OperatorSessionView | undefined> {
    const found = await this.#find(sessionToken);
    if (found === undefined) return undefined;
    const { operator, stage, expiresAt } = found;
    return {
      operatorId: operator.id,
      email: operator.email,
      name: operator.name,
      role: operator.role,
      stage,
      expiresAt: iso(expiresAt),
    };
  }

  /** Ends the session (whatever its stage); nothing happens for a token that stands for none. */
  async signOut(sessionToken: string, origin: RequestOrigin = {}): Promise<void> {
    if (!plausibleToken(sessionToken)) return;
    const id = sha256Hex(sessionToken);
    const now = this.clock.now();
    await this.store.transact(async (tx) => {
      const session = await q.findSession(tx, id, now);
      await q.deleteSession(tx, id);
      const row = session === undefined ? undefined : await q.findOperator(tx, session.operator_id);
      if (row !== undefined) await this.#record(tx, actorOf(row), 'signout', now, origin, {});
    });
  }

  /** The live session of a token and its operator (active), at its effective stage. */
  async #find(
    sessionToken: string,
  ): Promise<{ sessionId: string; operator: q.OperatorRow; stage: SignInStage; expiresAt: number } | undefined> {
    if (!plausibleToken(sessionToken)) return undefined;
    const id = sha256Hex(sessionToken);
    const session = await q.findSession(this.store.read, id, this.clock.now());
    if (session === undefined) return undefined;
    const operator = await q.findOperator(this.store.read, session.operator_id);
    if (operator === undefined || operator.state !== 'active') return undefined;
    return {
      sessionId: id,
      operator,
      stage: effectiveStage(session.stage, operator),
      expiresAt: session.expires_at,
    };
  }

  /** The session of a token, which must be at one of `allowed` stages. */
  async #current(sessionToken: string, allowed: readonly SignInStage[]): Promise<Current> {
    const found = await this.#find(sessionToken);
    if (found === undefined) throw sessionRequired();
    if (!allowed.includes(found.stage)) throw wrongStage(found.stage, allowed);
    return { sessionId: found.sessionId, token: sessionToken, operator: found.operator, stage: found.stage };
  }

  async #openSession(tx: Tx, row: q.OperatorRow, stage: SignInStage, now: number): Promise<string> {
    const token = newSessionToken();
    await deleteEndedSessionsOf(tx, row.id, now);
    await q.insertSession(tx, {
      id: sha256Hex(token),
      operator_id: row.id,
      stage,
      created_at: now,
      expires_at: now + (stage === 'full' ? SESSION_LIFETIME_MS : SECOND_FACTOR_WINDOW_MS),
    });
    return token;
  }

  /** A session reached `full`: the failed attempts are forgiven, the sign-in is recorded. */
  async #completeSignIn(
    tx: Tx,
    row: q.OperatorRow,
    now: number,
    origin: RequestOrigin,
    factor: 'password' | 'totp' | 'recovery_code' | 'enrolment',
  ): Promise<void> {
    await q.updateOperator(tx, row.id, {
      failed_sign_ins: 0,
      locked_until: null,
      last_sign_in_at: now,
      updated_at: now,
    });
    await this.#record(tx, actorOf(row), 'signin.success', now, origin, {
      changes: { after: { stage: 'full', factor } },
    });
  }

  /**
   * Counts a failed attempt and records it; the attempt that reaches MAX_FAILED_SIGN_INS locks the
   * account (recorded too) and starts the count again. Returns the refusal to answer with.
   */
  async #countFailure(
    tx: Tx,
    row: q.OperatorRow,
    now: number,
    origin: RequestOrigin,
    reason: string,
    refusal: SignInError,
  ): Promise<SignInError> {
    const actor = actorOf(row);
    const count = await countFailedSignIn(tx, row.id, now);
    if (count === undefined) {
      // Another attempt locked the account meanwhile: this one is refused as locked, whatever it held.
      const locked = await q.findOperator(tx, row.id);
      await this.#record(tx, actor, 'signin.failure', now, origin, { reason: `${reason}; account locked` });
      return accountLocked(locked?.locked_until ?? now + LOCK_MS, now);
    }
    await this.#record(tx, actor, 'signin.failure', now, origin, {
      reason,
      changes: { before: { failedSignIns: count - 1 }, after: { failedSignIns: count } },
    });
    if (count < MAX_FAILED_SIGN_INS) return refusal;
    const unlocksAt = now + LOCK_MS;
    await q.updateOperator(tx, row.id, { locked_until: unlocksAt, failed_sign_ins: 0, updated_at: now });
    await this.#record(tx, actor, 'signin.locked', now, origin, {
      reason: `${count} failed sign-in attempts in a row`,
      changes: { before: { lockedUntil: null }, after: { lockedUntil: iso(unlocksAt) } },
    });
    return accountLocked(unlocksAt, now);
  }

  #record(
    tx: Tx,
    actor: Actor,
    action: AuditAction,
    at: number,
    origin: RequestOrigin,
    extra: { reason?: string; changes?: unknown },
  ): Promise<string> {
    const targetId = actor.type === 'operator' && actor.operatorId !== 'unknown' ? actor.operatorId : undefined;
    return appendAudit(
      tx,
      {
        actor,
        action,
        ...(targetId !== undefined && { targetType: 'operator', targetId }),
        ...(extra.reason !== undefined && { reason: extra.reason }),
        ...(extra.changes !== undefined && { changes: extra.changes }),
        origin,
      },
      at,
    );
  }
}
