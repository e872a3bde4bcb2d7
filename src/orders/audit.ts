import { sql } from 'kysely';
import { LEDGER_CHECKS, type AuditCheck } from '../ledger/audit.js';
import { COLLECTION_STATUS, TRANSFER_STATUS } from './state-machine.js';

/** The journals each order must have for its state, by journal kind. */
function expectedJournals(kind: string, status: number): Record<string, number> {
  if (kind === 'collection') return { 'collection.paid': status === COLLECTION_STATUS.paid ? 1 : 0, 'transfer.freeze': 0, 'transfer.paid': 0, 'transfer.released': 0 };
  return {
    'collection.paid': 0,
    'transfer.freeze': 1,
    'transfer.paid': status === TRANSFER_STATUS.succeeded ? 1 : 0,
    'transfer.released': status === TRANSFER_STATUS.bankRejected || status === TRANSFER_STATUS.failed ? 1 : 0,
  };
}

const count = (kind: string) => sql<number | string>`sum(case when j.kind = ${kind} then 1 else 0 end)`;

/** Every order has exactly the ledger entries its state calls for: a paid collection its credit, a transfer its freeze and its end. */
export const ORDER_ENTRIES_CHECK: AuditCheck = {
  name: 'every order has the entries its state calls for',
  async run(db) {
    const rows = await db
      .selectFrom('orders as o')
      .leftJoin('ledger_journals as j', 'j.order_id', 'o.id')
      .select([
        'o.id',
        'o.kind',
        'o.status',
        count('collection.paid').as('collection.paid'),
        count('transfer.freeze').as('transfer.freeze'),
        count('transfer.paid').as('transfer.paid'),
        count('transfer.released').as('transfer.released'),
      ])
      .groupBy(['o.id', 'o.kind', 'o.status'])
      .execute();
    return rows.flatMap((row) => {
      const expected = expectedJournals(row.kind, row.status);
      const wrong = Object.entries(expected).filter(([journal, n]) => Number(row[journal as keyof typeof row]) !== n);
      return wrong.length === 0
        ? []
        : [{ check: this.name, detail: `${row.kind} ${row.id} in status ${row.status}: ${wrong.map(([j, n]) => `${Number(row[j as keyof typeof row])} ${j} journal(s), expected ${n}`).join('; ')}` }];
    });
  },
};

/** Every check `cashgate audit` runs. */
export const AUDIT_CHECKS: readonly AuditCheck[] = [...LEDGER_CHECKS, ORDER_ENTRIES_CHECK];
