/** Retry delays shared by the S3 clients and alert delivery: full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). */

/** The base and the cap of the backoff, in milliseconds. */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
}

/** Full-jitter delay for attempt `n` (1-based): uniform in [0, min(cap, base·2^(n−1))]. */
export function fullJitterDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random() * ceiling);
}
