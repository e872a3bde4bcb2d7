import type { Selectable } from 'kysely';
import type { OperatorRecoveryCodeTable, OperatorTable, OperatorTokenTable } from '../store/schema.js';
import type { ReadDb, Tx } from '../store/store.js';

export type OperatorRow = Selectable<OperatorTable>;
export type OperatorTokenRow = Selectable<OperatorTokenTable>;
export type RecoveryCodeRow = Selectable<OperatorRecoveryCodeTable>;

export function findOperatorByEmail(db: ReadDb, email: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operators').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findOperator(db: ReadDb, id: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listOperators(db: ReadDb): Promise<OperatorRow[]> {
  return db.selectFrom('operators').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function insertOperator(tx: Tx, row: OperatorRow): Promise<void> {
  await tx.insertInto('operators').values(row).execute();
}

export async function updateOperator(
  tx: Tx,
  id: string,
  changes: Partial<Omit<OperatorRow, 'id' | 'email' | 'created_at'>>,
): Promise<void> {
  await tx.updateTable('operators').set(changes).where('id', '=', id).execute();
}

export async function insertToken(tx: Tx, row: OperatorTokenRow): Promise<void> {
  await tx.insertInto('operator_tokens').values(row).execute();
}

export function findToken(db: ReadDb, id: string): Promise<OperatorTokenRow | undefined> {
  return db.selectFrom('operator_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The token with this hash, if it is live (not revoked, not expired) and its operator is active. */
export function findLiveToken(
  db: ReadDb,
  tokenHash: string,
  now: number,
): Promise<
  | (Pick<OperatorTokenRow, 'id' | 'last_used_at'> & Pick<OperatorRow, 'email' | 'role'> & { operator_id: string })
  | undefined
> {
  return db
    .selectFrom('operator_tokens as t')
    .innerJoin('operators as o', 'o.id', 't.operator_id')
    .select(['t.id', 't.last_used_at', 't.operator_id', 'o.email', 'o.role'])
    .where('t.token_hash', '=', tokenHash)
    .where('t.revoked_at', 'is', null)
    .where('t.expires_at', '>', now)
    .where('o.state', '=', 'active')
    .executeTakeFirst();
}

/** Revokes a live token; false when it is unknown or was revoked already. */
export async function revokeToken(tx: Tx, id: string, now: number): Promise<boolean> {
  const result = await tx
    .updateTable('operator_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function touchToken(tx: Tx, id: string, now: number): Promise<void> {
  await tx.updateTable('operator_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
}

export function listTokens(db: ReadDb, operatorId: string): Promise<OperatorTokenRow[]> {
  return db
    .selectFrom('operator_tokens')
    .selectAll()
    .where('operator_id', '=', operatorId)
    .orderBy('created_at')
    .execute();
}

export async function replaceRecoveryCodes(tx: Tx, operatorId: string, rows: RecoveryCodeRow[]): Promise<void> {
  await tx.deleteFrom('operator_recovery_codes').where('operator_id', '=', operatorId).execute();
  if (rows.length > 0) await tx.insertInto('operator_recovery_codes').values(rows).execute();
}

/** Uses an unused recovery code of the operator; false when there is none with that hash. */
export async function useRecoveryCode(tx: Tx, operatorId: string, codeHash: string, now: number): Promise<boolean> {
  const result = await tx
    .updateTable('operator_recovery_codes')
    .set({ used_at: now })
    .where('operator_id', '=', operatorId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countUnusedRecoveryCodes(db: ReadDb, operatorId: string): Promise<number> {
  const row = await db
    .selectFrom('operator_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('operator_id', '=', operatorId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function insertSession(
  tx: Tx,
  row: {
    id: string;
    operator_id: string;
    stage: 'password' | 'enrol' | 'full';
    created_at: number;
    expires_at: number;
  },
): Promise<void> {
  await tx.insertInto('operator_sessions').values(row).execute();
}

export function findSession(
  db: ReadDb,
  id: string,
  now: number,
): Promise<{ id: string; operator_id: string; stage: 'password' | 'enrol' | 'full'; expires_at: number } | undefined> {
  return db
    .selectFrom('operator_sessions')
    .select(['id', 'operator_id', 'stage', 'expires_at'])
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function setSessionStage(tx: Tx, id: string, stage: 'password' | 'enrol' | 'full'): Promise<void> {
  await tx.updateTable('operator_sessions').set({ stage }).where('id', '=', id).execute();
}

export async function deleteSession(tx: Tx, id: string): Promise<void> {
  await tx.deleteFrom('operator_sessions').where('id', '=', id).execute();
}

export async function deleteSessionsOf(tx: Tx, operatorId: string): Promise<void> {
  await tx.deleteFrom('operator_sessions').where('operator_id', '=', operatorId).execute();
}
