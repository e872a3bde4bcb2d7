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
import type { ConsoleSessionStage } from '../store/schema.js';
import type { Store, Tx } from '../store/store.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import {
  deleteEndedSessions,
  deleteOtherSessionsOfUser,
  deleteSession,
  deleteSessionsOfUser,
  deleteSignInFailures,
  deleteSignInFailuresBefore,
  deleteSignInFailuresByIdOrSubject,
  deleteSignInFailuresOfSubject,
  deleteUserById,
  disableUserTotp,
  emailTaken,
  enableUserTotp,
  findMerchantLanguage,
  findMerchantUser,
  findSessionWithUser,
  findUserByEmail,
  getUser,
  insertSession,
  insertSignInFailures,
  insertUser,
  merchantExists,
  recentSignInFailures,
  setSessionCreatedKey,
  setSessionPendingTotp,
  takeSessionCreatedKey,
  setUserLanguage,
  setUserPassword,
  takeTotpStep,
  touchSession,
  userPasswordHash,
  usersOfMerchant,
  type ConsoleSessionRow,
  type ConsoleUserRow as UserRow,
} from './queries.js';
import { matchTotp, newTotpSecret } from './totp.js';

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
      const merchant = await findMerchantLanguage(tx, merchantId);
      if (merchant === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      if (await emailTaken(tx, email)) throw new ConsoleInputError('email', 'taken');
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
      await insertUser(tx, row);
      return toUser(row);
    });
  }

  async listUsers(merchantId: string): Promise<ConsoleUser[]> {
    if (!(await merchantExists(this.store.read, merchantId)))
      throw new OperatorError({ kind: 'merchant_not_found', merchantId });
    const rows = await usersOfMerchant(this.store.read, merchantId);
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
    const row = await findUserByEmail(this.store.read, email);
    if (!(await verifyPassword(password, row?.password_hash)) || row === undefined)
      return { outcome: 'wrong_credentials' };
    const stage: ConsoleSessionStage = row.totp_secret_sealed === null ? 'full' : 'totp';
    return this.store.transact(async (tx) => {
      await deleteSignInFailures(tx, attempt.ids);
      if (stage === 'full') await deleteSignInFailuresOfSubject(tx, subjects.email);
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
      await insertSignInFailures(tx, [
        { id: ids[0] ?? '', subject: subjects.email, at: now },
        { id: ids[1] ?? '', subject: subjects.ip, at: now },
      ]);
      await deleteSignInFailuresBefore(tx, now - SIGN_IN_WINDOW_MS);
    });
    const rows = await recentSignInFailures(this.store.read, [subjects.email, subjects.ip], now - SIGN_IN_WINDOW_MS);
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
    if (retryAfterMs > 0) await this.store.transact((tx) => deleteSignInFailures(tx, ids));
    return { ids, retryAfterMs };
  }

  async #openSession(
    tx: Tx,
    row: UserRow,
    stage: ConsoleSessionStage,
    now: number,
  ): Promise<{ token: string; session: ConsoleSession }> {
    const token = newToken();
    const session: ConsoleSessionRow = {
      id: tokenHash(token),
      user_id: row.id,
      merchant_id: row.merchant_id,
      stage,
      csrf_token: newToken(),
      totp_pending_sealed: null,
      created_key_sealed: null,
      created_at: now,
      last_seen_at: now,
      expires_at: now + (stage === 'full' ? SESSION_LIFETIME_MS : SECOND_FACTOR_MS),
    };
    await insertSession(tx, session);
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
    const found = await findSessionWithUser(this.store.read, id);
    if (found === undefined) return undefined;
    if (now >= found.expires_at || now - found.last_seen_at >= SESSION_IDLE_MS) {
      await this.store.transact((tx) => deleteSession(tx, id));
      return undefined;
    }
    // Written at most once a minute: a page and its requests do not each cost a write.
    if (now - found.last_seen_at > 60_000) {
      await this.store.transact((tx) => touchSession(tx, id, now));
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
    await this.store.transact((tx) => deleteSession(tx, sessionId));
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
      const row = await getUser(tx, session.user.userId);
      const step =
        row.totp_secret_sealed === null
          ? undefined
          : matchTotp(this.secrets.open(row.totp_secret_sealed, row.id), code, now, row.totp_last_step);
      if (step === undefined) return { outcome: 'wrong_credentials' };
      // One request per time step: the update only happens while the step is still unused.
      if (!(await takeTotpStep(tx, row.id, step))) return { outcome: 'wrong_credentials' };
      await deleteSession(tx, session.sessionId);
      await deleteSignInFailuresByIdOrSubject(tx, attempt.ids, subjects.email);
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
      await setUserPassword(tx, session.user.userId, hash, this.clock.now());
      await deleteOtherSessionsOfUser(tx, session.user.userId, session.sessionId);
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
      await setUserPassword(tx, row.id, hash, this.clock.now());
      await deleteSessionsOfUser(tx, row.id);
      return toUser(row);
    });
  }

  /** Operator action: removes a user and ends their sessions. Undefined when there is no such user. */
  async deleteUser(merchantId: string, userId: string): Promise<ConsoleUser | undefined> {
    return this.store.transact(async (tx) => {
      const row = await this.#findUser(tx, { merchantId, userId });
      if (row === undefined) return undefined;
      await deleteSessionsOfUser(tx, row.id);
      await deleteUserById(tx, row.id);
      return toUser(row);
    });
  }

  #findUser(tx: Tx, who: { email: string } | { merchantId: string; userId: string }): Promise<UserRow | undefined> {
    return 'email' in who
      ? findUserByEmail(tx, who.email.trim().toLowerCase())
      : findMerchantUser(tx, who.merchantId, who.userId);
  }

  async setLanguage(session: ConsoleSession, language: Language): Promise<void> {
    await this.store.transact((tx) => setUserLanguage(tx, session.user.userId, language, this.clock.now()));
  }

  /**
   * Keeps the secret of an API key just created, sealed on the session, for the page the form's
   * redirect leads to (on whichever node serves it) to show once, within `ttlMs`.
   */
  async holdCreatedKey(session: ConsoleSession, accessKey: string, secretKey: string, ttlMs: number): Promise<void> {
    const sealed = this.secrets.seal(
      JSON.stringify({ accessKey, secretKey, until: this.clock.now() + ttlMs }),
      session.sessionId,
    );
    await this.store.transact((tx) => setSessionCreatedKey(tx, session.sessionId, sealed));
  }

  /** The secret of `accessKey` just created in this session, once: the slot is emptied whatever it held. */
  async takeCreatedKey(session: ConsoleSession, accessKey: string): Promise<string | undefined> {
    const sealed = await this.store.transact((tx) => takeSessionCreatedKey(tx, session.sessionId));
    if (sealed === undefined) return undefined;
    const held = JSON.parse(this.secrets.open(sealed, session.sessionId)) as {
      accessKey: string;
      secretKey: string;
      until: number;
    };
    return held.accessKey === accessKey && held.until > this.clock.now() ? held.secretKey : undefined;
  }

  /** Starts TOTP enrolment: a new secret kept (sealed) on the session until a code confirms it. */
  async startTotp(session: ConsoleSession): Promise<string> {
    const secret = newTotpSecret();
    await this.store.transact((tx) =>
      setSessionPendingTotp(tx, session.sessionId, this.secrets.seal(secret, session.sessionId)),
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
      await enableUserTotp(
        tx,
        session.user.userId,
        this.secrets.seal(secret, session.user.userId),
        step,
        this.clock.now(),
      );
      await setSessionPendingTotp(tx, session.sessionId, null);
      // Sessions opened without the second factor end with it turned on.
      await deleteOtherSessionsOfUser(tx, session.user.userId, session.sessionId);
    });
  }

  /** Turns TOTP off; the password is asked again. */
  async disableTotp(session: ConsoleSession, password: string, clientIp: string): Promise<void> {
    await this.#checkPasswordAgain(session, password, clientIp, 'password');
    await this.store.transact((tx) => disableUserTotp(tx, session.user.userId, this.clock.now()));
  }

  /**
   * The password asked again inside a session (to change it, to turn TOTP off): counted by the
   * sign-in rate limit like a sign-in, so a stolen session cannot be used to guess it.
   */
  async #checkPasswordAgain(session: ConsoleSession, password: string, clientIp: string, field: string): Promise<void> {
    const attempt = await this.#admit({ email: `email:${session.user.email}`, ip: `ip:${clientIp}` }, this.clock.now());
    if (attempt.retryAfterMs > 0) throw new ConsoleInputError(field, 'rateLimited');
    const passwordHash = await userPasswordHash(this.store.read, session.user.userId);
    if (!(await verifyPassword(password, passwordHash))) throw new ConsoleInputError(field, 'wrong');
    await this.store.transact((tx) => deleteSignInFailures(tx, attempt.ids));
  }

  /** Drops sessions and sign-in failures that can no longer matter. */
  async prune(): Promise<number> {
    const now = this.clock.now();
    return this.store.transact(async (tx) => {
      const sessions = await deleteEndedSessions(tx, now, now - SESSION_IDLE_MS);
      const failures = await deleteSignInFailuresBefore(tx, now - SIGN_IN_WINDOW_MS);
      return sessions + failures;
    });
  }
}
