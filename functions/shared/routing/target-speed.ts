/**
 * Each target's measured speed in this container (Lambda containers share nothing): time to first
 * token and output tokens per second of its answered attempts, as exponentially decayed averages, for
 * OpenRouter's `sort: "latency"` / `"throughput"` (attempt-plan.ts). The weight of a new
 * measurement grows with the age of the average (half-life {@link HALF_LIFE_MS}; never below
 * {@link MIN_WEIGHT}), and an average older than {@link FORGET_AFTER_MS} is forgotten: what a
 * target did an hour ago says little about it now.
 */

/** A target's decayed figures. */
export interface TargetSpeed {
  /** ms from the attempt's start to its first token. */
  firstTokenMs: number;
  /** Output tokens per second after the first token; undefined until an answer long enough to tell. */
  tokensPerSecond: number | undefined;
  /** Epoch ms of the last measurement. */
  at: number;
}

/** After this long without a measurement, the newest counts half (ms). */
export const HALF_LIFE_MS = 5 * 60_000;
/** The least weight of a new measurement (several quick answers still move the average). */
export const MIN_WEIGHT = 0.2;
/** An average this old is dropped (ms). */
export const FORGET_AFTER_MS = 30 * 60_000;
/** Fewer output tokens than this, or a generation shorter than MIN_GENERATION_MS, tells nothing of throughput. */
const MIN_TOKENS = 16;
const MIN_GENERATION_MS = 50;
/** Targets remembered at most (a container serves a few dozen). */
const MAX_TARGETS = 500;

const speeds = new Map<string, TargetSpeed>();

/**
 * Records one answered attempt of `targetKey`: its first-token time (ms) and, when long enough, its
 * output rate (`completionTokens` over `generationMs`, the ms from first token to the end).
 */
export function recordSpeed(targetKey: string, firstTokenMs: number, completionTokens: number, generationMs: number, now = Date.now()): void {
  const rate = completionTokens >= MIN_TOKENS && generationMs >= MIN_GENERATION_MS ? (completionTokens * 1_000) / generationMs : undefined;
  const old = measuredSpeed(targetKey, now);
  if (old === undefined) {
    if (speeds.size >= MAX_TARGETS) speeds.clear();
    speeds.set(targetKey, { firstTokenMs, tokensPerSecond: rate, at: now });
    return;
  }
  const w = Math.max(MIN_WEIGHT, 1 - 2 ** (-(now - old.at) / HALF_LIFE_MS));
  const mix = (a: number, b: number) => a + w * (b - a);
  speeds.set(targetKey, {
    firstTokenMs: mix(old.firstTokenMs, firstTokenMs),
    tokensPerSecond: rate === undefined ? old.tokensPerSecond : old.tokensPerSecond === undefined ? rate : mix(old.tokensPerSecond, rate),
    at: now,
  });
}

/** The target's figures, or undefined when it has none recent enough. */
export function measuredSpeed(targetKey: string, now = Date.now()): TargetSpeed | undefined {
  const s = speeds.get(targetKey);
  if (s === undefined) return undefined;
  if (now - s.at > FORGET_AFTER_MS) {
    speeds.delete(targetKey);
    return undefined;
  }
  return s;
}

/** Forgets every measurement (tests). */
export function resetSpeeds(): void {
  speeds.clear();
}
