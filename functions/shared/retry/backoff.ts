/**
 * The one exponential backoff of modelmux: `base · 2^retry` capped at `cap` (ms), then jittered.
 * Two jitters, for two kinds of contention (AWS Architecture Blog, "Exponential Backoff And Jitter",
 * 2015):
 * - `'full'`: uniform in [0, ceiling] — writers colliding on one DynamoDB item spread out most
 *   (store/transaction-retry.ts);
 * - a fraction `f` (e.g. 0.2): uniform in [ceiling·(1−f), ceiling·(1+f)] — one client retrying an
 *   upstream keeps close to the planned wait (routing/retry-policy.ts).
 */
export interface Backoff {
  /** Wait before the first retry, before jitter (ms). */
  baseMs: number;
  /** Largest wait before jitter (ms). */
  capMs: number;
  /** `'full'`, or the ± fraction of the wait. */
  jitter: 'full' | number;
}

/**
 * The wait before retry number `retry` (0-based), in ms (not rounded).
 * @param random a uniform [0, 1) source (injected by tests).
 */
export function backoffMs(retry: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.max(0, retry));
  if (backoff.jitter === 'full') return random() * ceiling;
  return ceiling * (1 - backoff.jitter + 2 * backoff.jitter * random());
}
