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
import { generateApiKey } from './api-key';
import { readState } from '../billing/account-state';
import { keyEntryId } from '../billing/hold-record';
import { newKeyEntry } from '../billing/key-entry';
import type { LimitReset } from '../billing/key-window';
import { shardPk } from '../billing/shards';
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

/** Options of {@link createKey}: an optional spend limit (nano-USD per window). */
export interface CreateKeyOptions {
  limitNanoUsd?: number;
  limitReset?: LimitReset;
}

/**
 * Creates an API key for `accountId`: one transaction puts the key row, increments keyCount under the
 * condition keyCount < 5, and writes the key's billing entry `keys.<h16>` on every fund shard of the
 * account (DATA-MODEL §2, §5). Transaction conflicts (concurrent creates) are retried with jitter.
 * @throws KeyLimitExceededError (409) when the account already has 5 active keys;
 *         AccountNotFoundError (404); InvalidRequestError for an empty or overlong name;
 *         UpstreamUnavailableError (503) when DynamoDB is unavailable.
 */
export async function createKey(accountId: string, name: string, opts: CreateKeyOptions = {}): Promise<CreatedKey> {
  const cleanName = name.trim();
  if (cleanName.length === 0 || cleanName.length > MAX_KEY_NAME_LENGTH) {
    throw new InvalidRequestError(`Key name must be 1 to ${MAX_KEY_NAME_LENGTH} characters.`, { param: 'name' });
  }
  const { key, keyHash, hint } = generateApiKey();
  const item: KeyItem = {
    keyHash, accountId, name: cleanName, hint, status: 'active', createdAt: new Date().toISOString(),
    ...(opts.limitNanoUsd !== undefined ? { limitNanoUsd: opts.limitNanoUsd, ...(opts.limitReset ? { limitReset: opts.limitReset } : {}) } : {}),
  };
  const tables = tableNames();
  const account = await readState(accountId, { consistent: true });
  if (!account.exists) throw new AccountNotFoundError(accountId);
  const h16 = keyEntryId(keyHash);
  const entry = newKeyEntry(opts);
  const names = { '#keys': 'keys', '#k': h16 };
  // An account written before per-key state has no `keys` map yet: create it with this entry.
  const setEntry = account.keys === undefined ? 'SET #keys = :map' : 'SET #keys.#k = :entry';
  const entryValue = account.keys === undefined ? { ':map': { [h16]: entry } } : { ':entry': entry };
  const shardItems = Array.from({ length: account.shards - 1 }, (_, i) => ({
    Update: {
      TableName: tables.accounts,
      Key: { accountId: shardPk(accountId, i + 1) },
      UpdateExpression: 'SET #keys.#k = :entry',
      ConditionExpression: 'attribute_exists(accountId)',
      ExpressionAttributeNames: names,
      // Shards carry the key's status; a limited key is served by shard 0 alone (billing/shards.ts).
      ExpressionAttributeValues: { ':entry': newKeyEntry() },
    },
  }));
  try {
    await transactWrite([
      { Put: { TableName: tables.keys, Item: item, ConditionExpression: KEY_IS_NEW } },
      {
        Update: {
          TableName: tables.accounts,
          Key: { accountId },
          UpdateExpression: `${setEntry}, keyCount = keyCount + :one`,
          ConditionExpression: `${ACCOUNT_EXISTS_AND_HAS_KEY_ROOM} AND ${account.keys === undefined ? 'attribute_not_exists(#keys)' : 'attribute_exists(#keys)'} AND (attribute_not_exists(shards) OR shards = :shards)`,
          ExpressionAttributeNames: account.keys === undefined ? { '#keys': 'keys' } : names,
          ExpressionAttributeValues: { ':one': 1, ':max': MAX_KEYS_PER_ACCOUNT, ':shards': account.shards, ...entryValue },
        },
      },
      ...shardItems,
    ]);
  } catch (err) {
    if (cancellationCodes(err)?.[1] === 'ConditionalCheckFailed') {
      // Full, missing or changed meanwhile: one read tells which (only on this refusal path).
      const now = await readState(accountId, { consistent: true });
      if (!now.exists) throw new AccountNotFoundError(accountId);
      if (now.shards !== account.shards || (now.keys === undefined) !== (account.keys === undefined)) return createKey(accountId, name, opts);
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
