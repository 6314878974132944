/**
 * A hold as it is stored on the ledger item (status `held`, DATA-MODEL §4) and carried in a settle
 * message: everything a settle needs to release it, with no other read.
 */
import * as z from '../validation/zod';

const count = z.number().check(z.int(), z.nonnegative());

/** A hold's record. Tokens, nano-USD, µUSD per 1M tokens, epoch ms. */
export const holdRecordSchema = z.object({
  /** The account (owner of the funds), even when the hold sits on a fund shard. */
  ownerAccountId: z.string(),
  /** The account item (and ledger partition) holding it: `accountId`, or `accountId#k` for shard k > 0. */
  accountId: z.string(),
  shard: count,
  requestId: z.string(),
  /** SHA-256 hex of the API key. */
  keyHash: z.string(),
  holdFreeTokens: count,
  holdNanoUsd: count,
  /** The key's spend limit was charged by the hold (its `leftNanoUsd` must get the release). */
  keyLimited: z.boolean(),
  keyWindow: z.optional(z.string()),
  /** The hold took a concurrency slot on the account item / on the key. */
  accountSlot: z.boolean(),
  keySlot: z.boolean(),
  /** Our best prompt estimate (tokens), billed if the request is orphaned. */
  promptTokensEstimate: count,
  /** Prompt tokens reserved (the bound, margin and media included). */
  promptTokensHeld: count,
  maxCompletionTokens: count,
  /** The prices the hold was computed at (the highest among the targets). */
  holdInputPrice: count,
  holdOutputPrice: count,
  publicModel: z.string(),
  /** ISO 8601. */
  createdAt: z.string(),
  /** Epoch ms after which the request's function can no longer settle it itself. */
  holdExpiresAt: z.number().check(z.int()),
});

/** A hold's record. */
export type HoldRecord = z.infer<typeof holdRecordSchema>;

/** The first 16 hex characters of a key hash: its entry in the account item's `keys` map. */
export function keyEntryId(keyHash: string): string {
  return keyHash.slice(0, 16);
}

/** Spreads the `pendingHolds` index over 16 partitions: "0".."f" from the request id's last hex digit. */
export function holdBucketOf(requestId: string): string {
  return String(Number.parseInt(requestId.slice(-1), 16) || 0);
}

/** Buckets of the `pendingHolds` index. */
export const HOLD_BUCKETS = Array.from({ length: 16 }, (_, i) => String(i));
