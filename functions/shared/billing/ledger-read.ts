/**
 * Reading an account's ledger for the account API (month usage, activity) and the admin CLI (usage):
 * every fund shard's partition (DATA-MODEL §5), every page of a Query, strongly consistent (a user
 * checking right after a request sees it), from a time onwards (the request id is time-ordered:
 * request-id.ts). Items still `held` (holds in flight, not yet settled) are skipped: they are
 * reservations, not charges.
 */
import { GetCommand, QueryCommand, type QueryCommandInput } from '../store/commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { isSettledItem, ledgerItemSchema, type LedgerItem } from './ledger-entry';
import { requestIdFloor } from '../http/request-id';
import { shardPks } from '../accounts/key-state';

/** Every page of one partition's Query, settled items only. */
async function forEachSettled(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>, visit: (raw: Record<string, unknown>) => void): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() => documentClient().send(new QueryCommand({ ...input, ExclusiveStartKey: startKey })));
    for (const raw of page.Items ?? []) if (isSettledItem(raw)) visit(raw);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

function rangeQuery(pk: string, sinceMs: number | undefined): Omit<QueryCommandInput, 'ExclusiveStartKey'> {
  return {
    TableName: tableNames().ledger,
    KeyConditionExpression: sinceMs === undefined ? 'accountId = :a' : 'accountId = :a AND requestId >= :from',
    ExpressionAttributeValues: { ':a': pk, ...(sinceMs === undefined ? {} : { ':from': requestIdFloor(sinceMs) }) },
    ConsistentRead: true,
  };
}

/**
 * Calls `visit` for each settled ledger entry of `accountId` made at or after `sinceMs` (epoch ms; all
 * when undefined): shard by shard, each in time order.
 * @param shards the account's fund shards (its root item's `shards`; 1 = the single partition).
 * @throws StoreUnavailableError (503).
 */
export async function forEachLedgerEntry(accountId: string, sinceMs: number | undefined, visit: (e: LedgerItem) => void, shards = 1): Promise<void> {
  for (const pk of shardPks(accountId, shards)) await forEachSettled(rangeQuery(pk, sinceMs), (raw) => visit(ledgerItemSchema.parse(raw)));
}

/**
 * What the account was charged since `sinceMs` (epoch ms), nano-USD: a Query bounded to that range on
 * each shard's partition, projected to the two attributes it needs (the dashboard's first render
 * waits on it, so it never reads the whole ledger).
 * @throws StoreUnavailableError (503).
 */
export async function chargedSince(accountId: string, sinceMs: number, shards = 1): Promise<number> {
  let total = 0;
  await Promise.all(
    shardPks(accountId, shards).map((pk) =>
      forEachSettled({ ...rangeQuery(pk, sinceMs), ProjectionExpression: 'costNanoUsd, #status', ExpressionAttributeNames: { '#status': 'status' } }, (raw) => {
        total += typeof raw.costNanoUsd === 'number' ? raw.costNanoUsd : 0;
      }),
    ),
  );
  return total;
}

/** Epoch ms of the first instant of `now`'s month, UTC. */
export function monthStartMs(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}

/**
 * One settled ledger entry by request id (`GET /v1/generation`): a strongly consistent GetItem on each
 * fund shard's partition at once (one GetItem for an unsharded account), the first found. Undefined
 * while the request is still held (not settled) or when no such entry exists.
 * @param shards the account's fund shards (its root item's `shards`).
 * @throws StoreUnavailableError (503).
 */
export async function findLedgerEntry(accountId: string, requestId: string, shards = 1): Promise<LedgerItem | undefined> {
  const found = await Promise.all(
    shardPks(accountId, shards).map((pk) => storeCall(() => documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId: pk, requestId }, ConsistentRead: true })))),
  );
  const raw = found.map((out) => out.Item).find((item) => item !== undefined && isSettledItem(item));
  return raw === undefined ? undefined : ledgerItemSchema.parse(raw);
}
