import { OperatorError } from '../admin/failures.js';
import type { Clock } from '../clock.js';
import type { ReadDb, Store } from '../store/store.js';
import { applySpread, formatRate, parseRate, RATE_DECIMALS, TOKENS, type Token } from './amounts.js';
import * as q from './queries.js';

/** Fiat currencies the exchange prices tokens in. */
export const EXCHANGE_CURRENCIES = ['BRL', 'MXN'] as const;
export type ExchangeCurrency = (typeof EXCHANGE_CURRENCIES)[number];

/** Prices of one token in one fiat currency, scaled by 10^RATE_DECIMALS. */
export interface TokenPrice {
  /** What Cashgate pays for one token. */
  buy: bigint;
  /** What Cashgate asks for one token. */
  sell: bigint;
  spreadBps: number;
  updatedAt: number;
}

/**
 * Where prices come from. The default source is the operator's own prices, set through the admin
 * API; a market feed can take its place behind the same interface.
 */
export interface RateSource {
  readonly name: string;
  price(db: ReadDb, currency: string, token: Token): Promise<TokenPrice | undefined>;
}

/** The rate an order of each direction gets from a price. */
export function orderRate(price: TokenPrice, direction: 'fiat_to_token' | 'token_to_fiat'): bigint {
  return direction === 'fiat_to_token'
    ? applySpread(price.sell, price.spreadBps, 'sell')
    : applySpread(price.buy, price.spreadBps, 'buy');
}

export interface RateView {
  currency: string;
  token: string;
  buy: string;
  sell: string;
  spreadBps: number;
  /** What a fiat → token order gets now: sell plus the spread. */
  fiatToTokenRate: string;
  /** What a token → fiat order gets now: buy minus the spread. */
  tokenToFiatRate: string;
  updatedAt: number;
}

/** The operator's prices, kept in the database and shared by every node. */
export class OperatorRates implements RateSource {
  readonly name = 'operator';

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async price(db: ReadDb, currency: string, token: Token): Promise<TokenPrice | undefined> {
    const row = await q.findRate(db, currency, token);
    return row === undefined ? undefined : priceOf(row);
  }

  /**
   * The operator's change of a pair's prices, as the admin API and the CLI receive it (the pair and
   * the prices as text): an unknown pair, a price that is not a plain decimal or buy above sell is
   * refused with the operator's error, and nothing changes.
   */
  setPrices(currency: string, token: string, input: { buy: string; sell: string; spreadBps?: number | undefined }) {
    if (!isExchangeCurrency(currency) || !(TOKENS as readonly string[]).includes(token)) {
      const pairs = EXCHANGE_CURRENCIES.flatMap((c) => TOKENS.map((t) => `${c}/${t}`));
      throw new OperatorError({ kind: 'rate_pair_not_supported', currency, token, pairs });
    }
    const buy = operatorPrice('buy', input.buy);
    const sell = operatorPrice('sell', input.sell);
    if (buy > sell)
      throw new OperatorError({
        kind: 'invalid_rate',
        detail: `buy ${input.buy} exceeds sell ${input.sell}: Cashgate would buy tokens for more than it sells them`,
      });
    return this.set(currency, token as Token, { buy, sell, spreadBps: input.spreadBps ?? 0 });
  }

  /** Sets (or replaces) the prices of a pair; orders already created keep the rate they were given. */
  async set(
    currency: ExchangeCurrency,
    token: Token,
    price: { buy: bigint; sell: bigint; spreadBps: number },
  ): Promise<RateView> {
    const now = this.clock.now();
    const row = {
      currency,
      token,
      buy: formatRate(price.buy),
      sell: formatRate(price.sell),
      spread_bps: price.spreadBps,
      updated_at: now,
    };
    await this.store.transact((tx) => q.upsertRate(tx, row));
    return view(currency, token, { ...price, updatedAt: now });
  }

  async list(): Promise<RateView[]> {
    const rows = await q.listRates(this.store.read);
    return rows.map((row) => view(row.currency, row.token, priceOf(row)));
  }
}

function isExchangeCurrency(currency: string): currency is ExchangeCurrency {
  return (EXCHANGE_CURRENCIES as readonly string[]).includes(currency);
}

function operatorPrice(field: 'buy' | 'sell', text: string): bigint {
  const value = parseRate(text);
  if (value === undefined) {
    throw new OperatorError({
      kind: 'invalid_rate',
      detail: `${field} must be a plain decimal greater than 0 with at most ${RATE_DECIMALS} decimal places, e.g. "5.4321"`,
    });
  }
  return value;
}

function priceOf(row: q.ExchangeRateRow): TokenPrice {
  const buy = parseRate(row.buy);
  const sell = parseRate(row.sell);
  if (buy === undefined || sell === undefined)
    throw new Error(`stored rate ${row.currency}/${row.token} is not a valid decimal`);
  return { buy, sell, spreadBps: row.spread_bps, updatedAt: row.updated_at };
}

export function view(currency: string, token: string, price: TokenPrice): RateView {
  return {
    currency,
    token,
    buy: formatRate(price.buy),
    sell: formatRate(price.sell),
    spreadBps: price.spreadBps,
    fiatToTokenRate: formatRate(orderRate(price, 'fiat_to_token')),
    tokenToFiatRate: formatRate(orderRate(price, 'token_to_fiat')),
    updatedAt: price.updatedAt,
  };
}
