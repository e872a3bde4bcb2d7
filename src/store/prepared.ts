import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.js';
import { nameStatement } from './statement-names.js';
import type { ReadDb } from './store.js';

const SENTINEL = '\u0000cashgate-parameter:';

/** Where a parameter of the compiled query comes from: a named parameter, or the query itself. */
type Slot = { name: string } | { value: unknown };

/**
 * A query whose SQL text is built once per database: the first call builds it with stand-ins for
 * its named parameters, compiles it and keeps the text and the order of the parameters; every later
 * call only binds its values. For the queries every request runs (authentication, the order's
 * create), where building and compiling the same text again was a tenth of the CPU of a create.
 * On PostgreSQL its writes are also prepared once per connection (statement-names.ts).
 *
 * `build` must make the same SQL whatever the values: no branch on a value, no list whose length
 * varies, every parameter used as a value (not, say, as a column name). Constants it writes itself
 * are kept as they were compiled.
 */
export function prepared<P extends Record<string, unknown>, Row = unknown>(
  build: (db: Kysely<Database>, params: P) => Compilable<Row>,
): (db: ReadDb, params: P) => Promise<QueryResult<Row>> {
  const compiled = new WeakMap<object, { sql: string; slots: Slot[] }>();
  return async (db, params) => {
    const adapter = db.getExecutor().adapter;
    let query = compiled.get(adapter);
    if (query === undefined) {
      const standIns = Object.fromEntries(Object.keys(params).map((name) => [name, `${SENTINEL}${name}`])) as P;
      // A ReadDb is a Kysely (or one of its transactions) seen through a narrower type.
      const first = build(db as Kysely<Database>, standIns).compile();
      // A parameter the query fixes itself (a constant, e.g. a column set to null) stays as it is.
      const slots = first.parameters.map((value): Slot =>
        typeof value === 'string' && value.startsWith(SENTINEL) ? { name: value.slice(SENTINEL.length) } : { value },
      );
      query = { sql: first.sql, slots };
      compiled.set(adapter, query);
      nameStatement(query.sql);
    }
    return db.executeQuery<Row>(
      CompiledQuery.raw(
        query.sql,
        query.slots.map((slot) => ('name' in slot ? (params as Record<string, unknown>)[slot.name] : slot.value)),
      ),
    );
  };
}
