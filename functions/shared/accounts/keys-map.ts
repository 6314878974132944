/**
 * Accounts created before a map attribute existed (the per-key map `keys`, the BYOK map `byok`) lack
 * it, and DynamoDB refuses to SET `keys.<h16>` under a missing map ("The document path provided in the
 * update expression is invalid for update"). {@link withAccountMap} adds the empty map once
 * (conditional: never overwrites one) and retries.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '../store/commands';
import { ACCOUNT_EXISTS_WITHOUT_MAP } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { cancellationCodes } from '../store/transaction-retry';
import { KEYS_MAP } from './key-state';

/** True when `err` says an update expression named a path under a missing map. */
export function isMissingDocumentPath(err: unknown): boolean {
  const text = (e: unknown): string => (e instanceof Error ? `${e.name} ${e.message}` : '');
  if (/document path provided in the update expression is invalid/i.test(text(err))) return true;
  // Inside a transaction the reason is per item: ValidationError with the same message.
  const reasons = (err as { CancellationReasons?: Array<{ Code?: string; Message?: string }> } | null)?.CancellationReasons;
  return (
    (cancellationCodes(err)?.includes('ValidationError') ?? false) &&
    (reasons ?? []).some((r) => /document path/i.test(r.Message ?? ''))
  );
}

/**
 * Runs `op`; if it failed for want of the account's map attribute `mapName`, creates the empty map and
 * runs `op` again.
 * @throws whatever `op` throws otherwise; StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function withAccountMap<T>(accountId: string, mapName: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (!isMissingDocumentPath(err)) throw err;
  }
  try {
    await storeCall(() =>
      documentClient().send(
        new UpdateCommand({
          TableName: tableNames().accounts,
          Key: { accountId },
          UpdateExpression: 'SET #map = :empty',
          ConditionExpression: ACCOUNT_EXISTS_WITHOUT_MAP,
          ExpressionAttributeNames: { '#map': mapName },
          ExpressionAttributeValues: { ':empty': {} },
        }),
      ),
    );
  } catch (err) {
    // Someone else added it meanwhile (or the account is gone: `op` will say so).
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
  return op();
}

/** {@link withAccountMap} for the per-key map `keys`. */
export function withKeysMap<T>(accountId: string, op: () => Promise<T>): Promise<T> {
  return withAccountMap(accountId, KEYS_MAP, op);
}
