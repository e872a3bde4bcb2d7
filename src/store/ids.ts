import { randomBytes } from 'node:crypto';

/** Opaque, prefixed, unguessable identifiers such as `mch_3f9a…`. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}
