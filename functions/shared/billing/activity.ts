/**
 * Activity: an account's ledger grouped by UTC day × served model × provider × API key, for the account
 * API's `GET /v1/activity` (OpenRouter's activity shape, per key). Sums are exact integers.
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
  await forEachLedgerEntry(accountId, since, (e: LedgerItem) => {
    const date = e.createdAt.slice(0, 10);
    const keyHash = e.keyHash ?? '';
    const id = [date, e.servedModel, e.provider, keyHash].join('\u0000');
    let g = groups.get(id);
    if (g === undefined) {
      g = { date, model: e.servedModel, provider: e.provider, keyHash, requests: 0, promptTokens: 0, completionTokens: 0, costNanoUsd: 0, byokRequests: 0 };
      groups.set(id, g);
    }
    g.requests += 1;
    g.promptTokens += e.promptTokens;
    g.completionTokens += e.completionTokens;
    g.costNanoUsd += e.costNanoUsd;
    if (e.byok === true) g.byokRequests += 1;
  }, shards);
  return [...groups.values()].sort((a, b) => a.date.localeCompare(b.date) || a.model.localeCompare(b.model) || a.keyHash.localeCompare(b.keyHash));
}
