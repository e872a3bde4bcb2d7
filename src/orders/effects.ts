import { LANGUAGES, type Language } from '../http/language.js';
import { feeFor } from '../ledger/fees.js';
import type { Ledger, TransferMoney } from '../ledger/ledger.js';
import { fromDb, toDbMinor } from '../money.js';
import { storedFeeRule, withDetails } from './details.js';
import * as q from './queries.js';
import { COLLECTION_STATUS, TRANSFER_STATUS } from './state-machine.js';
import type { EventOptions } from './service.js';
import type { Tx } from '../store/store.js';

/** One allowed transition about to be written, handed to the order kind's own effects. */
export interface TransitionStep {
  tx: Tx;
  order: q.OrderRow;
  event: string;
  to: number;
  now: number;
  options: EventOptions;
}

/** What a transition changes besides status and time, and the failure text of an order that ends without success. */
export interface TransitionEffects {
  changes: Partial<q.OrderRow>;
  failure?: Record<Language, string>;
}

/**
 * What a rail settles on success (e.g. a Pix end-to-end id), merged into the order's details;
 * `data` is what the rail reported with the event, when a real rail did.
 */
export type SuccessDetails = (order: q.OrderRow, now: number, data: Readonly<Record<string, string>>) => object;

/**
 * A collection's transitions: paid credits the amount paid, net of the fee schedule kept at
 * creation, awaiting settlement (from `rail_clearing`, or the kind's own clearing account);
 * cancelled and expired move no money. `before` is the kind's own change made first (a token
 * payment's chain data).
 */
export function collectionTransitions(
  ledger: Ledger,
  options: {
    clearing?: (order: q.OrderRow) => 'rail_clearing' | 'token_clearing';
    successDetails?: SuccessDetails;
    before?: (step: TransitionStep) => Partial<q.OrderRow>;
  } = {},
): (step: TransitionStep) => Promise<TransitionEffects> {
  return async (step) => {
    const { tx, order, event, to, now } = step;
    const changes: Partial<q.OrderRow> = { ...options.before?.(step) };
    if (event === 'paid') {
      const actual = step.options.amount ?? fromDb(order.amount);
      const fee = feeFor(actual, storedFeeRule(order));
      const merchant = await q.merchantTermsOf(tx, order.merchant_id);
      await ledger.creditCollection(tx, {
        merchantId: order.merchant_id,
        currency: order.currency,
        orderId: order.id,
        amount: actual,
        fee,
        settleAt: now + merchant.settlement_delay_ms,
        clearing: options.clearing?.(order) ?? 'rail_clearing',
      });
      Object.assign(changes, {
        actual_amount: toDbMinor(actual),
        fee: toDbMinor(fee),
        pay_time: now,
        complete_time: now,
      });
    }
    if (to === COLLECTION_STATUS.paid && options.successDetails !== undefined) {
      changes.details = withDetails(
        changes.details ?? order.details,
        options.successDetails(order, now, step.options.data ?? {}),
      );
    }
    return { changes };
  };
}

function transferMoney(order: q.OrderRow): TransferMoney {
  return {
    merchantId: order.merchant_id,
    currency: order.currency,
    orderId: order.id,
    amount: fromDb(order.amount),
    fee: fromDb(order.fee),
  };
}

/**
 * A transfer's transitions: succeeded takes the frozen amount + fee; bank_rejected and failed
 * release them (nothing was charged, so the fee is released with the amount). A failure the rail
 * described (`data.reason`) is the order's errorMsg, in every language.
 */
export function transferTransitions(
  ledger: Ledger,
  options: { successDetails?: SuccessDetails } = {},
): (step: TransitionStep) => Promise<TransitionEffects> {
  return async ({ tx, order, to, now, options: event }) => {
    if (to === TRANSFER_STATUS.succeeded) {
      await ledger.completeTransfer(tx, transferMoney(order));
      const details = options.successDetails?.(order, now, event.data ?? {});
      return {
        changes: {
          actual_amount: order.amount,
          pay_time: now,
          complete_time: now,
          ...(details !== undefined && { details: withDetails(order.details, details) }),
        },
      };
    }
    if (to === TRANSFER_STATUS.bankRejected || to === TRANSFER_STATUS.failed) {
      await ledger.releaseTransfer(tx, transferMoney(order));
      const reason = event.data?.reason ?? '';
      return {
        changes: { complete_time: now, fee: 0 },
        ...(to === TRANSFER_STATUS.failed &&
          reason !== '' && {
            failure: Object.fromEntries(LANGUAGES.map((language) => [language, reason])) as Record<Language, string>,
          }),
      };
    }
    return { changes: {} };
  };
}
