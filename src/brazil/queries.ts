/**
 * The Brazil module's queries: the vouchers table, one row per successful order whose voucher link
 * was asked for, keyed by the unguessable token of its public link; and, with BRAZIL_RAIL=apipix,
 * the PSP's charges, the Pix it received and the Pix sent for transfers. Each works on SQLite and
 * PostgreSQL alike.
 */
import type { Kysely, Selectable } from 'kysely';
import type {
  BoletoChargeState,
  BoletoChargeTable,
  Database,
  PixChargeState,
  PixChargeTable,
  PixPayoutTable,
  PixReceivedTable,
  VoucherTable,
} from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

type Db = Kysely<Database>;

export type VoucherRow = Selectable<VoucherTable>;

/** The token of the order's voucher; undefined while it has none. */
export async function voucherTokenOfOrder(db: ReadDb, orderId: string): Promise<string | undefined> {
  const row = await db.selectFrom('vouchers').select('token').where('order_id', '=', orderId).executeTakeFirst();
  return row?.token;
}

/** Records a voucher; does nothing when the order (or the token) already has one. */
export async function insertVoucher(db: Db, row: VoucherRow): Promise<void> {
  await db
    .insertInto('vouchers')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The id of the order whose voucher has the token; undefined for an unknown token. */
export async function orderOfVoucher(db: ReadDb, token: string): Promise<string | undefined> {
  const row = await db.selectFrom('vouchers').select('order_id').where('token', '=', token).executeTakeFirst();
  return row?.order_id;
}

// ---- API Pix: charges, received Pix, payouts -----------------------------------------------------

export type PixChargeRow = Selectable<PixChargeTable>;
export type PixReceivedRow = Selectable<PixReceivedTable>;
export type PixPayoutRow = Selectable<PixPayoutTable>;

/** Records a charge the PSP made; nothing when it is already recorded (a repeated attempt). */
export async function insertPixCharge(db: Db, row: PixChargeRow): Promise<void> {
  await db
    .insertInto('pix_charges')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export function pixChargeByTxid(db: ReadDb, txid: string): Promise<PixChargeRow | undefined> {
  return db.selectFrom('pix_charges').selectAll().where('txid', '=', txid).executeTakeFirst();
}

export async function setPixChargeState(db: Db, txid: string, state: PixChargeState, now: number): Promise<void> {
  await db.updateTable('pix_charges').set({ state, updated_at: now }).where('txid', '=', txid).execute();
}

/** Charges still payable at the PSP whose order no longer waits for a payment (expired, cancelled). */
export function pixChargesToRemove(db: ReadDb, pending: number, limit: number): Promise<PixChargeRow[]> {
  return db
    .selectFrom('pix_charges')
    .innerJoin('orders', 'orders.id', 'pix_charges.order_id')
    .selectAll('pix_charges')
    .where('pix_charges.state', '=', 'active')
    .where('orders.status', '<>', pending)
    .orderBy('pix_charges.created_at')
    .limit(limit)
    .execute();
}

export function pixReceived(db: ReadDb, e2eid: string): Promise<PixReceivedRow | undefined> {
  return db.selectFrom('pix_received').selectAll().where('e2eid', '=', e2eid).executeTakeFirst();
}

export function pixReceivedOfOrder(db: ReadDb, orderId: string): Promise<PixReceivedRow[]> {
  return db.selectFrom('pix_received').selectAll().where('order_id', '=', orderId).orderBy('created_at').execute();
}

export async function insertPixReceived(db: Db, row: PixReceivedRow): Promise<void> {
  await db.insertInto('pix_received').values(row).execute();
}

export async function updatePixReceived(
  db: Db,
  e2eid: string,
  change: Partial<Omit<PixReceivedRow, 'e2eid' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('pix_received').set(change).where('e2eid', '=', e2eid).execute();
}

/**
 * Moves a received Pix as `change` says (its return asked for by the operator), from the state it
 * was read in (its disposition and refund id); false when another request moved it first.
 */
export async function claimPixReturn(
  db: Db,
  from: Pick<PixReceivedRow, 'e2eid' | 'disposition' | 'refund_id'>,
  change: Pick<
    PixReceivedRow,
    'disposition' | 'reason' | 'refund_id' | 'refund_status' | 'refund_rtr_id' | 'next_check_at' | 'updated_at'
  >,
): Promise<boolean> {
  const result = await db
    .updateTable('pix_received')
    .set({
      disposition: change.disposition,
      reason: change.reason,
      refund_id: change.refund_id,
      refund_status: change.refund_status,
      refund_rtr_id: change.refund_rtr_id,
      next_check_at: change.next_check_at,
      updated_at: change.updated_at,
    })
    .where('e2eid', '=', from.e2eid)
    .where('disposition', '=', from.disposition)
    .where((eb) => (from.refund_id === null ? eb('refund_id', 'is', null) : eb('refund_id', '=', from.refund_id)))
    // Not while an assignment to an order waits for its approval.
    .where('approval_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Holds an unmatched Pix (or one whose return failed) for a pending assignment: only one not held
 * already and still in the disposition it was read in moves. Whether it did.
 */
export async function holdPixForAssignment(
  db: Db,
  from: Pick<PixReceivedRow, 'e2eid' | 'disposition'>,
  approvalId: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('pix_received')
    .set({ approval_id: approvalId, updated_at: now })
    .where('e2eid', '=', from.e2eid)
    .where('disposition', '=', from.disposition)
    .where('approval_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Lets go of a Pix held by a rejected assignment: it is unmatched (or its return failed) as before. */
export async function releasePixHold(db: Db, e2eid: string, approvalId: string, now: number): Promise<void> {
  await db
    .updateTable('pix_received')
    .set({ approval_id: null, updated_at: now })
    .where('e2eid', '=', e2eid)
    .where('approval_id', '=', approvalId)
    .where('disposition', '<>', 'credited')
    .execute();
}

/**
 * Credits a received Pix to the order an operator assigned it to, from the state it was read in
 * (its disposition, and the approval holding it or none); false when something moved it first.
 */
export async function claimPixAssignment(
  db: Db,
  from: Pick<PixReceivedRow, 'e2eid' | 'disposition' | 'approval_id'>,
  change: Pick<PixReceivedRow, 'order_id' | 'approval_id' | 'assigned_by' | 'assigned_reason' | 'assigned_at'>,
): Promise<boolean> {
  const result = await db
    .updateTable('pix_received')
    .set({
      ...change,
      disposition: 'credited',
      reason: null,
      next_check_at: null,
      updated_at: change.assigned_at ?? 0,
    })
    .where('e2eid', '=', from.e2eid)
    .where('disposition', '=', from.disposition)
    .where((eb) =>
      from.approval_id === null ? eb('approval_id', 'is', null) : eb('approval_id', '=', from.approval_id),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Changes a return still under way under `refundId`; false when it is no longer (another node or
 * delivery recorded its end, or the operator asked again under another id).
 */
export async function updateReturning(
  db: Db,
  e2eid: string,
  refundId: string,
  change: Partial<Omit<PixReceivedRow, 'e2eid' | 'created_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('pix_received')
    .set(change)
    .where('e2eid', '=', e2eid)
    .where('disposition', '=', 'returning')
    .where('refund_id', '=', refundId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Pix received that were not credited to an order, newest first: all of them, or those of one
 * disposition (the `disposition <> 'credited'` term lets both databases use the partial index).
 */
export function pixReceivedList(
  db: ReadDb,
  disposition: Exclude<PixReceivedRow['disposition'], 'credited'> | undefined,
  limit: number,
): Promise<PixReceivedRow[]> {
  let query = db.selectFrom('pix_received').selectAll().where('disposition', '<>', 'credited');
  if (disposition !== undefined) query = query.where('disposition', '=', disposition);
  return query.orderBy('created_at', 'desc').limit(limit).execute();
}

/** The merchant's Pix that were not credited to an order of theirs (returned, or being returned), newest first. */
export function merchantPixReturns(db: ReadDb, merchantId: string, limit: number): Promise<PixReceivedRow[]> {
  return db
    .selectFrom('pix_received')
    .innerJoin('orders', 'orders.id', 'pix_received.order_id')
    .selectAll('pix_received')
    .where('pix_received.disposition', '<>', 'credited')
    .where('orders.merchant_id', '=', merchantId)
    .orderBy('pix_received.created_at', 'desc')
    .limit(limit)
    .execute();
}

/** Returns (refunds) due to be asked for or asked about. */
export function pixReturnsDue(db: ReadDb, now: number, limit: number): Promise<PixReceivedRow[]> {
  return db
    .selectFrom('pix_received')
    .selectAll()
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
}

export async function insertPixPayout(db: Db, row: PixPayoutRow): Promise<void> {
  await db
    .insertInto('pix_payouts')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export function pixPayout(db: ReadDb, idEnvio: string): Promise<PixPayoutRow | undefined> {
  return db.selectFrom('pix_payouts').selectAll().where('id_envio', '=', idEnvio).executeTakeFirst();
}

export async function updatePixPayout(
  db: Db,
  idEnvio: string,
  change: Partial<Omit<PixPayoutRow, 'id_envio' | 'order_id' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('pix_payouts').set(change).where('id_envio', '=', idEnvio).execute();
}

/** Payouts whose result is late: due to be asked about. */
export function pixPayoutsDue(db: ReadDb, now: number, limit: number): Promise<PixPayoutRow[]> {
  return db
    .selectFrom('pix_payouts')
    .selectAll()
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
}

/**
 * Makes the order's business at the PSP due now (an operator asks again): a payout whose result is
 * awaited, and says whether a charge of it is active (the next reconciliation lists what it received).
 */
export async function pixOrderDueNow(db: Db, orderId: string, now: number): Promise<number> {
  const payouts = await db
    .updateTable('pix_payouts')
    .set({ next_check_at: now })
    .where('order_id', '=', orderId)
    .where('next_check_at', 'is not', null)
    .executeTakeFirst();
  const charges = await db
    .selectFrom('pix_charges')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('order_id', '=', orderId)
    .where('state', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(payouts.numUpdatedRows) + charges.n;
}

// ---- boletos registered at an issuer ----------------------------------------------------------

export type BoletoChargeRow = Selectable<BoletoChargeTable>;

/** Records an order's boleto; nothing when it is already recorded (a repeated attempt). */
export async function insertBoletoCharge(db: Db, row: BoletoChargeRow): Promise<void> {
  await db
    .insertInto('boleto_charges')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export function boletoCharge(db: ReadDb, orderId: string): Promise<BoletoChargeRow | undefined> {
  return db.selectFrom('boleto_charges').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

/** The boleto the issuer knows by `chargeId`, or whose reference (seuNumero) is `reference`. */
export function boletoChargeOfIssuer(
  db: ReadDb,
  issuer: BoletoChargeRow['issuer'],
  chargeId: string,
  reference: string | undefined,
): Promise<BoletoChargeRow | undefined> {
  return db
    .selectFrom('boleto_charges')
    .selectAll()
    .where('issuer', '=', issuer)
    .where((eb) =>
      reference === undefined
        ? eb('charge_id', '=', chargeId)
        : eb.or([eb('charge_id', '=', chargeId), eb('reference', '=', reference), eb('order_id', '=', reference)]),
    )
    .executeTakeFirst();
}

/** Changes an order's boleto; only while it is in one of `from` when given. Whether it changed. */
export async function updateBoletoCharge(
  db: Db,
  orderId: string,
  changes: Partial<Omit<BoletoChargeRow, 'order_id' | 'issuer' | 'reference' | 'created_at'>>,
  from?: readonly BoletoChargeState[],
): Promise<boolean> {
  let update = db.updateTable('boleto_charges').set(changes).where('order_id', '=', orderId);
  if (from !== undefined) update = update.where('state', 'in', from);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Claims the issue of a boleto due to be issued: only the attempt that saw `attempts` earlier
 * requests moves it (one node issues it); it counts one more request and holds it until `until`.
 */
export async function claimBoletoIssue(
  db: Db,
  orderId: string,
  attempts: number,
  until: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('boleto_charges')
    .set({ issue_attempts: attempts + 1, next_check_at: until, updated_at: now })
    .where('order_id', '=', orderId)
    .where('state', '=', 'to_issue')
    .where('issue_attempts', '=', attempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records what became of a boleto's payment, once: only a boleto with no disposition yet moves, so
 * when several nodes or notifications report one payment, the first records it.
 */
export async function claimBoletoPayment(
  db: Db,
  orderId: string,
  changes: Pick<BoletoChargeRow, 'disposition' | 'paid_amount' | 'paid_at' | 'paid_method' | 'state' | 'updated_at'> &
    Partial<Pick<BoletoChargeRow, 'issuer_status' | 'next_check_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('boleto_charges')
    .set(changes)
    .where('order_id', '=', orderId)
    .where('disposition', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** An order's status, read in the unit of work that moves it. */
export async function orderStatus(db: Db, orderId: string): Promise<number | undefined> {
  const row = await db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirst();
  return row?.status;
}

/** Boletos with something due: an issue to send, a registration to follow. */
export function boletoChargesDue(db: ReadDb, now: number, limit: number): Promise<BoletoChargeRow[]> {
  return db
    .selectFrom('boleto_charges')
    .selectAll()
    .where('next_check_at', 'is not', null)
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
}

/** Boletos still registered (or on their way) at the issuer whose order no longer waits for a payment: to be written off. */
export function boletoChargesToCancel(db: ReadDb, pending: number, limit: number): Promise<BoletoChargeRow[]> {
  return db
    .selectFrom('boleto_charges')
    .innerJoin('orders', 'orders.id', 'boleto_charges.order_id')
    .selectAll('boleto_charges')
    .where('boleto_charges.state', 'in', ['open', 'processing'])
    .where('orders.status', '<>', pending)
    .orderBy('boleto_charges.created_at')
    .limit(limit)
    .execute();
}

/** Boletos paid when their order no longer took a payment, newest first. */
export function boletoSuspense(db: ReadDb, limit: number): Promise<BoletoChargeRow[]> {
  return db
    .selectFrom('boleto_charges')
    .selectAll()
    .where('disposition', '=', 'suspense')
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
}
