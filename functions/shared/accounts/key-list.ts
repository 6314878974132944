/** Listing an account's keys through the keys table's `byAccount` index. */
import { QueryCommand } from '../store/commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { keyItemSchema, toKeyInfo, type KeyInfo, type KeyItem } from './key-item';

/** Index on the keys table listing an account's keys by creation time (table-schemas.ts). */
const BY_ACCOUNT_INDEX = 'byAccount';

/** Every key row of the account (active and revoked), oldest first, via the `byAccount` index. */
export async function queryAccountKeys(accountId: string): Promise<KeyItem[]> {
  const items: KeyItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() =>
      documentClient().send(
        new QueryCommand({
          TableName: tableNames().keys,
          IndexName: BY_ACCOUNT_INDEX,
          KeyConditionExpression: 'accountId = :accountId',
          ExpressionAttributeValues: { ':accountId': accountId },
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const raw of page.Items ?? []) items.push(keyItemSchema.parse(raw));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * The account's keys, oldest first, without hashes in full. The index is eventually consistent: a key
 * created a moment ago may be missing for a moment.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function listKeys(accountId: string): Promise<KeyInfo[]> {
  return (await queryAccountKeys(accountId)).map(toKeyInfo);
}
