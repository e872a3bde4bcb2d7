import type { Selectable } from 'kysely';
import type { CheckoutTable, PayerDocumentTable } from '../store/schema.js';
import type { ReadDb, Tx } from '../store/store.js';

export type CheckoutRow = Selectable<CheckoutTable>;

export async function insertCheckout(tx: Tx, row: CheckoutRow): Promise<void> {
  await tx.insertInto('checkouts').values(row).execute();
}

export function findCheckout(db: ReadDb, checkoutId: string): Promise<CheckoutRow | undefined> {
  return db.selectFrom('checkouts').selectAll().where('id', '=', checkoutId).executeTakeFirst();
}

export function findCheckoutByExternalId(
  db: ReadDb,
  merchantId: string,
  externalOrderId: string,
): Promise<CheckoutRow | undefined> {
  return db
    .selectFrom('checkouts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('external_order_id', '=', externalOrderId)
    .executeTakeFirst();
}

/** Binds the cashier's one order; false when another order was bound first. */
export async function bindCheckoutOrder(tx: Tx, checkoutId: string, orderId: string): Promise<boolean> {
  const bound = await tx
    .updateTable('checkouts')
    .set({ order_id: orderId })
    .where('id', '=', checkoutId)
    .where('order_id', 'is', null)
    .executeTakeFirst();
  return bound.numUpdatedRows > 0n;
}

export function findPayerDocument(
  db: ReadDb,
  merchantId: string,
  userIdentity: string,
): Promise<Selectable<PayerDocumentTable> | undefined> {
  return db
    .selectFrom('payer_documents')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('user_identity', '=', userIdentity)
    .executeTakeFirst();
}

/** Saves the document a payer entered under the merchant's userIdentity; a saved one stays. */
export async function savePayerDocument(tx: Tx, row: Selectable<PayerDocumentTable>): Promise<void> {
  await tx
    .insertInto('payer_documents')
    .values(row)
    .onConflict((oc) => oc.columns(['merchant_id', 'user_identity']).doNothing())
    .execute();
}
