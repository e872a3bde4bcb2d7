import { sql } from 'kysely';
import type { ReadDb } from '../store/store.js';
import { fromDb } from '../money.js';

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
      const rows = await db
        .selectFrom('ledger_entries')
        .select(['currency', (eb) => eb.fn.sum<number | string>('amount').as('total')])
        .groupBy('currency')
        .execute();
      return rows
        .filter((r) => fromDb(r.total) !== 0n)
        .map((r) => ({ check: this.name, detail: `${r.currency} entries sum to ${fromDb(r.total)}` }));
    },
  },
  {
    name: 'every journal is balanced',
    async run(db) {
      const rows = await db
        .selectFrom('ledger_entries')
        .select(['journal_id', (eb) => eb.fn.sum<number | string>('amount').as('total')])
        .groupBy('journal_id')
        .having(sql`sum(amount)`, '!=', 0)
        .execute();
      return rows.map((r) => ({ check: this.name, detail: `journal ${r.journal_id} sums to ${fromDb(r.total)}` }));
    },
  },
  {
    name: 'balances equal their entries',
    async run(db) {
      const rows = await db
        .selectFrom('ledger_accounts as a')
        .leftJoin('ledger_entries as e', 'e.account_code', 'a.code')
        .select([
          'a.code',
          'a.balance',
          (eb) => eb.fn.coalesce(eb.fn.sum<number | string>('e.amount'), sql<number>`0`).as('total'),
        ])
        .groupBy(['a.code', 'a.balance'])
        .execute();
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
      const rows = await db
        .selectFrom('ledger_accounts')
        .select(['code', 'balance'])
        .where('merchant_id', 'is not', null)
        .where('balance', '<', 0)
        .execute();
      return rows.map((r) => ({ check: this.name, detail: `${r.code} is ${r.balance}` }));
    },
  },
  {
    name: 'awaiting settlement equals the unsettled settlements',
    async run(db) {
      const waiting = await db
        .selectFrom('ledger_settlements')
        .select(['merchant_id', 'currency', (eb) => eb.fn.sum<number | string>('amount').as('total')])
        .where('settled_at', 'is', null)
        .groupBy(['merchant_id', 'currency'])
        .execute();
      const expected = new Map(
        waiting.map((w) => [`${w.merchant_id}/${w.currency}/awaiting_settlement`, fromDb(w.total)]),
      );
      const accounts = await db
        .selectFrom('ledger_accounts')
        .select(['code', 'balance'])
        .where('kind', '=', 'awaiting_settlement')
        .execute();
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
