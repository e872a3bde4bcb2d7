import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { IpWhitelist, whitelistEntryProblem } from '../auth/ip-whitelist.js';
import type { AuthKey, AuthKeys } from '../auth/keys.js';
import { isPermissionGrant, PERMISSION_GRANTS, type PermissionGrant } from '../auth/permissions.js';
import { noteAudit } from '../access/audit-log.js';
import { OperatorError } from '../admin/failures.js';
import { ApiError } from '../http/failures.js';
import { isLanguage, type Language } from '../http/language.js';
import { newId } from '../store/ids.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Store, Tx } from '../store/store.js';
import type { ApiKeyStatus } from '../store/schema.js';
import * as q from './queries.js';
import type { MerchantPauses, Pausable } from './pause.js';
import {
  isCashierCurrency,
  METHODS_OF_CURRENCY,
  offeredMethods,
  DEFAULT_CASHIER_CURRENCY,
  type CashierCurrency,
  type CashierMethod,
} from './cashier-methods.js';

/** Collected money becomes available one day after payment unless the operator sets otherwise (D+1). */
export const DEFAULT_SETTLEMENT_DELAY_MS = 86_400_000;

/** A payer has 30 minutes on a collection's cashier page unless the operator sets otherwise. */
export const DEFAULT_CASHIER_LIFETIME_MS = 1_800_000;

export interface Merchant {
  merchantId: string;
  name: string;
  language: Language;
  callbackUrl: string | null;
  /** Collected money becomes available this long after payment. */
  settlementDelayMs: number;
  /** How long a payer has on a collection's cashier page. */
  cashierLifetimeMs: number;
  /** The payment methods its aggregate cashiers offer. */
  cashierMethods: CashierMethod[];
  /** The currency its aggregate cashiers take (BRL or MXN). */
  cashierCurrency: CashierCurrency;
  createdAt: number;
  /** The operator's pauses of its payments (money in) and payouts (money out); null: not paused. */
  paused: MerchantPauses;
}

/** An API key as operators and merchants see it: never the secret. */
export interface ApiKeyView {
  accessKey: string;
  label: string;
  permissions: PermissionGrant[];
  ipWhitelist: string[];
  debug: boolean;
  /** As it stands now: a rolled key whose disable time has passed is `disabled`. */
  status: ApiKeyStatus;
  activeAt: number;
  createdAt: number;
  updatedAt: number;
  /** When a request last named the key, to within LAST_USE_PRECISION_MS; null when never. */
  lastUsedAt: number | null;
  /** A rolled key stops at this moment; null when none is scheduled. */
  disableAt: number | null;
  /** The key that replaced this one in a roll. */
  replacedBy: string | null;
}

/** A key's status as operators see it: `pending` while an active key waits for its `activeAt`. */
export type OperatorKeyStatus = ApiKeyStatus | 'pending';

/** An API key as the admin API and the CLI show it: the console's own details (last use, a roll's stop) stay out. */
export interface OperatorKeyView {
  accessKey: string;
  label: string;
  permissions: PermissionGrant[];
  ipWhitelist: string[];
  debug: boolean;
  /** Derived, never stored: an active key whose activeAt has not come yet is `pending`. */
  status: OperatorKeyStatus;
  activeAt: number;
  createdAt: number;
  updatedAt: number;
}

/** The operator's view of a key at `now` (the stored status stays `active` while the key is pending). */
export function operatorKeyView(view: ApiKeyView, now: number): OperatorKeyView {
  return {
    accessKey: view.accessKey,
    label: view.label,
    permissions: view.permissions,
    ipWhitelist: view.ipWhitelist,
    debug: view.debug,
    status: view.status === 'active' && now < view.activeAt ? 'pending' : view.status,
    activeAt: view.activeAt,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
  };
}

/** A key's last use is written at most once per key per this long (never once per request). */
export const LAST_USE_PRECISION_MS = 5 * 60_000;
/** Uses wait in memory this long before they are written, together, in one transaction. */
const LAST_USE_FLUSH_DELAY_MS = 1_000;

/** The overlap a key roll allows: the old key keeps working this long after the new one takes effect. */
export const ROLL_OVERLAP_MIN_MS = 60_000;
export const ROLL_OVERLAP_MAX_MS = 7 * 86_400_000;

export interface RolledApiKey extends CreatedApiKey {
  /** When the old key stops: the new key's activation plus the overlap. */
  oldKeyDisableAt: number;
}

export interface CreatedApiKey {
  accessKey: string;
  /** Shown once, at creation; stored only sealed. */
  secretKey: string;
  activeAt: number;
}

export interface KeySettings {
  permissions?: readonly string[] | undefined;
  ipWhitelist?: readonly string[] | string | undefined;
  debug?: boolean | undefined;
  label?: string | undefined;
}

function parseWhitelist(input: readonly string[] | string): string[] {
  const entries = (typeof input === 'string' ? input.split(',') : [...input])
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const bad = entries.find((entry) => whitelistEntryProblem(entry) !== undefined);
  if (bad !== undefined || entries.length === 0) {
    throw new ApiError({ kind: 'invalid_field', field: 'ipWhitelist', rule: { rule: 'format', format: 'ipOrCidr' } });
  }
  return [...new Set(entries)];
}

function parsePermissions(input: readonly string[]): PermissionGrant[] {
  const bad = input.find((p) => !isPermissionGrant(p));
  if (bad !== undefined || input.length === 0) {
    throw new ApiError({
      kind: 'invalid_field',
      field: 'permissions',
      rule: { rule: 'oneOf', allowed: PERMISSION_GRANTS },
    });
  }
  return [...new Set(input as PermissionGrant[])];
}

const currencyOf = (row: q.MerchantRow): CashierCurrency =>
  isCashierCurrency(row.cashier_currency) ? row.cashier_currency : DEFAULT_CASHIER_CURRENCY;

function pausesOf(row: q.MerchantRow): MerchantPauses {
  const view = (what: Pausable) => {
    const pause = q.pauseOf(row, what);
    return pause === null ? null : { since: pause.at, reason: pause.reason, by: pause.by };
  };
  return { payments: view('payments'), payouts: view('payouts') };
}

function toMerchant(row: q.MerchantRow): Merchant {
  return {
    merchantId: row.id,
    name: row.name,
    language: isLanguage(row.language) ? row.language : 'en',
    callbackUrl: row.callback_url,
    settlementDelayMs: row.settlement_delay_ms,
    cashierLifetimeMs: row.cashier_lifetime_ms,
    cashierMethods: offeredMethods(row.cashier_methods, currencyOf(row)),
    cashierCurrency: currencyOf(row),
    createdAt: row.created_at,
    paused: pausesOf(row),
  };
}

/** Whether a roll's scheduled disable has come: from then on the key counts as disabled. */
function rolledOff(row: Pick<q.ApiKeyRow, 'status' | 'disable_at'>, now: number): boolean {
  return row.status === 'active' && row.disable_at !== null && row.disable_at <= now;
}

/** The row as it stands at `now`: a key past its scheduled disable is disabled (no worker has to flip it). */
function effectiveRow<R extends q.ApiKeyRow>(row: R, now: number): R {
  return rolledOff(row, now) ? { ...row, status: 'disabled' } : row;
}

function toKeyView(row: q.ApiKeyRow, now: number, lastUse?: number): ApiKeyView {
  const current = effectiveRow(row, now);
  const lastUsedAt = Math.max(row.last_used_at ?? 0, lastUse ?? 0);
  return {
    accessKey: current.access_key,
    label: current.label,
    permissions: JSON.parse(current.permissions) as PermissionGrant[],
    ipWhitelist: JSON.parse(current.ip_whitelist) as string[],
    debug: current.debug === 1,
    status: current.status,
    activeAt: current.active_at,
    createdAt: current.created_at,
    updatedAt: current.updated_at,
    lastUsedAt: lastUsedAt === 0 ? null : lastUsedAt,
    disableAt: current.status === 'active' ? current.disable_at : null,
    replacedBy: current.replaced_by,
  };
}

/** Opened keys kept for authentication (least recently opened let go first). */
const AUTH_KEYS_KEPT = 10_000;

/** Everything an AuthKey is made of: when any of it changes, the key is opened again. */
function authKeyVersion(row: q.AuthKeyRow): string {
  return JSON.stringify([
    row.merchant_id,
    row.merchant_language,
    row.secret_sealed,
    row.permissions,
    row.ip_whitelist,
    row.debug,
    row.status,
    row.active_at,
    row.disable_at,
    row.paused_payments_at,
    row.paused_payouts_at,
    row.cashier_lifetime_ms,
  ]);
}

/** Merchants, their API keys and their unified callback address. */
export class MerchantService implements AuthKeys {
  /** Keys as authentication last opened them, with the version of the row they were opened from. */
  readonly #authKeys = new Map<string, { version: string; key: AuthKey }>();
  /** Uses noted but not written yet (access key → latest use). */
  readonly #pendingUses = new Map<string, number>();
  /** When this node last wrote each key's use: the next write waits LAST_USE_PRECISION_MS. */
  readonly #writtenUses = new Map<string, number>();
  /** The last use each key's row held when authentication last read it. */
  readonly #storedUses = new Map<string, number>();
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  constructor(
    private readonly store: Store,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly keyActivationDelayMs: number,
  ) {}

  async createMerchant(input: { name: string; language?: Language | undefined }): Promise<Merchant> {
    const now = this.clock.now();
    const row: q.MerchantRow = {
      id: newId('mch'),
      name: input.name.trim(),
      language: input.language ?? 'en',
      callback_url: null,
      settlement_delay_ms: DEFAULT_SETTLEMENT_DELAY_MS,
      cashier_lifetime_ms: DEFAULT_CASHIER_LIFETIME_MS,
      cashier_methods: null,
      cashier_currency: DEFAULT_CASHIER_CURRENCY,
      paused_payments_at: null,
      paused_payments_reason: null,
      paused_payments_by: null,
      paused_payouts_at: null,
      paused_payouts_reason: null,
      paused_payouts_by: null,
      created_at: now,
      updated_at: now,
    };
    await this.store.transact(async (tx) => {
      await q.insertMerchant(tx, row);
      noteAudit({
        targetType: 'merchant',
        targetId: row.id,
        before: null,
        after: { name: row.name, language: row.language },
      });
    });
    return toMerchant(row);
  }

  async listMerchants(): Promise<Merchant[]> {
    return (await q.listMerchants(this.store.read)).map(toMerchant);
  }

  async getMerchant(merchantId: string): Promise<Merchant> {
    const row = await q.findMerchant(this.store.read, merchantId);
    if (row === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
    return toMerchant(row);
  }

  setCallbackUrl(merchantId: string, url: string | null): Promise<Merchant> {
    return this.changeMerchant(merchantId, { callback_url: url });
  }

  /** Applies to money collected from now on; what already waits keeps its settlement time. */
  setSettlementDelay(merchantId: string, delayMs: number): Promise<Merchant> {
    return this.changeMerchant(merchantId, { settlement_delay_ms: delayMs });
  }

  /**
   * The lifetime applies to collections created from now on; the currency and methods to aggregate
   * cashiers opened from now on. Methods must belong to the currency (given, or the merchant's);
   * a currency changed without methods offers every method of the new currency.
   */
  async setCashierSettings(
    merchantId: string,
    settings: {
      lifetimeMs?: number | undefined;
      methods?: readonly CashierMethod[] | undefined;
      currency?: CashierCurrency | undefined;
    },
  ): Promise<Merchant> {
    const current = settings.currency === undefined ? (await this.getMerchant(merchantId)).cashierCurrency : undefined;
    const currency = settings.currency ?? current ?? DEFAULT_CASHIER_CURRENCY;
    const foreign = (settings.methods ?? []).filter((m) => !METHODS_OF_CURRENCY[currency].includes(m));
    if (foreign.length > 0) {
      throw new OperatorError({
        kind: 'invalid_cashier_settings',
        detail: `methods ${foreign.join(', ')} are not taken in ${currency}: a ${currency} cashier offers ${METHODS_OF_CURRENCY[currency].join(', ')}`,
      });
    }
    return this.changeMerchant(merchantId, {
      ...(settings.lifetimeMs !== undefined && { cashier_lifetime_ms: settings.lifetimeMs }),
      ...(settings.currency !== undefined && { cashier_currency: settings.currency }),
      ...(settings.methods !== undefined
        ? { cashier_methods: JSON.stringify([...new Set(settings.methods)]) }
        : settings.currency !== undefined && { cashier_methods: null }),
    });
  }

  /**
   * Pauses the merchant's payments or payouts: from the commit on, every create of that direction
   * is refused (300). Pausing what is paused already keeps the first pause (its time, reason and
   * operator) and changes nothing. The audit record is written in the same unit of work.
   */
  pause(merchantId: string, what: Pausable, reason: string, by: string): Promise<Merchant> {
    return this.store.transact(async (tx) => {
      const row = await q.findMerchant(tx, merchantId);
      if (row === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      const before = q.pauseOf(row, what);
      // Recorded with the request only (what and why): nothing changed.
      if (before !== null) return toMerchant(row);
      const pause = { at: this.clock.now(), reason, by };
      if (!(await q.pauseMerchant(tx, merchantId, what, pause))) {
        // Another operator's pause got there between the read and the write: theirs stays.
        const current = await q.findMerchant(tx, merchantId);
        if (current === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
        return toMerchant(current);
      }
      noteAudit({ before: { [what]: null }, after: { [what]: pause } });
      const after = await q.findMerchant(tx, merchantId);
      if (after === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      return toMerchant(after);
    });
  }

  /** Lifts a pause: creates of that direction work again from the commit on; not paused is a 409 (`not_paused`). */
  resume(merchantId: string, what: Pausable): Promise<Merchant> {
    return this.store.transact(async (tx) => {
      const row = await q.findMerchant(tx, merchantId);
      if (row === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      const before = q.pauseOf(row, what);
      if (before === null || !(await q.resumeMerchant(tx, merchantId, what, this.clock.now()))) {
        throw new OperatorError({ kind: 'not_paused', merchantId, what });
      }
      noteAudit({ before: { [what]: before }, after: { [what]: null } });
      const after = await q.findMerchant(tx, merchantId);
      if (after === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      return toMerchant(after);
    });
  }

  private changeMerchant(
    merchantId: string,
    changes: Partial<
      Pick<
        q.MerchantRow,
        'callback_url' | 'settlement_delay_ms' | 'cashier_lifetime_ms' | 'cashier_methods' | 'cashier_currency'
      >
    >,
  ): Promise<Merchant> {
    return this.store.transact(async (tx) => {
      const row = await q.findMerchant(tx, merchantId);
      if (row === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      const update = { ...changes, updated_at: this.clock.now() };
      await q.updateMerchant(tx, merchantId, update);
      const fields = Object.keys(changes) as (keyof typeof changes)[];
      noteAudit({
        before: Object.fromEntries(fields.map((f) => [f, row[f]])),
        after: Object.fromEntries(fields.map((f) => [f, update[f]])),
      });
      return toMerchant({ ...row, ...update });
    });
  }

  /**
   * Creates a key that takes effect after the activation delay. Only the operator's own demo
   * bootstrap passes `activationDelayMs` (0) to have a key that works at once.
   */
  async createApiKey(
    merchantId: string,
    settings: KeySettings & { permissions: readonly string[]; ipWhitelist: readonly string[] | string },
    activationDelayMs = this.keyActivationDelayMs,
  ): Promise<CreatedApiKey> {
    const permissions = parsePermissions(settings.permissions);
    const whitelist = parseWhitelist(settings.ipWhitelist);
    const now = this.clock.now();
    return this.store.transact(async (tx) => {
      if ((await q.findMerchant(tx, merchantId)) === undefined) {
        throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      }
      return this.insertKey(tx, merchantId, {
        label: settings.label ?? '',
        permissions: JSON.stringify(permissions),
        ip_whitelist: JSON.stringify(whitelist),
        debug: settings.debug === true ? 1 : 0,
        active_at: now + activationDelayMs,
        now,
      });
    });
  }

  private async insertKey(
    tx: Tx,
    merchantId: string,
    key: Pick<q.ApiKeyRow, 'label' | 'permissions' | 'ip_whitelist' | 'debug' | 'active_at'> & { now: number },
  ): Promise<CreatedApiKey> {
    const accessKey = `AK${randomBytes(16).toString('hex')}`;
    const secretKey = randomBytes(32).toString('hex');
    await q.insertApiKey(tx, {
      access_key: accessKey,
      merchant_id: merchantId,
      label: key.label,
      secret_sealed: this.secrets.seal(secretKey, accessKey),
      permissions: key.permissions,
      ip_whitelist: key.ip_whitelist,
      debug: key.debug,
      status: 'active',
      active_at: key.active_at,
      created_at: key.now,
      updated_at: key.now,
      last_used_at: null,
      disable_at: null,
      replaced_by: null,
    });
    noteAudit({
      targetType: 'apikey',
      targetId: accessKey,
      after: { merchantId, permissions: key.permissions, ipWhitelist: key.ip_whitelist, activeAt: key.active_at },
    });
    return { accessKey, secretKey, activeAt: key.active_at };
  }

  /**
   * A key roll: a new key with the old one's settings (label, permissions, whitelist, debug), taking
   * effect after the activation delay like any new key, and the old key scheduled to stop `overlapMs`
   * after that, so both work during the overlap. The old key must be active and not already rolled.
   */
  async rollApiKey(merchantId: string, accessKey: string, overlapMs: number): Promise<RolledApiKey> {
    if (!Number.isInteger(overlapMs) || overlapMs < ROLL_OVERLAP_MIN_MS) {
      throw new ApiError({
        kind: 'invalid_field',
        field: 'overlap',
        rule: { rule: 'minimum', min: ROLL_OVERLAP_MIN_MS },
      });
    }
    if (overlapMs > ROLL_OVERLAP_MAX_MS) {
      throw new ApiError({
        kind: 'invalid_field',
        field: 'overlap',
        rule: { rule: 'maximum', max: ROLL_OVERLAP_MAX_MS },
      });
    }
    return this.store.transact(async (tx) => {
      if ((await q.findMerchant(tx, merchantId)) === undefined) {
        throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      }
      const now = this.clock.now();
      const found = await q.findApiKey(tx, merchantId, accessKey);
      if (found === undefined) throw new OperatorError({ kind: 'api_key_not_found', accessKey });
      const old = effectiveRow(found, now);
      if (old.status === 'deleted') throw new OperatorError({ kind: 'api_key_deleted', accessKey });
      if (old.status !== 'active' || old.disable_at !== null) {
        throw new ApiError({ kind: 'invalid_field', field: 'accessKey', rule: { rule: 'invalid' } });
      }
      const created = await this.insertKey(tx, merchantId, {
        label: old.label,
        permissions: old.permissions,
        ip_whitelist: old.ip_whitelist,
        debug: old.debug,
        active_at: now + this.keyActivationDelayMs,
        now,
      });
      // The old key keeps its settings and activation: only its end is set.
      const oldKeyDisableAt = Math.max(created.activeAt, old.active_at) + overlapMs;
      // Conditional, so that of two rolls of one key at once (a double click) only one succeeds, on
      // PostgreSQL as on SQLite; the loser's new key goes with its rolled-back unit of work.
      const scheduled = await q.scheduleKeyRollEnd(tx, accessKey, {
        disableAt: oldKeyDisableAt,
        replacedBy: created.accessKey,
        now,
      });
      if (!scheduled) throw new ApiError({ kind: 'invalid_field', field: 'accessKey', rule: { rule: 'invalid' } });
      return { ...created, oldKeyDisableAt };
    });
  }

  /** The merchant's keys, oldest first; deleted keys too when asked (the console lists them as deleted). */
  async listApiKeys(merchantId: string, options: { includeDeleted?: boolean } = {}): Promise<ApiKeyView[]> {
    await this.getMerchant(merchantId);
    const now = this.clock.now();
    return (await q.listApiKeys(this.store.read, merchantId, options.includeDeleted === true)).map((row) =>
      toKeyView(row, now, this.#pendingUses.get(row.access_key)),
    );
  }

  /** The merchant's keys as operators see them (admin API and CLI), deleted keys left out. */
  async listOperatorKeys(merchantId: string): Promise<OperatorKeyView[]> {
    const now = this.clock.now();
    return (await this.listApiKeys(merchantId)).map((view) => operatorKeyView(view, now));
  }

  /** The key as operators see it after a change (edit, disable, enable, delete). */
  asOperatorKey(view: ApiKeyView): OperatorKeyView {
    return operatorKeyView(view, this.clock.now());
  }

  /** One of the merchant's keys (deleted ones too), or undefined: another merchant's key is not found. */
  async findApiKey(merchantId: string, accessKey: string): Promise<ApiKeyView | undefined> {
    const row = await q.findApiKey(this.store.read, merchantId, accessKey);
    return row === undefined ? undefined : toKeyView(row, this.clock.now(), this.#pendingUses.get(row.access_key));
  }

  /** Edits a key's settings; like creation, an edit takes effect after the activation delay. */
  editApiKey(merchantId: string, accessKey: string, settings: KeySettings): Promise<ApiKeyView> {
    return this.changeKey(merchantId, accessKey, (row, now) => ({
      ...(settings.permissions !== undefined && {
        permissions: JSON.stringify(parsePermissions(settings.permissions)),
      }),
      ...(settings.ipWhitelist !== undefined && { ip_whitelist: JSON.stringify(parseWhitelist(settings.ipWhitelist)) }),
      ...(settings.debug !== undefined && { debug: settings.debug ? 1 : 0 }),
      ...(settings.label !== undefined && { label: settings.label }),
      active_at: now + this.keyActivationDelayMs,
      status: row.status,
    }));
  }

  /** Disabling takes effect at once; enabling again waits the activation delay, like an edit. */
  setApiKeyEnabled(merchantId: string, accessKey: string, enabled: boolean): Promise<ApiKeyView> {
    // Either way a roll's scheduled disable is settled: disabled now, or enabled for good.
    return this.changeKey(merchantId, accessKey, (row, now) =>
      enabled
        ? {
            status: 'active',
            active_at: row.status === 'active' ? row.active_at : now + this.keyActivationDelayMs,
            disable_at: null,
          }
        : { status: 'disabled', disable_at: null },
    );
  }

  /** Deletion is final: the key stays on record (so its use is refused with 301) but never works again. */
  deleteApiKey(merchantId: string, accessKey: string): Promise<ApiKeyView> {
    return this.changeKey(merchantId, accessKey, () => ({ status: 'deleted' }));
  }

  private changeKey(
    merchantId: string,
    accessKey: string,
    change: (row: q.ApiKeyRow, now: number) => Partial<q.ApiKeyRow>,
  ): Promise<ApiKeyView> {
    return this.store.transact(async (tx) => {
      if ((await q.findMerchant(tx, merchantId)) === undefined) {
        throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      }
      const found = await q.findApiKey(tx, merchantId, accessKey);
      if (found === undefined) throw new OperatorError({ kind: 'api_key_not_found', accessKey });
      const now = this.clock.now();
      // A key past its roll's disable time is a disabled key from here on, whatever the change.
      const row = rolledOff(found, now) ? { ...found, status: 'disabled' as const, disable_at: null } : found;
      if (row.status === 'deleted') throw new OperatorError({ kind: 'api_key_deleted', accessKey });
      const changes = {
        ...(row !== found && { status: row.status, disable_at: null }),
        ...change(row, now),
        updated_at: now,
      };
      await q.updateApiKey(tx, accessKey, changes);
      const fields = (Object.keys(changes) as (keyof typeof changes)[]).filter((f) => f !== 'updated_at');
      noteAudit({
        before: Object.fromEntries(fields.map((f) => [f, found[f]])),
        after: Object.fromEntries(fields.map((f) => [f, changes[f]])),
      });
      return toKeyView({ ...row, ...changes }, now, this.#pendingUses.get(accessKey));
    });
  }

  /**
   * The key a merchant API request names, for its authentication (which notes its use once the
   * request passes, see noteKeyUse). A rolled key past its disable time comes back disabled, so it is refused even if nothing else ran.
   */
  async findKeyForAuth(accessKey: string): Promise<AuthKey | undefined> {
    const row = await q.findKeyForAuth(this.store.read, accessKey);
    if (row === undefined) return undefined;
    const now = this.clock.now();
    this.#storedUses.set(row.access_key, row.last_used_at ?? 0);
    if (this.#storedUses.size > AUTH_KEYS_KEPT) this.#storedUses.clear();
    const key = this.openKey(row);
    return rolledOff(row, now) ? { ...key, status: 'disabled' } : key;
  }

  /** The key with its opened secret, to sign with (callbacks, the signature tool); no use is noted. */
  async findKeyForSigning(accessKey: string): Promise<AuthKey | undefined> {
    const row = await q.findKeyForAuth(this.store.read, accessKey);
    if (row === undefined) return undefined;
    const key = this.openKey(row);
    return rolledOff(row, this.clock.now()) ? { ...key, status: 'disabled' } : key;
  }

  /**
   * Notes that a request signed with the key passed authentication. Never a write per request: the use is written only when the
   * stored one is LAST_USE_PRECISION_MS old or more (and this node has not written one for the key
   * within that time), and the uses noted within LAST_USE_FLUSH_DELAY_MS are written together in
   * one transaction. So the stored time is at most LAST_USE_PRECISION_MS behind the true last use;
   * this node's pages also see the uses still waiting to be written.
   */
  noteKeyUse(accessKey: string, now: number): void {
    const stored = Math.max(this.#storedUses.get(accessKey) ?? 0, this.#writtenUses.get(accessKey) ?? 0);
    if (stored > 0 && now - stored < LAST_USE_PRECISION_MS) return;
    this.#pendingUses.set(accessKey, now);
    if (this.#flushTimer !== undefined) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      void this.flushKeyUses();
    }, LAST_USE_FLUSH_DELAY_MS);
    this.#flushTimer.unref();
  }

  /** Writes the uses noted so far, in one transaction (a failure keeps them for the next flush). */
  flushKeyUses(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      if (this.#pendingUses.size === 0) return;
      const uses = [...this.#pendingUses];
      this.#pendingUses.clear();
      try {
        await this.store.transact(async (tx) => {
          for (const [accessKey, at] of uses) await q.recordKeyUse(tx, accessKey, at);
        });
        for (const [accessKey, at] of uses) this.#writtenUses.set(accessKey, at);
        if (this.#writtenUses.size > AUTH_KEYS_KEPT) this.#writtenUses.clear();
      } catch {
        // Kept for the next flush (a newer use of the same key wins).
        for (const [accessKey, at] of uses) if (!this.#pendingUses.has(accessKey)) this.#pendingUses.set(accessKey, at);
      }
    });
    return this.#flushing;
  }

  /** Stops the flush timer and writes what is waiting (on shutdown). */
  async close(): Promise<void> {
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    await this.flushKeyUses();
  }

  private openKey(row: q.AuthKeyRow): AuthKey {
    // The row is read every time, so an edit, a disabling or a deletion on any node holds at once;
    // what is derived from it (the opened secret, the parsed permissions and whitelist) is kept
    // while the row stays the same.
    const accessKey = row.access_key;
    const version = authKeyVersion(row);
    const cached = this.#authKeys.get(accessKey);
    if (cached?.version === version) return cached.key;
    const view = toKeyView(row, 0);
    const key: AuthKey = {
      accessKey: row.access_key,
      merchantId: row.merchant_id,
      merchantLanguage: isLanguage(row.merchant_language) ? row.merchant_language : 'en',
      secretKey: this.secrets.open(row.secret_sealed, row.access_key),
      permissions: view.permissions,
      whitelist: new IpWhitelist(view.ipWhitelist),
      debug: view.debug,
      status: row.status,
      activeAt: row.active_at,
      pausedSince: { payments: row.paused_payments_at, payouts: row.paused_payouts_at },
      cashierLifetimeMs: row.cashier_lifetime_ms,
    };
    this.#authKeys.delete(accessKey);
    this.#authKeys.set(accessKey, { version, key });
    if (this.#authKeys.size > AUTH_KEYS_KEPT) this.#authKeys.delete(this.#authKeys.keys().next().value as string);
    return key;
  }
}
