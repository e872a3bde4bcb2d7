import { randomUUID } from 'node:crypto';
import { computeSign, type SignatureHeaders, type SignedParams } from './signing.js';

export interface Credentials {
  accessKey: string;
  secretKey: string;
}

/** Fresh access_key, timestamp, nonce and sign headers for one request. */
export function signedHeaders(
  credentials: Credentials,
  params: SignedParams,
  now: number = Date.now(),
  nonce: string = randomUUID(),
): SignatureHeaders {
  const base = { access_key: credentials.accessKey, timestamp: String(now), nonce };
  return { ...base, sign: computeSign(credentials.secretKey, params, base) };
}
