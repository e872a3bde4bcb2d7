import { createHash } from 'node:crypto';

/**
 * PostgreSQL: the SQL texts that are prepared once per connection, by name, instead of parsed and
 * planned again on every call (node-postgres sends an unnamed statement otherwise). Only writes
 * that return no rows are named: a named statement whose result columns change under it (a
 * migration adding a column to a `select *`) fails until its connection ends, while a write's plan
 * is simply made again by the server after a schema change.
 */
const names = new Map<string, string>();

/** Names `sql` for preparing, when it is a write that returns no rows. */
export function nameStatement(sql: string): void {
  if (names.has(sql) || !/^\s*(insert|update|delete)\s/i.test(sql) || /\sreturning\s/i.test(sql)) return;
  names.set(sql, `cashgate_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`);
}

/** The name `sql` is prepared by, if it is one. */
export function statementName(sql: string): string | undefined {
  return names.get(sql);
}
