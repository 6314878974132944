/** The ledger's item shape (pk `accountId` — the fund shard's pk — sk `requestId`; DATA-MODEL §4). */
import * as z from '../validation/zod';

/** How a request ended: `held` while in flight; then complete, partial (cut off midway), aborted (the client left), orphaned (settled by the sweep from its hold). */
export type LedgerStatus = 'held' | 'complete' | 'partial' | 'aborted' | 'orphaned';

const count = z.number().check(z.int(), z.nonnegative());

/** A settled ledger entry (readers skip `held` items: parse those with {@link isSettledItem} first). */
export const ledgerItemSchema = z.object({
  accountId: z.string(),
  requestId: z.string(),
  publicModel: z.string(),
  servedModel: z.string(),
  provider: z.string(),
  promptTokens: count,
  completionTokens: count,
  inputPrice: count,
  outputPrice: count,
  usageEstimated: z.boolean(),
  fallbackPath: z.array(z.string()),
  status: z.enum(['complete', 'partial', 'aborted', 'orphaned']),
  /** Tokens paid with free tokens (prompt first). */
  freeTokensUsed: count,
  /** Charged to credit, nano-USD (never more than the request's hold). */
  costNanoUsd: count,
  /**
   * What the reported usage cost beyond the hold, nano-USD: the platform's loss, not charged (billing/settle.ts).
   * Absent when the hold covered the usage.
   */
  lossNanoUsd: z.optional(count),
  /** SHA-256 hex of the API key (entries written before per-key billing have none). */
  keyHash: z.optional(z.string()),
  /** Served with the account's own provider key (BYOK): prices are the platform fee only. */
  byok: z.optional(z.boolean()),
  /** ISO 8601: when the hold was written. */
  createdAt: z.string(),
  /** The upstream model id that answered (entries before issue 28 have none). */
  upstreamModel: z.optional(z.string()),
  /** Epoch ms of the first token; of the answer's end (the request id carries its arrival). */
  firstTokenAt: z.optional(z.number()),
  endedAt: z.optional(z.number()),
  /** The first choice's finish reason. */
  finishReason: z.optional(z.string()),
  // The prompt-cache buckets (billing/cache-entry.ts `CacheEntryFields`): tokens, and prices in µUSD
  // per 1M tokens; written only when not empty.
  cachedTokens: z.optional(count),
  cachedInputPrice: z.optional(count),
  cacheWrite5mTokens: z.optional(count),
  cacheWrite5mPrice: z.optional(count),
  cacheWrite1hTokens: z.optional(count),
  cacheWrite1hPrice: z.optional(count),
  reasoningTokens: z.optional(count),
});

/** A stored, settled ledger entry. */
export type LedgerItem = z.infer<typeof ledgerItemSchema>;

/**
 * True for a settled request entry: not a hold in flight, and not a payment entry (a top-up, refund or
 * dispute has a `kind`: payments/payment-ledger.ts).
 */
export function isSettledItem(raw: Record<string, unknown>): boolean {
  return raw.status !== 'held' && raw.kind === undefined;
}
