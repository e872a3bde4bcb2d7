import type { Selectable } from 'kysely';
import type { AuditLogTable } from '../store/schema.js';
import type { ReadDb, Tx } from '../store/store.js';

export type AuditRow = Selectable<AuditLogTable>;

/**
 * The chain's head, locked for the rest of the unit of work: a no-op update takes the row lock on
 * PostgreSQL (SQLite has one writer), so appends are chained one after the other in commit order.
 */
export async function lockAuditHead(tx: Tx): Promise<{ seq: number; hash: string }> {
  const row = await tx
    .updateTable('audit_head')
    .set((eb) => ({ seq: eb.ref('seq') }))
    .where('id', '=', 1)
    .returning(['seq', 'hash'])
    .executeTakeFirstOrThrow();
  return { seq: row.seq, hash: row.hash };
}

export async function appendAuditRow(tx: Tx, row: AuditRow): Promise<void> {
  await tx.insertInto('audit_log').values(row).execute();
  await tx.updateTable('audit_head').set({ seq: row.seq, hash: row.hash }).where('id', '=', 1).execute();
}

export async function auditHead(db: ReadDb): Promise<{ seq: number; hash: string } | undefined> {
  const row = await db.selectFrom('audit_head').select(['seq', 'hash']).where('id', '=', 1).executeTakeFirst();
  return row === undefined ? undefined : { seq: row.seq, hash: row.hash };
}

/** Records in chain order, `limit` at a time after `afterSeq`. */
export function auditRowsAfter(db: ReadDb, afterSeq: number, limit: number): Promise<AuditRow[]> {
  return db.selectFrom('audit_log').selectAll().where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
}

export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  /** Records older than this sequence number (the cursor of the page before). */
  beforeSeq?: number | undefined;
  /** Records newer than this sequence number (export). */
  afterSeq?: number | undefined;
}

/** Records matching `filter`, newest first (or oldest first for an export), at most `limit`. */
export function findAuditRows(
  db: ReadDb,
  filter: AuditFilter,
  limit: number,
  order: 'newest' | 'oldest',
): Promise<AuditRow[]> {
  let query = db.selectFrom('audit_log').selectAll();
  if (filter.actor !== undefined) {
    const actor = filter.actor;
    query = query.where((eb) =>
      eb.or([
        eb('actor_id', '=', actor),
        eb('actor_email', '=', actor.toLowerCase()),
        eb('actor_type', '=', actor as AuditLogTable['actor_type']),
      ]),
    );
  }
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  if (filter.from !== undefined) query = query.where('at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('at', '<', filter.to);
  if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq);
  if (filter.afterSeq !== undefined) query = query.where('seq', '>', filter.afterSeq);
  return query
    .orderBy('seq', order === 'newest' ? 'desc' : 'asc')
    .limit(limit)
    .execute();
}
