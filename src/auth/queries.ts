/** The SQL of merchant request authentication: the nonces that stop replays. */
import type { Kysely } from 'kysely';
import { prepared } from '../store/prepared.js';
import type { Database } from '../store/schema.js';

type Db = Kysely<Database>;

const insertNonceIfNew = prepared((db, row: { access_key: string; nonce: string; expires_at: number }) =>
  db
    .insertInto('request_nonces')
    .values(row)
    .onConflict((oc) => oc.columns(['access_key', 'nonce']).doNothing()),
);

/** Inserts a key's nonce as given; false when the key already has it (the row was not inserted). */
export async function insertNonce(db: Db, accessKey: string, nonce: string, expiresAt: number): Promise<boolean> {
  const result = await insertNonceIfNew(db, { access_key: accessKey, nonce, expires_at: expiresAt });
  return result.numAffectedRows === 1n;
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
