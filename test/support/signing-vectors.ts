import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The worked request-signing vectors (a copy of the shared reference's signing-vectors.json). */
export const SIGNING_VECTORS_PATH = fileURLToPath(new URL('../fixtures/signing-vectors.json', import.meta.url));

export interface SigningVector {
  name: string;
  params: Record<string, unknown> | null;
  timestamp: string;
  nonce: string;
  stringToSign: string;
  sign: string;
}

/** The vectors with the key they are signed with. */
export const signingVectors = JSON.parse(readFileSync(SIGNING_VECTORS_PATH, 'utf8')) as {
  secret_key: string;
  access_key: string;
  vectors: SigningVector[];
};
