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
  /** The received Pix cannot go to that order: `field` (e2eid, orderId) breaks the rule `detail` states. */
  | { kind: 'pix_not_assignable'; e2eid: string; field: string; detail: string }
  /** The received Pix's assignment to an order waits for a second operator: nothing else may move it meanwhile. */
  | { kind: 'pix_assignment_pending'; e2eid: string; approvalId: string }
  /** An approval of a kind this gateway cannot carry out now (a Pix assignment without BRAZIL_RAIL=apipix). */
  | { kind: 'approval_kind_unavailable'; approvalId: string; approvalKind: string; detail: string }
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
  | { kind: 'approval_own'; approvalId: string }
  /** Only a payout (a transfer order) can be settled by hand. */
  | { kind: 'not_a_payout'; orderId: string; orderKind: string }
  /** The payout already ended (its rail's result, or an earlier settlement by hand). */
  | { kind: 'payout_final'; orderId: string; status: number; statusText: string }
  /** A node is handing the payout to its rail right now (a live lease): its outcome is not known yet. */
  | { kind: 'payout_in_flight'; orderId: string; leaseEndsAt: number }
  /** A typed confirmation that does not repeat what it confirms. */
  | { kind: 'confirmation_mismatch'; field: string; expected: string }
  | { kind: 'operator_id_not_found'; operatorId: string }
  /** An operator may not disable themself nor take away their own admin role (someone must be able to undo a mistake). */
  | { kind: 'operator_self_change'; operatorId: string; change: string }
  /** A resume of a merchant's payments or payouts that are not paused. */
  | { kind: 'not_paused'; merchantId: string; what: string };

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
  pix_not_assignable: {
    status: 409,
    message: (f) => `Pix ${f.e2eid} cannot be assigned: ${f.field}: ${f.detail}; nothing was changed`,
  },
  pix_assignment_pending: {
    status: 409,
    message: (f) =>
      `Pix ${f.e2eid} is held by approval ${f.approvalId} of its assignment to an order: approve or reject that first; nothing was changed`,
  },
  approval_kind_unavailable: {
    status: 409,
    message: (f) =>
      `approval ${f.approvalId} (${f.approvalKind}) cannot be decided here: ${f.detail}; nothing was changed`,
  },
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
  not_paused: {
    status: 409,
    message: (f) =>
      `the ${f.what} of merchant ${f.merchantId} are not paused: there is nothing to resume; nothing was changed`,
  },
  not_a_payout: {
    status: 409,
    message: (f) =>
      `order ${f.orderId} is a ${f.orderKind} order, not a payout: only a payout (transfer) can be settled by hand`,
  },
  payout_in_flight: {
    status: 409,
    message: (f) =>
      `order ${f.orderId} is being handed to its rail by a node right now (its lease ends ${new Date(f.leaseEndsAt).toISOString()}): ` +
      'settling it by hand could pay it twice; ask the rail again once the hand-over has ended; nothing was changed',
  },
  payout_final: {
    status: 409,
    message: (f) =>
      `payout ${f.orderId} is final already (status ${f.status} ${f.statusText}): it cannot be settled by hand; nothing was changed`,
  },
  confirmation_mismatch: {
    status: 400,
    message: (f) => `${f.field}: must repeat ${f.expected} exactly, to confirm; nothing was changed`,
  },
  operator_id_not_found: { status: 404, message: (f) => `operator ${f.operatorId} does not exist` },
  operator_self_change: {
    status: 403,
    message: (f) =>
      `you may not ${f.change} yourself (operator ${f.operatorId}): another admin must, so that someone can always undo a mistake`,
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
