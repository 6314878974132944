/**
 * The prompt-cache buckets of a ledger entry (docs/prices.md): how many of its prompt tokens were read
 * from or written to the provider's cache, and the price each was billed at (µUSD per 1M tokens, the
 * displayed price — or the BYOK fee — of that bucket). Written only for buckets that are not empty, so
 * an entry without caching keeps its size (a bill is 4 WRU while the entry is ≤ 1 KB, settle.ts).
 */
import type { TokenPrices } from '../catalogue/catalogue';
import type { TokenUsage } from '../usage/token-usage';
import type { CacheBuckets } from '../money/price';

/** The cache fields of a ledger entry (tokens; prices µUSD per 1M tokens). All absent without caching. */
export interface CacheEntryFields {
  /** Of `promptTokens`, read from the cache. */
  cachedTokens?: number;
  cachedInputPrice?: number;
  /** Of `promptTokens`, written to the cache for 5 minutes. */
  cacheWrite5mTokens?: number;
  cacheWrite5mPrice?: number;
  /** Of `promptTokens`, written to the cache for 1 hour. */
  cacheWrite1hTokens?: number;
  cacheWrite1hPrice?: number;
  /** Of `completionTokens`, reasoning (informational: billed as output). */
  reasoningTokens?: number;
}

/** The non-empty cache buckets of a usage, with the prices they are billed at. */
export function cacheEntryFields(t: TokenUsage, price: TokenPrices): CacheEntryFields {
  const out: CacheEntryFields = {};
  if (t.cachedRead > 0) Object.assign(out, { cachedTokens: t.cachedRead, cachedInputPrice: price.cachedInput });
  if (t.cacheWrite5m > 0) Object.assign(out, { cacheWrite5mTokens: t.cacheWrite5m, cacheWrite5mPrice: price.cacheWrite5m });
  if (t.cacheWrite1h > 0) Object.assign(out, { cacheWrite1hTokens: t.cacheWrite1h, cacheWrite1hPrice: price.cacheWrite1h });
  if (t.reasoning > 0) out.reasoningTokens = t.reasoning;
  return out;
}

/** The buckets `computeCharge` (price.ts) prices, from an entry's cache fields; undefined when it has none. */
export function cacheBucketsOf(e: CacheEntryFields): CacheBuckets | undefined {
  if (e.cachedTokens === undefined && e.cacheWrite5mTokens === undefined && e.cacheWrite1hTokens === undefined) return undefined;
  return {
    readTokens: e.cachedTokens ?? 0,
    readPrice: e.cachedInputPrice ?? 0,
    write5mTokens: e.cacheWrite5mTokens ?? 0,
    write5mPrice: e.cacheWrite5mPrice ?? 0,
    write1hTokens: e.cacheWrite1hTokens ?? 0,
    write1hPrice: e.cacheWrite1hPrice ?? 0,
  };
}

/** Keys of {@link CacheEntryFields}, for `Pick`s of a usage entry that must carry them. */
export type CacheEntryKey = keyof CacheEntryFields;
