import { LEDGER_CHECKS, type AuditCheck } from '../ledger/audit.js';
import * as q from './queries.js';
import { COLLECTION_STATUS, EXCHANGE_STATUS, TRANSFER_STATUS } from './state-machine.js';

/** Journal kinds posted for orders. */
const ORDER_JOURNALS = [
  'collection.paid',
  'transfer.freeze',
  'transfer.paid',
  'transfer.released',
  'exchange.freeze',
  'exchange.released',
  'exchange.fiat_taken',
  'exchange.fiat_returned',
  'exchange.credited',
] as const;
type Journal = (typeof ORDER_JOURNALS)[number];
type Counts = Partial<Record<Journal, number>>;

/** The journals an order may have in its state: one of these sets, exactly (a journal not named: none). */
function expectedJournals(kind: string, status: number): Counts[] {
  switch (kind) {
    case 'collection':
      return [{ 'collection.paid': status === COLLECTION_STATUS.paid ? 1 : 0 }];
    case 'transfer':
      return [
        {
          'transfer.freeze': 1,
          'transfer.paid': status === TRANSFER_STATUS.succeeded ? 1 : 0,
          'transfer.released': status === TRANSFER_STATUS.bankRejected || status === TRANSFER_STATUS.failed ? 1 : 0,
        },
      ];
    case 'fiat_to_token':
      if (status === EXCHANGE_STATUS.waitPayCurrency) return [{ 'exchange.freeze': 1 }];
      // Failed before the fiat was taken (released from frozen), or after (returned from token clearing).
      if (status === EXCHANGE_STATUS.failed) {
        return [
          { 'exchange.freeze': 1, 'exchange.released': 1 },
          { 'exchange.freeze': 1, 'exchange.fiat_taken': 1, 'exchange.fiat_returned': 1 },
        ];
      }
      return [{ 'exchange.freeze': 1, 'exchange.fiat_taken': 1 }];
    case 'token_to_fiat':
      return [{ 'exchange.credited': status === EXCHANGE_STATUS.complete ? 1 : 0 }];
    default:
      return [{}];
  }
}

function matches(actual: Record<Journal, number>, expected: Counts): boolean {
  return ORDER_JOURNALS.every((journal) => actual[journal] === (expected[journal] ?? 0));
}

const describeCounts = (counts: Counts) =>
  ORDER_JOURNALS.filter((j) => (counts[j] ?? 0) > 0)
    .map((j) => `${counts[j]} ${j}`)
    .join(', ') || 'none';

/** Every order has exactly the ledger entries its state calls for: a paid collection its credit, a transfer its freeze and its end, an exchange each step's. */
export const ORDER_ENTRIES_CHECK: AuditCheck = {
  name: 'every order has the entries its state calls for',
  async run(db) {
    const rows = await q.journalCountsOfOrders(db, ORDER_JOURNALS);
    return rows.flatMap((row) => {
      const actual = Object.fromEntries(
        ORDER_JOURNALS.map((j) => [j, Number((row as Record<string, unknown>)[j] ?? 0)]),
      ) as Record<Journal, number>;
      const expected = expectedJournals(row.kind, row.status);
      if (expected.some((e) => matches(actual, e))) return [];
      return [
        {
          check: this.name,
          detail:
            `${row.kind} ${row.id} in status ${row.status} has journals: ${describeCounts(actual)}; ` +
            `expected ${expected.map(describeCounts).join(' or ')}`,
        },
      ];
    });
  },
};

/** Every check `cashgate audit` runs. */
export const AUDIT_CHECKS: readonly AuditCheck[] = [...LEDGER_CHECKS, ORDER_ENTRIES_CHECK];
