import type { Kysely } from 'kysely';
import type { RequestNonce } from '../http/caller.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';
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

/**
 * The nonce of an authenticated request, to be recorded by the request's own unit of work (see
 * RequestNonce). `replayed` makes the refusal a replay gets (and is told of each one); `recorded`
 * is told once the nonce is committed, so the request is no replay.
 */
export function requestNonce(
  store: Store,
  claim: { accessKey: string; nonce: string; expiresAt: number },
  replayed: () => Error,
  onRecorded: () => void = () => undefined,
): RequestNonce {
  let recorded = false;
  const nonce: RequestNonce = {
    async settle() {
      if (!recorded) await store.transact((tx) => nonce.record(tx));
    },
    async record(tx) {
      if (recorded) return;
      if (!(await recordNonce(tx, claim.accessKey, claim.nonce, claim.expiresAt))) throw replayed();
      // Only a committed unit holds it: one rolled back leaves it to the next unit, or to the answer.
      store.afterCommit(tx, () => {
        recorded = true;
        onRecorded();
      });
    },
  };
  return nonce;
}

/** Deletes up to `limit` nonces whose timestamps have left the window; returns how many. */
export async function pruneExpiredNonces(db: Kysely<Database>, now: number, limit: number): Promise<number> {
  return q.deleteExpiredNonces(db, now, limit);
}
