import { randomBytes } from 'node:crypto';

/** What a rail is told of an order: its own narrow view, not the order record. */
export interface RailOrder {
  orderId: string;
  /** What the rail knows the order by, fixed at creation (a Pix txid, a boleto barcode), if anything. */
  railRef: string | null;
  createdAt: number;
}

/**
 * A payment rail: how Cashgate asks the outside world to move money for an order. The rail's
 * answer (paid, failed, …) comes back later as an order event, from its webhook or from the
 * sandbox, through OrderService.applyEvent.
 */
export interface Rail {
  readonly name: string;
  /** Starts the order on the rail (an STK prompt, a Pix charge, a boleto, a payout); returns the rail's reference. */
  start: (order: RailOrder) => Promise<{ channelOrderId: string }>;
}

/** The fiat rails of the gateway, one per way money moves; the composition root builds them. */
export interface Rails {
  mpesaStk: Rail;
  mpesaB2c: Rail;
  pix: Rail;
  boleto: Rail;
  pixPayout: Rail;
  bankPayout: Rail;
}

const stamp = (now: number) =>
  new Date(now)
    .toISOString()
    .replace(/[-:T.Z]/g, '')
    .slice(0, 14);

/**
 * The simulators: each gives the reference its real rail would (Daraja's CheckoutRequestID, a Pix
 * txid, a boleto's nosso número, a payout id) and waits for sandbox events to say what happened.
 */
export function sandboxRails(): Rails {
  return {
    mpesaStk: {
      name: 'mpesa-stk (sandbox)',
      start: (o) => Promise.resolve({ channelOrderId: `ws_CO_${stamp(o.createdAt)}${randomBytes(6).toString('hex')}` }),
    },
    mpesaB2c: {
      name: 'mpesa-b2c (sandbox)',
      start: () => Promise.resolve({ channelOrderId: `AG_${randomBytes(10).toString('hex').toUpperCase()}` }),
    },
    pix: {
      name: 'pix (sandbox)',
      start: (o) => Promise.resolve({ channelOrderId: (o.railRef ?? '').replace(/^\w+:/, '') }),
    },
    boleto: {
      name: 'boleto (sandbox)',
      start: (o) => Promise.resolve({ channelOrderId: (o.railRef ?? '').replace(/^boleto:/, '').slice(19) }),
    },
    pixPayout: {
      name: 'pix-payout (sandbox)',
      start: () => Promise.resolve({ channelOrderId: `PXO${randomBytes(12).toString('hex').toUpperCase()}` }),
    },
    bankPayout: {
      name: 'ted (sandbox)',
      start: () => Promise.resolve({ channelOrderId: `TED${randomBytes(12).toString('hex').toUpperCase()}` }),
    },
  };
}
