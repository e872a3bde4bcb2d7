import { stringToSign, signString, signsEqual } from '@cashgate/sdk';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { ApiError, describeFailure, type ApiFailure } from '../http/failures.js';
import { AuthMetrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import type { AuthKey, AuthKeys } from './keys.js';
import { requestNonce } from './nonces.js';
import { grants, type Permission } from './permissions.js';
import type { KeyRateLimiter } from './rate-limit.js';

export type { CallerHints, MerchantCaller } from '../http/caller.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a signed route requires. */
    permission?: Permission;
  }
}

export interface AuthDeps {
  store: Store;
  merchants: AuthKeys;
  clock: Clock;
  rateLimiter: KeyRateLimiter;
  signatureWindowMs: number;
  /** Where refusals are counted (cashgate_auth_refusals_total). */
  metrics: Registry;
}

const TIMESTAMP = /^\d{13}$/;
const NONCE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SIGN = /^[A-Za-z0-9+/]{27}=$/;
const ACCESS_KEY = /^[A-Za-z0-9]{1,64}$/;

/** The format of each authentication header (the signature tool checks what is pasted against them too). */
export const HEADER_FORMATS = {
  access_key: ACCESS_KEY,
  timestamp: TIMESTAMP,
  nonce: NONCE,
  sign: SIGN,
} as const;
type AuthHeader = keyof typeof HEADER_FORMATS;

function readAuthHeaders(request: FastifyRequest): Record<AuthHeader, string> {
  const values = {} as Record<AuthHeader, string>;
  for (const name of Object.keys(HEADER_FORMATS) as AuthHeader[]) {
    const value = request.headers[name];
    if (value === undefined || value === '') throw new ApiError({ kind: 'header_missing', header: name });
    if (typeof value !== 'string' || !HEADER_FORMATS[name].test(value)) {
      throw new ApiError({ kind: 'header_malformed', header: name, expected: name });
    }
    values[name] = value;
  }
  return values;
}

/** The signed parameters: query parameters for GET, the JSON body's members otherwise. */
function signedParams(request: FastifyRequest): Record<string, unknown> | null {
  const source: unknown = request.method === 'GET' ? request.query : request.body;
  if (source === undefined || source === null) return null;
  // A body that is not a JSON object has no members to sign: a parameter error, not a signature one.
  if (typeof source !== 'object' || Array.isArray(source)) throw new ApiError({ kind: 'body_not_object' });
  return source as Record<string, unknown>;
}

function withSignedString(failure: ApiFailure, key: AuthKey, signed: string): ApiError {
  const error = new ApiError(failure);
  if (key.debug) error.debugDetail = `server string to sign: ${signed}`;
  return error;
}

/**
 * Authenticates every route of the scope it is registered in, in the order of DESIGN §1.6:
 * headers and signature (307), then key state, IP and permission (301), then the rate limit (429).
 * The body is validated afterwards by the route (300).
 */
export function registerMerchantAuth(scope: FastifyInstance, deps: AuthDeps): void {
  const metrics = new AuthMetrics(deps.metrics);
  /** Counts an authentication refusal (307, 301, 429); a body that is no object (300) is a parameter error. */
  const countRefusal = (error: unknown) => {
    if (!(error instanceof ApiError)) return;
    const { code } = describeFailure(error.failure, 'en');
    if (code !== '300') metrics.refused(code, error.failure.kind);
  };
  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const headers = readAuthHeaders(request);
    const params = signedParams(request);
    const key = await deps.merchants.findKeyForAuth(headers.access_key);
    if (key === undefined) throw new ApiError({ kind: 'unknown_access_key' });
    const signed = stringToSign(params, headers);
    request.callerHints = {
      language: key.merchantLanguage,
      debug: key.debug,
      ...(key.debug && {
        debugKey: { accessKey: key.accessKey, merchantId: key.merchantId, signedString: signed, verified: false },
      }),
    };

    if (!signsEqual(signString(key.secretKey, signed), headers.sign)) {
      throw withSignedString({ kind: 'signature_mismatch' }, key, signed);
    }
    if (request.callerHints.debugKey !== undefined) request.callerHints.debugKey.verified = true;
    const now = deps.clock.now();
    const timestamp = Number(headers.timestamp);
    if (Math.abs(now - timestamp) > deps.signatureWindowMs) {
      throw withSignedString(
        { kind: 'timestamp_outside_window', windowSeconds: deps.signatureWindowMs / 1000, serverTime: now },
        key,
        signed,
      );
    }
    // The nonce is recorded with the request's own unit of work (one commit per request); a request
    // refused from here on records it alone first, so a replay is refused as one (307) whatever it asks.
    let tokenTaken = false;
    let accepted = false;
    let replayCounted = false;
    const nonce = requestNonce(
      deps.store,
      { accessKey: key.accessKey, nonce: headers.nonce, expiresAt: timestamp + deps.signatureWindowMs },
      () => {
        // A replay takes no token from the key's rate limit.
        if (tokenTaken) deps.rateLimiter.giveBack(key.accessKey);
        tokenTaken = false;
        // Found by the route's work, after this hook let the request through: counted here, once
        // however often the nonce is offered again for the request.
        if (accepted && !replayCounted) metrics.refused('307', 'nonce_reused');
        replayCounted = true;
        return withSignedString({ kind: 'nonce_reused' }, key, signed);
      },
      // A key's last use is an accepted request's, known once its nonce is committed (no replay).
      () => {
        if (accepted) deps.merchants.noteKeyUse(key.accessKey, now);
      },
    );
    const refuse = async (failure: ApiFailure): Promise<never> => {
      await nonce.settle();
      throw new ApiError(failure);
    };

    if (key.status === 'deleted') return refuse({ kind: 'key_deleted' });
    if (key.status === 'disabled') return refuse({ kind: 'key_disabled' });
    if (now < key.activeAt) return refuse({ kind: 'key_not_active', activeAt: key.activeAt });
    if (!key.whitelist.allows(request.ip)) return refuse({ kind: 'ip_not_whitelisted', ip: request.ip });
    const permission = request.routeOptions.config.permission;
    if (permission === undefined)
      throw new Error(`signed route ${request.routeOptions.url ?? ''} declares no permission`);
    if (!grants(key.permissions, permission)) return refuse({ kind: 'permission_denied', permission });

    const waitMs = deps.rateLimiter.take(key.accessKey, now);
    tokenTaken = waitMs === 0;
    if (waitMs > 0) {
      return refuse({
        kind: 'rate_limited',
        limitPerMinute: deps.rateLimiter.perMinute,
        retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
      });
    }
    accepted = true;
    request.merchantCaller = {
      merchantId: key.merchantId,
      accessKey: key.accessKey,
      language: key.merchantLanguage,
      debug: key.debug,
      pausedSince: key.pausedSince,
      cashierLifetimeMs: key.cashierLifetimeMs,
      nonce,
    };
  };
  scope.addHook('preValidation', async (request) => {
    try {
      await authenticate(request);
    } catch (error) {
      countRefusal(error);
      throw error;
    }
  });
}
