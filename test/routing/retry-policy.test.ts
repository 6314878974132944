import { describe, expect, it } from 'vitest';
import { makeFailure, transportFailure } from '../../functions/shared/providers/upstream-failure';
import type { UpstreamFailure } from '../../functions/shared/providers/types';
import { nextRetryDelay } from '../../functions/shared/retry/retry';
import { sleep } from '../../functions/shared/retry/sleep';
import { DEFAULT_RETRY, upstreamRetryPolicy, type RetryTuning } from '../../functions/shared/routing/retry-policy';

/** When the router retries the same target, and how long it waits (ms). */

const policy: RetryTuning = { maxRetriesPerTarget: 2, baseDelayMs: 100, maxDelayMs: 300, maxRetryAfterMs: 1_000 };
const lowest = () => 0;
const highest = () => 0.999999;

/** The wait the attempt loop makes before retrying the same target (ms), or undefined: next target. */
const retryDelay = (f: UpstreamFailure, retry: number, remainingMs: number, tuning: RetryTuning, random?: () => number): number | undefined =>
  nextRetryDelay(upstreamRetryPolicy(tuning, random), f, retry, remainingMs);

describe('retryDelay', () => {
  it('backs off exponentially with ±20 % jitter, capped at maxDelayMs', () => {
    const f = makeFailure('server', 500, 'boom');
    expect(retryDelay(f, 0, 10_000, policy, lowest)).toBe(80);
    expect(retryDelay(f, 0, 10_000, policy, highest)).toBe(120);
    expect(retryDelay(f, 1, 10_000, policy, lowest)).toBe(160);
    expect(retryDelay(f, 1, 10_000, policy, highest)).toBe(240);
    // 100 × 2² = 400 is over the 300 cap: 300 ± 20 %.
    const capped = { ...policy, maxRetriesPerTarget: 5 };
    expect(retryDelay(f, 2, 10_000, capped, lowest)).toBe(240);
    expect(retryDelay(f, 2, 10_000, capped, highest)).toBe(360);
  });

  it('stops after maxRetriesPerTarget retries of the same target', () => {
    const f = makeFailure('overloaded', 503, 'busy');
    expect(retryDelay(f, 1, 10_000, policy, lowest)).toBeDefined();
    expect(retryDelay(f, 2, 10_000, policy, lowest)).toBeUndefined();
    expect(retryDelay(f, 1, 10_000, DEFAULT_RETRY, lowest)).toBeUndefined();
  });

  it('waits exactly the upstream retry-after when it is under the cap and fits the budget', () => {
    const f = makeFailure('rate-limit', 429, 'slow down', { retryAfterMs: 700 });
    expect(retryDelay(f, 0, 10_000, policy, highest)).toBe(700);
  });

  it('moves on at once when retry-after is above the cap', () => {
    const f = makeFailure('rate-limit', 429, 'slow down', { retryAfterMs: 1_001 });
    expect(retryDelay(f, 0, 10_000, policy)).toBeUndefined();
  });

  it('moves on at once when the wait would not fit the remaining budget', () => {
    expect(retryDelay(makeFailure('rate-limit', 429, 'x', { retryAfterMs: 500 }), 0, 500, policy)).toBeUndefined();
    expect(retryDelay(makeFailure('rate-limit', 429, 'x', { retryAfterMs: 500 }), 0, 501, policy)).toBe(500);
    expect(retryDelay(makeFailure('server', 500, 'x'), 0, 50, policy, lowest)).toBeUndefined();
  });

  it('never retries what retrying cannot fix', () => {
    for (const kind of ['client', 'auth-config', 'not-found', 'context-length'] as const) {
      expect(retryDelay(makeFailure(kind, 400, 'no'), 0, 10_000, policy, lowest)).toBeUndefined();
    }
  });

  it('does not wait again on a target that used up a whole time limit (our timers, an upstream 504)', () => {
    expect(retryDelay(transportFailure(new Error('t'), true), 0, 10_000, policy, lowest)).toBeUndefined();
    expect(retryDelay(makeFailure('timeout', 504, 'gateway timeout'), 0, 10_000, policy, lowest)).toBeUndefined();
  });

  it('retries an upstream 408 once like the other retryable statuses', () => {
    const f = makeFailure('timeout', 408, 'Request timed out.');
    expect(f.retryable).toBe(true);
    expect(retryDelay(f, 0, 10_000, DEFAULT_RETRY, lowest)).toBe(200);
    expect(retryDelay(f, 1, 10_000, DEFAULT_RETRY, lowest)).toBeUndefined();
  });

  it('retries connection failures (refused, reset)', () => {
    expect(retryDelay(transportFailure(Object.assign(new Error('x'), { code: 'ECONNRESET' }), false), 0, 10_000, policy, lowest)).toBe(80);
  });
});

describe('sleep', () => {
  it('resolves true after the wait, false at once when the signal aborts', async () => {
    expect(await sleep(5, new AbortController().signal)).toBe(true);
    const c = new AbortController();
    const started = Date.now();
    setTimeout(() => c.abort(), 20);
    expect(await sleep(5_000, c.signal)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
