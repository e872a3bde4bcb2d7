/** Every expected failure of an operator action (admin API and CLI), as a typed value. */
export type OperatorFailure =
  | { kind: 'merchant_not_found'; merchantId: string }
  | { kind: 'api_key_not_found'; accessKey: string }
  | { kind: 'api_key_deleted'; accessKey: string }
  | { kind: 'order_not_found'; orderId: string }
  | { kind: 'no_signing_key'; merchantId: string }
  | { kind: 'insufficient_balance'; merchantId: string; currency: string }
  /** `channels`: every fee channel there is, named in the message. */
  | { kind: 'fee_channel_not_found'; channel: string; channels: readonly string[] }
  | { kind: 'event_not_allowed'; orderId: string; status: number; event: string; allowedEvents: string[] }
  | { kind: 'sandbox_disabled' }
  /** The order's area is carried by a live rail (e.g. KENYA_RAIL=daraja): only that rail moves its orders. */
  | { kind: 'sandbox_live_rail'; orderId: string; area: string }
  /** `pairs`: every pair the exchange prices, as CURRENCY/TOKEN, named in the message. */
  | { kind: 'rate_pair_not_supported'; currency: string; token: string; pairs: readonly string[] }
  | { kind: 'invalid_rate'; detail: string }
  | { kind: 'invalid_cashier_settings'; detail: string }
  | { kind: 'invalid_console_user'; field: string; detail: string }
  | { kind: 'console_user_exists'; email: string }
  | { kind: 'console_user_not_found'; userId: string }
  | { kind: 'pix_not_found'; e2eid: string }
  /** The received Pix is not unmatched and its return has not failed: `detail` says what it is. */
  | { kind: 'pix_not_returnable'; e2eid: string; detail: string }
  | { kind: 'invalid_operator'; field: string; detail: string }
  /** No live rail is waiting on the order: nothing to ask again. */
  | { kind: 'nothing_to_ask'; orderId: string }
  /** A query parameter of an admin read that breaks its rule. */
  | { kind: 'invalid_parameter'; field: string; detail: string }
  | { kind: 'operator_exists'; email: string }
  | { kind: 'operator_not_found'; email: string }
  | { kind: 'operator_token_not_found'; tokenId: string }
  | { kind: 'approval_not_found'; approvalId: string }
  /** The approval was already approved or rejected. */
  | { kind: 'approval_decided'; approvalId: string; state: string }
  /** The operator who asked for a money action cannot approve (or reject) it. */
  | { kind: 'approval_own'; approvalId: string };

type FailureOf<K extends OperatorFailure['kind']> = Extract<OperatorFailure, { kind: K }>;

/** HTTP status and message of each failure; the compiler asks for an entry for every new kind. */
const DESCRIPTIONS: {
  [K in OperatorFailure['kind']]: { status: 400 | 403 | 404 | 409; message(f: FailureOf<K>): string };
} = {
  merchant_not_found: { status: 404, message: (f) => `merchant ${f.merchantId} does not exist` },
  api_key_not_found: { status: 404, message: (f) => `API key ${f.accessKey} does not exist for this merchant` },
  api_key_deleted: { status: 409, message: (f) => `API key ${f.accessKey} was deleted and cannot change` },
  order_not_found: { status: 404, message: (f) => `order ${f.orderId} does not exist` },
  no_signing_key: {
    status: 409,
    message: (f) => `merchant ${f.merchantId} has no active API key to sign callbacks with: create or enable one first`,
  },
  insufficient_balance: {
    status: 409,
    message: (f) =>
      `merchant ${f.merchantId} has not enough available ${f.currency} for this debit: nothing was changed`,
  },
  event_not_allowed: {
    status: 409,
    message: (f) =>
      `order ${f.orderId} is in status ${f.status}: ${f.event} is not allowed; allowed now: ${f.allowedEvents.join(', ') || 'none (the order is final)'}`,
  },
  sandbox_disabled: { status: 403, message: () => 'sandbox controls are off (CASHGATE_SANDBOX=false)' },
  sandbox_live_rail: {
    status: 403,
    message: (f) =>
      `order ${f.orderId} is carried by the live rail of its area (${f.area}): only that rail moves it, never the sandbox`,
  },
  rate_pair_not_supported: {
    status: 404,
    message: (f) => `the exchange does not price ${f.token} in ${f.currency}: pairs are ${f.pairs.join(', ')}`,
  },
  invalid_rate: { status: 400, message: (f) => f.detail },
  invalid_cashier_settings: { status: 400, message: (f) => f.detail },
  invalid_console_user: { status: 400, message: (f) => `${f.field}: ${f.detail}` },
  console_user_exists: { status: 409, message: (f) => `a console user with e-mail ${f.email} already exists` },
  console_user_not_found: { status: 404, message: (f) => `console user ${f.userId} does not exist for this merchant` },
  pix_not_found: { status: 404, message: (f) => `no Pix with end-to-end id ${f.e2eid} was received` },
  pix_not_returnable: { status: 409, message: (f) => `Pix ${f.e2eid} cannot be returned: ${f.detail}` },
  invalid_operator: { status: 400, message: (f) => `${f.field}: ${f.detail}` },
  nothing_to_ask: {
    status: 409,
    message: (f) =>
      `no live rail is waiting on order ${f.orderId} (a sandbox order, or one whose rail already answered): nothing to ask`,
  },
  invalid_parameter: { status: 400, message: (f) => `${f.field}: ${f.detail}` },
  operator_exists: { status: 409, message: (f) => `an operator with e-mail ${f.email} already exists` },
  operator_not_found: { status: 404, message: (f) => `no operator has e-mail ${f.email}` },
  operator_token_not_found: { status: 404, message: (f) => `operator token ${f.tokenId} does not exist` },
  approval_not_found: { status: 404, message: (f) => `approval ${f.approvalId} does not exist` },
  approval_decided: {
    status: 409,
    message: (f) => `approval ${f.approvalId} is already ${f.state}: nothing was changed`,
  },
  approval_own: {
    status: 403,
    message: (f) =>
      `approval ${f.approvalId} was requested by you: another operator with finance or admin must decide it`,
  },
  fee_channel_not_found: {
    status: 404,
    message: (f) => `there is no fee channel ${f.channel}: use one of ${f.channels.join(', ')}`,
  },
};

function describe<K extends OperatorFailure['kind']>(
  failure: FailureOf<K>,
): { status: 400 | 403 | 404 | 409; message: string } {
  const description = DESCRIPTIONS[failure.kind];
  return { status: description.status, message: description.message(failure) };
}

export class OperatorError extends Error {
  readonly status: 400 | 403 | 404 | 409;

  constructor(readonly failure: OperatorFailure) {
    const { status, message } = describe(failure);
    super(message);
    this.status = status;
    this.name = 'OperatorError';
  }
}
