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
 * (a repeat), one with another hash is a 300 duplicate. The unique constraint on the
 * externalOrderId decides a race between identical requests, on one node or several: the loser
 * reads the winner and answers as a repeat.
 */
export async function createOnce<Row extends { request_hash: string }, Made>(input: {
  externalOrderId: string | null;
  hash: string;
  /** The row already made under the externalOrderId, if any. */
  find(externalOrderId: string): Promise<Row | undefined>;
  /** Makes the row; throws a unique violation when another request made it first. */
  insert(): Promise<Made>;
}): Promise<{ created: Made } | { repeat: Row; raced: boolean }> {
  const { externalOrderId } = input;
  // Without an externalOrderId nothing can repeat: every request makes its own row.
  if (externalOrderId === null) return { created: await input.insert() };
  const repeatOf = (row: Row) => {
    if (row.request_hash !== input.hash) throw new ApiError({ kind: 'duplicate_external_order_id', externalOrderId });
    return row;
  };
  const existing = await input.find(externalOrderId);
  if (existing !== undefined) return { repeat: repeatOf(existing), raced: false };
  try {
    return { created: await input.insert() };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await input.find(externalOrderId);
    if (winner === undefined) throw error;
    return { repeat: repeatOf(winner), raced: true };
  }
}
