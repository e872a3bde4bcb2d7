/** The SQL of merchant request authentication: the nonces that stop replays. */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

type Db = Kysely<Database>;

/** Inserts a key's nonce as given; false when the key already has it (the row was not inserted). */
export async function insertNonce(db: Db, accessKey: string, nonce: string, expiresAt: number): Promise<boolean> {
  const result = await db
    .insertInto('request_nonces')
    .values({ access_key: accessKey, nonce, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['access_key', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Deletes up to `limit` nonces that expired before `now`; returns how many. */
export async function deleteExpiredNonces(db: Db, now: number, limit: number): Promise<number> {
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
