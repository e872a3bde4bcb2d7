/**
 * The back office's reads: every SQL query of its pages, one banner per area. Kysely, for SQLite
 * and PostgreSQL alike; sums of minor units stay exact (`DbSum`, read with `fromDb`); lists page by
 * keyset and use an existing index.
 */
import { PostgresAdapter, sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { containsPattern } from '../console/queries.js';
import type { DbSum } from '../ledger/queries.js';
import { CURRENCIES, CURRENCY_CODES, type Currency } from '../money.js';
import type { OrderRow } from '../orders/queries.js';
import type { CallbackAttemptOutcome, LedgerAccountKind, OrderArea, OrderKind } from '../store/schema.js';
import type { ReadDb } from '../store/store.js';

const like = (value: Expression<unknown>, pattern: string) => sql<SqlBool>`${value} like ${pattern} escape '\\'`;

// --- merchants

/** A merchant in the back office's list: its name, age and pauses. */
export interface MerchantListRow {
  id: string;
  name: string;
  created_at: number;
  callback_url: string | null;
  paused_payments_at: number | null;
  paused_payouts_at: number | null;
}

/** A position in the newest-first merchant list: the last row shown. */
export interface MerchantCursor {
  createdAt: number;
  id: string;
}

/**
 * Merchants newest first, a page at a time (keyset by created_at, id: merchants_created, migration
 * 0025). With `q`: the merchant of that exact id (the primary key), or those whose name holds `q`
 * in any case, read in the index's order until the page is full.
 */
export function searchMerchants(
  db: ReadDb,
  search: { q?: string | undefined; before?: MerchantCursor | undefined; limit: number },
): Promise<MerchantListRow[]> {
  let query = db
    .selectFrom('merchants')
    .select(['id', 'name', 'created_at', 'callback_url', 'paused_payments_at', 'paused_payouts_at']);
  const q = search.q?.trim() ?? '';
  if (q !== '') {
    query = query.where((eb) => eb.or([eb('id', '=', q), like(sql`lower(name)`, containsPattern(q.toLowerCase()))]));
  }
  const before = search.before;
  if (before !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', before.createdAt),
        eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)]),
      ]),
    );
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(search.limit).execute();
}

/** A merchant's latest callback attempts that did not deliver (callback_attempts_merchant_time). */
export function recentCallbackFailures(
  db: ReadDb,
  merchantId: string,
  limit: number,
): Promise<
  {
    id: string;
    url: string;
    started_at: number;
    http_status: number | null;
    outcome: CallbackAttemptOutcome;
    error: string | null;
    attempt_no: number;
  }[]
> {
  return db
    .selectFrom('callback_attempts')
    .select(['id', 'url', 'started_at', 'http_status', 'outcome', 'error', 'attempt_no'])
    .where('merchant_id', '=', merchantId)
    .where('outcome', '<>', 'delivered')
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

// --- money

/** Merchant balances summed per currency and kind (one aggregate over the accounts: a row per account). */
export function merchantBalanceSums(
  db: ReadDb,
): Promise<{ currency: Currency; kind: LedgerAccountKind; total: DbSum; accounts: DbSum }[]> {
  return db
    .selectFrom('ledger_accounts')
    .select([
      'currency',
      'kind',
      (eb) => eb.fn.sum<DbSum>('balance').as('total'),
      (eb) => eb.fn.countAll<DbSum>().as('accounts'),
    ])
    .where('merchant_id', 'is not', null)
    .where('kind', 'in', ['available', 'frozen', 'awaiting_settlement'])
    .groupBy(['currency', 'kind'])
    .orderBy('currency')
    .orderBy('kind')
    .execute();
}

/** The merchants with the largest available balance in a currency, with their names. */
export function largestBalances(
  db: ReadDb,
  currency: Currency,
  limit: number,
): Promise<{ merchant_id: string | null; name: string; balance: number }[]> {
  return db
    .selectFrom('ledger_accounts as a')
    .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
    .select(['a.merchant_id', 'm.name', 'a.balance'])
    .where('a.currency', '=', currency)
    .where('a.kind', '=', 'available')
    .where('a.balance', '>', 0)
    .orderBy('a.balance', 'desc')
    .orderBy('a.merchant_id')
    .limit(limit)
    .execute();
}

/** The system accounts (rail clearing, fees, returns…): the other side of every journal. */
export function moneySystemAccounts(
  db: ReadDb,
): Promise<{ code: string; currency: Currency; kind: LedgerAccountKind; balance: number; updated_at: number }[]> {
  return db
    .selectFrom('ledger_accounts')
    .select(['code', 'currency', 'kind', 'balance', 'updated_at'])
    .where('merchant_id', 'is', null)
    .orderBy('currency')
    .orderBy('kind')
    .execute();
}

/** Every merchant account with its merchant's name, for the money export (merchant, currency, kind order). */
export function merchantAccountsForExport(
  db: ReadDb,
): Promise<
  { merchant_id: string | null; name: string; currency: Currency; kind: LedgerAccountKind; balance: number }[]
> {
  return db
    .selectFrom('ledger_accounts as a')
    .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
    .select(['a.merchant_id', 'm.name', 'a.currency', 'a.kind', 'a.balance'])
    .orderBy('a.merchant_id')
    .orderBy('a.currency')
    .orderBy('a.kind')
    .execute();
}

/**
 * Balance adjustments that moved money, newest first: the entries of the system `adjustments`
 * accounts (ledger_entries_account_idx), each with its journal (merchant, reason), the merchant's
 * name and, when a second operator approved it, its approval. The merchant's side is `-amount`.
 */
export function adjustmentsApplied(db: ReadDb, limit: number) {
  const codes = CURRENCY_CODES.map((c) => `system/${c}/adjustments`);
  return db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_journals as j', 'j.id', 'e.journal_id')
    .leftJoin('merchants as m', 'm.id', 'j.merchant_id')
    .leftJoin('balance_adjustment_requests as r', 'r.journal_id', 'j.id')
    .select([
      'e.journal_id',
      'e.currency',
      'e.amount',
      'e.created_at',
      'j.merchant_id',
      'j.memo',
      'm.name',
      'r.id as approval_id',
      'r.requested_by_email',
      'r.decided_by_email',
    ])
    .where('e.account_code', 'in', codes)
    .orderBy('e.created_at', 'desc')
    .orderBy('e.id', 'desc')
    .limit(limit)
    .execute();
}

/** Names of these merchants (for lists that hold their ids). */
export async function merchantNames(db: ReadDb, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('merchants')
    .select(['id', 'name'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** What the ledger moved through a rail clearing account in [from, to), per currency and order kind: in (<0) and out (>0). */
export function railClearingMovements(
  db: ReadDb,
  from: number,
  to: number,
): Promise<
  {
    currency: Currency;
    area: OrderArea | null;
    channel_type: string | null;
    journal_kind: string;
    in_total: DbSum;
    out_total: DbSum;
    in_entries: DbSum;
    out_entries: DbSum;
  }[]
> {
  const codes = CURRENCY_CODES.map((c) => `system/${c}/rail_clearing`);
  return db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_journals as j', 'j.id', 'e.journal_id')
    .leftJoin('orders as o', 'o.id', 'j.order_id')
    .select([
      'e.currency',
      'o.area',
      'o.channel_type',
      'j.kind as journal_kind',
      sql<DbSum>`sum(case when e.amount < 0 then -e.amount else 0 end)`.as('in_total'),
      sql<DbSum>`sum(case when e.amount > 0 then e.amount else 0 end)`.as('out_total'),
      sql<DbSum>`sum(case when e.amount < 0 then 1 else 0 end)`.as('in_entries'),
      sql<DbSum>`sum(case when e.amount > 0 then 1 else 0 end)`.as('out_entries'),
    ])
    .where('e.account_code', 'in', codes)
    .where('e.created_at', '>=', from)
    .where('e.created_at', '<', to)
    .groupBy(['e.currency', 'o.area', 'o.channel_type', 'j.kind'])
    .execute();
}

/** A rail's confirmed money of one day in one direction: its sum and how many. */
export interface ConfirmedSum {
  total: DbSum | null;
  count: DbSum;
}

/**
 * M-Pesa (Daraja): requests Daraja settled with ResultCode 0 in [from, to) — an STK push is money
 * in, a B2C payment money out. Read by updated_at, the moment Cashgate learnt the result.
 */
export function darajaConfirmed(
  db: ReadDb,
  from: number,
  to: number,
): Promise<{ api: string; total: DbSum | null; count: DbSum }[]> {
  return db
    .selectFrom('daraja_requests')
    .select(['api', (eb) => eb.fn.sum<DbSum | null>('amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
    .where('state', '=', 'settled')
    .where('result_code', '=', '0')
    .where('api', 'in', ['stk', 'b2c'])
    .where('updated_at', '>=', from)
    .where('updated_at', '<', to)
    .groupBy('api')
    .execute();
}

/** Pix the PSP confirmed received in [from, to) (every one, matched or not: it is money in the account). */
export function pixReceivedConfirmed(db: ReadDb, from: number, to: number): Promise<ConfirmedSum | undefined> {
  return db
    .selectFrom('pix_received')
    .select([(eb) => eb.fn.sum<DbSum | null>('amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .executeTakeFirst();
}

/** Pix money out the PSP confirmed in [from, to): payouts it settled (the order's amount) and returns it completed. */
export async function pixOutConfirmed(db: ReadDb, from: number, to: number): Promise<ConfirmedSum[]> {
  const payouts = db
    .selectFrom('pix_payouts as p')
    .innerJoin('orders as o', 'o.id', 'p.order_id')
    .select([(eb) => eb.fn.sum<DbSum | null>('o.amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
    .where('p.state', '=', 'settled')
    .where('p.updated_at', '>=', from)
    .where('p.updated_at', '<', to)
    .executeTakeFirst();
  const returns = db
    .selectFrom('pix_received')
    .select([(eb) => eb.fn.sum<DbSum | null>('amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
    .where('disposition', '=', 'returned')
    .where('updated_at', '>=', from)
    .where('updated_at', '<', to)
    .executeTakeFirst();
  return (await Promise.all([payouts, returns])).filter((r): r is ConfirmedSum => r !== undefined);
}

/** Boletos the issuer confirmed paid (credited or in suspense), last changed in [from, to): the amount paid. */
export function boletoConfirmed(db: ReadDb, from: number, to: number): Promise<ConfirmedSum | undefined> {
  return db
    .selectFrom('boleto_charges')
    .select([(eb) => eb.fn.sum<DbSum | null>('paid_amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
    .where('state', 'in', ['paid', 'settled'])
    .where('disposition', 'is not', null)
    .where('updated_at', '>=', from)
    .where('updated_at', '<', to)
    .executeTakeFirst();
}

/** SPEI: transfers STP settled to Cashgate that it confirmed (in), and its returns STP settled (out), in [from, to). */
export async function speiConfirmed(
  db: ReadDb,
  from: number,
  to: number,
): Promise<{ in: ConfirmedSum | undefined; out: ConfirmedSum | undefined }> {
  const [incoming, out] = await Promise.all([
    db
      .selectFrom('spei_abonos')
      .select([(eb) => eb.fn.sum<DbSum | null>('amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
      .where('decision', '=', 'confirmar')
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirst(),
    db
      .selectFrom('spei_abonos')
      .select([(eb) => eb.fn.sum<DbSum | null>('amount').as('total'), (eb) => eb.fn.countAll<DbSum>().as('count')])
      .where('return_state', '=', 'settled')
      .where('updated_at', '>=', from)
      .where('updated_at', '<', to)
      .executeTakeFirst(),
  ]);
  return { in: incoming, out };
}

// --- today

/** The cut-offs of the Today counts: what counts as recent, and when a wait is late. */
export interface TodayCutoffs {
  /** Unmatched SPEI transfers and rail messages, and callbacks failed for good, since then. */
  recentSince: number;
  /** A Pix return or SPEI return still under way since before then is late. */
  returnLateBefore: number;
  /** A token send not confirmed since before then is stuck. */
  chainStuckBefore: number;
  /** A payout of the area (ken, bra…) still accepted or processing since before then is late; `other` for the rest. */
  payoutLateBefore: Readonly<Record<string, number>> & { other: number };
}

/** What needs a person, each counted from a small indexed set. */
export interface TodayCounts {
  pixUnmatched: number;
  pixReturnsFailed: number;
  pixReturnsLate: number;
  speiUnmatched: number;
  speiReturnsFailed: number;
  speiReturnsLate: number;
  boletoSuspense: number;
  railMessagesUnmatched: number;
  payoutsLate: number;
  handOversRetrying: number;
  chainSendsStuck: number;
  approvalsPending: number;
}

const counted = (row: { n: number | string | bigint } | undefined): number => Number(row?.n ?? 0);

/**
 * Received Pix of some uncredited dispositions (pix_received_uncredited: its condition repeated, and
 * written as literals, so that SQLite sees the partial index serves: a bound parameter hides it).
 */
const pixUncredited = (db: ReadDb, disposition: 'unmatched' | 'returning' | 'return_failed') =>
  db
    .selectFrom('pix_received')
    .where('disposition', '<>', sql.lit('credited'))
    .where('disposition', '=', sql.lit(disposition));

/** Open payouts (orders_expiry: status, kind) waiting longer than their area's deadline. */
const latePayouts = (db: ReadDb, cutoffs: TodayCutoffs['payoutLateBefore']) => {
  const areas = Object.keys(cutoffs).filter((a) => a !== 'other') as OrderArea[];
  return db
    .selectFrom('orders')
    .where('status', 'in', [1, 2])
    .where('kind', '=', 'transfer')
    .where((eb) =>
      eb.or([
        ...areas.map((area) => eb.and([eb('area', '=', area), eb('created_at', '<', cutoffs[area] ?? cutoffs.other)])),
        areas.length === 0
          ? eb('created_at', '<', cutoffs.other)
          : eb.and([eb('area', 'not in', areas), eb('created_at', '<', cutoffs.other)]),
      ]),
    );
};

/** Callbacks failing: retrying after an attempt, or failed for good since `since` (callback_events_state_updated). */
const failingCallbacks = (db: ReadDb, since: number) =>
  db
    .selectFrom('callback_events')
    .where((eb) =>
      eb.or([
        eb.and([eb('state', '=', 'failed'), eb('updated_at', '>=', since)]),
        eb.and([eb('state', '=', 'pending'), eb('attempts', '>', 0)]),
        eb.and([eb('state', '=', 'delivering'), eb('attempts', '>', 0)]),
      ]),
    );

const OPEN_SENDS = ['queued', 'signed', 'broadcast'] as const;

/** Every count of the Today page at once. */
export async function todayCounts(db: ReadDb, cutoffs: TodayCutoffs): Promise<TodayCounts> {
  const n = sql<number | string>`count(*)`.as('n');
  const [
    pixUnmatched,
    pixReturnsFailed,
    pixReturnsLate,
    speiUnmatched,
    speiReturnsFailed,
    speiReturnsLate,
    boletoSuspense,
    railMessagesUnmatched,
    payoutsLate,
    handOversRetrying,
    chainSendsStuck,
    approvalsPending,
  ] = await Promise.all([
    pixUncredited(db, 'unmatched').select(n).executeTakeFirst(),
    pixUncredited(db, 'return_failed').select(n).executeTakeFirst(),
    pixUncredited(db, 'returning').where('updated_at', '<', cutoffs.returnLateBefore).select(n).executeTakeFirst(),
    db
      .selectFrom('spei_abonos')
      .where('disposition', '<>', sql.lit('credited'))
      .where('created_at', '>=', cutoffs.recentSince)
      .select(n)
      .executeTakeFirst(),
    db
      .selectFrom('spei_abonos')
      .where('return_state', 'is not', null)
      .where('return_state', '=', 'failed')
      .select(n)
      .executeTakeFirst(),
    db
      .selectFrom('spei_abonos')
      .where('return_state', 'is not', null)
      .where('return_state', 'in', ['to_send', 'sent'])
      .where('updated_at', '<', cutoffs.returnLateBefore)
      .select(n)
      .executeTakeFirst(),
    db.selectFrom('boleto_charges').where('disposition', '=', sql.lit('suspense')).select(n).executeTakeFirst(),
    db
      .selectFrom('rail_messages')
      .where('disposition', '=', 'unmatched')
      .where('at', '>=', cutoffs.recentSince)
      .select(n)
      .executeTakeFirst(),
    latePayouts(db, cutoffs.payoutLateBefore).select(n).executeTakeFirst(),
    db
      .selectFrom('rail_tasks')
      .where('next_attempt_at', 'is not', null)
      .where('attempts', '>', 1)
      .select(n)
      .executeTakeFirst(),
    db
      .selectFrom('chain_sends')
      .where('state', 'in', [...OPEN_SENDS])
      .where('created_at', '<', cutoffs.chainStuckBefore)
      .select(n)
      .executeTakeFirst(),
    db.selectFrom('balance_adjustment_requests').where('state', '=', 'pending').select(n).executeTakeFirst(),
  ]);
  return {
    pixUnmatched: counted(pixUnmatched),
    pixReturnsFailed: counted(pixReturnsFailed),
    pixReturnsLate: counted(pixReturnsLate),
    speiUnmatched: counted(speiUnmatched),
    speiReturnsFailed: counted(speiReturnsFailed),
    speiReturnsLate: counted(speiReturnsLate),
    boletoSuspense: counted(boletoSuspense),
    railMessagesUnmatched: counted(railMessagesUnmatched),
    payoutsLate: counted(payoutsLate),
    handOversRetrying: counted(handOversRetrying),
    chainSendsStuck: counted(chainSendsStuck),
    approvalsPending: counted(approvalsPending),
  };
}

/** Callbacks failing, by merchant, most first (at most `limit` merchants), with the merchant's name. */
export async function failingCallbacksByMerchant(
  db: ReadDb,
  since: number,
  limit: number,
): Promise<{ merchantId: string; name: string | null; count: number }[]> {
  const rows = await failingCallbacks(db, since)
    .select(['merchant_id', sql<number | string>`count(*)`.as('n')])
    .groupBy('merchant_id')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('merchant_id')
    .limit(limit)
    .execute();
  if (rows.length === 0) return [];
  const names = await db
    .selectFrom('merchants')
    .select(['id', 'name'])
    .where(
      'id',
      'in',
      rows.map((r) => r.merchant_id),
    )
    .execute();
  const nameOf = new Map(names.map((m) => [m.id, m.name]));
  return rows.map((r) => ({ merchantId: r.merchant_id, name: nameOf.get(r.merchant_id) ?? null, count: Number(r.n) }));
}

/** The system accounts of one kind in the given currencies (their codes are the primary key). */
export function todaySystemAccounts(
  db: ReadDb,
  kind: LedgerAccountKind,
  currencies: readonly Currency[],
): Promise<{ code: string; currency: Currency; balance: number | string }[]> {
  if (currencies.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('ledger_accounts')
    .select(['code', 'currency', 'balance'])
    .where(
      'code',
      'in',
      currencies.map((c) => `system/${c}/${kind}`),
    )
    .execute();
}

/** The chains' hot wallets (one row a chain). */
export function hotWallets(db: ReadDb): Promise<{ chain: string; address: string }[]> {
  return db.selectFrom('chain_hot_wallets').select(['chain', 'address']).orderBy('chain').execute();
}

// --- queues

/** Received Pix of some uncredited dispositions, newest first (pix_received_uncredited). */
export function uncreditedPix(db: ReadDb, disposition: 'unmatched' | 'return_failed', limit: number) {
  return pixUncredited(db, disposition)
    .select([
      'e2eid',
      'txid',
      'amount',
      'paid_at',
      'payer_name',
      'payer_document',
      'disposition',
      'reason',
      'refund_status',
      'approval_id',
      'created_at',
    ])
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** Pix returns under way since before `before` (late), oldest first. */
export function lateReturningPix(db: ReadDb, before: number, limit: number) {
  return pixUncredited(db, 'returning')
    .where('updated_at', '<', before)
    .select(['e2eid', 'amount', 'payer_name', 'payer_document', 'reason', 'refund_id', 'refund_status', 'updated_at'])
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** SPEI transfers no waiting order took since `since`, newest first (spei_abonos_uncredited). */
export function recentUnmatchedSpei(db: ReadDb, since: number, limit: number) {
  return db
    .selectFrom('spei_abonos')
    .select([
      'id',
      'clave_rastreo',
      'clabe',
      'order_id',
      'amount',
      'payer_name',
      'payer_account',
      'disposition',
      'return_state',
      'created_at',
    ])
    .where('disposition', '<>', sql.lit('credited'))
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** SPEI returns Cashgate sends itself that failed, or are under way since before `lateBefore` (spei_abonos_returns). */
export function speiReturnsNeedingHelp(db: ReadDb, lateBefore: number, limit: number) {
  return db
    .selectFrom('spei_abonos')
    .select([
      'id',
      'clave_rastreo',
      'amount',
      'payer_name',
      'payer_account',
      'return_state',
      'return_attempts',
      'last_error',
      'updated_at',
    ])
    .where('return_state', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('return_state', '=', 'failed'),
        eb.and([eb('return_state', 'in', ['to_send', 'sent']), eb('updated_at', '<', lateBefore)]),
      ]),
    )
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** Boletos paid when their order no longer took a payment, newest first (boleto_charges_suspense). */
export function boletosInSuspense(db: ReadDb, limit: number) {
  return db
    .selectFrom('boleto_charges')
    .select(['order_id', 'issuer', 'amount', 'paid_amount', 'paid_at', 'updated_at'])
    .where('disposition', '=', sql.lit('suspense'))
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
}

/** Rail messages that named no known order since `since`, newest first (rail_messages_disposition). */
export function recentUnmatchedRailMessages(db: ReadDb, since: number, limit: number) {
  return db
    .selectFrom('rail_messages')
    .select(['id', 'rail', 'endpoint', 'ref', 'at'])
    .where('disposition', '=', 'unmatched')
    .where('at', '>=', since)
    .orderBy('at', 'desc')
    .limit(limit)
    .execute();
}

/** Money actions waiting for a second operator, oldest first (balance_adjustment_requests_state). */
export function pendingApprovals(db: ReadDb, limit: number) {
  return db
    .selectFrom('balance_adjustment_requests')
    .select([
      'id',
      'kind',
      'e2eid',
      'order_id',
      'merchant_id',
      'currency',
      'amount',
      'reason',
      'requested_by',
      'requested_by_email',
      'created_at',
    ])
    .where('state', '=', 'pending')
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** A payout in doubt: the order, its latest hand-over and the rail's last message about it. */
export interface PayoutInDoubtRow {
  id: string;
  merchant_id: string;
  area: OrderArea;
  channel_type: string;
  currency: Currency;
  amount: number | string;
  status: number;
  created_at: number;
  task: { state: string; attempts: number; last_error: string | null } | undefined;
  lastMessage:
    { rail: string; endpoint: string; http_status: number | null; code: string | null; at: number } | undefined;
}

/** Payouts waiting on their rail longer than its deadline, oldest first, with what the rail last said. */
export async function payoutsInDoubt(
  db: ReadDb,
  cutoffs: TodayCutoffs['payoutLateBefore'],
  limit: number,
): Promise<PayoutInDoubtRow[]> {
  const orders = await latePayouts(db, cutoffs)
    .select(['id', 'merchant_id', 'area', 'channel_type', 'currency', 'amount', 'status', 'created_at'])
    .orderBy('created_at')
    .limit(limit)
    .execute();
  if (orders.length === 0) return [];
  const ids = orders.map((o) => o.id);
  const [tasks, messages] = await Promise.all([
    db
      .selectFrom('rail_tasks')
      .select(['order_id', 'state', 'attempts', 'last_error', 'updated_at'])
      .where('order_id', 'in', ids)
      .orderBy('updated_at')
      .execute(),
    db
      .selectFrom('rail_messages')
      .select(['order_id', 'rail', 'endpoint', 'http_status', 'code', 'at'])
      .where('order_id', 'in', ids)
      .orderBy('at')
      .execute(),
  ]);
  // Oldest first: the last one written for an order is its latest.
  const taskOf = new Map(
    tasks.map((t) => [t.order_id, { state: t.state, attempts: t.attempts, last_error: t.last_error }]),
  );
  const messageOf = new Map(
    messages.map((m) => [
      m.order_id,
      { rail: m.rail, endpoint: m.endpoint, http_status: m.http_status, code: m.code, at: m.at },
    ]),
  );
  return orders.map((o) => ({ ...o, task: taskOf.get(o.id), lastMessage: messageOf.get(o.id) }));
}

// --- orders

/** The orders list's filters, across every merchant. */
export interface BackofficeOrderFilter {
  merchantId?: string | undefined;
  area?: OrderArea | undefined;
  kind?: OrderKind | undefined;
  status?: number | undefined;
  channel?: string | undefined;
  /** created_at ≥ from, < until (ms). */
  from?: number | undefined;
  until?: number | undefined;
  /** Amount bounds in hundredths of the currency (decimal text with two places), applied in each currency's minor units. */
  amountMin?: bigint | undefined;
  amountMax?: bigint | undefined;
  /** Only these orders (what a search found). */
  ids?: readonly string[] | undefined;
}

/** A position in the newest-first list: the last row shown. */
export interface BackofficeOrderCursor {
  createdAt: number;
  id: string;
}

/** An order's details member as text, written exactly as migration 0027's expression indexes are. */
function orderDetailsMember(db: ReadDb, member: string): RawBuilder<string | null> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<string | null>`(cast(details as jsonb) ->> ${sql.lit(member)})`
    : sql<string | null>`json_extract(details, ${sql.lit(`$.${member}`)})`;
}

/** Hundredths as a currency's minor units, rounded inward (up for a lower bound, down for an upper one). */
function hundredthsIn(currency: Currency, hundredths: bigint, bound: 'min' | 'max'): bigint {
  const decimals = CURRENCIES[currency];
  if (decimals >= 2) return hundredths * 10n ** BigInt(decimals - 2);
  const factor = 10n ** BigInt(2 - decimals);
  const floor = hundredths / factor;
  return bound === 'min' && floor * factor !== hundredths ? floor + 1n : floor;
}

/**
 * Every order known by this id, whatever kind of id it is: orderId, externalOrderId, the rail's
 * reference or the channel's order id, a Pix end-to-end id (received, paid out, or in the order's
 * details), an M-Pesa receipt, a transaction hash (a send's transaction, a deposit, the details'
 * tradeHash). One exact-match lookup per kind, each on an index (migration 0027 for the new ones).
 */
export async function ordersKnownBy(db: ReadDb, id: string): Promise<string[]> {
  const lookups: Promise<{ order_id: string | null }[]>[] = [
    db.selectFrom('orders').select('id as order_id').where('id', '=', id).execute(),
    db.selectFrom('orders').select('id as order_id').where('external_order_id', '=', id).limit(100).execute(),
    db.selectFrom('orders').select('id as order_id').where('rail_ref', '=', id).limit(100).execute(),
    db.selectFrom('orders').select('id as order_id').where('channel_order_id', '=', id).limit(100).execute(),
    db.selectFrom('pix_received').select('order_id').where('e2eid', '=', id).execute(),
    db.selectFrom('pix_payouts').select('order_id').where('e2eid', '=', id).limit(100).execute(),
    db.selectFrom('daraja_requests').select('order_id').where('ref', '=', id).limit(100).execute(),
    db
      .selectFrom('rail_messages')
      .select('order_id')
      .where('ref', '=', id)
      .where('order_id', 'is not', null)
      .limit(100)
      .execute(),
    db.selectFrom('chain_send_attempts').select('order_id').where('tx_hash', '=', id).execute(),
    // A deposit: the order whose deposit address (its rail reference) it was sent to.
    db
      .selectFrom('chain_transfers as t')
      .innerJoin('orders as o', 'o.rail_ref', 't.to_address')
      .select('o.id as order_id')
      .where('t.tx_hash', '=', id)
      .limit(100)
      .execute(),
    ...['mpesaReceipt', 'endToEndId', 'tradeHash'].map((member) =>
      db
        .selectFrom('orders')
        .select('id as order_id')
        .where(sql<SqlBool>`${orderDetailsMember(db, member)} = ${id}`)
        .limit(100)
        .execute(),
    ),
  ];
  const found = new Set<string>();
  for (const rows of await Promise.all(lookups))
    for (const row of rows) if (row.order_id !== null) found.add(row.order_id);
  return [...found];
}

/**
 * The orders passing the filter, newest first, from the cursor on. Each filter is a column of an
 * index the planner can walk newest first (orders_merchant_time, orders_merchant_status_time,
 * orders_status_created, orders_channel_created, orders_created): the list reads about a page of
 * rows, never counts.
 */
export function backofficeOrders(
  db: ReadDb,
  filter: BackofficeOrderFilter,
  page: { before?: BackofficeOrderCursor | undefined; limit: number },
): Promise<OrderRow[]> {
  let query = db.selectFrom('orders').selectAll();
  if (filter.ids !== undefined) query = query.where('id', 'in', filter.ids.length === 0 ? [''] : filter.ids);
  if (filter.merchantId !== undefined) query = query.where('merchant_id', '=', filter.merchantId);
  if (filter.area !== undefined) query = query.where('area', '=', filter.area);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.channel !== undefined) query = query.where('channel_type', '=', filter.channel);
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
  if (filter.until !== undefined) query = query.where('created_at', '<', filter.until);
  const { amountMin, amountMax } = filter;
  if (amountMin !== undefined || amountMax !== undefined) {
    query = query.where((eb) =>
      eb.or(
        CURRENCY_CODES.map((currency) => {
          const parts = [eb('currency', '=', currency)];
          if (amountMin !== undefined) parts.push(eb('amount', '>=', Number(hundredthsIn(currency, amountMin, 'min'))));
          if (amountMax !== undefined) parts.push(eb('amount', '<=', Number(hundredthsIn(currency, amountMax, 'max'))));
          return eb.and(parts);
        }),
      ),
    );
  }
  const before = page.before;
  if (before !== undefined) {
    // The first condition alone is what an index seeks to; the second breaks ties at that moment.
    query = query
      .where('created_at', '<=', before.createdAt)
      .where((eb) => eb.or([eb('created_at', '<', before.createdAt), eb('id', '<', before.id)]));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
}

/** An order by its id, of any merchant. */
export function backofficeOrder(db: ReadDb, orderId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst();
}

/** The order's ledger journals with their entries, oldest first (ledger_journals_order_idx, ledger_entries_journal_idx). */
export async function orderJournals(db: ReadDb, orderId: string) {
  const journals = await db
    .selectFrom('ledger_journals')
    .select(['id', 'kind', 'currency', 'memo', 'created_at'])
    .where('order_id', '=', orderId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  if (journals.length === 0) return [];
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['id', 'journal_id', 'account_code', 'amount', 'currency'])
    .where(
      'journal_id',
      'in',
      journals.map((j) => j.id),
    )
    .orderBy('id')
    .execute();
  return journals.map((j) => ({ ...j, entries: entries.filter((e) => e.journal_id === j.id) }));
}

/** The order's callback events and their attempts, oldest first (callback_events_order_idx, callback_attempts_event_idx). */
export async function orderCallbackHistory(db: ReadDb, orderId: string) {
  const events = await db
    .selectFrom('callback_events')
    .select(['id', 'notify_id', 'trigger', 'payload', 'target_url', 'state', 'attempts', 'created_at'])
    .where('order_id', '=', orderId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const attempts =
    events.length === 0
      ? []
      : await db
          .selectFrom('callback_attempts')
          .select([
            'id',
            'event_id',
            'attempt_no',
            'url',
            'started_at',
            'latency_ms',
            'http_status',
            'outcome',
            'error',
            'response_excerpt',
          ])
          .where(
            'event_id',
            'in',
            events.map((e) => e.id),
          )
          .orderBy('started_at')
          .orderBy('id')
          .execute();
  return { events, attempts };
}

/**
 * The merchant's create request of the order in the request log of debug-mode keys, if it was made
 * with one: the merchant's entries of the minute after the order was created (request_log_merchant_time)
 * whose signed string names its externalOrderId; the accepted one first.
 */
export async function createRequestOf(
  db: ReadDb,
  order: Pick<OrderRow, 'merchant_id' | 'external_order_id' | 'created_at'>,
) {
  const rows = await db
    .selectFrom('request_log')
    .selectAll()
    .where('merchant_id', '=', order.merchant_id)
    .where('created_at', '>=', order.created_at)
    .where('created_at', '<', order.created_at + 60_000)
    .where('method', '=', 'POST')
    .where(like(sql`signed_string`, containsPattern(`externalOrderId=${order.external_order_id}`)))
    .orderBy('created_at')
    .limit(10)
    .execute();
  const named = rows.filter((r) =>
    (r.signed_string ?? '').split('&').some((part) => part === `externalOrderId=${order.external_order_id}`),
  );
  return named.find((r) => r.code === '200') ?? named[0];
}
