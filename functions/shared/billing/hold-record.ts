/**
 * A hold as the request path keeps it and a settle message carries it: everything a settle needs to
 * release it, with no other read. On the account item it is kept in a compact inline form
 * ({@link encodeInlineHold}) while in flight; no ledger item exists until it is settled (DATA-MODEL §4).
 *
 * How the orphan sweep (sweep.ts) FINDS holds in flight, without scanning the accounts table: a sparse
 * global secondary index (`pendingHolds`, keys only) over the attribute `sweepShard`, which an account
 * item (or fund shard) carries only while it has, or just had, holds in flight.
 *
 * - The hold write sets it with `if_not_exists` ({@link markPendingHolds}): DynamoDB writes the index
 *   only when an indexed attribute changes, so only an item's first hold since it was last cleared
 *   costs an index write (a keys-only entry, ~1 WRU); every later hold on it costs the index nothing.
 * - The sweep reads the index ({@link findPendingHolds}): one Query per shard (16, `s0`…`s15`, so the
 *   first holds of many accounts spread their index writes), then one BatchGetItem per 100 marked
 *   items for their `holds` maps. An item found with no holds left loses its mark
 *   ({@link clearIfNoHolds}, conditional on the map still being empty, so a hold racing it keeps it).
 *   Its reads grow with the accounts that held in the last sweep interval, not with the table.
 * - A hold whose settle was handed to the settle queue is marked on its own inline record
 *   ({@link markHoldQueued}, flag `queued`): the sweep leaves it to the queue for the queue's whole
 *   retry window, and settles every other overdue hold, so one poison message never holds back the
 *   rest (the old sweep skipped everything while any message sat in the queue).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { logger } from '../observability/logger';
import { documentClient } from '../store/dynamo';
import { retrying, TryAgain, type RetryPolicy } from '../retry/retry';
import { PENDING_HOLDS_INDEX, SWEEP_SHARD_ATTRIBUTE, SWEEP_SHARDS } from '../store/table-schemas';
import type { UpdateBuilder } from '../store/update-builder';
import * as z from '../validation/zod';
import { accountUpdateCommand, batchReadAccountItems, queryAccountItems, updateAccountItem } from '../store/account-item';

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
 * queue: the sweep leaves it to the queue, {@link markHoldQueued}) + 16 × (slots − 1) (a lease's concurrency grant). E.g. 50 bytes for a gpt-4o-mini hold.
 * The request's own settle does not read it: the full {@link HoldRecord} travels with the request
 * (and in the settle message).
 */
export function encodeInlineHold(r: HoldRecord, opts: { queued?: boolean } = {}): string {
  const b36 = (n: number) => n.toString(36);
  const flags = (r.keyLimited ? 1 : 0) | (r.accountSlot ? 2 : 0) | (r.keySlot ? 4 : 0) | (opts.queued === true ? 8 : 0) | ((slotsOf(r) - 1) << 4);
  return [
    b36(r.holdExpiresAt),
    b36(r.holdFreeTokens),
    b36(r.holdNanoUsd),
    String(flags),
    keyEntryId(r.keyHash),
    b36(r.promptTokensEstimate),
    b36(r.holdInputPrice),
    b36(r.holdOutputPrice),
    r.publicModel,
  ].join('|');
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
  const [exp, free, nano, flags, est, inP, outP] = [0, 1, 2, 3, 5, 6, 7].map((i) => Number.parseInt(parts[i] ?? '', i === 3 ? 10 : 36)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
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

/** The most the request path spends marking a queued hold (ms). */
const MARK_QUEUED_TIMEOUT_MS = 500;

/** BatchGetItem's limit of keys per call (DynamoDB API reference). */
const BATCH_GET_LIMIT = 100;

/** The index shard of an account item (`s0`…`s15`): FNV-1a of its pk, so one item always lands in one shard. */
export function sweepShardOf(itemPk: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < itemPk.length; i++) h = Math.imul(h ^ itemPk.charCodeAt(i), 0x01000193) >>> 0;
  return `s${h % SWEEP_SHARDS}`;
}

/** Adds `SET sweepShard = if_not_exists(sweepShard, <shard>)` to a hold's write of item `itemPk`. */
export function markPendingHolds(b: UpdateBuilder, itemPk: string): void {
  const attr = b.name(SWEEP_SHARD_ATTRIBUTE);
  b.set(`${attr} = if_not_exists(${attr}, ${b.value(sweepShardOf(itemPk))})`);
}

/** What one look through the index found, and what it read (items, for the cost test and the logs). */
export interface PendingHoldsFound {
  holds: InlineHold[];
  /** Index entries read (marked items). */
  indexEntries: number;
  /** Marked items found without holds, whose mark was cleared. */
  cleared: number;
}

/**
 * Every hold in flight, from the items the `pendingHolds` index lists (eventually consistent: a hold
 * written a moment ago may be missing for a moment). Clears the mark of items left without holds.
 * @throws StoreUnavailableError (503).
 */
export async function findPendingHolds(): Promise<PendingHoldsFound> {
  const pks: string[] = [];
  for (let shard = 0; shard < SWEEP_SHARDS; shard++) pks.push(...(await marked(`s${shard}`)));
  const holds: InlineHold[] = [];
  const empty: string[] = [];
  for (let i = 0; i < pks.length; i += BATCH_GET_LIMIT) {
    for (const item of await holdMaps(pks.slice(i, i + BATCH_GET_LIMIT))) {
      const accountId = String(item.accountId);
      const entries = Object.entries((item[HOLDS_MAP] ?? {}) as Record<string, unknown>);
      if (entries.length === 0) empty.push(accountId);
      for (const [requestId, value] of entries) {
        const hold = decodeInlineHold(accountId, requestId, value);
        if (hold === undefined) logger.error('malformed inline hold', { accountId, requestId });
        else holds.push(hold);
      }
    }
  }
  let cleared = 0;
  for (const accountId of empty) if (await clearIfNoHolds(accountId)) cleared++;
  return { holds, indexEntries: pks.length, cleared };
}

/** The pks of the items marked in one index shard (paginated Query, keys only). */
async function marked(shard: string): Promise<string[]> {
  const out: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await queryAccountItems({
      IndexName: PENDING_HOLDS_INDEX,
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': SWEEP_SHARD_ATTRIBUTE },
      ExpressionAttributeValues: { ':shard': shard },
      ExclusiveStartKey: startKey,
    });
    for (const item of page.Items ?? []) out.push(String(item.accountId));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return out;
}

/** `accountId` and `holds` of up to 100 items (eventually consistent BatchGetItem; unprocessed keys retried). */
async function holdMaps(pks: readonly string[]): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let left = pks;
  if (left.length === 0) return out;
  await retrying(async () => {
    const page = await batchReadAccountItems(left, 'accountId, #holds', { '#holds': HOLDS_MAP });
    out.push(...page.items);
    left = page.unprocessed;
    if (left.length > 0) throw new TryAgain('unprocessed keys');
  }, UNPROCESSED_KEYS_POLICY);
  return out;
}

/** Unprocessed keys are asked for again, after 100 ms, 200 ms, … up to 1 s, until none is left; any other failure is thrown. */
const UNPROCESSED_KEYS_POLICY: RetryPolicy = {
  maxAttempts: Number.POSITIVE_INFINITY,
  delayMs: (err, retry) => (err instanceof TryAgain ? Math.min(1_000, 50 * 2 ** (retry + 1)) : undefined),
};

/**
 * Removes the item's mark while it has no holds in flight; a hold written meanwhile keeps it (or sets
 * it again). True when the mark was removed.
 * @throws StoreUnavailableError (503).
 */
async function clearIfNoHolds(accountId: string): Promise<boolean> {
  try {
    await updateAccountItem(accountId, {
      UpdateExpression: 'REMOVE #shard',
      ConditionExpression: 'attribute_exists(#shard) AND (attribute_not_exists(#holds) OR size(#holds) = :zero)',
      ExpressionAttributeNames: { '#shard': SWEEP_SHARD_ATTRIBUTE, '#holds': HOLDS_MAP },
      ExpressionAttributeValues: { ':zero': 0 },
    });
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/**
 * Marks a hold's inline record `queued` once its settle is on the settle queue, so the sweep leaves it
 * to the queue (see the file comment). Best effort: never throws; a hold whose mark did not land is
 * treated as unmarked (the sweep gives it a bounded wait while the queue is not empty: sweep.ts).
 */
export async function markHoldQueued(hold: HoldRecord): Promise<void> {
  try {
    await documentClient().send(
      accountUpdateCommand(hold.accountId, {
        UpdateExpression: 'SET #holds.#rid = :queued',
        ConditionExpression: 'attribute_exists(#holds.#rid)',
        ExpressionAttributeNames: { '#holds': HOLDS_MAP, '#rid': hold.requestId },
        ExpressionAttributeValues: { ':queued': encodeInlineHold(hold, { queued: true }) },
      }),
      // It runs in the settle reserve after a settle already failed: never longer than this.
      { abortSignal: AbortSignal.timeout(MARK_QUEUED_TIMEOUT_MS) },
    );
  } catch (err) {
    // Settled meanwhile (the condition), or the store is failing: either way, nothing to do.
    if (!(err instanceof ConditionalCheckFailedException)) logger.warn('queued hold not marked', { requestId: hold.requestId, error: err as Error });
  }
}
