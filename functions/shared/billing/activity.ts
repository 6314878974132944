/**
 * Activity: an account's ledger grouped by UTC day × served model × provider × API key, for the account
 * API's `GET /v1/activity` (OpenRouter's activity shape, per key). Sums are exact integers, read from the
 * ledger entries' stored buckets (billing/cache-entry.ts): no other table.
 */
import type { LedgerItem } from './ledger-entry';
import { forEachLedgerEntry } from './ledger-read';

/** One group. Money in nano-USD. */
export interface ActivityGroup {
  /** `YYYY-MM-DD` (UTC) of the requests' settle time. */
  date: string;
  /** The model that answered (what was billed). */
  model: string;
  provider: string;
  /** SHA-256 hex of the key, or '' for entries from before keys were recorded. */
  keyHash: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costNanoUsd: number;
  /** How many were served with the account's own provider key. */
  byokRequests: number;
  /** Of `promptTokens`, read from the provider's prompt cache. */
  cachedTokens: number;
  /** Of `promptTokens`, written to the provider's prompt cache (5-minute and 1-hour writes). */
  cacheWriteTokens: number;
  /** What the cache reads saved, nano-USD: see {@link cacheReadSavingMilliNano}; rounded down once per group. */
  cacheDiscountNanoUsd: number;
}

/**
 * What one entry's cache reads saved, in thousandths of a nano-USD (exact): its cached tokens × (the
 * input price − the cached-input price it was billed at), both µUSD per 1M tokens as stored on the entry
 * (the displayed prices; the platform fee alone for BYOK). Cache writes are not subtracted: this is
 * the read discount, what those tokens would have cost uncached minus what they cost.
 */
export function cacheReadSavingMilliNano(e: Pick<LedgerItem, 'inputPrice' | 'cachedTokens' | 'cachedInputPrice'>): bigint {
  const tokens = e.cachedTokens ?? 0;
  const perMTok = e.inputPrice - (e.cachedInputPrice ?? e.inputPrice);
  return tokens > 0 && perMTok > 0 ? BigInt(tokens) * BigInt(perMTok) : 0n;
}

/**
 * The groups of the last `days` days (today included), oldest day first, over every fund shard.
 * @param shards the account's fund shards (its root item's `shards`).
 * @throws StoreUnavailableError (503).
 */
export async function accountActivity(accountId: string, days: number, now = Date.now(), shards = 1): Promise<ActivityGroup[]> {
  const today = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
  const since = today - (days - 1) * 86_400_000;
  const groups = new Map<string, ActivityGroup>();
  const savings = new Map<ActivityGroup, bigint>();
  await forEachLedgerEntry(accountId, since, (e: LedgerItem) => {
    const date = e.createdAt.slice(0, 10);
    const keyHash = e.keyHash ?? '';
    const id = [date, e.servedModel, e.provider, keyHash].join('\u0000');
    let g = groups.get(id);
    if (g === undefined) {
      g = { date, model: e.servedModel, provider: e.provider, keyHash, requests: 0, promptTokens: 0, completionTokens: 0, costNanoUsd: 0, byokRequests: 0, cachedTokens: 0, cacheWriteTokens: 0, cacheDiscountNanoUsd: 0 };
      groups.set(id, g);
    }
    g.requests += 1;
    g.promptTokens += e.promptTokens;
    g.completionTokens += e.completionTokens;
    g.costNanoUsd += e.costNanoUsd;
    if (e.byok === true) g.byokRequests += 1;
    g.cachedTokens += e.cachedTokens ?? 0;
    g.cacheWriteTokens += (e.cacheWrite5mTokens ?? 0) + (e.cacheWrite1hTokens ?? 0);
    savings.set(g, (savings.get(g) ?? 0n) + cacheReadSavingMilliNano(e));
  }, shards);
  for (const [g, milli] of savings) g.cacheDiscountNanoUsd = Number(milli / 1000n);
  return [...groups.values()].sort((a, b) => a.date.localeCompare(b.date) || a.model.localeCompare(b.model) || a.keyHash.localeCompare(b.keyHash));
}
