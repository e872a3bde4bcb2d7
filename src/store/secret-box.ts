import { createCipheriv, createDecipheriv, randomBytes, createHmac } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const MASTER_KEY_FILE = 'master.key';

/**
 * Seals secrets at rest with AES-256-GCM under the master key. The associated data binds each
 * ciphertext to its owner (e.g. the access key), so a sealed value copied to another row fails to open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
  }

  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** A value derived from the master key for `label` (HMAC-SHA256, hex): the same on every node, unguessable without the key. */
  derive(label: string, hexDigits = 32): string {
    return createHmac('sha256', this.key).update(label).digest('hex').slice(0, hexDigits);
  }

  open(sealed: string, associatedData: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/**
 * The configured master key, else the key file in the data directory, created (mode 0600) on
 * first start. Creation uses an exclusive open so two processes starting together agree on one key.
 */
export function loadMasterKey(configured: Buffer | undefined, dataDir: string): Buffer {
  if (configured !== undefined) return configured;
  const path = join(dataDir, MASTER_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path} must hold 64 hex digits (a 32-byte key)`);
  return Buffer.from(text, 'hex');
}
