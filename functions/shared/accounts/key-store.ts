/**
 * API keys: creation here; listing, revoking and authenticating live beside it and are re-exported.
 * Key rows and the account's keyCount change together in one TransactWriteItems, so keyCount always
 * equals the number of active keys and never exceeds {@link MAX_KEYS_PER_ACCOUNT}
 * (DynamoDB Developer Guide, "Amazon DynamoDB Transactions").
 */
import { InvalidRequestError } from '../openai/errors';
import { ACCOUNT_EXISTS_AND_HAS_KEY_ROOM, KEY_IS_NEW } from '../store/conditions';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { AccountNotFoundError, KeyLimitExceededError } from './account-errors';
import { getAccount } from './account-store';
import { generateApiKey } from './api-key';
import type { KeyItem } from './key-item';
import { MAX_KEYS_PER_ACCOUNT } from './limits';

/** Longest key name, characters. */
const MAX_KEY_NAME_LENGTH = 100;

/** The result of {@link createKey}. `key` exists only here: show it once, then drop it. */
export interface CreatedKey {
  key: string;
  keyHash: string;
  hint: string;
  name: string;
  /** ISO 8601. */
  createdAt: string;
}

/**
 * Creates an API key for `accountId`: one transaction puts the key row and increments keyCount under
 * the condition keyCount < 5. Transaction conflicts (concurrent creates) are retried with jitter.
 * @throws KeyLimitExceededError (409) when the account already has 5 active keys;
 *         AccountNotFoundError (404); InvalidRequestError for an empty or overlong name;
 *         UpstreamUnavailableError (503) when DynamoDB is unavailable.
 */
export async function createKey(accountId: string, name: string): Promise<CreatedKey> {
  const cleanName = name.trim();
  if (cleanName.length === 0 || cleanName.length > MAX_KEY_NAME_LENGTH) {
    throw new InvalidRequestError(`Key name must be 1 to ${MAX_KEY_NAME_LENGTH} characters.`, { param: 'name' });
  }
  const { key, keyHash, hint } = generateApiKey();
  const item: KeyItem = { keyHash, accountId, name: cleanName, hint, status: 'active', createdAt: new Date().toISOString() };
  const tables = tableNames();
  try {
    await transactWrite([
      { Put: { TableName: tables.keys, Item: item, ConditionExpression: KEY_IS_NEW } },
      {
        Update: {
          TableName: tables.accounts,
          Key: { accountId },
          UpdateExpression: 'SET keyCount = keyCount + :one',
          ConditionExpression: ACCOUNT_EXISTS_AND_HAS_KEY_ROOM,
          ExpressionAttributeValues: { ':one': 1, ':max': MAX_KEYS_PER_ACCOUNT },
        },
      },
    ]);
  } catch (err) {
    if (cancellationCodes(err)?.[1] === 'ConditionalCheckFailed') {
      // Full or missing: one read tells which (only on this refusal path).
      if (!(await getAccount(accountId, { consistent: true }))) throw new AccountNotFoundError(accountId);
      throw new KeyLimitExceededError(accountId);
    }
    throw err;
  }
  return { key, keyHash, hint, name: cleanName, createdAt: item.createdAt };
}

export { listKeys } from './key-list';
export { revokeKey } from './key-revoke';
export { authenticate } from './authenticate';
export type { KeyInfo } from './key-item';
