interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Token bucket per access key: `perMinute` requests of burst, refilled evenly over a minute.
 * Per process; with N nodes behind a balancer a key gets up to N times the limit.
 */
export class KeyRateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #refillPerMs: number;

  constructor(readonly perMinute: number) {
    this.#refillPerMs = perMinute / 60_000;
  }

  /** Takes one token; returns 0 when allowed, else the milliseconds until the next token. */
  take(accessKey: string, now: number): number {
    const bucket = this.#buckets.get(accessKey) ?? { tokens: this.perMinute, updatedAt: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedAt) * this.#refillPerMs);
    bucket.updatedAt = now;
    this.#buckets.set(accessKey, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.#refillPerMs);
  }

  /** Forgets buckets that have refilled completely; they are equal to a fresh one. */
  prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.#refillPerMs >= this.perMinute) this.#buckets.delete(key);
    }
  }
}
