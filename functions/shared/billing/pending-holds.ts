/**
 * How the orphan sweep FINDS holds in flight, without scanning the accounts table: a sparse global
 * secondary index (`pendingHolds`, keys only) over the attribute `sweepShard`, which an account item
 * (or fund shard) carries only while it has, or just had, holds in flight.
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
import { BatchGetCommand, QueryCommand, UpdateCommand } from '../store/commands';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { logger } from '../observability/logger';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { PENDING_HOLDS_INDEX, SWEEP_SHARD_ATTRIBUTE, SWEEP_SHARDS } from '../store/table-schemas';
import { decodeInlineHold, encodeInlineHold, HOLDS_MAP, type HoldRecord, type InlineHold } from './hold-record';
import type { UpdateBuilder } from '../store/update-builder';

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
    const page = await storeCall(() =>
      documentClient().send(
        new QueryCommand({
          TableName: tableNames().accounts,
          IndexName: PENDING_HOLDS_INDEX,
          KeyConditionExpression: '#shard = :shard',
          ExpressionAttributeNames: { '#shard': SWEEP_SHARD_ATTRIBUTE },
          ExpressionAttributeValues: { ':shard': shard },
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) out.push(String(item.accountId));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return out;
}

/** `accountId` and `holds` of up to 100 items (eventually consistent BatchGetItem; unprocessed keys retried). */
async function holdMaps(pks: readonly string[]): Promise<Array<Record<string, unknown>>> {
  const table = tableNames().accounts;
  const out: Array<Record<string, unknown>> = [];
  let keys: Array<Record<string, unknown>> = pks.map((accountId) => ({ accountId }));
  for (let attempt = 0; keys.length > 0; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * 2 ** attempt)));
    const page = await storeCall(() =>
      documentClient().send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ProjectionExpression: 'accountId, #holds', ExpressionAttributeNames: { '#holds': HOLDS_MAP } } } }),
      ),
    );
    out.push(...(page.Responses?.[table] ?? []));
    keys = (page.UnprocessedKeys?.[table]?.Keys ?? []) as Array<Record<string, unknown>>;
  }
  return out;
}

/**
 * Removes the item's mark while it has no holds in flight; a hold written meanwhile keeps it (or sets
 * it again). True when the mark was removed.
 * @throws StoreUnavailableError (503).
 */
async function clearIfNoHolds(accountId: string): Promise<boolean> {
  try {
    await storeCall(() =>
      documentClient().send(
        new UpdateCommand({
          TableName: tableNames().accounts,
          Key: { accountId },
          UpdateExpression: 'REMOVE #shard',
          ConditionExpression: 'attribute_exists(#shard) AND (attribute_not_exists(#holds) OR size(#holds) = :zero)',
          ExpressionAttributeNames: { '#shard': SWEEP_SHARD_ATTRIBUTE, '#holds': HOLDS_MAP },
          ExpressionAttributeValues: { ':zero': 0 },
        }),
      ),
    );
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
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId: hold.accountId },
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
