/**
 * Exchange arithmetic on integers only: fiat in minor units, tokens in the chain's base units,
 * rates as fiat per token scaled by 10^RATE_DECIMALS. Every division rounds down, so a quote never
 * promises more than the rate pays.
 */
import type { Chain } from '../rails/chain/addresses.js';

export { TOKENS, type Token } from '../rails/chain/addresses.js';

/** Decimals of USDT on each chain (TRC-20 and ERC-20: 6; BEP-20 "BSC-USD": 18). */
export const TOKEN_DECIMALS: Record<Chain, number> = { TRON: 6, ETH: 6, BSC: 18 };

/** A rate is fiat per one token with at most this many decimals. */
export const RATE_DECIMALS = 8;
const RATE_SCALE = 10n ** BigInt(RATE_DECIMALS);

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Reads unsigned plain decimal text with at most `decimals` places as an integer scaled by 10^decimals. */
export function parseUnits(text: string, decimals: number): bigint | undefined {
  const match = PLAIN_DECIMAL.exec(text);
  if (match === null) return undefined;
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > decimals) return undefined;
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

/** The shortest plain decimal text of `units` / 10^decimals: 18.5, 100, 0.000001. */
export function formatUnits(units: bigint, decimals: number): string {
  const digits = units.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** A rate as text (at most RATE_DECIMALS places, greater than zero), or undefined. */
export function parseRate(text: string): bigint | undefined {
  const rate = parseUnits(text, RATE_DECIMALS);
  return rate === undefined || rate === 0n ? undefined : rate;
}

export function formatRate(rate: bigint): string {
  return formatUnits(rate, RATE_DECIMALS);
}

/**
 * The rate an order gets: Cashgate sells tokens (fiat → token) at `sell` raised by the spread,
 * rounded up, and buys them (token → fiat) at `buy` lowered by the spread, rounded down.
 */
export function applySpread(rate: bigint, spreadBps: number, side: 'sell' | 'buy'): bigint {
  const bps = BigInt(spreadBps);
  if (side === 'sell') return (rate * (10_000n + bps) + 9_999n) / 10_000n;
  return (rate * (10_000n - bps)) / 10_000n;
}

/** Tokens (base units) that `fiat` (minor units) buys at `rate`, rounded down to the token's last decimal. */
export function tokensForFiat(fiat: bigint, fiatDecimals: number, rate: bigint, tokenDecimals: number): bigint {
  return (fiat * 10n ** BigInt(tokenDecimals) * RATE_SCALE) / (rate * 10n ** BigInt(fiatDecimals));
}

/** Fiat (minor units) that `tokens` (base units) are worth at `rate`, rounded down to the minor unit. */
export function fiatForTokens(tokens: bigint, tokenDecimals: number, rate: bigint, fiatDecimals: number): bigint {
  return (tokens * rate * 10n ** BigInt(fiatDecimals)) / (10n ** BigInt(tokenDecimals) * RATE_SCALE);
}

/** The fewest tokens (base units) worth at least `fiat` (minor units) at `rate`: what a payer sends to pay a price. */
export function tokensToCover(fiat: bigint, fiatDecimals: number, rate: bigint, tokenDecimals: number): bigint {
  const numerator = fiat * 10n ** BigInt(tokenDecimals) * RATE_SCALE;
  const denominator = rate * 10n ** BigInt(fiatDecimals);
  return (numerator + denominator - 1n) / denominator;
}
