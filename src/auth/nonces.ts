import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import * as q from './queries.js';

/** Records a nonce for a key; false when the key already used it (a replay). */
export async function recordNonce(
  db: Kysely<Database>,
  accessKey: string,
  nonce: string,
  expiresAt: number,
): Promise<boolean> {
  return q.insertNonce(db, accessKey, nonce.toLowerCase(), expiresAt);
}

/** Deletes up to `limit` nonces whose timestamps have left the window; returns how many. */
export async function pruneExpiredNonces(db: Kysely<Database>, now: number, limit: number): Promise<number> {
  return q.deleteExpiredNonces(db, now, limit);
}
