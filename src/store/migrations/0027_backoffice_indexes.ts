import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/** The order details members the back office finds an order by (an M-Pesa receipt, a Pix e2eid, a transaction hash). */
export const DETAILS_ID_MEMBERS = {
  mpesaReceipt: 'orders_mpesa_receipt',
  endToEndId: 'orders_end_to_end_id',
  tradeHash: 'orders_trade_hash',
} as const;

/** A details member as text, written exactly as src/backoffice/queries.ts reads it (an expression index serves only its own expression). */
function member(postgres: boolean, name: string): RawBuilder<unknown> {
  return postgres
    ? sql`(cast(details as jsonb) ->> ${sql.lit(name)})`
    : sql`json_extract(details, ${sql.lit(`$.${name}`)})`;
}

// The back office's orders across every merchant: newest first (alone, or by status or channel)
// from an index, and an order found by any id it is known by, each kind of id one exact-match
// lookup, so that the page stays fast at a million orders (docs/operations.md, bench:scale).
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.createIndex('orders_created').on('orders').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('orders_status_created').on('orders').columns(['status', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('orders_channel_created')
    .on('orders')
    .columns(['channel_type', 'created_at', 'id'])
    .execute();
  // The merchant's externalOrderId without its merchant, area and kind (the unique key starts with the merchant).
  await db.schema.createIndex('orders_external_order_id').on('orders').column('external_order_id').execute();
  await db.schema
    .createIndex('orders_channel_order_id')
    .on('orders')
    .column('channel_order_id')
    .where(sql.ref('channel_order_id'), 'is not', null)
    .execute();
  for (const [name, index] of Object.entries(DETAILS_ID_MEMBERS)) {
    await sql`create index ${sql.id(index)} on orders (${member(postgres, name)}) where ${member(postgres, name)} is not null`.execute(
      db,
    );
  }
  await db.schema
    .createIndex('pix_payouts_e2eid')
    .on('pix_payouts')
    .column('e2eid')
    .where(sql.ref('e2eid'), 'is not', null)
    .execute();
  await db.schema.createIndex('chain_transfers_tx_hash').on('chain_transfers').column('tx_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('chain_transfers_tx_hash').execute();
  await db.schema.dropIndex('pix_payouts_e2eid').execute();
  for (const index of Object.values(DETAILS_ID_MEMBERS)) await db.schema.dropIndex(index).execute();
  await db.schema.dropIndex('orders_channel_order_id').execute();
  await db.schema.dropIndex('orders_external_order_id').execute();
  await db.schema.dropIndex('orders_channel_created').execute();
  await db.schema.dropIndex('orders_status_created').execute();
  await db.schema.dropIndex('orders_created').execute();
}
