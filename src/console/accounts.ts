/**
 * Console users and their sessions: sign-in with a scrypt-hashed password and an optional TOTP
 * second factor, a rate limit on failed sign-ins, sessions that end after a while idle and after a
 * fixed lifetime, and password changes that end every other session.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { OperatorError } from '../admin/failures.js';
import { isLanguage, type Language } from '../http/language.js';
import { newId } from '../store/ids.js';
import type { SecretBox } from '../store/secret-box.js';
import type { ConsoleSessionStage, ConsoleUserTable } from '../store/schema.js';
import type { Store, Tx } from '../store/store.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { matchTotp, newTotpSecret } from './totp.js';
import type { Selectable } from 'kysely';

type UserRow = Selectable<ConsoleUserTable>;

/** Sessions end after this long without a request… */
export const SESSION_IDLE_MS = 30 * 60_000;
/** …and this long after sign-in, whatever happens. */
export const SESSION_LIFETIME_MS = 12 * 3600_000;
/** A browser that entered the password has this long to enter its TOTP code. */
const SECOND_FACTOR_MS = 5 * 60_000;

/** Failed sign-ins counted over this window… */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** …at most this many per e-mail address… */
export const SIGN_IN_FAILURES_PER_EMAIL = 5;
/** …and this many per client address, before sign-in is refused until the window moves on. */
export const SIGN_IN_FAILURES_PER_IP = 20;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,}$/;

export interface ConsoleUser {
  userId: string;
  merchantId: string;
  email: string;
  name: string;
  language: Language;
  totpEnabled: boolean;
  createdAt: number;
}

export interface ConsoleSession {
  sessionId: string;
  user: ConsoleUser;
  stage: ConsoleSessionStage;
  csrfToken: string;
  /** A TOTP secret being enrolled, opened. */
  pendingTotpSecret: string | undefined;
  expiresAt: number;
}

export type SignInResult =
  | { outcome: 'signed_in'; token: string; session: ConsoleSession }
  | { outcome: 'wrong_credentials' }
  | { outcome: 'rate_limited'; retryAfterMs: number };

/** A request the console refused because of what the user entered: `field` names the form field. */
export class ConsoleInputError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'ConsoleInputError';
  }
}

const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

function toUser(row: UserRow): ConsoleUser {
  return {
    userId: row.id,
    merchantId: row.merchant_id,
    email: row.email,
    name: row.name,
    language: isLanguage(row.language) ? row.language : 'en',
    totpEnabled: row.totp_secret_sealed !== null,
    createdAt: row.created_at,
  };
}

export class ConsoleAccounts {
  constructor(
    private readonly store: Store,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** A console user of the merchant (operator and demo). The e-mail address is the login. */
  async createUser(
    merchantId: string,
    input: { email: string; name?: string | undefined; password: string; language?: Language | undefined },
  ): Promise<ConsoleUser> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new ConsoleInputError('email', 'format');
    const problem = passwordProblem(input.password);
    if (problem !== undefined) throw new ConsoleInputError('password', problem);
    const passwordHash = await hashPassword(input.password);
    const now = this.clock.now();
    return this.store.transact(async (tx) => {
      const merchant = await tx
        .selectFrom('merchants')
        .select(['id', 'language'])
        .where('id', '=', merchantId)
        .executeTakeFirst();
      if (merchant === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      const taken = await tx.selectFrom('console_users').select('id').where('email', '=', email).executeTakeFirst();
      if (taken !== undefined) throw new ConsoleInputError('email', 'taken');
      const row: UserRow = {
        id: newId('usr'),
        merchant_id: merchantId,
        email,
        name: ((input.name ?? '').trim() || email).slice(0, 100),
        password_hash: passwordHash,
        totp_secret_sealed: null,
        totp_last_step: null,
        language: input.language ?? (isLanguage(merchant.language) ? merchant.language : 'en'),
        created_at: now,
        updated_at: now,
      };
      await tx.insertInto('console_users').values(row).execute();
      return toUser(row);
    });
  }

  async listUsers(merchantId: string): Promise<ConsoleUser[]> {
    const merchant = await this.store.read
      .selectFrom('merchants')
      .select('id')
      .where('id', '=', merchantId)
      .executeTakeFirst();
    if (merchant === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
    const rows = await this.store.read
      .selectFrom('console_users')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .orderBy('created_at')
      .execute();
    return rows.map(toUser);
  }

  /**
   * Checks the password. Every attempt is written down as a failure before anything is checked
   * (so attempts racing each other all count), and refused when the address or the client already
   * has too many recent failures; a right password withdraws its own entry. The address's earlier
   * failures are forgiven only once the user is fully signed in (after the second factor, if on).
   */
  async signIn(emailInput: string, password: string, clientIp: string): Promise<SignInResult> {
    const email = emailInput.trim().toLowerCase();
    const now = this.clock.now();
    const subjects = { email: `email:${email.slice(0, 254)}`, ip: `ip:${clientIp}` };
    const attempt = await this.#admit(subjects, now);
    if (attempt.retryAfterMs > 0) return { outcome: 'rate_limited', retryAfterMs: attempt.retryAfterMs };
    const row = await this.store.read
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirst();
    if (!(await verifyPassword(password, row?.password_hash)) || row === undefined)
      return { outcome: 'wrong_credentials' };
    const stage: ConsoleSessionStage = row.totp_secret_sealed === null ? 'full' : 'totp';
    return this.store.transact(async (tx) => {
      await tx.deleteFrom('console_sign_in_failures').where('id', 'in', attempt.ids).execute();
      if (stage === 'full')
        await tx.deleteFrom('console_sign_in_failures').where('subject', '=', subjects.email).execute();
      return { outcome: 'signed_in' as const, ...(await this.#openSession(tx, row, stage, now)) };
    });
  }

  /**
   * Writes the attempt down as a failure of the address and of the client, then counts the other
   * recent failures: the attempt may go on (retryAfterMs 0) unless either has reached its limit,
   * in which case its entries are withdrawn and the wait is returned.
   */
  async #admit(subjects: { email: string; ip: string }, now: number): Promise<{ ids: string[]; retryAfterMs: number }> {
    const ids = [newId('sif'), newId('sif')];
    await this.store.transact(async (tx) => {
      await tx
        .insertInto('console_sign_in_failures')
        .values([
          { id: ids[0] ?? '', subject: subjects.email, at: now },
          { id: ids[1] ?? '', subject: subjects.ip, at: now },
        ])
        .execute();
      await tx
        .deleteFrom('console_sign_in_failures')
        .where('at', '<', now - SIGN_IN_WINDOW_MS)
        .execute();
    });
    const rows = await this.store.read
      .selectFrom('console_sign_in_failures')
      .select(['id', 'subject', 'at'])
      .where('subject', 'in', [subjects.email, subjects.ip])
      .where('at', '>=', now - SIGN_IN_WINDOW_MS)
      .orderBy('at', 'desc')
      .execute();
    const others = rows.filter((r) => !ids.includes(r.id));
    const waitFor = (subject: string, limit: number): number => {
      const times = others.filter((r) => r.subject === subject).map((r) => r.at);
      const nth = times[limit - 1];
      return times.length >= limit && nth !== undefined ? Math.max(1, nth + SIGN_IN_WINDOW_MS - now) : 0;
    };
    const retryAfterMs = Math.max(
      waitFor(subjects.email, SIGN_IN_FAILURES_PER_EMAIL),
      waitFor(subjects.ip, SIGN_IN_FAILURES_PER_IP),
    );
    if (retryAfterMs > 0)
      await this.store.transact((tx) => tx.deleteFrom('console_sign_in_failures').where('id', 'in', ids).execute());
    return { ids, retryAfterMs };
  }

  async #openSession(
    tx: Tx,
    row: UserRow,
    stage: ConsoleSessionStage,
    now: number,
  ): Promise<{ token: string; session: ConsoleSession }> {
    const token = newToken();
    const session = {
      id: tokenHash(token),
      user_id: row.id,
      merchant_id: row.merchant_id,
      stage,
      csrf_token: newToken(),
      totp_pending_sealed: null,
      created_at: now,
      last_seen_at: now,
      expires_at: now + (stage === 'full' ? SESSION_LIFETIME_MS : SECOND_FACTOR_MS),
    };
    await tx.insertInto('console_sessions').values(session).execute();
    return {
      token,
      session: {
        sessionId: session.id,
        user: toUser(row),
        stage,
        csrfToken: session.csrf_token,
        pendingTotpSecret: undefined,
        expiresAt: session.expires_at,
      },
    };
  }

  /**
   * The session of a cookie's token, its idle time restarted; undefined when there is none or it
   * ended (idle too long, past its lifetime, signed out).
   */
  async session(token: string): Promise<ConsoleSession | undefined> {
    if (token === '' || token.length > 100) return undefined;
    const now = this.clock.now();
    const id = tokenHash(token);
    const found = await this.store.read
      .selectFrom('console_sessions as s')
      .innerJoin('console_users as u', 'u.id', 's.user_id')
      .selectAll('u')
      .select(['s.stage', 's.csrf_token', 's.totp_pending_sealed', 's.last_seen_at', 's.expires_at'])
      .where('s.id', '=', id)
      .executeTakeFirst();
    if (found === undefined) return undefined;
    if (now >= found.expires_at || now - found.last_seen_at >= SESSION_IDLE_MS) {
      await this.store.transact((tx) => tx.deleteFrom('console_sessions').where('id', '=', id).execute());
      return undefined;
    }
    // Written at most once a minute: a page and its requests do not each cost a write.
    if (now - found.last_seen_at > 60_000) {
      await this.store.transact((tx) =>
        tx.updateTable('console_sessions').set({ last_seen_at: now }).where('id', '=', id).execute(),
      );
    }
    return {
      sessionId: id,
      user: toUser(found),
      stage: found.stage,
      csrfToken: found.csrf_token,
      pendingTotpSecret:
        found.totp_pending_sealed === null ? undefined : this.secrets.open(found.totp_pending_sealed, id),
      expiresAt: found.expires_at,
    };
  }

  async signOut(sessionId: string): Promise<void> {
    await this.store.transact((tx) => tx.deleteFrom('console_sessions').where('id', '=', sessionId).execute());
  }

  /**
   * The second step of a sign-in with TOTP on: a right code replaces the half-open session with a
   * full one (a new token, so a token seen before the second factor is worth nothing). Wrong codes
   * count against the address like wrong passwords; once it is locked the half-open session ends.
   */
  async completeSecondFactor(session: ConsoleSession, code: string, clientIp: string): Promise<SignInResult> {
    if (session.stage !== 'totp') return { outcome: 'wrong_credentials' };
    const now = this.clock.now();
    const subjects = { email: `email:${session.user.email}`, ip: `ip:${clientIp}` };
    const attempt = await this.#admit(subjects, now);
    if (attempt.retryAfterMs > 0) {
      await this.signOut(session.sessionId);
      return { outcome: 'rate_limited', retryAfterMs: attempt.retryAfterMs };
    }
    return this.store.transact(async (tx): Promise<SignInResult> => {
      const row = await tx
        .selectFrom('console_users')
        .selectAll()
        .where('id', '=', session.user.userId)
        .executeTakeFirstOrThrow();
      const step =
        row.totp_secret_sealed === null
          ? undefined
          : matchTotp(this.secrets.open(row.totp_secret_sealed, row.id), code, now, row.totp_last_step);
      if (step === undefined) return { outcome: 'wrong_credentials' };
      // One request per time step: the update only happens while the step is still unused.
      const taken = await tx
        .updateTable('console_users')
        .set({ totp_last_step: step })
        .where('id', '=', row.id)
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return { outcome: 'wrong_credentials' };
      await tx.deleteFrom('console_sessions').where('id', '=', session.sessionId).execute();
      await tx
        .deleteFrom('console_sign_in_failures')
        .where((eb) => eb.or([eb('id', 'in', attempt.ids), eb('subject', '=', subjects.email)]))
        .execute();
      return { outcome: 'signed_in', ...(await this.#openSession(tx, row, 'full', now)) };
    });
  }

  /** Changes the password after checking the current one, and ends every other session of the user. */
  async changePassword(session: ConsoleSession, current: string, next: string, clientIp: string): Promise<void> {
    await this.#checkPasswordAgain(session, current, clientIp, 'currentPassword');
    const problem = passwordProblem(next);
    if (problem !== undefined) throw new ConsoleInputError('newPassword', problem);
    const hash = await hashPassword(next);
    await this.store.transact(async (tx) => {
      await tx
        .updateTable('console_users')
        .set({ password_hash: hash, updated_at: this.clock.now() })
        .where('id', '=', session.user.userId)
        .execute();
      await tx
        .deleteFrom('console_sessions')
        .where('user_id', '=', session.user.userId)
        .where('id', '!=', session.sessionId)
        .execute();
    });
  }

  /**
   * Operator action (and the demo's restart): a new password for a user, found by e-mail address or
   * by merchant and user id, ending all their sessions. Undefined when there is no such user.
   */
  async resetPassword(
    who: { email: string } | { merchantId: string; userId: string },
    password: string,
  ): Promise<ConsoleUser | undefined> {
    const problem = passwordProblem(password);
    if (problem !== undefined) throw new ConsoleInputError('password', problem);
    const hash = await hashPassword(password);
    return this.store.transact(async (tx) => {
      const row = await this.#findUser(tx, who);
      if (row === undefined) return undefined;
      await tx
        .updateTable('console_users')
        .set({ password_hash: hash, updated_at: this.clock.now() })
        .where('id', '=', row.id)
        .execute();
      await tx.deleteFrom('console_sessions').where('user_id', '=', row.id).execute();
      return toUser(row);
    });
  }

  /** Operator action: removes a user and ends their sessions. Undefined when there is no such user. */
  async deleteUser(merchantId: string, userId: string): Promise<ConsoleUser | undefined> {
    return this.store.transact(async (tx) => {
      const row = await this.#findUser(tx, { merchantId, userId });
      if (row === undefined) return undefined;
      await tx.deleteFrom('console_sessions').where('user_id', '=', row.id).execute();
      await tx.deleteFrom('console_users').where('id', '=', row.id).execute();
      return toUser(row);
    });
  }

  #findUser(tx: Tx, who: { email: string } | { merchantId: string; userId: string }): Promise<UserRow | undefined> {
    const query = tx.selectFrom('console_users').selectAll();
    return (
      'email' in who
        ? query.where('email', '=', who.email.trim().toLowerCase())
        : query.where('id', '=', who.userId).where('merchant_id', '=', who.merchantId)
    ).executeTakeFirst();
  }

  async setLanguage(session: ConsoleSession, language: Language): Promise<void> {
    await this.store.transact((tx) =>
      tx
        .updateTable('console_users')
        .set({ language, updated_at: this.clock.now() })
        .where('id', '=', session.user.userId)
        .execute(),
    );
  }

  /** Starts TOTP enrolment: a new secret kept (sealed) on the session until a code confirms it. */
  async startTotp(session: ConsoleSession): Promise<string> {
    const secret = newTotpSecret();
    await this.store.transact((tx) =>
      tx
        .updateTable('console_sessions')
        .set({ totp_pending_sealed: this.secrets.seal(secret, session.sessionId) })
        .where('id', '=', session.sessionId)
        .execute(),
    );
    return secret;
  }

  /** Turns TOTP on when the code matches the secret being enrolled. */
  async confirmTotp(session: ConsoleSession, code: string): Promise<void> {
    const secret = session.pendingTotpSecret;
    if (secret === undefined) throw new ConsoleInputError('code', 'noEnrolment');
    const step = matchTotp(secret, code, this.clock.now(), null);
    if (step === undefined) throw new ConsoleInputError('code', 'wrong');
    await this.store.transact(async (tx) => {
      await tx
        .updateTable('console_users')
        .set({
          totp_secret_sealed: this.secrets.seal(secret, session.user.userId),
          totp_last_step: step,
          updated_at: this.clock.now(),
        })
        .where('id', '=', session.user.userId)
        .execute();
      await tx
        .updateTable('console_sessions')
        .set({ totp_pending_sealed: null })
        .where('id', '=', session.sessionId)
        .execute();
      // Sessions opened without the second factor end with it turned on.
      await tx
        .deleteFrom('console_sessions')
        .where('user_id', '=', session.user.userId)
        .where('id', '!=', session.sessionId)
        .execute();
    });
  }

  /** Turns TOTP off; the password is asked again. */
  async disableTotp(session: ConsoleSession, password: string, clientIp: string): Promise<void> {
    await this.#checkPasswordAgain(session, password, clientIp, 'password');
    await this.store.transact((tx) =>
      tx
        .updateTable('console_users')
        .set({ totp_secret_sealed: null, totp_last_step: null, updated_at: this.clock.now() })
        .where('id', '=', session.user.userId)
        .execute(),
    );
  }

  /**
   * The password asked again inside a session (to change it, to turn TOTP off): counted by the
   * sign-in rate limit like a sign-in, so a stolen session cannot be used to guess it.
   */
  async #checkPasswordAgain(session: ConsoleSession, password: string, clientIp: string, field: string): Promise<void> {
    const attempt = await this.#admit({ email: `email:${session.user.email}`, ip: `ip:${clientIp}` }, this.clock.now());
    if (attempt.retryAfterMs > 0) throw new ConsoleInputError(field, 'rateLimited');
    const row = await this.store.read
      .selectFrom('console_users')
      .select('password_hash')
      .where('id', '=', session.user.userId)
      .executeTakeFirstOrThrow();
    if (!(await verifyPassword(password, row.password_hash))) throw new ConsoleInputError(field, 'wrong');
    await this.store.transact((tx) =>
      tx.deleteFrom('console_sign_in_failures').where('id', 'in', attempt.ids).execute(),
    );
  }

  /** Drops sessions and sign-in failures that can no longer matter. */
  async prune(): Promise<number> {
    const now = this.clock.now();
    return this.store.transact(async (tx) => {
      const sessions = await tx
        .deleteFrom('console_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - SESSION_IDLE_MS)]))
        .executeTakeFirst();
      const failures = await tx
        .deleteFrom('console_sign_in_failures')
        .where('at', '<', now - SIGN_IN_WINDOW_MS)
        .executeTakeFirst();
      return Number(sessions.numDeletedRows) + Number(failures.numDeletedRows);
    });
  }
}
