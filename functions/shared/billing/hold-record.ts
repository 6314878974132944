/**
 * A hold as the request path keeps it and a settle message carries it: everything a settle needs to
 * release it, with no other read. On the account item it is kept in a compact inline form
 * ({@link encodeInlineHold}) while in flight; no ledger item exists until it is settled (DATA-MODEL §4).
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
  /** Concurrency slots the hold took on each flagged counter (a credit lease's grant; absent = 1). */
  slots: z.optional(count),
  /** Request-rate units a lease took in minute `rpmWindow` (epoch minutes): its grant, returned unused (lease.ts). */
  rpmUnits: z.optional(count),
  rpmWindow: z.optional(count),
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
  /**
   * A request admitted against a credit lease (lease.ts): the lease's id. Its hold is a reservation
   * inside the lease, in this container's memory only, and its settle is its ledger entry alone.
   */
  leaseId: z.optional(z.string()),
});

/** A hold's record. */
export type HoldRecord = z.infer<typeof holdRecordSchema>;

/** The first 16 hex characters of a key hash: its entry in the account item's `keys` map. */
export function keyEntryId(keyHash: string): string {
  return keyHash.slice(0, 16);
}

/** Concurrency slots a hold took on each counter it flagged (`accountSlot`, `keySlot`): 1 but for a lease's grant. */
export function slotsOf(r: Pick<HoldRecord, 'slots'>): number {
  return r.slots ?? 1;
}

/** The account item's map of holds in flight (DATA-MODEL §2): request id → {@link encodeInlineHold}. */
export const HOLDS_MAP = 'holds';

/**
 * The inline copy of a hold kept on the account item (`holds.<requestId>`) while it is in flight: the
 * fewest bytes that still let the orphan sweep and `admin holds list` settle it from the record alone
 * (every write of the account item pays 1 WRU per KB, so each byte here is paid on every hold and
 * settle of the account while the hold is in flight). One string, `|`-separated, integers in base 36:
 * `expiresAt|freeTokens|nanoUsd|flags|h16|promptTokensEstimate|inputPrice|outputPrice|publicModel`,
 * flags = 1 keyLimited + 2 accountSlot + 4 keySlot + 8 queued (its settle was handed to the settle
 * queue: the sweep leaves it to the queue, pending-holds.ts) + 16 × (slots − 1) (a lease's concurrency grant). E.g. 50 bytes for a gpt-4o-mini hold.
 * The request's own settle does not read it: the full {@link HoldRecord} travels with the request
 * (and in the settle message).
 */
export function encodeInlineHold(r: HoldRecord, opts: { queued?: boolean } = {}): string {
  const b36 = (n: number) => n.toString(36);
  const flags = (r.keyLimited ? 1 : 0) | (r.accountSlot ? 2 : 0) | (r.keySlot ? 4 : 0) | (opts.queued === true ? 8 : 0) | ((slotsOf(r) - 1) << 4);
  return [b36(r.holdExpiresAt), b36(r.holdFreeTokens), b36(r.holdNanoUsd), String(flags), keyEntryId(r.keyHash), b36(r.promptTokensEstimate), b36(r.holdInputPrice), b36(r.holdOutputPrice), r.publicModel].join('|');
}

/** What an inline hold alone tells (the key only by its 16-hex entry id; `queued`: its settle is on the settle queue). */
export type InlineHold = Omit<HoldRecord, 'keyHash' | 'keyWindow' | 'promptTokensHeld' | 'maxCompletionTokens'> & { h16: string; queued: boolean };

/**
 * Reads `holds.<requestId>` of account item `accountId` (a fund shard's pk: `owner#k`). Undefined for a
 * malformed value. `createdAt` comes from the request id's timestamp (request-id.ts).
 */
export function decodeInlineHold(accountId: string, requestId: string, value: unknown): InlineHold | undefined {
  if (typeof value !== 'string') return undefined;
  const parts = value.split('|');
  if (parts.length < 9) return undefined;
  const [exp, free, nano, flags, est, inP, outP] = [0, 1, 2, 3, 5, 6, 7].map((i) => Number.parseInt(parts[i] ?? '', i === 3 ? 10 : 36)) as [number, number, number, number, number, number, number];
  if ([exp, free, nano, flags, est, inP, outP].some((n) => !Number.isSafeInteger(n) || n < 0)) return undefined;
  const sep = accountId.lastIndexOf('#');
  const shard = sep > 0 ? Number(accountId.slice(sep + 1)) : 0;
  const ms = Number(/^req_(\d{13})_/.exec(requestId)?.[1] ?? Number.NaN);
  return {
    ownerAccountId: sep > 0 ? accountId.slice(0, sep) : accountId,
    accountId,
    shard: Number.isSafeInteger(shard) ? shard : 0,
    requestId,
    h16: parts[4] ?? '',
    holdFreeTokens: free,
    holdNanoUsd: nano,
    keyLimited: (flags & 1) !== 0,
    accountSlot: (flags & 2) !== 0,
    keySlot: (flags & 4) !== 0,
    ...(flags >> 4 > 0 ? { slots: (flags >> 4) + 1 } : {}),
    queued: (flags & 8) !== 0,
    promptTokensEstimate: est,
    holdInputPrice: inP,
    holdOutputPrice: outP,
    publicModel: parts.slice(8).join('|'),
    createdAt: new Date(Number.isFinite(ms) ? ms : exp).toISOString(),
    holdExpiresAt: exp,
  };
}

/** A settleable record from an inline hold, given the key's full hash (the h16 when it cannot be found). */
export function recordOfInline(h: InlineHold, keyHash: string): HoldRecord {
  const { h16: _h16, queued: _queued, ...rest } = h;
  return { ...rest, keyHash, promptTokensHeld: h.promptTokensEstimate, maxCompletionTokens: 0 };
}
