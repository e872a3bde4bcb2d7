import type { Currency, Minor } from '../money.js';

/** Where a fee applies (area, order kind and channel), with the currency its amounts are in. */
export const FEE_CHANNELS = {
  'ken.collection.BANK': 'KES',
  'ken.collection.CHARGE': 'KES',
  'ken.transfer.BANK': 'KES',
  'bra.collection.PIX': 'BRL',
  'bra.collection.PIX_DYNAMIC': 'BRL',
  'bra.collection.BOLETO': 'BRL',
  'bra.transfer.PIX': 'BRL',
  'bra.transfer.BANK': 'BRL',
  'exchange.fiat_to_token.BRL': 'BRL',
  'exchange.fiat_to_token.MXN': 'MXN',
  'exchange.token_to_fiat.BRL': 'BRL',
  // USDT paid on an aggregate cashier, credited in reais (its fiat methods use the bra.collection channels).
  'cashier.collection.USDT_TRC20': 'BRL',
  // Mexico's aggregate cashier: SPEI to the order's CLABE, OXXO vouchers, and USDT priced in pesos.
  'cashier.collection.SPEI': 'MXN',
  'cashier.collection.OXXO': 'MXN',
  'cashier.collection.USDT_TRC20_MXN': 'MXN',
} as const satisfies Record<string, Currency>;

export type FeeChannel = keyof typeof FEE_CHANNELS;

export function isFeeChannel(value: string): value is FeeChannel {
  return Object.hasOwn(FEE_CHANNELS, value);
}

/** A fee: percent of the amount in basis points (1/100 of a percent) plus a fixed part, at least a minimum. */
export interface FeeRule {
  percentBps: number;
  fixed: Minor;
  minimum: Minor;
}

export const NO_FEE: FeeRule = { percentBps: 0, fixed: 0n, minimum: 0n };

/**
 * The fee on `amount` in minor units: the percent part rounded half up to the minor unit, plus the
 * fixed part, raised to the minimum, and never more than the amount itself.
 */
export function feeFor(amount: Minor, rule: FeeRule): Minor {
  const percent = (amount * BigInt(rule.percentBps) + 5_000n) / 10_000n;
  const fee = percent + rule.fixed;
  const atLeast = fee < rule.minimum ? rule.minimum : fee;
  return atLeast > amount ? amount : atLeast;
}
