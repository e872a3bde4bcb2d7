import type { ReadDb } from '../store/store.js';
import { fromDb } from '../money.js';
import * as q from './queries.js';

/** One broken invariant, said so an operator can find it. */
export interface AuditBreach {
  check: string;
  detail: string;
}

/** A check other modules add (e.g. "every final order has its entries"). */
export interface AuditCheck {
  name: string;
  run(db: ReadDb): Promise<AuditBreach[]>;
}

/** The ledger's own invariants. */
export const LEDGER_CHECKS: readonly AuditCheck[] = [
  {
    name: 'entries sum to zero per currency',
    async run(db) {
      const rows = await q.entryTotalsByCurrency(db);
      return rows
        .filter((r) => fromDb(r.total) !== 0n)
        .map((r) => ({ check: this.name, detail: `${r.currency} entries sum to ${fromDb(r.total)}` }));
    },
  },
  {
    name: 'every journal is balanced',
    async run(db) {
      const rows = await q.unbalancedJournals(db);
      return rows.map((r) => ({ check: this.name, detail: `journal ${r.journal_id} sums to ${fromDb(r.total)}` }));
    },
  },
  {
    name: 'balances equal their entries',
    async run(db) {
      const rows = await q.balancesWithEntryTotals(db);
      return rows
        .filter((r) => fromDb(r.balance) !== fromDb(r.total))
        .map((r) => ({
          check: this.name,
          detail: `${r.code} has balance ${r.balance} but its entries sum to ${fromDb(r.total)}`,
        }));
    },
  },
  {
    name: 'no merchant balance below zero',
    async run(db) {
      const rows = await q.negativeMerchantAccounts(db);
      return rows.map((r) => ({ check: this.name, detail: `${r.code} is ${r.balance}` }));
    },
  },
  {
    name: 'awaiting settlement equals the unsettled settlements',
    async run(db) {
      const waiting = await q.unsettledTotals(db);
      const expected = new Map(
        waiting.map((w) => [`${w.merchant_id}/${w.currency}/awaiting_settlement`, fromDb(w.total)]),
      );
      const accounts = await q.awaitingSettlementAccounts(db);
      const breaches: AuditBreach[] = [];
      for (const account of accounts) {
        const want = expected.get(account.code) ?? 0n;
        expected.delete(account.code);
        if (fromDb(account.balance) !== want) {
          breaches.push({
            check: this.name,
            detail: `${account.code} is ${account.balance}; unsettled settlements sum to ${want}`,
          });
        }
      }
      for (const [code, want] of expected)
        breaches.push({ check: this.name, detail: `${code} has no account; unsettled settlements sum to ${want}` });
      return breaches;
    },
  },
];

/** Runs every check; an empty list means the books are sound. */
export async function audit(
  db: ReadDb,
  checks: readonly AuditCheck[] = LEDGER_CHECKS,
): Promise<{ check: string; breaches: AuditBreach[] }[]> {
  const results = [];
  for (const check of checks) results.push({ check: check.name, breaches: await check.run(db) });
  return results;
}
