import type { PausedSince } from '../http/caller.js';
import type { Language } from '../http/language.js';
import type { ApiKeyStatus } from '../store/schema.js';
import type { IpWhitelist } from './ip-whitelist.js';
import type { PermissionGrant } from './permissions.js';

/** The key as request authentication needs it. */
export interface AuthKey {
  accessKey: string;
  merchantId: string;
  merchantLanguage: Language;
  secretKey: string;
  permissions: PermissionGrant[];
  whitelist: IpWhitelist;
  debug: boolean;
  status: ApiKeyStatus;
  activeAt: number;
  /** The merchant's pauses, read with the key (the create routes refuse by them). */
  pausedSince: PausedSince;
  /** How long the merchant's payers have to pay a collection, read with the key (the create needs it). */
  cashierLifetimeMs: number;
}

/** Where authentication looks keys up (the merchants' service provides it). */
export interface AuthKeys {
  /** The key, its merchant's language and its opened secret, or undefined when unknown. */
  findKeyForAuth(accessKey: string): Promise<AuthKey | undefined>;
  /** Notes that a request signed with the key passed authentication (the key's "last used"). */
  noteKeyUse(accessKey: string, now: number): void;
}
