import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { IpWhitelist, whitelistEntryProblem } from '../auth/ip-whitelist.js';
import type { AuthKey, AuthKeys } from '../auth/keys.js';
import { isPermissionGrant, PERMISSION_GRANTS, type PermissionGrant } from '../auth/permissions.js';
import { OperatorError } from '../admin/failures.js';
import { ApiError } from '../http/failures.js';
import { isLanguage, type Language } from '../http/language.js';
import { newId } from '../store/ids.js';
import type { SecretBox } from '../store/secret-box.js';
import type { Store } from '../store/store.js';
import type { ApiKeyStatus } from '../store/schema.js';
import * as q from './queries.js';
import { offeredMethods, type CashierMethod } from './cashier-methods.js';

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
  createdAt: number;
}

/** An API key as operators and merchants see it: never the secret. */
export interface ApiKeyView {
  accessKey: string;
  label: string;
  permissions: PermissionGrant[];
  ipWhitelist: string[];
  debug: boolean;
  status: ApiKeyStatus;
  activeAt: number;
  createdAt: number;
  updatedAt: number;
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

function toMerchant(row: q.MerchantRow): Merchant {
  return {
    merchantId: row.id,
    name: row.name,
    language: isLanguage(row.language) ? row.language : 'en',
    callbackUrl: row.callback_url,
    settlementDelayMs: row.settlement_delay_ms,
    cashierLifetimeMs: row.cashier_lifetime_ms,
    cashierMethods: offeredMethods(row.cashier_methods),
    createdAt: row.created_at,
  };
}

function toKeyView(row: q.ApiKeyRow): ApiKeyView {
  return {
    accessKey: row.access_key,
    label: row.label,
    permissions: JSON.parse(row.permissions) as PermissionGrant[],
    ipWhitelist: JSON.parse(row.ip_whitelist) as string[],
    debug: row.debug === 1,
    status: row.status,
    activeAt: row.active_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
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
  ]);
}

/** Merchants, their API keys and their unified callback address. */
export class MerchantService implements AuthKeys {
  /** Keys as authentication last opened them, with the version of the row they were opened from. */
  readonly #authKeys = new Map<string, { version: string; key: AuthKey }>();
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
      created_at: now,
      updated_at: now,
    };
    await this.store.transact((tx) => q.insertMerchant(tx, row));
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

  /** The lifetime applies to collections created from now on; the methods to aggregate cashiers opened from now on. */
  setCashierSettings(
    merchantId: string,
    settings: { lifetimeMs?: number | undefined; methods?: readonly CashierMethod[] | undefined },
  ): Promise<Merchant> {
    return this.changeMerchant(merchantId, {
      ...(settings.lifetimeMs !== undefined && { cashier_lifetime_ms: settings.lifetimeMs }),
      ...(settings.methods !== undefined && { cashier_methods: JSON.stringify([...new Set(settings.methods)]) }),
    });
  }

  private changeMerchant(
    merchantId: string,
    changes: Partial<
      Pick<q.MerchantRow, 'callback_url' | 'settlement_delay_ms' | 'cashier_lifetime_ms' | 'cashier_methods'>
    >,
  ): Promise<Merchant> {
    return this.store.transact(async (tx) => {
      const row = await q.findMerchant(tx, merchantId);
      if (row === undefined) throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      const update = { ...changes, updated_at: this.clock.now() };
      await q.updateMerchant(tx, merchantId, update);
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
    const accessKey = `AK${randomBytes(16).toString('hex')}`;
    const secretKey = randomBytes(32).toString('hex');
    const now = this.clock.now();
    const activeAt = now + activationDelayMs;
    await this.store.transact(async (tx) => {
      if ((await q.findMerchant(tx, merchantId)) === undefined) {
        throw new OperatorError({ kind: 'merchant_not_found', merchantId });
      }
      await q.insertApiKey(tx, {
        access_key: accessKey,
        merchant_id: merchantId,
        label: settings.label ?? '',
        secret_sealed: this.secrets.seal(secretKey, accessKey),
        permissions: JSON.stringify(permissions),
        ip_whitelist: JSON.stringify(whitelist),
        debug: settings.debug === true ? 1 : 0,
        status: 'active',
        active_at: activeAt,
        created_at: now,
        updated_at: now,
      });
    });
    return { accessKey, secretKey, activeAt };
  }

  /** The merchant's keys, oldest first; deleted keys too when asked (the console lists them as deleted). */
  async listApiKeys(merchantId: string, options: { includeDeleted?: boolean } = {}): Promise<ApiKeyView[]> {
    await this.getMerchant(merchantId);
    return (await q.listApiKeys(this.store.read, merchantId, options.includeDeleted === true)).map(toKeyView);
  }

  /** One of the merchant's keys (deleted ones too), or undefined: another merchant's key is not found. */
  async findApiKey(merchantId: string, accessKey: string): Promise<ApiKeyView | undefined> {
    const row = await q.findApiKey(this.store.read, merchantId, accessKey);
    return row === undefined ? undefined : toKeyView(row);
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
    return this.changeKey(merchantId, accessKey, (row, now) =>
      enabled
        ? { status: 'active', active_at: row.status === 'active' ? row.active_at : now + this.keyActivationDelayMs }
        : { status: 'disabled' },
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
      const row = await q.findApiKey(tx, merchantId, accessKey);
      if (row === undefined) throw new OperatorError({ kind: 'api_key_not_found', accessKey });
      if (row.status === 'deleted') throw new OperatorError({ kind: 'api_key_deleted', accessKey });
      const now = this.clock.now();
      const changes = { ...change(row, now), updated_at: now };
      await q.updateApiKey(tx, accessKey, changes);
      return toKeyView({ ...row, ...changes });
    });
  }

  /** The key, its merchant's language and its opened secret, or undefined when unknown. */
  async findKeyForAuth(accessKey: string): Promise<AuthKey | undefined> {
    // The row is read every time, so an edit, a disabling or a deletion on any node holds at once;
    // what is derived from it (the opened secret, the parsed permissions and whitelist) is kept
    // while the row stays the same.
    const row = await q.findKeyForAuth(this.store.read, accessKey);
    if (row === undefined) return undefined;
    const version = authKeyVersion(row);
    const cached = this.#authKeys.get(accessKey);
    if (cached?.version === version) return cached.key;
    const view = toKeyView(row);
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
    };
    this.#authKeys.delete(accessKey);
    this.#authKeys.set(accessKey, { version, key });
    if (this.#authKeys.size > AUTH_KEYS_KEPT) this.#authKeys.delete(this.#authKeys.keys().next().value as string);
    return key;
  }
}
