import type { Clock } from '../clock.js';
import { newId } from '../store/ids.js';
import type { LedgerAccountKind } from '../store/schema.js';
import type { Tx } from '../store/store.js';
import { toDbMinor, type Currency, type Minor } from '../money.js';
import * as q from './queries.js';

/** Accounts that may never go below zero: what the merchant can spend or has promised. */
const NON_NEGATIVE: ReadonlySet<LedgerAccountKind> = new Set(['available', 'frozen', 'awaiting_settlement']);

export type MerchantAccountKind = 'available' | 'frozen' | 'awaiting_settlement';
/**
 * `pix_returns`: Pix received that belong to no payable order, until they are returned to their
 * payers. `pix_unmatched`: Pix received that no charge of Cashgate's asked for, until the operator
 * has them returned. `boleto_suspense`: boletos paid when their order no longer took a payment (a
 * slip printed before its cancellation, paid at a branch), until the operator settles them.
 * `spei_returns`: SPEI transfers STP settled to Cashgate that no waiting order took, until Cashgate's
 * own return of each reaches its sender.
 */
export type SystemAccountKind =
  | 'fee_income'
  | 'rail_clearing'
  | 'token_clearing'
  | 'adjustments'
  | 'pix_returns'
  | 'pix_unmatched'
  | 'boleto_suspense'
  | 'spei_returns';

export type AccountRef =
  { merchantId: string; kind: MerchantAccountKind } | { merchantId?: undefined; kind: SystemAccountKind };

export function accountCode(currency: Currency, ref: AccountRef): string {
  return `${ref.merchantId ?? 'system'}/${currency}/${ref.kind}`;
}

export interface JournalInput {
  /** What happened, e.g. `collection.paid`, `transfer.freeze`, `adjustment`. */
  kind: string;
  currency: Currency;
  merchantId: string | null;
  orderId?: string | null;
  memo?: string | null;
  entries: readonly { account: AccountRef; amount: Minor }[];
}

/** Posting would take a merchant account below zero: nothing was written. */
export class InsufficientBalanceError extends Error {
  constructor(
    readonly account: string,
    readonly currency: Currency,
  ) {
    super(`insufficient balance in ${account}`);
    this.name = 'InsufficientBalanceError';
  }
}

/**
 * The double-entry journal. Every posting is balanced (its entries sum to zero) and updates the
 * account balances in the caller's transaction; a merchant account never goes below zero.
 */
export class Ledger {
  constructor(private readonly clock: Clock) {}

  async post(tx: Tx, journal: JournalInput): Promise<string> {
    const entries = journal.entries.filter((e) => e.amount !== 0n);
    if (entries.length === 0) throw new Error(`journal ${journal.kind} moves no money: every entry is zero`);
    const sum = entries.reduce((total, e) => total + e.amount, 0n);
    if (sum !== 0n) throw new Error(`unbalanced journal ${journal.kind}: entries sum to ${sum}`);
    const now = this.clock.now();
    const id = newId('jnl');
    const codes = entries.map((e) => accountCode(journal.currency, e.account));
    await q.ensureAccounts(
      tx,
      entries.map((e, i) => ({
        code: codes[i] ?? '',
        merchant_id: e.account.merchantId ?? null,
        currency: journal.currency,
        kind: e.account.kind,
        balance: 0,
        created_at: now,
        updated_at: now,
      })),
    );
    await q.insertJournal(tx, {
      id,
      kind: journal.kind,
      merchant_id: journal.merchantId,
      order_id: journal.orderId ?? null,
      currency: journal.currency,
      memo: journal.memo ?? null,
      created_at: now,
    });
    // A fixed order (by account code): concurrent postings lock rows alike and cannot deadlock.
    const order = entries.map((e, i) => ({ e, code: codes[i] ?? '' })).sort((a, b) => (a.code < b.code ? -1 : 1));
    for (const { e, code } of order) {
      const floor = NON_NEGATIVE.has(e.account.kind) && e.amount < 0n ? 0 : undefined;
      if (!(await q.moveBalance(tx, code, toDbMinor(e.amount), now, floor))) {
        throw new InsufficientBalanceError(code, journal.currency);
      }
    }
    await q.insertEntries(
      tx,
      order.map(({ e, code }) => ({
        id: newId('ent'),
        journal_id: id,
        account_code: code,
        merchant_id: e.account.merchantId ?? null,
        currency: journal.currency,
        amount: toDbMinor(e.amount),
        created_at: now,
      })),
    );
    return id;
  }

  /**
   * A collection was paid: the rail (or, for tokens, the token clearing account) owes the gross amount, the merchant gets it net of the fee in
   * awaiting settlement (available at `settleAt`), the fee is income.
   */
  async creditCollection(
    tx: Tx,
    c: {
      merchantId: string;
      currency: Currency;
      orderId: string;
      amount: Minor;
      fee: Minor;
      settleAt: number;
      clearing?: 'rail_clearing' | 'token_clearing';
    },
  ): Promise<void> {
    const net = c.amount - c.fee;
    await this.post(tx, {
      kind: 'collection.paid',
      currency: c.currency,
      merchantId: c.merchantId,
      orderId: c.orderId,
      entries: [
        { account: { kind: c.clearing ?? 'rail_clearing' }, amount: -c.amount },
        { account: { merchantId: c.merchantId, kind: 'awaiting_settlement' }, amount: net },
        { account: { kind: 'fee_income' }, amount: c.fee },
      ],
    });
    if (net > 0n) {
      await q.insertSettlement(tx, {
        id: newId('stl'),
        merchant_id: c.merchantId,
        currency: c.currency,
        amount: toDbMinor(net),
        order_id: c.orderId,
        due_at: c.settleAt,
        settled_at: null,
        created_at: this.clock.now(),
      });
    }
  }

  /** Settlement: awaiting settlement becomes available. */
  async settle(tx: Tx, s: q.LedgerSettlementRow): Promise<void> {
    const currency = s.currency;
    await this.post(tx, {
      kind: 'settlement',
      currency,
      merchantId: s.merchant_id,
      orderId: s.order_id,
      entries: [
        { account: { merchantId: s.merchant_id, kind: 'awaiting_settlement' }, amount: -BigInt(s.amount) },
        { account: { merchantId: s.merchant_id, kind: 'available' }, amount: BigInt(s.amount) },
      ],
    });
    await q.markSettled(tx, s.id, this.clock.now());
  }

  /** `total` moves from available to frozen for an order (InsufficientBalanceError if short). */
  freeze(tx: Tx, f: FrozenMoney): Promise<string> {
    return this.post(tx, {
      kind: f.kind,
      currency: f.currency,
      merchantId: f.merchantId,
      orderId: f.orderId,
      entries: [
        { account: { merchantId: f.merchantId, kind: 'available' }, amount: -f.total },
        { account: { merchantId: f.merchantId, kind: 'frozen' }, amount: f.total },
      ],
    });
  }

  /** What was frozen for an order returns to available. */
  release(tx: Tx, f: FrozenMoney): Promise<string> {
    return this.post(tx, {
      kind: f.kind,
      currency: f.currency,
      merchantId: f.merchantId,
      orderId: f.orderId,
      entries: [
        { account: { merchantId: f.merchantId, kind: 'frozen' }, amount: -f.total },
        { account: { merchantId: f.merchantId, kind: 'available' }, amount: f.total },
      ],
    });
  }

  /** A transfer is accepted: amount + fee move from available to frozen (InsufficientBalanceError if short). */
  freezeForTransfer(tx: Tx, t: TransferMoney): Promise<string> {
    return this.freeze(tx, {
      merchantId: t.merchantId,
      currency: t.currency,
      orderId: t.orderId,
      total: t.amount + t.fee,
      kind: 'transfer.freeze',
    });
  }

  /** A transfer succeeded: the frozen amount leaves through the rail, the fee is income. */
  completeTransfer(tx: Tx, t: TransferMoney): Promise<string> {
    return this.post(tx, {
      kind: 'transfer.paid',
      currency: t.currency,
      merchantId: t.merchantId,
      orderId: t.orderId,
      entries: [
        { account: { merchantId: t.merchantId, kind: 'frozen' }, amount: -(t.amount + t.fee) },
        { account: { kind: 'rail_clearing' }, amount: t.amount },
        { account: { kind: 'fee_income' }, amount: t.fee },
      ],
    });
  }

  /** A transfer failed: the frozen amount and fee return to available. */
  releaseTransfer(tx: Tx, t: TransferMoney): Promise<string> {
    return this.release(tx, {
      merchantId: t.merchantId,
      currency: t.currency,
      orderId: t.orderId,
      total: t.amount + t.fee,
      kind: 'transfer.released',
    });
  }

  /**
   * Fiat → token: the frozen fiat is taken. The fee is income; the rest pays for the tokens and
   * sits in token clearing, the fiat counter-value of tokens Cashgate sends out.
   */
  takeExchangeFiat(tx: Tx, e: ExchangeMoney): Promise<string> {
    return this.post(tx, {
      kind: 'exchange.fiat_taken',
      currency: e.currency,
      merchantId: e.merchantId,
      orderId: e.orderId,
      entries: [
        { account: { merchantId: e.merchantId, kind: 'frozen' }, amount: -e.gross },
        { account: { kind: 'token_clearing' }, amount: e.gross - e.fee },
        { account: { kind: 'fee_income' }, amount: e.fee },
      ],
    });
  }

  /** Fiat → token failed after the fiat was taken: all of it, fee included, returns to available. */
  returnExchangeFiat(tx: Tx, e: ExchangeMoney): Promise<string> {
    return this.post(tx, {
      kind: 'exchange.fiat_returned',
      currency: e.currency,
      merchantId: e.merchantId,
      orderId: e.orderId,
      entries: [
        { account: { kind: 'token_clearing' }, amount: -(e.gross - e.fee) },
        { account: { kind: 'fee_income' }, amount: -e.fee },
        { account: { merchantId: e.merchantId, kind: 'available' }, amount: e.gross },
      ],
    });
  }

  /** Token → fiat: a confirmed deposit's fiat value (gross) is paid out of token clearing, net of the fee, to available. */
  creditExchangeFiat(tx: Tx, e: ExchangeMoney): Promise<string> {
    return this.post(tx, {
      kind: 'exchange.credited',
      currency: e.currency,
      merchantId: e.merchantId,
      orderId: e.orderId,
      entries: [
        { account: { kind: 'token_clearing' }, amount: -e.gross },
        { account: { merchantId: e.merchantId, kind: 'available' }, amount: e.gross - e.fee },
        { account: { kind: 'fee_income' }, amount: e.fee },
      ],
    });
  }

  /** An operator's credit (or debit, negative) of a merchant's available balance. */
  adjust(tx: Tx, a: { merchantId: string; currency: Currency; amount: Minor; reason: string }): Promise<string> {
    return this.post(tx, {
      kind: 'adjustment',
      currency: a.currency,
      merchantId: a.merchantId,
      memo: a.reason,
      entries: [
        { account: { merchantId: a.merchantId, kind: 'available' }, amount: a.amount },
        { account: { kind: 'adjustments' }, amount: -a.amount },
      ],
    });
  }
}

export interface TransferMoney {
  merchantId: string;
  currency: Currency;
  orderId: string;
  amount: Minor;
  fee: Minor;
}

/** Money frozen for one order, and the journal kind that names why. */
export interface FrozenMoney {
  merchantId: string;
  currency: Currency;
  orderId: string;
  total: Minor;
  kind: string;
}

/** The fiat side of one exchange order: `gross` is its whole fiat value, `fee` the part Cashgate keeps. */
export interface ExchangeMoney {
  merchantId: string;
  currency: Currency;
  orderId: string;
  gross: Minor;
  fee: Minor;
}
