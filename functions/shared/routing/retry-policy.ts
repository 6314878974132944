import { backoffMs } from '../retry/backoff';
import type { RetryPolicy } from '../retry/retry';
import type { UpstreamFailure } from '../providers/types';

/**
 * When to try the same target again, and how long to wait. Bounded: at most
 * {@link RetryTuning.maxRetriesPerTarget} retries per target, then the plan moves on to the next
 * target; waits are jittered exponential backoff, or the upstream's `retry-after` when it fits. The
 * decision is the one retry loop's (retry/retry.ts `nextRetryDelay`); this module says which upstream
 * failures are worth another try.
 */

/** Tuning (counts, ms). */
export interface RetryTuning {
  maxRetriesPerTarget: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `retry-after` longer than this moves on to the next target instead of waiting. */
  maxRetryAfterMs: number;
}

/** Defaults: one retry of the same target, 250 ms × 2^n with ±20 % jitter, capped at 2 s. */
export const DEFAULT_RETRY: RetryTuning = { maxRetriesPerTarget: 1, baseDelayMs: 250, maxDelayMs: 2_000, maxRetryAfterMs: 5_000 };

/**
 * The retry policy of one upstream target: no retry when the failure is not retryable, or is a
 * timeout that cost us a whole limit (our own timers, an upstream 504: a slow target is better
 * replaced than waited on again), or asks (`retry-after`) for more than `maxRetryAfterMs`; else the
 * upstream's `retry-after`, or backoff (ms, rounded).
 *
 * An upstream 408 is retried like any other retryable status: the upstream answered at once that it
 * gave up reading our request (a dropped connection, a slow proxy), so a retry costs little, and
 * the official SDKs retry it too (providers.md §1.6).
 * @param random a uniform [0, 1) source (injected by tests).
 */
export function upstreamRetryPolicy(tuning: RetryTuning = DEFAULT_RETRY, random: () => number = Math.random): RetryPolicy<UpstreamFailure> {
  return {
    maxAttempts: tuning.maxRetriesPerTarget + 1,
    delayMs(failure, retry) {
      const slowTimeout = failure.kind === 'timeout' && failure.status !== 408;
      if (!failure.retryable || slowTimeout) return undefined;
      if (failure.retryAfterMs !== undefined) return failure.retryAfterMs > tuning.maxRetryAfterMs ? undefined : failure.retryAfterMs;
      return Math.round(backoffMs(retry, { baseMs: tuning.baseDelayMs, capMs: tuning.maxDelayMs, jitter: 0.2 }, random));
    },
  };
}
