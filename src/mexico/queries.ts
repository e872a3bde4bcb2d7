/**
 * The Mexico module's queries: the CLABEs issued for orders (and the sequence under each prefix),
 * and the incoming SPEI transfers Cashgate decided on. Each works on SQLite and PostgreSQL alike.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, SpeiAbonoTable } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type SpeiAbonoRow = Selectable<SpeiAbonoTable>;

/**
 * Advances the prefix's sequence by one and returns it (the row stays locked until the
 * transaction ends, so two creates never take the same sequence).
 */
export async function nextClabeSequence(db: Db, prefix: string): Promise<number> {
  await db
    .insertInto('mx_clabe_sequences')
    .values({ prefix, last_sequence: 0 })
    .onConflict((oc) => oc.column('prefix').doNothing())
    .execute();
  const row = await db
    .updateTable('mx_clabe_sequences')
    .set((eb) => ({ last_sequence: eb('last_sequence', '+', 1) }))
    .where('prefix', '=', prefix)
    .returning('last_sequence')
    .executeTakeFirstOrThrow();
  return row.last_sequence;
}

/** Starts the prefix's sequence again from `sequence` (after it reached its last 7-digit value). */
export async function resetClabeSequence(db: Db, prefix: string, sequence: number): Promise<void> {
  await db.updateTable('mx_clabe_sequences').set({ last_sequence: sequence }).where('prefix', '=', prefix).execute();
}

/** When the CLABE was last given to an order; undefined when it never was. */
export async function clabeAssignedAt(db: Db, clabe: string): Promise<number | undefined> {
  const row = await db.selectFrom('mx_clabes').select('assigned_at').where('clabe', '=', clabe).executeTakeFirst();
  return row?.assigned_at;
}

/** Gives the CLABE to the order (a CLABE given before passes to it). */
export async function assignClabe(db: Db, clabe: string, orderId: string, now: number): Promise<void> {
  await db
    .insertInto('mx_clabes')
    .values({ clabe, order_id: orderId, assigned_at: now })
    .onConflict((oc) => oc.column('clabe').doUpdateSet({ order_id: orderId, assigned_at: now }))
    .execute();
}

/** The order the CLABE belongs to; undefined for a CLABE Cashgate never issued. */
export async function orderOfClabe(db: ReadDb, clabe: string): Promise<string | undefined> {
  const row = await db.selectFrom('mx_clabes').select('order_id').where('clabe', '=', clabe).executeTakeFirst();
  return row?.order_id;
}

export function findAbono(db: ReadDb, id: string, rastreoKey: string): Promise<SpeiAbonoRow | undefined> {
  return db
    .selectFrom('spei_abonos')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', id), eb('rastreo_key', '=', rastreoKey)]))
    .executeTakeFirst();
}

/** A recorded transfer by its clave de rastreo and operating day (STP's list of a day carries no id). */
export function findAbonoByRastreo(db: ReadDb, claveRastreo: string, fecha: string): Promise<SpeiAbonoRow | undefined> {
  return db
    .selectFrom('spei_abonos')
    .selectAll()
    .where('clave_rastreo', '=', claveRastreo)
    .where('fecha_operacion', '=', fecha)
    .executeTakeFirst();
}

/** Records the decision on an abono; false when another delivery recorded one first (nothing written). */
export async function insertAbono(db: Db, row: SpeiAbonoRow): Promise<boolean> {
  const result = await db
    .insertInto('spei_abonos')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function updateAbono(
  db: Db,
  id: string,
  changes: Partial<
    Pick<
      SpeiAbonoRow,
      | 'decision'
      | 'stp_estado'
      | 'checked_at'
      | 'return_state'
      | 'return_rastreo'
      | 'return_folio'
      | 'return_attempts'
      | 'last_error'
    >
  > & { updated_at: number },
): Promise<void> {
  await db.updateTable('spei_abonos').set(changes).where('id', '=', id).execute();
}

/** Moves a return from one state to the next; false when another worker moved it first. */
export async function claimAbonoReturn(
  db: Db,
  id: string,
  from: NonNullable<SpeiAbonoRow['return_state']>,
  changes: Partial<Pick<SpeiAbonoRow, 'return_state' | 'return_folio' | 'return_attempts' | 'last_error'>> & {
    updated_at: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('spei_abonos')
    .set(changes)
    .where('id', '=', id)
    .where('return_state', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Abonos whose return Cashgate must still send or follow. */
export function openAbonoReturns(db: ReadDb, limit: number): Promise<SpeiAbonoRow[]> {
  return db
    .selectFrom('spei_abonos')
    .selectAll()
    .where('return_state', 'in', ['to_send', 'sent'])
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

export function abonoByReturnRastreo(db: ReadDb, rastreo: string): Promise<SpeiAbonoRow | undefined> {
  return db.selectFrom('spei_abonos').selectAll().where('return_rastreo', '=', rastreo).executeTakeFirst();
}

/** Abonos no waiting order took (returned, or to be returned), newest first: the operator's view. */
export function unmatchedAbonos(db: ReadDb, limit: number): Promise<SpeiAbonoRow[]> {
  return db
    .selectFrom('spei_abonos')
    .selectAll()
    .where('disposition', '!=', 'credited')
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** When the oldest aggregate-cashier order of the channel still waiting for its payment was created; undefined when none waits. */
export async function oldestWaitingOrder(db: ReadDb, channelType: 'SPEI' | 'OXXO'): Promise<number | undefined> {
  const row = await db
    .selectFrom('orders')
    .select((eb) => eb.fn.min('created_at').as('oldest'))
    .where('area', '=', 'cashier')
    .where('channel_type', '=', channelType)
    .where('status', '=', 1)
    .executeTakeFirst();
  return row?.oldest ?? undefined;
}
