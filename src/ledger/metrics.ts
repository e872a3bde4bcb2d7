import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { CURRENCIES, formatMinor, fromDb, isCurrency } from '../money.js';
import type { Store } from '../store/store.js';
import * as q from './queries.js';

/**
 * Ledger figures for alerting. The gauges read the shared database at each scrape, so every node
 * shows the whole installation's values. Amounts are exported in major units (BRL, KES, …): money
 * is kept and summed as integer minor units and becomes a float only here, at export.
 */
export class LedgerMetrics {
  readonly #settled: Counter<'currency'>;
  readonly #runs: Counter;

  constructor(registry: Registry, store: Store, clock: Clock) {
    this.#runs = new Counter({
      name: 'cashgate_settlement_runs_total',
      help: 'Settlement runs made by this process (each settles what is due)',
      registers: [registry],
    });
    this.#settled = new Counter({
      name: 'cashgate_settlements_settled_total',
      help: 'Settlements (collected amounts) moved from awaiting settlement to available by this process, by currency',
      labelNames: ['currency'],
      registers: [registry],
    });
    let totals: ReturnType<typeof q.merchantBalanceTotals> | undefined;
    // One query serves both gauges of a scrape.
    const read = () =>
      (totals ??= q.merchantBalanceTotals(store.read).finally(() => setImmediate(() => (totals = undefined))));
    new Gauge({
      name: 'cashgate_ledger_balance',
      help: 'Sum of the merchants\u2019 balances by currency and kind (available, frozen, awaiting_settlement), in major units',
      labelNames: ['currency', 'kind'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await read()) {
          if (!isCurrency(row.currency)) continue;
          // Exact decimal text of the integer sum, read as a float only for the exposition.
          this.set(
            { currency: row.currency, kind: row.kind },
            Number(formatMinor(fromDb(row.total), CURRENCIES[row.currency])),
          );
        }
      },
    });
    new Gauge({
      name: 'cashgate_ledger_negative_accounts',
      help: 'Merchant accounts whose balance is below zero, by currency and kind (0 in a sound ledger)',
      labelNames: ['currency', 'kind'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await read()) this.set({ currency: row.currency, kind: row.kind }, Number(row.negative));
      },
    });
    new Gauge({
      name: 'cashgate_settlement_oldest_due_age_seconds',
      help: 'How long the oldest settlement that is due has waited unsettled (0 when none is due)',
      registers: [registry],
      async collect() {
        const now = clock.now();
        const oldest = await q.oldestDueSettlement(store.read, now);
        this.set(oldest === null ? 0 : Math.max(0, (now - oldest) / 1000));
      },
    });
  }

  /** A settlement run ended; `settled` counts, per currency, what its committed units settled. */
  ran(settled: ReadonlyMap<string, number>): void {
    this.#runs.inc();
    for (const [currency, count] of settled) this.#settled.inc({ currency }, count);
  }
}
