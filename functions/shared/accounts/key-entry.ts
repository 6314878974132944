/**
 * The one-time repair of a key's entry (`keys.<h16>`, DATA-MODEL §2) on an account item that lacks it:
 * keys created before per-key state existed, or a fund shard that missed it. The entry is made from the
 * key row (status, limit) in one transaction that checks the row is still so, so a key deleted or
 * changed meanwhile is never brought back or mis-stated.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keyItemSchema } from './key-item';
import { freshKeyState, keyStateId, shardKeyState, type KeyState } from './key-state';
import { ACCOUNT_EXISTS_WITHOUT_MAP } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';

/** Positions of the items in the key-entry repair transaction (cancellation reasons come in this order). */
const ENTRY_ITEM = { keyRow: 0, accountEntry: 1 } as const;

/** The entry is added only where the item exists and the entry does not. */
const ENTRY_IS_MISSING = 'attribute_exists(accountId) AND attribute_exists(#keys) AND attribute_not_exists(#keys.#k)';

/**
 * Adds the entry of a live key to account item `pk` (fund shard `shard`) when it lacks it.
 * @returns true when the key row is active (the entry exists now), false when it is not (disabled,
 *   deleted, or another account's: a disabled key's entry is still added, as disabled).
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function repairKeyEntry(pk: string, keyHash: string, shard = 0): Promise<boolean> {
  const tables = tableNames();
  const out = await storeCall(() => documentClient().send(new GetCommand({ TableName: tables.keys, Key: { keyHash }, ConsistentRead: true })));
  const row = out.Item === undefined ? undefined : keyItemSchema.safeParse(out.Item).data;
  const owner = pk.split('#')[0];
  if (row === undefined || row.accountId !== owner || (row.status !== 'active' && row.status !== 'disabled')) return false;
  const status = row.status;
  const entry: KeyState = shard === 0 ? freshKeyState(status, row.limitNanoUsd ?? undefined, row.limitReset ?? undefined) : shardKeyState(status, row.limitNanoUsd ?? undefined);
  const h16 = keyStateId(keyHash);
  const rowUnchanged = {
    ConditionCheck: {
      TableName: tables.keys,
      Key: { keyHash },
      ConditionExpression: '#status = :status AND ' + (row.limitNanoUsd == null ? 'attribute_not_exists(limitNanoUsd)' : 'limitNanoUsd = :limit'),
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status, ...(row.limitNanoUsd == null ? {} : { ':limit': row.limitNanoUsd }) },
    },
  };
  const attempts: Array<{ UpdateExpression: string; ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> }> = [
    // The map exists: add the entry.
    { UpdateExpression: 'SET #keys.#k = :entry', ConditionExpression: ENTRY_IS_MISSING, ExpressionAttributeNames: { '#keys': 'keys', '#k': h16 }, ExpressionAttributeValues: { ':entry': entry } },
    // No map yet: create it with the entry.
    { UpdateExpression: 'SET #map = :map', ConditionExpression: ACCOUNT_EXISTS_WITHOUT_MAP, ExpressionAttributeNames: { '#map': 'keys' }, ExpressionAttributeValues: { ':map': { [h16]: entry } } },
  ];
  for (const a of attempts) {
    try {
      await transactWrite([rowUnchanged, { Update: { TableName: tables.accounts, Key: { accountId: pk }, ...a } }]);
      return status === 'active';
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes?.[ENTRY_ITEM.keyRow] === 'ConditionalCheckFailed') return false; // the row changed meanwhile: read again next time
      if (codes?.[ENTRY_ITEM.accountEntry] !== 'ConditionalCheckFailed') throw err;
    }
  }
  return status === 'active'; // the entry exists now (added by a concurrent request)
}
