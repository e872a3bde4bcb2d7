import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The people who operate Cashgate: each with a role, a password, a second factor and personal tokens.
  await db.schema
    .createTable('operators')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('email', 'varchar(254)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('password_hash', 'varchar(200)', (c) => c.notNull())
    .addColumn('totp_secret_sealed', 'text')
    .addColumn('totp_pending_sealed', 'text')
    .addColumn('totp_last_step', 'bigint')
    // 'active' or 'disabled'.
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('failed_sign_ins', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'bigint')
    .addColumn('last_sign_in_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  // Personal admin tokens: only the SHA-256 of each is kept.
  await db.schema
    .createTable('operator_tokens')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('operator_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('name', 'varchar(100)', (c) => c.notNull())
    .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('operator_tokens_operator').on('operator_tokens').column('operator_id').execute();

  // One-time recovery codes for a lost authenticator (SHA-256 of each).
  await db.schema
    .createTable('operator_recovery_codes')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('operator_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('code_hash', 'char(64)', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('operator_recovery_codes_operator')
    .on('operator_recovery_codes')
    .column('operator_id')
    .execute();

  // A signed-in operator: `id` is the SHA-256 of the session's token.
  await db.schema
    .createTable('operator_sessions')
    .addColumn('id', 'char(64)', (c) => c.primaryKey())
    .addColumn('operator_id', 'varchar(40)', (c) => c.notNull())
    // 'password' (the second factor is still to come), 'enrol' (a second factor is to be set up) or 'full'.
    .addColumn('stage', 'varchar(10)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operator_sessions_operator').on('operator_sessions').column('operator_id').execute();

  // The audit log of staff actions: append-only, each record chained to the one before by its hash.
  await db.schema
    .createTable('audit_log')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('id', 'varchar(40)', (c) => c.notNull().unique())
    .addColumn('at', 'bigint', (c) => c.notNull())
    // 'operator', 'root-token' or 'cli'.
    .addColumn('actor_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('actor_id', 'varchar(254)')
    .addColumn('actor_email', 'varchar(254)')
    .addColumn('action', 'varchar(48)', (c) => c.notNull())
    .addColumn('target_type', 'varchar(32)')
    .addColumn('target_id', 'varchar(200)')
    .addColumn('reason', 'text')
    .addColumn('changes', 'text')
    .addColumn('request_id', 'varchar(100)')
    .addColumn('ip', 'varchar(64)')
    .addColumn('user_agent', 'varchar(500)')
    .addColumn('prev_hash', 'char(64)', (c) => c.notNull())
    .addColumn('hash', 'char(64)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
  await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor_id', 'seq']).execute();
  await db.schema
    .createIndex('audit_log_target')
    .on('audit_log')
    .columns(['target_type', 'target_id', 'seq'])
    .execute();

  // The chain's head: the last record's sequence number and hash. Appending locks it, so records are
  // chained in commit order, and a record deleted from the end is found too.
  await db.schema
    .createTable('audit_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'char(64)', (c) => c.notNull())
    .execute();
  await sql`insert into audit_head (id, seq, hash) values (1, 0, ${'0'.repeat(64)})`.execute(db);

  // Balance adjustments at or above APPROVAL_THRESHOLD wait here for a second operator.
  await db.schema
    .createTable('balance_adjustment_requests')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('merchant_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('currency', 'varchar(8)', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    // 'pending', 'approved' or 'rejected'.
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('requested_by', 'varchar(254)', (c) => c.notNull())
    .addColumn('requested_by_email', 'varchar(254)')
    .addColumn('decided_by', 'varchar(254)')
    .addColumn('decided_by_email', 'varchar(254)')
    .addColumn('decision_reason', 'text')
    .addColumn('journal_id', 'varchar(40)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('balance_adjustment_requests_state')
    .on('balance_adjustment_requests')
    .columns(['state', 'created_at'])
    .execute();
}
