import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each request Cashgate made to Safaricom's Daraja for an order (an STK prompt, a B2C payout, a
  // Transaction Status query): what Daraja knows it by, what it answered, when to ask again.
  await db.schema
    .createTable('daraja_requests')
    // STK: `<hand-over id>#<attempt>`; B2C: `<orderId>.b2c`; a status query: `<orderId>.status.<n>`.
    .addColumn('id', 'varchar(120)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)', (c) => c.notNull().references('orders.id'))
    // 'stk', 'b2c' or 'status'.
    .addColumn('api', 'varchar(16)', (c) => c.notNull())
    .addColumn('hand_over_id', 'varchar(80)')
    // 'sending' (written before the call), 'accepted', 'refused' (Daraja said no: never started),
    // 'unknown' (no answer: it may have started), 'settled' (its outcome is on the order).
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    // Daraja's reference: CheckoutRequestID (STK), OriginatorConversationID (B2C), the query's ConversationID (status).
    .addColumn('ref', 'varchar(120)')
    .addColumn('conversation_id', 'varchar(120)')
    .addColumn('phone', 'varchar(16)')
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('result_code', 'varchar(32)')
    .addColumn('result_desc', 'text')
    // STK: what the callback reported (receipt, amount, paying phone) as JSON, kept until its query confirms it.
    .addColumn('reported', 'text')
    // Reconciliation queries made so far.
    .addColumn('checks', 'integer', (c) => c.notNull())
    // When the reconciliation worker asks Daraja next; null when there is nothing to ask.
    .addColumn('deadline_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('daraja_requests_ref').on('daraja_requests').column('ref').execute();
  await db.schema.createIndex('daraja_requests_order').on('daraja_requests').column('order_id').execute();
  await db.schema
    .createIndex('daraja_requests_due')
    .on('daraja_requests')
    .column('deadline_at')
    .where(sql.ref('deadline_at'), 'is not', null)
    .execute();

  // What went to and came from a rail, redacted (no credentials, phone numbers masked): the
  // operator's view of an order's rail traffic, and callbacks that named no order Cashgate knows.
  await db.schema
    .createTable('rail_messages')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('order_id', 'varchar(40)')
    .addColumn('rail', 'varchar(16)', (c) => c.notNull())
    // 'out' (Cashgate asked) or 'in' (the rail called back).
    .addColumn('direction', 'varchar(8)', (c) => c.notNull())
    .addColumn('endpoint', 'varchar(40)', (c) => c.notNull())
    .addColumn('ref', 'varchar(120)')
    .addColumn('http_status', 'integer')
    .addColumn('code', 'varchar(40)')
    .addColumn('request', 'text')
    .addColumn('response', 'text')
    .addColumn('duration_ms', 'integer')
    // Callbacks: 'matched', 'unmatched' (no order known by its id) or 'refused' (its query said otherwise).
    .addColumn('disposition', 'varchar(16)')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rail_messages_order').on('rail_messages').columns(['order_id', 'at']).execute();
  await db.schema.createIndex('rail_messages_disposition').on('rail_messages').columns(['disposition', 'at']).execute();
}
