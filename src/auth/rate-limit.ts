interface Bucket {
  /** Tokens in 1/60000ths, so that refilling `perMinute` tokens a minute adds a whole number each millisecond. */
  units: number;
  updatedAt: number;
}

const UNITS_PER_TOKEN = 60_000;

/**
 * Token bucket per access key: `perMinute` requests of burst, refilled evenly over a minute.
 * Per process; with N nodes behind a balancer a key gets up to N times the limit.
 */
export class KeyRateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #capacity: number;

  constructor(readonly perMinute: number) {
    this.#capacity = perMinute * UNITS_PER_TOKEN;
  }

  #refilled(bucket: Bucket, now: number): number {
    return Math.min(this.#capacity, bucket.units + Math.max(0, now - bucket.updatedAt) * this.perMinute);
  }

  /** Takes one token; returns 0 when allowed, else the milliseconds until the next token. */
  take(accessKey: string, now: number): number {
    const existing = this.#buckets.get(accessKey);
    const bucket = { units: existing === undefined ? this.#capacity : this.#refilled(existing, now), updatedAt: now };
    this.#buckets.set(accessKey, bucket);
    if (bucket.units >= UNITS_PER_TOKEN) {
      bucket.units -= UNITS_PER_TOKEN;
      return 0;
    }
    return Math.ceil((UNITS_PER_TOKEN - bucket.units) / this.perMinute);
  }

  /** Gives back a token taken for a request that turned out not to count (a replay). */
  giveBack(accessKey: string): void {
    const bucket = this.#buckets.get(accessKey);
    if (bucket !== undefined) bucket.units = Math.min(this.#capacity, bucket.units + UNITS_PER_TOKEN);
  }

  /** Forgets buckets that have refilled completely; they are equal to a fresh one. */
  prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (this.#refilled(bucket, now) >= this.#capacity) this.#buckets.delete(key);
    }
  }
}
