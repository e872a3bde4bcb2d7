import { sql, type Kysely, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { Database, NodeTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type NodeRow = Selectable<NodeTable>;
export type NodeState = 'alive' | 'gone' | 'dead';

export async function insertNode(db: Db, row: NodeRow): Promise<void> {
  await db.insertInto('nodes').values(row).execute();
}

/** Writes the node's heartbeat; false when the node is no longer alive (another node declared it dead). */
export async function beat(db: Db, id: string, at: number): Promise<boolean> {
  const result = await db
    .updateTable('nodes')
    .set({ heartbeat_at: at })
    .where('id', '=', id)
    .where('state', '=', 'alive')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Whether an alive node other than `except` has a heartbeat older than `cutoff` (a look before any write). */
export async function anySilentNode(db: ReadDb, cutoff: number, except: string): Promise<boolean> {
  const row = await db
    .selectFrom('nodes')
    .select('id')
    .where('state', '=', 'alive')
    .where('heartbeat_at', '<', cutoff)
    .where('id', '<>', except)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Declares dead the alive nodes (other than `except`) whose heartbeat is older than `cutoff`, or
 * every other alive node when `cutoff` is null; returns their ids. Of two nodes declaring the same
 * node dead at once, only one gets its id (the update re-checks the state).
 */
export async function declareDead(db: Db, cutoff: number | null, except: string, now: number): Promise<string[]> {
  const rows = await db
    .updateTable('nodes')
    .set({ state: 'dead', ended_at: now })
    .where('state', '=', 'alive')
    .where('id', '<>', except)
    .$if(cutoff !== null, (qb) => qb.where('heartbeat_at', '<', cutoff ?? 0))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Ends a node: 'gone' when it stopped cleanly, 'dead' when it found itself declared dead. */
export async function endNode(db: Db, id: string, state: Exclude<NodeState, 'alive'>, now: number): Promise<void> {
  await db.updateTable('nodes').set({ state, ended_at: now }).where('id', '=', id).execute();
}

/** Of `ids`, those whose node ended (dead or gone): leases they still hold are to be freed. */
export async function endedNodes(db: ReadDb, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('nodes').select('id').where('id', 'in', ids).where('state', '<>', 'alive').execute();
  return rows.map((r) => r.id);
}

/** The nodes, alive first, then the most recently ended. */
export function listNodes(db: ReadDb, limit: number): Promise<NodeRow[]> {
  return db
    .selectFrom('nodes')
    .selectAll()
    .orderBy(sql`case when state = 'alive' then 0 else 1 end`)
    .orderBy('started_at', 'desc')
    .limit(limit)
    .execute();
}

/** Alive nodes whose heartbeat is not older than `cutoff`. */
export async function aliveNodeCount(db: ReadDb, cutoff: number): Promise<number> {
  const row = await db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('state', '=', 'alive')
    .where('heartbeat_at', '>=', cutoff)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Forgets nodes that ended before `before` (their leases were freed when they ended). */
export async function pruneNodes(db: Db, before: number): Promise<number> {
  const result = await db
    .deleteFrom('nodes')
    .where('state', '<>', 'alive')
    .where('ended_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The fence of every lease taken or renewed: true unless `owner` is a node known to have ended. A
 * node declared dead while it was paused takes nothing more under its old id once it wakes: the
 * node that declared it dead freed its leases, and this keeps it from taking new ones. (An owner
 * with no row, such as a one-off CLI command, is not fenced.)
 */
export function ownerNotEnded(owner: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`not exists (select 1 from nodes where nodes.id = ${owner} and nodes.state <> 'alive')`;
}
