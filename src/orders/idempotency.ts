import { createHash } from 'node:crypto';
import { ApiError } from '../http/failures.js';
import { isUniqueViolation } from '../store/store.js';

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the validated body as canonical JSON: a repeat matches whatever the order of its members. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/**
 * Creates a row once per externalOrderId: an earlier row with the same request hash is the answer
 * (a repeat), one with another hash is a 300 duplicate. The insert is tried first, and the unique
 * constraint on the externalOrderId tells a repeat (or the loser of a race between identical
 * requests, on one node or several), which then reads the row that was there first: a create
 * costs no read of its own, and a repeat, which is rare, a unit rolled back. A create whose unit
 * checks things before it inserts (`readFirst`) looks for the earlier row first instead, so a
 * repeat is answered as the first request was even when a check would now refuse it.
 */
export async function createOnce<Row extends { request_hash: string }, Made>(input: {
  externalOrderId: string | null;
  hash: string;
  /** The row already made under the externalOrderId, if any. */
  find(externalOrderId: string): Promise<Row | undefined>;
  /** Makes the row; throws a unique violation when another request made it first. */
  insert(): Promise<Made>;
  /** Look for the earlier row before inserting (the insert's unit refuses by checks of its own first). */
  readFirst?: boolean;
}): Promise<{ created: Made } | { repeat: Row }> {
  const { externalOrderId } = input;
  // Without an externalOrderId nothing can repeat: every request makes its own row.
  if (externalOrderId === null) return { created: await input.insert() };
  const repeatOf = (row: Row) => {
    if (row.request_hash !== input.hash) throw new ApiError({ kind: 'duplicate_external_order_id', externalOrderId });
    return { repeat: row };
  };
  const earlier = input.readFirst === true ? await input.find(externalOrderId) : undefined;
  if (earlier !== undefined) return repeatOf(earlier);
  try {
    return { created: await input.insert() };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const first = await input.find(externalOrderId);
    if (first === undefined) throw error;
    return repeatOf(first);
  }
}
