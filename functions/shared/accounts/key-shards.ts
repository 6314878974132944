/**
 * Key writes on a sharded account (DATA-MODEL §5): every fund shard item carries the key's entry, so a
 * key's create, status change, limit change and delete write the key row, the root's entry and each
 * other shard's entry in ONE TransactWriteItems (at most 2 + 31 items: billing/shards.ts MAX_SHARDS).
 * The root's part is guarded by {@link ACCOUNT_SHARDS_UNCHANGED}, so a write planned for S shards never
 * misses one added meanwhile.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ACCOUNT_SHARDS_UNCHANGED, KEY_STATE_EXISTS, SHARD_EXISTS } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import type { TransactItems } from '../store/transact-write';
import { KEYS_MAP, keyStateId } from './key-state';

/** The account item (and ledger partition) of shard `k`. */
export function shardPk(accountId: string, k: number): string {
  return k === 0 ? accountId : `${accountId}#${k}`;
}

/** Every item of an account (shard 0 first), for readers that sum them. */
export function shardPks(accountId: string, shards: number): string[] {
  return Array.from({ length: Math.max(1, shards) }, (_, k) => shardPk(accountId, k));
}

/** What a key write needs to know of the account: whether it exists, and its fund shard count. */
export interface AccountShape {
  exists: boolean;
  /** ≥ 1. */
  shards: number;
}

/**
 * The account's shape (one strongly consistent, projected read of the root item).
 * @throws StoreUnavailableError (503).
 */
export async function readAccountShape(accountId: string): Promise<AccountShape> {
  const out = await storeCall(() =>
    documentClient().send(
      new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ProjectionExpression: 'accountId, shards', ConsistentRead: true }),
    ),
  );
  const shards = typeof out.Item?.shards === 'number' ? Math.max(1, Math.floor(out.Item.shards)) : 1;
  return { exists: out.Item !== undefined, shards };
}

/** The root's condition clause for {@link readAccountShape}'s count, and its value. */
export function shardsGuard(shape: AccountShape): { condition: string; values: { ':shards': number } } {
  return { condition: ACCOUNT_SHARDS_UNCHANGED, values: { ':shards': shape.shards } };
}

/** One change to the key's entry on the shards other than the root: SET and REMOVE clauses on `#keys.#h…`. */
export interface ShardEntryChange {
  set?: string[];
  remove?: string[];
  values?: Record<string, unknown>;
  /** Extra `#name` placeholders the clauses use (`#keys` and `#h` are given). */
  names?: Record<string, string>;
  /** The entry must exist (a change) or not (a create: `set` then puts the whole entry). */
  mustExist: boolean;
}

/** The Update items of shards 1..S−1 for one key entry change (none when the account has one shard). */
export function otherShardUpdates(accountId: string, keyHash: string, shape: AccountShape, change: ShardEntryChange): TransactItems {
  const table = tableNames().accounts;
  const set = change.set ?? [];
  const remove = change.remove ?? [];
  const expression = `${set.length > 0 ? `SET ${set.join(', ')}` : ''}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`.trim();
  return Array.from({ length: shape.shards - 1 }, (_, i) => ({
    Update: {
      TableName: table,
      Key: { accountId: shardPk(accountId, i + 1) },
      UpdateExpression: expression,
      ConditionExpression: change.mustExist ? KEY_STATE_EXISTS : SHARD_EXISTS,
      ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(keyHash), ...change.names },
      ...(change.values !== undefined && Object.keys(change.values).length > 0 ? { ExpressionAttributeValues: change.values } : {}),
    },
  }));
}
