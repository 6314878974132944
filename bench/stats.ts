/**
 * Order statistics for latency samples. Percentiles use the nearest-rank method on a sorted copy
 * (no interpolation), so a reported p99 is a latency some request really had.
 */

/** A sorted copy of `samples` (ascending). */
export function sorted(samples: readonly number[]): number[] {
  return [...samples].sort((a, b) => a - b);
}

/**
 * The `p`-th percentile (0 < p ≤ 100) of an ascending array, nearest rank; NaN when empty.
 * Units are the samples' own (ms here).
 */
export function percentileOfSorted(ascending: readonly number[], p: number): number {
  if (ascending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * ascending.length);
  return ascending[Math.min(ascending.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/** The `p`-th percentile of unsorted samples (see {@link percentileOfSorted}). */
export function percentile(samples: readonly number[], p: number): number {
  return percentileOfSorted(sorted(samples), p);
}

/** The median (p50, nearest rank) of unsorted samples. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Smallest and largest value; NaN for both when empty. */
export function range(values: readonly number[]): { min: number; max: number } {
  if (values.length === 0) return { min: Number.NaN, max: Number.NaN };
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, max };
}

/** Latency summary of one sample set, ms. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** p50 / p90 / p99 / max / mean of latencies in ms. */
export function summarize(latenciesMs: readonly number[]): LatencySummary {
  const s = sorted(latenciesMs);
  const total = s.reduce((a, b) => a + b, 0);
  return {
    count: s.length,
    p50: percentileOfSorted(s, 50),
    p90: percentileOfSorted(s, 90),
    p99: percentileOfSorted(s, 99),
    max: s.length > 0 ? (s[s.length - 1] ?? Number.NaN) : Number.NaN,
    mean: s.length > 0 ? total / s.length : Number.NaN,
  };
}
