import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

/** Records a nonce for a key; false when the key already used it (a replay). */
export async function recordNonce(
  db: Kysely<Database>,
  accessKey: string,
  nonce: string,
  expiresAt: number,
): Promise<boolean> {
  const result = await db
    .insertInto('request_nonces')
    .values({ access_key: accessKey, nonce: nonce.toLowerCase(), expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['access_key', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Deletes up to `limit` nonces whose timestamps have left the window; returns how many. */
export async function pruneExpiredNonces(db: Kysely<Database>, now: number, limit: number): Promise<number> {
  const expired = db
    .selectFrom('request_nonces')
    .select(['access_key', 'nonce'])
    .where('expires_at', '<', now)
    .limit(limit)
    .$asTuple('access_key', 'nonce');
  const result = await db
    .deleteFrom('request_nonces')
    .where((eb) => eb(eb.refTuple('access_key', 'nonce'), 'in', expired))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
