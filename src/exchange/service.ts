import type { Static } from '@sinclair/typebox';
import type { Clock } from '../clock.js';
import type { MerchantCaller } from '../http/caller.js';
import { ApiError } from '../http/failures.js';
import { LANGUAGES, type Language } from '../http/language.js';
import { inEach, translator, type Translator } from '../i18n/messages.js';
import { feeFor } from '../ledger/fees.js';
import type { Ledger } from '../ledger/ledger.js';
import { amountField } from '../ledger/amount-field.js';
import { CURRENCIES, formatMoney, fromDb, MAX_MINOR, toDbMinor, type Currency } from '../money.js';
import { storedFeeRule, withDetails } from '../orders/details.js';
import type { OrderRow } from '../orders/queries.js';
import {
  EventNotAllowedError,
  newOrderId,
  type CreateStep,
  type OrderKindSpec,
  type OrderService,
} from '../orders/service.js';
import type { TransitionStep } from '../orders/effects.js';
import { EXCHANGE_STATUS } from '../orders/state-machine.js';
import { isChainAddress, isTradeHash, randomTradeHash, type Chain } from '../rails/chain/addresses.js';
import type { ChainRail } from '../rails/chain/rail.js';
import type { SendOutcomes } from '../rails/chain/token-sender.js';
import type { Rail } from '../rails/rails.js';
import type { Store } from '../store/store.js';
import {
  fiatForTokens,
  formatRate,
  formatUnits,
  parseRate,
  RATE_DECIMALS,
  TOKEN_DECIMALS,
  tokensForFiat,
  type Token,
} from './amounts.js';
import type { DepositAddresses } from './deposit-addresses.js';
import {
  exchangeDetails,
  exchangeRecord,
  FiatToTokenResult,
  TokenToFiatResult,
  fiatToTokenResult,
  tokenToFiatResult,
  type ExchangeDetails,
} from './records.js';
import { orderRate, type ExchangeCurrency, type RateSource } from './rates.js';

export interface FiatToTokenRequest {
  addressTo: string;
  chainType: Chain;
  tokenType: Token;
  currencyAmount: string | number;
  currencyType: ExchangeCurrency;
  externalOrderId: string;
  remark?: string;
}

export interface TokenToFiatRequest {
  tokenAmount: string | number;
  chainType: 'TRON';
  addressFrom: string;
  currencyType: 'BRL';
  tokenType: Token;
  externalOrderId?: string;
  notifyUrl?: string;
  remark?: string;
}

export type Caller = Pick<MerchantCaller, 'merchantId' | 'accessKey' | 'nonce'>;

type Texts = Record<Language, string>;

/** A failure text in every language, from its `api.exchange` message. */
function texts(text: (t: Translator<'api.exchange'>) => string): Texts {
  return inEach(LANGUAGES, (lang) => text(translator('api.exchange', lang)));
}

/** errorMsg / errorMsgEn of exchange orders that end in 32. */
const FAILURES = {
  quoteLapsed: texts((t) => t('quoteLapsed')),
  failedBeforeSend: texts((t) => t('failedBeforeSend')),
  sendFailed: texts((t) => t('sendFailed')),
  sendRefused: (detail: string): Texts => texts((t) => t('sendRefused', { detail })),
  sendReverted: (hash: string, why: string): Texts => texts((t) => t('sendReverted', { hash, why })),
  depositFailed: texts((t) => t('depositFailed')),
  expired: texts((t) => t('expired')),
  underpaid: (received: string, expected: string, token: string): Texts =>
    texts((t) => t('underpaid', { received, expected, token })),
  late: (deadline: number): Texts => texts((t) => t('late', { deadline: new Date(deadline).toISOString() })),
  wrongSender: (from: string, expected: string): Texts => texts((t) => t('wrongSender', { from, expected })),
} as const;

/** The source recorded on events a live chain's sender or watcher applies. */
export const CHAIN_SOURCE = 'chain';

const FINAL = new Set<number>([EXCHANGE_STATUS.complete, EXCHANGE_STATUS.failed]);

const CHAIN_FORMAT = { TRON: 'tronAddress', ETH: 'evmAddress', BSC: 'evmAddress' } as const;

/** The largest whole fiat amount an exchange order takes: its minor units must fit the ledger. */
const MAX_WHOLE_FIAT = MAX_MINOR / 100n;

/** The rate fixed on the order at creation. */
function quotedRate(d: Pick<ExchangeDetails, 'exchangeRate'>): bigint {
  const rate = parseRate(d.exchangeRate);
  if (rate === undefined) throw new Error(`exchangeRate ${d.exchangeRate} is not a rate`);
  return rate;
}

function checkAddress(field: string, chain: Chain, address: string): void {
  if (!isChainAddress(chain, address))
    throw new ApiError({ kind: 'invalid_field', field, rule: { rule: 'format', format: CHAIN_FORMAT[chain] } });
}

/**
 * Fiat ↔ USDT exchange orders: quotes at the operator's rates, fiat frozen and taken from the
 * merchant's balance, deposit addresses derived per order, and the chain rail's reports.
 */
export class ExchangeService {
  constructor(
    private readonly deps: {
      orders: OrderService;
      store: Store;
      ledger: Ledger;
      rates: RateSource;
      addresses: DepositAddresses;
      rails: Readonly<Record<Chain, ChainRail>>;
      clock: Clock;
      quoteTtlMs: number;
    },
  ) {}

  /** The deposit addresses token → fiat orders take (the pool's worker tops them up). */
  get addresses(): DepositAddresses {
    return this.deps.addresses;
  }

  /** The two order kinds, registered with the order service. */
  readonly kinds: {
    fiatToToken: OrderKindSpec<Static<typeof FiatToTokenResult>>;
    tokenToFiat: OrderKindSpec<Static<typeof TokenToFiatResult>>;
  } = {
    fiatToToken: {
      area: 'exchange',
      kind: 'fiat_to_token',
      createResult: fiatToTokenResult,
      callbackPayload: exchangeRecord,
      rail: (o) => this.#rail(o),
      write: (step) => this.#writeFiatToToken(step),
      transition: (s) => this.#fiatToTokenStep(s),
    },
    tokenToFiat: {
      area: 'exchange',
      kind: 'token_to_fiat',
      createResult: tokenToFiatResult,
      callbackPayload: exchangeRecord,
      rail: (o) => this.#rail(o),
      write: (step) => this.#writeTokenToFiat(step),
      transition: (s) => this.#tokenToFiatStep(s),
    },
  };

  /** Fiat → token: the fee and the tokens it buys (none: a 300), then the fiat frozen (short: a 300). */
  async #writeFiatToToken({ tx, order, feeRule, insert }: CreateStep): Promise<void> {
    const d = exchangeDetails(order);
    const currency = order.currency;
    const amount = fromDb(order.amount);
    const rate = quotedRate(d);
    const fee = feeFor(amount, feeRule);
    const units = tokensForFiat(amount - fee, CURRENCIES[currency], rate, d.tokenDecimals);
    const ceiling = this.deps.rails[d.chainType].maxPerOrder;
    if (ceiling !== undefined && units > ceiling) {
      throw new ApiError({
        kind: 'exchange_amount_too_large',
        field: 'currencyAmount',
        tokens: formatUnits(units, d.tokenDecimals),
        token: d.tokenType,
        ceiling: formatUnits(ceiling, d.tokenDecimals),
        chainType: d.chainType,
      });
    }
    if (units === 0n) {
      throw new ApiError({
        kind: 'exchange_amount_too_small',
        field: 'currencyAmount',
        reason: 'buys_nothing',
        tokens: '0',
        token: d.tokenType,
        amount: formatMoney(amount, currency),
        fee: formatMoney(fee, currency),
        currency,
        rate: formatRate(rate),
      });
    }
    order.fee = toDbMinor(fee);
    order.details = withDetails(order.details, { tokenUnits: units.toString() });
    await insert();
    await this.deps.orders.freezeOrRefuse(tx, order, {
      total: amount,
      journal: 'exchange.freeze',
      purpose: 'exchange',
    });
  }

  /** Token → fiat: the fee (taking the whole credit: a 300), then a fresh deposit address for the order. */
  async #writeTokenToFiat({ tx, order, feeRule, insert }: CreateStep): Promise<void> {
    const d = exchangeDetails(order);
    const currency = order.currency;
    const gross = fromDb(order.amount);
    const fee = feeFor(gross, feeRule);
    if (gross - fee <= 0n) {
      throw new ApiError({
        kind: 'exchange_amount_too_small',
        field: 'tokenAmount',
        reason: 'fee_takes_all',
        tokens: formatUnits(BigInt(d.tokenUnits), d.tokenDecimals),
        token: d.tokenType,
        amount: formatMoney(gross, currency),
        fee: formatMoney(fee, currency),
        currency,
        rate: formatRate(quotedRate(d)),
      });
    }
    const deposit = await this.deps.addresses.reserve(tx, 'tron');
    order.fee = toDbMinor(fee);
    order.rail_ref = deposit.address;
    order.details = withDetails(order.details, {
      addressTo: deposit.address,
      depositPath: deposit.path,
      quotedNet: (gross - fee).toString(),
    });
    await insert();
    await this.deps.addresses.assign(tx, deposit, order.id, order.created_at);
  }

  /** The order's chain rail, as the order service starts it: a send queued, or a deposit address watched. */
  #rail(order: OrderRow): Rail {
    const d = exchangeDetails(order);
    const chain = this.deps.rails[d.chainType];
    return {
      name: chain.name,
      // The sandbox's chain answers at once and in process: its first attempt commits with the order.
      local: !chain.live,
      start: async ({ idempotencyKey }) =>
        order.kind === 'token_to_fiat'
          ? {
              channelOrderId: (
                await chain.watchDeposits({
                  orderId: order.id,
                  idempotencyKey,
                  address: d.addressTo,
                  token: d.tokenType,
                })
              ).watchId,
            }
          : await chain
              .send({
                orderId: order.id,
                idempotencyKey,
                to: d.addressTo,
                token: d.tokenType,
                units: BigInt(d.tokenUnits),
              })
              .then(({ sendId, record }) => ({ channelOrderId: sendId, ...(record !== undefined && { record }) })),
    };
  }

  async #price(
    currency: ExchangeCurrency,
    token: Token,
    direction: 'fiat_to_token' | 'token_to_fiat',
  ): Promise<bigint> {
    const price = await this.deps.rates.price(this.deps.store.read, currency, token);
    if (price === undefined) throw new ApiError({ kind: 'rate_unavailable', currency, token });
    return orderRate(price, direction);
  }

  /** Endpoint 2: the merchant buys tokens with its fiat balance; currencyAmount is frozen now (a 300 when short). */
  async createFiatToToken(caller: Caller, body: FiatToTokenRequest): Promise<Static<typeof FiatToTokenResult>> {
    const currency: Currency = body.currencyType;
    const whole = amountField('currencyAmount', body.currencyAmount, currency, {
      decimals: 0,
      minimum: 1n,
      maximum: MAX_WHOLE_FIAT,
    });
    const amount = whole * 10n ** BigInt(CURRENCIES[currency]);
    checkAddress('addressTo', body.chainType, body.addressTo);
    const earlier = await this.deps.orders.earlierAnswer(this.kinds.fiatToToken, {
      merchantId: caller.merchantId,
      externalOrderId: body.externalOrderId,
      requestBody: body,
    });
    if (earlier !== undefined) return earlier;
    const missing = this.deps.rails[body.chainType].sendUnavailable;
    if (missing !== undefined)
      throw new ApiError({ kind: 'chain_send_unavailable', chainType: body.chainType, missing });
    const rate = await this.#price(body.currencyType, body.tokenType, 'fiat_to_token');
    const decimals = TOKEN_DECIMALS[body.chainType];
    const details: Omit<ExchangeDetails, 'tokenUnits'> = {
      tokenType: body.tokenType,
      chainType: body.chainType,
      tokenDecimals: decimals,
      exchangeRate: formatRate(rate),
      addressTo: body.addressTo,
    };
    const { data } = await this.deps.orders.create(this.kinds.fiatToToken, {
      id: newOrderId(this.kinds.fiatToToken),
      merchantId: caller.merchantId,
      accessKey: caller.accessKey,
      nonce: caller.nonce,
      externalOrderId: body.externalOrderId,
      requestBody: body,
      currency,
      channelType: body.chainType,
      payType: 0,
      feeChannel: `exchange.fiat_to_token.${body.currencyType}`,
      amount,
      notifyUrl: null,
      returnUrl: null,
      remark: body.remark ?? null,
      // The rate is held this long for the fiat to be taken (status 2); then the order expires and the fiat is released.
      deadline: this.deps.clock.now() + this.deps.quoteTtlMs,
      details,
    });
    return data;
  }

  /** Endpoint 4: a payer sells tokens for the merchant: a fresh deposit address and a rate held for the quote's lifetime. */
  async createTokenToFiat(caller: Caller, body: TokenToFiatRequest): Promise<Static<typeof TokenToFiatResult>> {
    const currency: Currency = body.currencyType;
    const decimals = TOKEN_DECIMALS[body.chainType];
    const units = amountField('tokenAmount', body.tokenAmount, currency, { decimals, minimum: 1n, maximum: MAX_MINOR });
    checkAddress('addressFrom', body.chainType, body.addressFrom);
    const earlier = await this.deps.orders.earlierAnswer(this.kinds.tokenToFiat, {
      merchantId: caller.merchantId,
      externalOrderId: body.externalOrderId ?? null,
      requestBody: body,
    });
    if (earlier !== undefined) return earlier;
    const rate = await this.#price(body.currencyType, body.tokenType, 'token_to_fiat');
    const gross = fiatForTokens(units, decimals, rate, CURRENCIES[currency]);
    if (gross > MAX_MINOR) {
      // At most what the ledger can credit at this rate, in whole tokens.
      const max = (MAX_MINOR * 10n ** BigInt(RATE_DECIMALS)) / (rate * 10n ** BigInt(CURRENCIES[currency]));
      throw new ApiError({ kind: 'invalid_field', field: 'tokenAmount', rule: { rule: 'maximum', max: Number(max) } });
    }
    const now = this.deps.clock.now();
    const details: Omit<ExchangeDetails, 'addressTo'> = {
      tokenType: body.tokenType,
      chainType: body.chainType,
      tokenUnits: units.toString(),
      tokenDecimals: decimals,
      exchangeRate: formatRate(rate),
      addressFrom: body.addressFrom,
    };
    const { data } = await this.deps.orders.create(this.kinds.tokenToFiat, {
      id: newOrderId(this.kinds.tokenToFiat),
      merchantId: caller.merchantId,
      accessKey: caller.accessKey,
      nonce: caller.nonce,
      externalOrderId: body.externalOrderId ?? null,
      requestBody: body,
      currency,
      channelType: body.chainType,
      payType: 0,
      feeChannel: `exchange.token_to_fiat.${body.currencyType}`,
      amount: gross,
      notifyUrl: body.notifyUrl ?? null,
      returnUrl: null,
      remark: body.remark ?? null,
      deadline: now + this.deps.quoteTtlMs,
      details,
    });
    return data;
  }

  /** The caller's exchange order of one direction named by both ids, else a 300. */
  query(
    caller: Caller,
    kind: 'fiat_to_token' | 'token_to_fiat',
    ids: { externalOrderId: string; orderId: string },
  ): Promise<OrderRow> {
    return this.deps.orders.findForQuery(caller.merchantId, 'exchange', kind, ids);
  }

  /**
   * A chain's report of a confirmed deposit to a token → fiat order's address. It is credited when
   * it comes from addressFrom, carries at least the quoted amount (all of it is credited, at the
   * order's rate) and arrives before the quote expires; otherwise the order fails with the reason
   * and nothing is credited (the tokens are the operator's to return).
   */
  reportDeposit(
    order: OrderRow,
    deposit: { units: bigint; tradeHash: string; from: string; source: string },
  ): Promise<OrderRow> {
    const d = exchangeDetails(order);
    const refusal =
      order.cashier_expire_at !== null && order.cashier_expire_at <= this.deps.clock.now()
        ? 'late'
        : deposit.from !== d.addressFrom
          ? 'wrong_sender'
          : deposit.units < BigInt(d.tokenUnits)
            ? 'underpaid'
            : undefined;
    return this.deps.orders.applyEvent(order.id, refusal === undefined ? 'token_received' : 'deposit_refused', {
      source: deposit.source,
      data: {
        units: deposit.units.toString(),
        tradeHash: deposit.tradeHash,
        from: deposit.from,
        ...(refusal !== undefined && { refusal }),
      },
    });
  }

  async #fiatToTokenStep(step: TransitionStep): Promise<{ changes: Partial<OrderRow>; failure?: Texts }> {
    const { tx, order, event, now, options } = step;
    const money = {
      merchantId: order.merchant_id,
      currency: order.currency,
      orderId: order.id,
      gross: fromDb(order.amount),
      fee: fromDb(order.fee),
    };
    switch (event) {
      case 'paid':
      case 'currency_received':
        await this.deps.ledger.takeExchangeFiat(tx, money);
        return { changes: { actual_amount: order.amount, pay_time: now } };
      case 'token_sent':
        return {
          changes: {
            details: withDetails(order.details, {
              tradeHash: options.data?.tradeHash ?? randomTradeHash(exchangeDetails(order).chainType),
            }),
          },
        };
      case 'token_received':
        return {
          changes: {
            complete_time: now,
            // The send's transaction that was mined (a replacement has its own hash).
            ...(options.data?.tradeHash !== undefined && {
              details: withDetails(order.details, { tradeHash: options.data.tradeHash }),
            }),
          },
        };
      default: {
        // failed or expired: whatever was frozen or taken returns to available, fee included.
        if (order.status === EXCHANGE_STATUS.waitPayCurrency) {
          await this.deps.ledger.release(tx, { ...money, total: money.gross, kind: 'exchange.released' });
        } else {
          await this.deps.ledger.returnExchangeFiat(tx, money);
        }
        const { refused, reverted, tradeHash } = options.data ?? {};
        const failure =
          event === 'expired'
            ? FAILURES.quoteLapsed
            : refused !== undefined
              ? FAILURES.sendRefused(refused)
              : reverted !== undefined
                ? FAILURES.sendReverted(tradeHash ?? '', reverted)
                : order.status === EXCHANGE_STATUS.waitReceiveToken
                  ? FAILURES.sendFailed
                  : FAILURES.failedBeforeSend;
        return {
          changes: {
            complete_time: now,
            actual_amount: null,
            fee: 0,
            ...(tradeHash !== undefined && { details: withDetails(order.details, { tradeHash }) }),
          },
          failure,
        };
      }
    }
  }

  async #tokenToFiatStep(step: TransitionStep): Promise<{ changes: Partial<OrderRow>; failure?: Texts }> {
    const { tx, order, event, now, options } = step;
    const d = exchangeDetails(order);
    const units = options.data?.units === undefined ? undefined : BigInt(options.data.units);
    const received = {
      tradeHash: options.data?.tradeHash,
      receivedUnits: options.data?.units,
      receivedFrom: options.data?.from,
    };
    switch (event) {
      case 'token_received': {
        if (units === undefined) throw new Error('token_received needs the deposit amount');
        const rate = parseRate(d.exchangeRate);
        if (rate === undefined) throw new Error(`order ${order.id} has no valid exchangeRate`);
        const gross = fiatForTokens(units, d.tokenDecimals, rate, CURRENCIES[order.currency]);
        const fee = feeFor(gross, storedFeeRule(order));
        await this.deps.ledger.creditExchangeFiat(tx, {
          merchantId: order.merchant_id,
          currency: order.currency,
          orderId: order.id,
          gross,
          fee,
        });
        return {
          changes: {
            actual_amount: toDbMinor(gross - fee),
            fee: toDbMinor(fee),
            pay_time: now,
            complete_time: now,
            details: withDetails(order.details, received),
          },
        };
      }
      case 'deposit_refused': {
        const refusal = options.data?.refusal;
        const failure =
          refusal === 'late'
            ? FAILURES.late(order.cashier_expire_at ?? now)
            : refusal === 'wrong_sender'
              ? FAILURES.wrongSender(options.data?.from ?? '', d.addressFrom ?? '')
              : FAILURES.underpaid(
                  formatUnits(units ?? 0n, d.tokenDecimals),
                  formatUnits(BigInt(d.tokenUnits), d.tokenDecimals),
                  d.tokenType,
                );
        return { changes: { complete_time: now, fee: 0, details: withDetails(order.details, received) }, failure };
      }
      case 'expired':
        return { changes: { complete_time: now, fee: 0 }, failure: FAILURES.expired };
      default:
        return { changes: { complete_time: now, fee: 0 }, failure: FAILURES.depositFailed };
    }
  }

  /**
   * What a chain's token sender tells fiat → token orders. Each is idempotent: a step the order
   * has taken already (a sender repeating itself after a crash) changes nothing.
   */
  readonly sendOutcomes: SendOutcomes = {
    take: async (orderId) => {
      const order = await this.deps.orders.find(orderId);
      if (order === undefined || FINAL.has(order.status)) return false;
      if (order.status !== EXCHANGE_STATUS.waitPayCurrency) return true;
      if (order.cashier_expire_at !== null && order.cashier_expire_at <= this.deps.clock.now()) {
        // The quote lapsed before the sender came to it (the expiry worker had not yet): it expires, nothing is taken.
        await this.#stepIfOpen(orderId, 'expired', {});
        return false;
      }
      try {
        await this.deps.orders.applyEvent(orderId, 'currency_received', { source: CHAIN_SOURCE });
        return true;
      } catch (error) {
        // The quote lapsed at this moment: the order expired instead.
        if (!(error instanceof EventNotAllowedError)) throw error;
        return this.sendOutcomes.take(orderId);
      }
    },
    refuse: async (orderId, refusal) => {
      await this.#stepIfOpen(orderId, 'failed', { refused: refusal.detail });
    },
    sent: async (orderId, hash) => {
      const order = await this.deps.orders.find(orderId);
      if (order?.status === EXCHANGE_STATUS.receivingCurrency)
        await this.deps.orders.applyEvent(orderId, 'token_sent', { source: CHAIN_SOURCE, data: { tradeHash: hash } });
    },
    confirmed: async (orderId, hash) => {
      await this.sendOutcomes.sent(orderId, hash);
      const order = await this.deps.orders.find(orderId);
      if (order?.status === EXCHANGE_STATUS.waitReceiveToken)
        await this.deps.orders.applyEvent(orderId, 'token_received', {
          source: CHAIN_SOURCE,
          data: { tradeHash: hash },
        });
    },
    reverted: async (orderId, hash, why) => {
      await this.#stepIfOpen(orderId, 'failed', { reverted: why, tradeHash: hash });
    },
  };

  async #stepIfOpen(orderId: string, event: string, data: Record<string, string>): Promise<void> {
    const order = await this.deps.orders.find(orderId);
    if (order === undefined || FINAL.has(order.status)) return;
    await this.deps.orders.applyEvent(orderId, event, { source: CHAIN_SOURCE, data });
  }

  /**
   * The sandbox's chain: drives an exchange order one step as a chain would report it, or, with
   * `complete`, through its remaining steps to 8.
   */
  async sandboxEvent(
    order: OrderRow,
    event: string,
    input: { amount?: unknown; tradeHash?: string; from?: string; source: string },
  ): Promise<OrderRow> {
    const d = exchangeDetails(order);
    if (input.tradeHash !== undefined && !isTradeHash(d.chainType, input.tradeHash)) {
      throw new ApiError({
        kind: 'invalid_field',
        field: 'tradeHash',
        rule: { rule: 'format', format: d.chainType === 'TRON' ? 'tronTxId' : 'evmTxHash' },
      });
    }
    if (input.from !== undefined) checkAddress('from', d.chainType, input.from);
    // A refusal is the outcome of a deposit the chain reports, not an event of its own.
    if (event === 'deposit_refused') throw new EventNotAllowedError(order, event, []);
    const steps = event === 'complete' ? this.#remainingSteps(order) : [event];
    let current = order;
    for (const step of steps) {
      if (order.kind === 'token_to_fiat' && step === 'token_received') {
        const units =
          input.amount === undefined
            ? BigInt(d.tokenUnits)
            : amountField('amount', input.amount, 'BRL', { decimals: d.tokenDecimals, maximum: MAX_MINOR });
        current = await this.reportDeposit(current, {
          units,
          tradeHash: input.tradeHash ?? randomTradeHash(d.chainType),
          from: input.from ?? d.addressFrom ?? '',
          source: input.source,
        });
      } else {
        current = await this.deps.orders.applyEvent(order.id, step, {
          source: input.source,
          ...(step === 'token_sent' && input.tradeHash !== undefined && { data: { tradeHash: input.tradeHash } }),
        });
      }
    }
    return current;
  }

  #remainingSteps(order: OrderRow): string[] {
    if (order.kind === 'token_to_fiat')
      return order.status === EXCHANGE_STATUS.waitReceiveToken ? ['token_received'] : ['complete'];
    const path = ['paid', 'token_sent', 'token_received'];
    const from = {
      [EXCHANGE_STATUS.waitPayCurrency]: 0,
      [EXCHANGE_STATUS.receivingCurrency]: 1,
      [EXCHANGE_STATUS.waitReceiveToken]: 2,
    }[order.status];
    // A final order: `complete` is refused like any other event.
    return from === undefined ? ['complete'] : path.slice(from);
  }
}
