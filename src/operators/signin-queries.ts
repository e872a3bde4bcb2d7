/**
 * The queries of operators' sign-in that queries.ts does not hold: the failed sign-in counter, the
 * one-use TOTP step, and session housekeeping.
 */
import type { Tx } from '../store/store.js';

/**
 * Counts one more failed sign-in of an operator who is not locked at `now`, and returns the new
 * count; undefined when the operator is locked (another attempt locked them meanwhile: on PostgreSQL
 * the update waits for that attempt's row lock, then reads the row again).
 */
export async function countFailedSignIn(tx: Tx, operatorId: string, now: number): Promise<number | undefined> {
  const row = await tx
    .updateTable('operators')
    .set((eb) => ({ failed_sign_ins: eb('failed_sign_ins', '+', 1), updated_at: now }))
    .where('id', '=', operatorId)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .returning('failed_sign_ins')
    .executeTakeFirst();
  return row?.failed_sign_ins;
}

/** Takes a TOTP time step: true only while it is later than the last step used (a code is good once). */
export async function takeOperatorTotpStep(tx: Tx, operatorId: string, step: number): Promise<boolean> {
  const result = await tx
    .updateTable('operators')
    .set({ totp_last_step: step })
    .where('id', '=', operatorId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends every session of the operator but `keepId`. */
export async function deleteOtherSessionsOf(tx: Tx, operatorId: string, keepId: string): Promise<void> {
  await tx.deleteFrom('operator_sessions').where('operator_id', '=', operatorId).where('id', '<>', keepId).execute();
}

/** Drops the operator's sessions that have ended. */
export async function deleteEndedSessionsOf(tx: Tx, operatorId: string, now: number): Promise<void> {
  await tx
    .deleteFrom('operator_sessions')
    .where('operator_id', '=', operatorId)
    .where('expires_at', '<=', now)
    .execute();
}
