/**
 * Summary of many timed streams: time to first byte / token, and how faithfully the gaps between
 * content events match the upstream's pacing (`nominalGapMs`, the simulator's chunk delay).
 */
import { percentile, range, summarize, type LatencySummary } from './stats';
import type { StreamTiming } from './stream-client';

/** Stream figures of one target, ms unless stated. */
export interface StreamSummary {
  streams: number;
  firstByte: LatencySummary;
  firstToken: LatencySummary;
  /** Gaps between consecutive content events. */
  gap: LatencySummary;
  /** |gap − nominal|: median, p99 and max deviation, ms. */
  deviationP50: number;
  deviationP99: number;
  deviationMax: number;
  contentEvents: number;
  /** Content events that shared a socket read with another one (batching). */
  batchedChunks: number;
  /** Streams that did not end with `[DONE]`. */
  unfinished: number;
}

/** Summarises `timings` against a nominal gap between content events, ms. */
export function summarizeStreams(timings: readonly StreamTiming[], nominalGapMs: number): StreamSummary {
  const gaps: number[] = [];
  for (const t of timings) {
    for (let i = 1; i < t.contentArrivalsMs.length; i++) gaps.push((t.contentArrivalsMs[i] ?? 0) - (t.contentArrivalsMs[i - 1] ?? 0));
  }
  const deviations = gaps.map((g) => Math.abs(g - nominalGapMs));
  return {
    streams: timings.length,
    firstByte: summarize(timings.map((t) => t.firstByteMs)),
    firstToken: summarize(timings.map((t) => t.firstTokenMs)),
    gap: summarize(gaps),
    deviationP50: percentile(deviations, 50),
    deviationP99: percentile(deviations, 99),
    deviationMax: range(deviations).max,
    contentEvents: timings.reduce((n, t) => n + t.contentArrivalsMs.length, 0),
    batchedChunks: timings.reduce((n, t) => n + t.batchedChunks, 0),
    unfinished: timings.filter((t) => !t.done).length,
  };
}
