/** DESIGN §1.11: retries spaced by an interval, at most a number of them, none after a window. */
export interface RetryPolicy {
  intervalMs: number;
  maxRetries: number;
  windowMs: number;
}

/**
 * When to try again after a failed attempt, or undefined when the event has failed for good.
 * `attemptsMade` counts the attempt that just failed; the first attempt is not a retry.
 */
export function nextRetryAt(
  policy: RetryPolicy,
  attempt: { attemptsMade: number; firstAttemptAt: number; lastAttemptAt: number },
): number | undefined {
  if (attempt.attemptsMade > policy.maxRetries) return undefined;
  const next = attempt.lastAttemptAt + policy.intervalMs;
  return next - attempt.firstAttemptAt > policy.windowMs ? undefined : next;
}
