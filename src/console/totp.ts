/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, 6 digits, 30-second
 * steps, the format every authenticator app reads from an otpauth:// link.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { base32nopad } from '@scure/base';

export const TOTP_STEP_MS = 30_000;
export const TOTP_DIGITS = 6;
/** Codes of the step before and after are accepted too, for clocks a little apart. */
const DRIFT_STEPS = 1;

/** A new secret: 20 random bytes (160 bits, RFC 4226's recommendation), in base32 without padding. */
export function newTotpSecret(): string {
  return base32nopad.encode(randomBytes(20));
}

export function hotp(secret: Uint8Array, counter: bigint, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(counter);
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

export function totpStep(now: number): number {
  return Math.floor(now / TOTP_STEP_MS);
}

/**
 * The step whose code `code` is, within the drift allowed, and later than `lastStep` (a code is
 * good once); undefined when it is no such code.
 */
export function matchTotp(
  secretBase32: string,
  code: string,
  now: number,
  lastStep: number | null,
): number | undefined {
  const entered = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(entered)) return undefined;
  const secret = base32nopad.decode(secretBase32);
  const current = totpStep(now);
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    if (lastStep !== null && step <= lastStep) continue;
    if (timingSafeEqual(Buffer.from(hotp(secret, BigInt(step))), Buffer.from(entered))) return step;
  }
  return undefined;
}

/** The otpauth:// link an authenticator app scans. */
export function otpauthUri(secretBase32: string, account: string, issuer = 'Cashgate'): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const params = new URLSearchParams({
    secret: secretBase32,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_MS / 1000),
  });
  return `otpauth://totp/${label}?${params.toString()}`;
}
