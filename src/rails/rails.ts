import { createHash } from 'node:crypto';
import type { Tx } from '../store/store.js';

/** What a rail is told of an order: its own narrow view, not the order record. */
export interface RailOrder {
  orderId: string;
  /** What the rail knows the order by, fixed at creation (a Pix txid, a boleto barcode), if anything. */
  railRef: string | null;
  createdAt: number;
  /**
   * Derived from the order (`<orderId>.start`, `<orderId>.restart.<n>`), the same on every attempt
   * of one hand-over: a rail that takes an idempotency key is given this one, so that a repeated
   * attempt never starts the order twice.
   */
  idempotencyKey: string;
  /** Earlier attempts of this hand-over: when above zero, one may have reached the rail with no answer. */
  earlierAttempts: number;
  /** The order's area, amount (minor units of its currency), the merchant's id for it, remark and details (JSON). */
  area: string;
  amount: bigint;
  externalOrderId: string;
  remark: string | null;
  details: string;
  /** When the order stops waiting for its payment (a collection's deadline), if it has one. */
  expiresAt: number | null;
}

/** What a rail answers when it took the order. */
export interface RailStarted {
  channelOrderId: string;
  /**
   * What the rail issued that the merchant must be shown (e.g. a PSP's Pix copy-and-paste code),
   * merged into the order's details, and into the create result kept for identical repeats, in the
   * unit of work that records the answer.
   */
  details?: Readonly<Record<string, string>>;
  /** The rail's own rows about the attempt, written in the same unit of work that records the answer. */
  record?: (tx: Tx) => Promise<void>;
}

/** The rail refused the order for good (a value it does not accept): another attempt would not help. */
export class RailRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RailRefusal';
  }
}

/**
 * An earlier attempt may have reached the rail, and the rail offers no way to ask: starting the
 * order again could start it twice, so the hand-over ends here (the rail's late report still counts).
 */
export class RailOutcomeUnknown extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RailOutcomeUnknown';
  }
}

/**
 * A payment rail: how Cashgate asks the outside world to move money for an order. The rail's
 * answer (paid, failed, …) comes back later as an order event, from its webhook or from the
 * sandbox, through OrderService.applyEvent.
 */
export interface Rail {
  readonly name: string;
  /**
   * Starts the order on the rail (an STK prompt, a Pix charge, a boleto, a payout); returns the
   * rail's reference. Called after the order committed, from its durable hand-over; when an earlier
   * attempt's outcome is unknown (`earlierAttempts` > 0), the rail asks its provider what became of
   * it before starting anything again.
   */
  start: (order: RailOrder) => Promise<RailStarted>;
  /**
   * The merchant's create does not wait for the rail: the answer needs nothing from it (a payout),
   * so the start runs right after the commit without holding the answer, and a provider that is
   * slow to answer does not make the create slow. Its hand-over is as durable either way. (Past
   * MAX_BACKGROUND_HANDOVERS such attempts running at once in a process, a create waits for its own.)
   */
  readonly startsAfterAnswer?: boolean;
  /**
   * The merchant's create waits at most this long for the first attempt (a boleto issuer that
   * registers slowly): past it, the create answers without what the rail issues, and the attempt
   * goes on; the query, the cashier and the callback carry it once recorded.
   */
  readonly answerWaitMs?: number;
  /**
   * A simulator: `start` calls nothing outside the process and answers at once, so its first
   * attempt is made inside the order's own unit of work and recorded with the order (one commit,
   * no lease). A rail that talks to a provider is never local: it is called after the commit.
   */
  local?: boolean;
}

/** The fiat rails of the gateway, one per way money moves; the composition root builds them. */
export interface Rails {
  mpesaStk: Rail;
  mpesaB2c: Rail;
  pix: Rail;
  boleto: Rail;
  pixPayout: Rail;
  bankPayout: Rail;
  /** Mexico: a SPEI transfer to the order's own CLABE (STP), and an OXXO cash voucher (Stripe). */
  spei: Rail;
  oxxo: Rail;
}

/** `length` hex digits derived from the hand-over's idempotency key: a repeated attempt gets the same reference. */
export const derivedHex = (key: string, length: number) =>
  createHash('sha256').update(key).digest('hex').slice(0, length);

const stamp = (now: number) =>
  new Date(now)
    .toISOString()
    .replace(/[-:T.Z]/g, '')
    .slice(0, 14);

/**
 * The simulators: each gives the reference its real rail would (Daraja's CheckoutRequestID, a Pix
 * txid, a boleto's nosso número, a payout id) and waits for sandbox events to say what happened.
 * Like an idempotent provider, each gives the same reference to every attempt of one hand-over.
 */
export function sandboxRails(): Rails {
  return {
    mpesaStk: {
      name: 'mpesa-stk (sandbox)',
      local: true,
      start: (o) =>
        Promise.resolve({ channelOrderId: `ws_CO_${stamp(o.createdAt)}${derivedHex(o.idempotencyKey, 12)}` }),
    },
    mpesaB2c: {
      name: 'mpesa-b2c (sandbox)',
      local: true,
      start: (o) => Promise.resolve({ channelOrderId: `AG_${derivedHex(o.idempotencyKey, 20).toUpperCase()}` }),
    },
    pix: {
      name: 'pix (sandbox)',
      local: true,
      start: (o) => Promise.resolve({ channelOrderId: (o.railRef ?? '').replace(/^\w+:/, '') }),
    },
    boleto: {
      name: 'boleto (sandbox)',
      local: true,
      start: (o) => Promise.resolve({ channelOrderId: (o.railRef ?? '').replace(/^boleto:/, '').slice(19) }),
    },
    pixPayout: {
      name: 'pix-payout (sandbox)',
      local: true,
      start: (o) => Promise.resolve({ channelOrderId: `PXO${derivedHex(o.idempotencyKey, 24).toUpperCase()}` }),
    },
    bankPayout: {
      name: 'ted (sandbox)',
      local: true,
      start: (o) => Promise.resolve({ channelOrderId: `TED${derivedHex(o.idempotencyKey, 24).toUpperCase()}` }),
    },
    spei: {
      name: 'spei (sandbox)',
      local: true,
      start: (o) => Promise.resolve({ channelOrderId: (o.railRef ?? '').replace(/^clabe:/, '') }),
    },
    oxxo: {
      name: 'oxxo (sandbox)',
      local: true,
      start: (o) => {
        // A voucher number of 20 digits, the same for every attempt of one hand-over.
        const oxxoNumber = BigInt(`0x${derivedHex(o.idempotencyKey, 16)}`)
          .toString()
          .padStart(20, '0')
          .slice(-20);
        return Promise.resolve({ channelOrderId: `oxxo_${oxxoNumber}`, details: { oxxoNumber } });
      },
    },
  };
}
