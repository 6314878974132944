import { backoffMs } from '../retry/backoff';
import type { UpstreamFailure } from '../providers/types';

/**
 * When to try the same target again, and how long to wait. Bounded: at most
 * {@link RetryPolicy.maxRetriesPerTarget} retries per target, then the plan moves on to the next
 * target; waits are jittered exponential backoff, or the upstream's `retry-after` when it fits.
 */

/** Tuning (counts, ms). */
export interface RetryPolicy {
  maxRetriesPerTarget: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `retry-after` longer than this moves on to the next target instead of waiting. */
  maxRetryAfterMs: number;
}

/** Defaults: one retry of the same target, 250 ms × 2^n with ±20 % jitter, capped at 2 s. */
export const DEFAULT_RETRY: RetryPolicy = { maxRetriesPerTarget: 1, baseDelayMs: 250, maxDelayMs: 2_000, maxRetryAfterMs: 5_000 };

/**
 * The wait before retrying the same target after its `retry` -th failure (0-based), or undefined
 * when the plan should move on: the failure is not retryable, retries are used up, a timeout that
 * cost us a whole limit (our own timers, an upstream 504: a slow target is better replaced than
 * waited on again), or the wait would not fit `remainingMs`.
 *
 * An upstream 408 is retried like any other retryable status: the upstream answered at once that it
 * gave up reading our request (a dropped connection, a slow proxy), so a retry costs little, and
 * issue 4 lists 408 among the retryables.
 */
export function retryDelay(failure: UpstreamFailure, retry: number, remainingMs: number, policy: RetryPolicy = DEFAULT_RETRY, random: () => number = Math.random): number | undefined {
  const slowTimeout = failure.kind === 'timeout' && failure.status !== 408;
  if (!failure.retryable || slowTimeout || retry >= policy.maxRetriesPerTarget) return undefined;
  let delay: number;
  if (failure.retryAfterMs !== undefined) {
    if (failure.retryAfterMs > policy.maxRetryAfterMs) return undefined;
    delay = failure.retryAfterMs;
  } else {
    delay = Math.round(backoffMs(retry, { baseMs: policy.baseDelayMs, capMs: policy.maxDelayMs, jitter: 0.2 }, random));
  }
  return delay < remainingMs ? delay : undefined;
}

/** Sleeps `ms`, resolving early (false) if `signal` aborts (retry/sleep.ts). */
export { sleep } from '../retry/sleep';
