import { noteAudit } from '../access/audit-log.js';
import { OperatorError } from '../admin/failures.js';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Store, ReadDb, Tx } from '../store/store.js';
import { FEE_CHANNELS, feeFor, isFeeChannel, NO_FEE, type FeeChannel, type FeeRule } from './fees.js';
import { accountCode, InsufficientBalanceError, Ledger } from './ledger.js';
import { amountField } from './amount-field.js';
import { formatMoney, fromDb, isCurrency, toDbMinor, type Currency, type Minor } from '../money.js';
import { LedgerMetrics } from './metrics.js';
import * as q from './queries.js';

export interface Balance {
  currency: Currency;
  available: Minor;
  frozen: Minor;
  awaitingSettlement: Minor;
}

export interface FeeScheduleView {
  channel: FeeChannel;
  currency: Currency;
  percentBps: number;
  fixed: string;
  minimum: string;
}

/** Balances, operator adjustments and fee schedules on top of the journal. */
export class LedgerService {
  readonly ledger: Ledger;
  readonly #metrics: LedgerMetrics | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The registry of /metrics: ledger gauges and settlement counts. */
    registry?: Registry,
  ) {
    this.ledger = new Ledger(clock);
    this.#metrics = registry === undefined ? undefined : new LedgerMetrics(registry, store, clock);
  }

  /** Query builder for reads outside a unit of work. */
  get reader(): ReadDb {
    return this.store.read;
  }

  /** The merchant's balances in each currency asked for (zero where nothing was ever posted). */
  async balances(db: ReadDb, merchantId: string, currencies: readonly Currency[]): Promise<Balance[]> {
    const accounts = new Map((await q.accountsOfMerchant(db, merchantId)).map((a) => [a.code, fromDb(a.balance)]));
    const of = (currency: Currency, kind: 'available' | 'frozen' | 'awaiting_settlement') =>
      accounts.get(accountCode(currency, { merchantId, kind })) ?? 0n;
    return currencies.map((currency) => ({
      currency,
      available: of(currency, 'available'),
      frozen: of(currency, 'frozen'),
      awaitingSettlement: of(currency, 'awaiting_settlement'),
    }));
  }

  /** Currencies in which the merchant has accounts. */
  async currenciesOf(merchantId: string): Promise<Currency[]> {
    const accounts = await q.accountsOfMerchant(this.store.read, merchantId);
    return [...new Set(accounts.map((a) => a.currency).filter(isCurrency))].sort();
  }

  /** Credits (or, negative, debits) the merchant's available balance; a debit never overdraws it. */
  async adjust(
    merchantId: string,
    input: { currency: Currency; amount: unknown; reason: string },
  ): Promise<{ journalId: string; balance: Balance }> {
    const amount = this.adjustmentAmount(input.currency, input.amount);
    return this.store.transact((tx) => this.adjustIn(tx, merchantId, { ...input, amount }));
  }

  /** The amount of an adjustment, checked (a field error names `amount` and its rule). */
  adjustmentAmount(currency: Currency, amount: unknown): Minor {
    return amountField('amount', amount, currency, { signed: true });
  }

  /** An adjustment inside the caller's unit of work; 409 insufficient_balance for a debit that would overdraw. */
  async adjustIn(
    tx: Tx,
    merchantId: string,
    input: { currency: Currency; amount: Minor; reason: string },
  ): Promise<{ journalId: string; balance: Balance }> {
    try {
      const journalId = await this.ledger.adjust(tx, { merchantId, ...input });
      const [balance] = await this.balances(tx, merchantId, [input.currency]);
      if (balance === undefined) throw new Error('balance vanished');
      return { journalId, balance };
    } catch (error) {
      if (error instanceof InsufficientBalanceError) {
        throw new OperatorError({ kind: 'insufficient_balance', merchantId, currency: input.currency });
      }
      throw error;
    }
  }

  /** The fee rule of a merchant's channel (no fee when none was set). */
  async feeRule(db: ReadDb, merchantId: string, channel: FeeChannel): Promise<FeeRule> {
    const row = await q.feeSchedule(db, merchantId, channel);
    if (row === undefined) return NO_FEE;
    return { percentBps: row.percent_bps, fixed: fromDb(row.fixed_minor), minimum: fromDb(row.minimum_minor) };
  }

  async fee(db: ReadDb, merchantId: string, channel: FeeChannel, amount: Minor): Promise<Minor> {
    return feeFor(amount, await this.feeRule(db, merchantId, channel));
  }

  async setFee(
    merchantId: string,
    channel: string,
    input: { percentBps: number; fixed?: unknown; minimum?: unknown },
  ): Promise<FeeScheduleView> {
    if (!isFeeChannel(channel)) {
      throw new OperatorError({ kind: 'fee_channel_not_found', channel, channels: Object.keys(FEE_CHANNELS) });
    }
    const currency = FEE_CHANNELS[channel];
    const fixed = input.fixed === undefined ? 0n : amountField('fixed', input.fixed, currency, { minimum: 0n });
    const minimum = input.minimum === undefined ? 0n : amountField('minimum', input.minimum, currency, { minimum: 0n });
    const after = toFeeView(channel, { percentBps: input.percentBps, fixed, minimum });
    await this.store.transact(async (tx) => {
      const before = await q.feeSchedule(tx, merchantId, channel);
      await q.upsertFeeSchedule(tx, {
        merchant_id: merchantId,
        channel,
        percent_bps: input.percentBps,
        fixed_minor: toDbMinor(fixed),
        minimum_minor: toDbMinor(minimum),
        updated_at: this.clock.now(),
      });
      noteAudit({
        targetType: 'fee',
        targetId: `${merchantId}/${channel}`,
        before:
          before === undefined
            ? null
            : {
                ...toFeeView(channel, {
                  percentBps: before.percent_bps,
                  fixed: fromDb(before.fixed_minor),
                  minimum: fromDb(before.minimum_minor),
                }),
              },
        after: { ...after },
      });
    });
    return after;
  }

  async fees(merchantId: string): Promise<FeeScheduleView[]> {
    const rows = await q.feeSchedules(this.store.read, merchantId);
    return rows.flatMap((row) =>
      isFeeChannel(row.channel)
        ? [
            toFeeView(row.channel, {
              percentBps: row.percent_bps,
              fixed: fromDb(row.fixed_minor),
              minimum: fromDb(row.minimum_minor),
            }),
          ]
        : [],
    );
  }

  /**
   * Moves due settlements to available, up to 100 per short transaction; returns how many. Within a
   * batch, accounts are locked in merchant and currency order, so concurrent batches on other nodes
   * cannot deadlock.
   */
  async settleDue(limit = 500): Promise<number> {
    let settled = 0;
    const byCurrency = new Map<string, number>();
    try {
      for (;;) {
        const due = await this.store.transact(async (tx) => {
          const rows = await q.dueSettlements(tx, this.store.dialect === 'postgres', this.clock.now(), 100);
          const key = (s: q.LedgerSettlementRow) => `${s.merchant_id}/${s.currency}`;
          rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
          for (const settlement of rows) await this.ledger.settle(tx, settlement);
          return rows;
        });
        // Counted once the unit is durable: a unit that failed threw before this.
        for (const { currency } of due) byCurrency.set(currency, (byCurrency.get(currency) ?? 0) + 1);
        settled += due.length;
        if (due.length < 100 || settled >= limit) return settled;
      }
    } finally {
      this.#metrics?.ran(byCurrency);
    }
  }
}

function toFeeView(channel: FeeChannel, rule: FeeRule): FeeScheduleView {
  const currency = FEE_CHANNELS[channel];
  return {
    channel,
    currency,
    percentBps: rule.percentBps,
    fixed: formatMoney(rule.fixed, currency),
    minimum: formatMoney(rule.minimum, currency),
  };
}
