import type { Generated } from 'kysely';
import type { Currency } from '../money.js';

/** Times are Unix milliseconds; flags are 0/1 integers so one schema serves SQLite and PostgreSQL. */
export interface MerchantTable {
  id: string;
  name: string;
  language: string;
  callback_url: string | null;
  /** How long collected money waits in awaiting_settlement before it becomes available. */
  settlement_delay_ms: Generated<number>;
  /** How long a payer has on a collection's cashier page. */
  cashier_lifetime_ms: Generated<number>;
  /** JSON array of the methods offered on aggregate cashiers; null: every method Cashgate offers. */
  cashier_methods: string | null;
  /** The currency its aggregate cashiers take: BRL (Brazil's methods) or MXN (Mexico's). */
  cashier_currency: Generated<string>;
  /** Since when an operator paused its payments (collection creates); null: not paused. */
  paused_payments_at: number | null;
  /** Why (for operators; never shown to the merchant). */
  paused_payments_reason: string | null;
  /** Who paused them (the operator's e-mail, or root-token). */
  paused_payments_by: string | null;
  /** Since when an operator paused its payouts (transfer creates); null: not paused. */
  paused_payouts_at: number | null;
  paused_payouts_reason: string | null;
  paused_payouts_by: string | null;
  created_at: number;
  updated_at: number;
}

export type ApiKeyStatus = 'active' | 'disabled' | 'deleted';

export interface ApiKeyTable {
  access_key: string;
  merchant_id: string;
  label: string;
  /** AES-256-GCM sealed secret: base64(iv | tag | ciphertext). */
  secret_sealed: string;
  /** JSON array of permission names. */
  permissions: string;
  /** JSON array of addresses and CIDR ranges. */
  ip_whitelist: string;
  debug: number;
  status: ApiKeyStatus;
  active_at: number;
  created_at: number;
  updated_at: number;
  /** When a request last named the key (recorded at most once per key per LAST_USE_PRECISION_MS). */
  last_used_at: number | null;
  /** A rolled key stops at this moment (authentication treats it as disabled from then on). */
  disable_at: number | null;
  /** The key that replaced this one in a roll. */
  replaced_by: string | null;
}

export interface RequestNonceTable {
  access_key: string;
  nonce: string;
  expires_at: number;
}

/** pending → delivering → delivered | pending (retry) | failed; no_target when there is no address. */
export type CallbackEventState = 'pending' | 'delivering' | 'delivered' | 'failed' | 'no_target';

/** One callback to send (the transactional outbox): written with the state change that causes it. */
export interface CallbackEventTable {
  id: string;
  /** Sent as the notify_id header; the same for the retries and manual re-triggers of one event. */
  notify_id: string;
  order_id: string;
  order_kind: string;
  merchant_id: string;
  /** The key that placed the order: its secret signs the callback. */
  access_key: string;
  trigger: 'automatic' | 'manual';
  /** The JSON body, exactly as sent. */
  payload: string;
  /** Resolved when the event is created: the order's notifyUrl, else the merchant's unified address. */
  target_url: string | null;
  /** host[:port] of the target, so a worker can pass over hosts that have their share in flight. */
  target_host: string | null;
  state: CallbackEventState;
  /** Attempts that finished (the retry budget counts these). */
  attempts: number;
  /** When a worker should next look at the row: the next try, or the end of a delivery's lease. */
  next_attempt_at: number | null;
  first_attempt_at: number | null;
  /** Set while a worker delivers; only the holder may record the result. */
  lease_token: string | null;
  /** The node holding the delivery's lease (its id in `nodes`); null when no node holds it. */
  lease_owner: string | null;
  created_at: number;
  updated_at: number;
}

/** `interrupted`: the worker stopped before it could record a result; the event is sent again. */
export type CallbackAttemptOutcome = 'delivered' | 'failed' | 'refused' | 'interrupted';

export interface CallbackAttemptTable {
  id: string;
  event_id: string;
  /** The event's merchant, kept on the attempt for the merchant's callback log. */
  merchant_id: string;
  attempt_no: number;
  url: string;
  started_at: number;
  latency_ms: number;
  http_status: number | null;
  outcome: CallbackAttemptOutcome;
  /** Why it failed: timeout, connection refused, refused target, HTTP status other than 200… */
  error: string | null;
  /** The first 4 KB of the response body. */
  response_excerpt: string | null;
}

/** A signed test callback an operator or merchant sends to check an endpoint. */
export interface CallbackTestTable {
  id: string;
  merchant_id: string;
  access_key: string;
  notify_url: string | null;
  created_at: number;
}

/** Merchant accounts per currency; system accounts hold the other side of every journal. */
export type LedgerAccountKind =
  | 'available'
  | 'frozen'
  | 'awaiting_settlement'
  | 'fee_income'
  | 'rail_clearing'
  | 'token_clearing'
  | 'adjustments'
  | 'pix_returns'
  | 'pix_unmatched'
  | 'boleto_suspense'
  | 'spei_returns';

/** A ledger account: `code` is `<merchantId or "system">/<currency>/<kind>`. */
export interface LedgerAccountTable {
  code: string;
  merchant_id: string | null;
  currency: Currency;
  kind: LedgerAccountKind;
  /** Sum of the account's entries, kept in step in the same transaction (minor units). */
  balance: number;
  created_at: number;
  updated_at: number;
}

/** One balanced posting: its entries sum to zero. */
export interface LedgerJournalTable {
  id: string;
  kind: string;
  merchant_id: string | null;
  order_id: string | null;
  currency: Currency;
  memo: string | null;
  created_at: number;
}

export interface LedgerEntryTable {
  id: string;
  journal_id: string;
  account_code: string;
  merchant_id: string | null;
  currency: Currency;
  /** Signed minor units. */
  amount: number;
  created_at: number;
}

/** Collected money waiting for its settlement time. */
export interface LedgerSettlementTable {
  id: string;
  merchant_id: string;
  currency: Currency;
  amount: number;
  order_id: string | null;
  due_at: number;
  settled_at: number | null;
  created_at: number;
}

/** A merchant's fee for one channel: percent (basis points) + fixed, at least a minimum. */
export interface FeeScheduleTable {
  merchant_id: string;
  channel: string;
  percent_bps: number;
  fixed_minor: number;
  minimum_minor: number;
  updated_at: number;
}

/** `cashier`: orders made on an aggregate cashier (endpoint 19), whatever the method. */
export type OrderArea = 'ken' | 'bra' | 'exchange' | 'cashier';
export type OrderKind = 'collection' | 'transfer' | 'fiat_to_token' | 'token_to_fiat';

/** An order of any area and kind (collection, transfer, exchange); area-specific fields live in `details` (JSON). */
export interface OrderTable {
  id: string;
  merchant_id: string;
  /** The key that placed the order: its secret signs the order's callbacks. */
  access_key: string;
  area: OrderArea;
  kind: OrderKind;
  external_order_id: string;
  /** SHA-256 of the create request's body, to tell a repeat from a different request. */
  request_hash: string;
  /** The create result's data, returned again to an identical repeat. */
  create_result: string;
  status: number;
  currency: Currency;
  channel_type: string;
  pay_type: number;
  /** Minor units. */
  amount: number;
  fee: number;
  actual_amount: number | null;
  notify_url: string | null;
  return_url: string | null;
  remark: string | null;
  details: string;
  cashier_id: string | null;
  cashier_expire_at: number | null;
  channel_order_id: string | null;
  /** What the rail knows the order by (Pix txid, dynamic location id, boleto barcode), to find it from a rail's report. */
  rail_ref: string | null;
  error_msg: string | null;
  error_msg_en: string | null;
  created_at: number;
  pay_time: number | null;
  complete_time: number | null;
  updated_at: number;
}

/** Every status change of an order, with the event that caused it. */
export interface OrderEventTable {
  id: string;
  order_id: string;
  event: string;
  from_status: number | null;
  to_status: number;
  source: string;
  at: number;
}

/** The voucher of a successful Brazil order, issued when the merchant first asks for it (endpoint 17). */
export interface VoucherTable {
  /** 32 base64url characters: the unguessable capability in the voucher's public link. */
  token: string;
  /** One voucher per order. */
  order_id: string;
  created_at: number;
}

/** An operator-set price of one token in a fiat currency (decimal text). */
export interface ExchangeRateTable {
  currency: string;
  token: string;
  /** What Cashgate pays for one token (token → fiat orders). */
  buy: string;
  /** What Cashgate asks for one token (fiat → token orders). */
  sell: string;
  /** Added to sell and taken off buy, in basis points. */
  spread_bps: number;
  updated_at: number;
}

/** The next unused derivation index of one extended public key. */
export interface AddressCounterTable {
  key_id: string;
  next_index: number;
}

/** A deposit address handed to one order, never to another. */
export interface DepositAddressTable {
  address: string;
  family: string;
  key_id: string;
  path_index: number;
  order_id: string;
  created_at: number;
}

/** An aggregate cashier (endpoint 19): the payer picks amount and method; order_id once the order is made. */
export interface CheckoutTable {
  id: string;
  merchant_id: string;
  access_key: string;
  external_order_id: string;
  request_hash: string;
  notify_url: string | null;
  return_url: string | null;
  remark: string | null;
  user_identity: string | null;
  generated_document: string | null;
  dynamic_amount_notify: number;
  order_id: string | null;
  expire_at: number;
  created_at: number;
  /** The currency the payer enters the amount in: its merchant's cashier currency when it was opened. */
  currency: Generated<string>;
}

/** A payer's CPF or CNPJ saved under the merchant's userIdentity. */
export interface PayerDocumentTable {
  merchant_id: string;
  user_identity: string;
  document_type: string;
  document_number: string;
  created_at: number;
}

/** A person who signs in to the merchant console. */
export interface ConsoleUserTable {
  id: string;
  merchant_id: string;
  /** Lower-cased. */
  email: string;
  name: string;
  /** scrypt$N$r$p$salt$hash. */
  password_hash: string;
  totp_secret_sealed: string | null;
  totp_last_step: number | null;
  language: string;
  created_at: number;
  updated_at: number;
}

/** `totp`: the password was right and the second factor is still to be entered. */
export type ConsoleSessionStage = 'full' | 'totp';

/** A signed-in browser: `id` is the SHA-256 (hex) of the cookie's token. */
export interface ConsoleSessionTable {
  id: string;
  user_id: string;
  merchant_id: string;
  stage: ConsoleSessionStage;
  csrf_token: string;
  totp_pending_sealed: string | null;
  /** An API key's secret just created in this session (sealed JSON: access key, secret, until), shown once. */
  created_key_sealed: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

/** A failed sign-in: subject is `email:<address>` or `ip:<address>`. */
export interface ConsoleSignInFailureTable {
  id: string;
  subject: string;
  at: number;
}

/** A merchant API request made with a debug-mode key. */
export interface RequestLogTable {
  request_id: string;
  merchant_id: string;
  access_key: string;
  method: string;
  path: string;
  http_status: number;
  code: string;
  msg_en: string;
  signed_string: string | null;
  created_at: number;
}

export type RailTaskAction = 'start' | 'restart';
export type RailTaskState = 'working' | 'pending' | 'done' | 'failed';

/** The durable hand-over of an order to its rail (see orders/hand-over.ts). */
export interface RailTaskTable {
  /** `<orderId>.start` or `<orderId>.restart.<n>`: the idempotency key the rail is given. */
  id: string;
  order_id: string;
  action: RailTaskAction;
  state: RailTaskState;
  /** Attempts begun, the one in progress included. */
  attempts: number;
  /** When a worker may take the task: the lease's end while working, the retry time while pending; null once settled. */
  next_attempt_at: number | null;
  /** The lease of the node working the task, so that only it records the outcome. */
  lease_token: string | null;
  /** The node holding the lease (its id in `nodes`); null when no node holds it. */
  lease_owner: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** A payout in doubt an operator settled by hand after checking with the provider out of band. */
export interface OrderSettledByHandTable {
  order_id: string;
  outcome: 'paid' | 'failed';
  /** The status the order left (1 accepted, 2 processing). */
  from_status: number;
  /** The operator's e-mail (or root-token, cli:<user>). */
  settled_by: string;
  operator_id: string | null;
  reason: string;
  settled_at: number;
}

export type DarajaApi = 'stk' | 'b2c' | 'status';
export type DarajaRequestState = 'sending' | 'accepted' | 'refused' | 'unknown' | 'settled';

/** A request Cashgate made to Daraja for an order (see migration 0011). */
export interface DarajaRequestTable {
  id: string;
  order_id: string;
  api: DarajaApi;
  hand_over_id: string | null;
  state: DarajaRequestState;
  ref: string | null;
  conversation_id: string | null;
  phone: string | null;
  amount: number;
  result_code: string | null;
  result_desc: string | null;
  reported: string | null;
  checks: number;
  deadline_at: number | null;
  /** The node asking Daraja about it now (its id in `nodes`); null when no node is. */
  lease_owner: string | null;
  created_at: number;
  updated_at: number;
}

export type PixChargeState = 'active' | 'paid' | 'removed';

/** A charge (cob) at the Pix PSP. */
export interface PixChargeTable {
  txid: string;
  order_id: string;
  state: PixChargeState;
  amount: number;
  created_at: number;
  updated_at: number;
}

export type PixReceivedDisposition = 'credited' | 'returning' | 'returned' | 'return_failed' | 'unmatched';

/** A Pix received at the PSP, confirmed, and what became of it. */
export interface PixReceivedTable {
  e2eid: string;
  txid: string | null;
  order_id: string | null;
  amount: number;
  paid_at: string;
  payer_name: string | null;
  payer_document: string | null;
  disposition: PixReceivedDisposition;
  reason: string | null;
  refund_id: string | null;
  refund_status: string | null;
  refund_rtr_id: string | null;
  next_check_at: number | null;
  /** 1 once an unmatched Pix's arrival was posted to pix_unmatched (0 for one recorded before that was done). */
  unmatched_posted: number;
  /** The approval holding its assignment to an order while pending; once approved, the one that carried it out. */
  approval_id: string | null;
  /** An operator's assignment to an order (order_id, disposition credited): who asked, why, when. */
  assigned_by: string | null;
  assigned_reason: string | null;
  assigned_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A Pix sent for a transfer through the PSP's send extension. */
export interface PixPayoutTable {
  id_envio: string;
  order_id: string;
  state: 'accepted' | 'settled';
  e2eid: string | null;
  psp_status: string | null;
  checks: number;
  next_check_at: number | null;
  created_at: number;
  updated_at: number;
}

export type BoletoChargeState =
  'awaiting_payer' | 'to_issue' | 'processing' | 'open' | 'paid' | 'settled' | 'cancelled' | 'expired' | 'failed';

/** A boleto registered (or to be registered) at an issuer for a collection, and what the issuer says of it. */
export interface BoletoChargeTable {
  order_id: string;
  issuer: 'efi' | 'inter';
  /** Derived from the order: Inter's seuNumero; the order's channelOrderId. */
  reference: string;
  /** The issuer's id (Efí's charge_id, Inter's codigoSolicitacao) once it answered. */
  charge_id: string | null;
  state: BoletoChargeState;
  issuer_status: string | null;
  due_date: string;
  amount: number;
  issue_attempts: number;
  next_check_at: number | null;
  linha_digitavel: string | null;
  barcode: string | null;
  pix_code: string | null;
  nosso_numero: string | null;
  pdf_url: string | null;
  paid_amount: number | null;
  paid_at: string | null;
  paid_method: 'BOLETO' | 'PIX' | 'UNKNOWN' | null;
  /** When reconciliation first saw it paid without the amount stated (Efí's list): the notification has a while to state it. */
  paid_seen_at: number | null;
  disposition: 'credited' | 'suspense' | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** The last CLABE sequence issued under a prefix. */
export interface MxClabeSequenceTable {
  prefix: string;
  last_sequence: number;
}

/** A CLABE issued for an order. */
export interface MxClabeTable {
  clabe: string;
  order_id: string;
  assigned_at: number;
}

/** An incoming SPEI transfer and what Cashgate decided of it (see migration 0021). */
export interface SpeiAbonoTable {
  id: string;
  rastreo_key: string;
  clabe: string;
  order_id: string | null;
  amount: number;
  fecha_operacion: string;
  institucion_ordenante: string;
  clave_rastreo: string;
  payer_name: string | null;
  payer_account: string | null;
  decision: 'confirmar' | 'devolver';
  causa: number | null;
  disposition: 'credited' | 'refused' | 'unmatched' | 'late';
  source: 'webhook' | 'reconcile';
  answered_at: number | null;
  stp_estado: string | null;
  checked_at: number | null;
  return_state: 'to_send' | 'sent' | 'settled' | 'failed' | null;
  return_rastreo: string | null;
  return_folio: string | null;
  return_attempts: Generated<number>;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** Where a chain's deposit watcher has read up to, and which node holds the watch (its lease). */
export interface ChainWatchTable {
  chain: string;
  /** The last block read, and its hash as it was read: a later mismatch is a reorganisation. */
  block_number: number;
  block_hash: string;
  lease_owner: string | null;
  lease_until: number | null;
  updated_at: number;
}

/** A token transfer to a watched address, seen in a block; reported once final. */
export interface ChainTransferTable {
  chain: string;
  tx_hash: string;
  log_index: number;
  to_address: string;
  from_address: string;
  /** The token's base units, as decimal text. */
  units: string;
  block_number: number;
  block_hash: string;
  state: 'seen' | 'reported';
  seen_at: number;
  reported_at: number | null;
}

/** A chain's hot wallet as the token sender uses it, and the node sending for it (its lease). */
export interface ChainHotWalletTable {
  chain: string;
  address: string;
  /** The nonce the next EVM send is given (TRON has none: 0). */
  next_nonce: number;
  lease_owner: string | null;
  lease_until: number | null;
  updated_at: number;
}

export type ChainSendState = 'queued' | 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'cancelled';

/** The token send of a fiat → token order. */
export interface ChainSendTable {
  order_id: string;
  chain: string;
  to_address: string;
  /** The token's base units, as decimal text. */
  units: string;
  state: ChainSendState;
  from_address: string | null;
  nonce: number | null;
  /** The latest transaction signed for the send (a replacement has its own). */
  tx_hash: string | null;
  /** Where the transaction was mined, and how deep it was when last looked at. */
  block_number: number | null;
  block_hash: string | null;
  confirmations: number | null;
  /** Why the send failed or was cancelled, in English (the order's errorMsg says it to the merchant). */
  failure: string | null;
  signed_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A transaction signed for a send, kept (hash and raw bytes) before it is broadcast. */
export interface ChainSendAttemptTable {
  tx_hash: string;
  order_id: string;
  chain: string;
  nonce: number | null;
  /** The signed transaction as broadcast: EVM raw hex, or TRON's broadcast JSON. */
  raw: string;
  /** EVM fees offered (wei per gas), as decimal text. */
  max_fee: string | null;
  priority_fee: string | null;
  /** TRON: when the transaction expires unmined (ms). */
  expires_at: number | null;
  created_at: number;
  broadcast_at: number | null;
  outcome: string | null;
}

export interface RailCursorTable {
  name: string;
  position: number;
}

/** A redacted message to or from a rail. */
export interface RailMessageTable {
  id: string;
  order_id: string | null;
  rail: string;
  direction: 'out' | 'in';
  endpoint: string;
  ref: string | null;
  http_status: number | null;
  code: string | null;
  request: string | null;
  response: string | null;
  duration_ms: number | null;
  disposition: 'matched' | 'unmatched' | 'refused' | null;
  at: number;
}

/** A Cashgate process (a node) as the others see it: its heartbeat and whether it is alive. */
export interface NodeTable {
  /** Fresh at every start (and when a node declared dead rejoins). */
  id: string;
  host: string;
  pid: number;
  /** 'serve' or 'worker'. */
  role: string;
  version: string;
  started_at: number;
  heartbeat_at: number;
  /** 'alive', 'gone' (stopped cleanly) or 'dead' (its heartbeat stopped; its leases were freed). */
  state: string;
  ended_at: number | null;
}

export type OperatorRole = 'viewer' | 'support' | 'finance' | 'admin' | 'auditor';
export type OperatorState = 'active' | 'disabled';

/** A person who operates Cashgate (not a merchant's console user). */
export interface OperatorTable {
  id: string;
  /** Lower-cased. */
  email: string;
  name: string;
  role: OperatorRole;
  /** scrypt$N$r$p$salt$hash. */
  password_hash: string;
  totp_secret_sealed: string | null;
  /** A secret offered at enrolment, not yet confirmed by a code. */
  totp_pending_sealed: string | null;
  totp_last_step: number | null;
  state: OperatorState;
  failed_sign_ins: number;
  locked_until: number | null;
  last_sign_in_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A personal admin token: `token_hash` is the SHA-256 (hex) of the token. */
export interface OperatorTokenTable {
  id: string;
  operator_id: string;
  name: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface OperatorRecoveryCodeTable {
  id: string;
  operator_id: string;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

/** `password`: the second factor is still to come; `enrol`: one is to be set up first. */
export type OperatorSessionStage = 'password' | 'enrol' | 'full';

export interface OperatorSessionTable {
  id: string;
  operator_id: string;
  stage: OperatorSessionStage;
  created_at: number;
  expires_at: number;
}

export type AuditActorType = 'operator' | 'root-token' | 'cli';

/** One staff action; `hash` chains it to the record before (`prev_hash`). */
export interface AuditLogTable {
  seq: number;
  id: string;
  at: number;
  actor_type: AuditActorType;
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  reason: string | null;
  /** JSON: { before, after } of the fields that changed, secrets and personal data redacted. */
  changes: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  prev_hash: string;
  hash: string;
}

export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
}

export type AdjustmentRequestState = 'pending' | 'approved' | 'rejected';

/** What an approval carries out: a balance adjustment, or an unmatched incoming payment assigned to an order. */
export type ApprovalKind = 'balance_adjustment' | 'payment_assignment';

/** A money action (balance adjustment, payment assignment) waiting for (or decided by) a second operator. */
export interface BalanceAdjustmentRequestTable {
  id: string;
  kind: ApprovalKind;
  /** payment_assignment: the received payment's id (a Pix's end-to-end id) and the order it goes to. */
  e2eid: string | null;
  order_id: string | null;
  merchant_id: string;
  currency: Currency;
  /** Signed minor units. */
  amount: number;
  reason: string;
  state: AdjustmentRequestState;
  requested_by: string;
  requested_by_email: string | null;
  decided_by: string | null;
  decided_by_email: string | null;
  decision_reason: string | null;
  journal_id: string | null;
  created_at: number;
  decided_at: number | null;
}

export interface Database {
  nodes: NodeTable;
  daraja_requests: DarajaRequestTable;
  rail_messages: RailMessageTable;
  pix_charges: PixChargeTable;
  pix_received: PixReceivedTable;
  pix_payouts: PixPayoutTable;
  boleto_charges: BoletoChargeTable;
  mx_clabe_sequences: MxClabeSequenceTable;
  mx_clabes: MxClabeTable;
  spei_abonos: SpeiAbonoTable;
  rail_cursors: RailCursorTable;
  chain_watches: ChainWatchTable;
  chain_transfers: ChainTransferTable;
  chain_hot_wallets: ChainHotWalletTable;
  chain_sends: ChainSendTable;
  chain_send_attempts: ChainSendAttemptTable;
  merchants: MerchantTable;
  checkouts: CheckoutTable;
  payer_documents: PayerDocumentTable;
  api_keys: ApiKeyTable;
  request_nonces: RequestNonceTable;
  callback_events: CallbackEventTable;
  callback_attempts: CallbackAttemptTable;
  callback_tests: CallbackTestTable;
  ledger_accounts: LedgerAccountTable;
  ledger_journals: LedgerJournalTable;
  ledger_entries: LedgerEntryTable;
  ledger_settlements: LedgerSettlementTable;
  fee_schedules: FeeScheduleTable;
  orders: OrderTable;
  rail_tasks: RailTaskTable;
  order_settled_by_hand: OrderSettledByHandTable;
  order_events: OrderEventTable;
  vouchers: VoucherTable;
  exchange_rates: ExchangeRateTable;
  address_counters: AddressCounterTable;
  deposit_addresses: DepositAddressTable;
  console_users: ConsoleUserTable;
  console_sessions: ConsoleSessionTable;
  console_sign_in_failures: ConsoleSignInFailureTable;
  request_log: RequestLogTable;
  operators: OperatorTable;
  operator_tokens: OperatorTokenTable;
  operator_recovery_codes: OperatorRecoveryCodeTable;
  operator_sessions: OperatorSessionTable;
  audit_log: AuditLogTable;
  audit_head: AuditHeadTable;
  balance_adjustment_requests: BalanceAdjustmentRequestTable;
}
