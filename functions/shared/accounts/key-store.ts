/**
 * API keys: creation here; listing, updating, deleting and authenticating live beside it and are
 * re-exported. The key row, the account's keyCount and the account's `keys.<h16>` entry change together
 * in ONE TransactWriteItems, so keyCount always equals the number of non-deleted keys, never exceeds
 * {@link MAX_KEYS_PER_ACCOUNT} (also under concurrent creates), and the per-key state a hold checks
 * exists exactly for the live keys (DynamoDB Developer Guide, "Amazon DynamoDB Transactions") — on
 * every fund shard item of the account (key-state.ts).
 */
import { InvalidRequestError } from '../errors/gateway-errors';
import { ACCOUNT_EXISTS_AND_HAS_KEY_ROOM, KEY_IS_NEW } from '../store/conditions';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { AccountNotFoundError, KeyLimitExceededError } from './account-errors';
import { generateApiKey } from './api-key';
import type { KeyItem, LimitReset } from './key-item';
import { otherShardUpdates, readAccountShape, shardsGuard } from './key-state';
import { freshKeyState, KEYS_MAP, keyStateId, shardKeyState, type KeyState } from './key-state';
import { withKeysMap } from './key-state';
import { MAX_KEYS_PER_ACCOUNT } from './limits';

/** Longest key name, characters. */
export const MAX_KEY_NAME_LENGTH = 100;

/** Options of {@link createKey}. */
export interface CreateKeyOptions {
  /** Spend limit per window, nano-USD (non-negative integer); absent = no limit. */
  limitNanoUsd?: number;
  /** When the limit starts afresh; absent = never (a lifetime limit). */
  limitReset?: LimitReset;
}

/** The result of {@link createKey}. `key` exists only here: show it once, then drop it. */
export interface CreatedKey {
  key: string;
  keyHash: string;
  hint: string;
  name: string;
  /** ISO 8601. */
  createdAt: string;
  /** The stored row. */
  item: KeyItem;
  /** The account's `keys.<h16>` entry as written. */
  state: KeyState;
}

/**
 * A key name as stored: trimmed, 1 to {@link MAX_KEY_NAME_LENGTH} characters.
 * @throws InvalidRequestError (400, param `name`) otherwise.
 */
export function cleanKeyName(name: string): string {
  const clean = name.trim();
  if (clean.length === 0 || clean.length > MAX_KEY_NAME_LENGTH) {
    throw new InvalidRequestError(`Key name must be 1 to ${MAX_KEY_NAME_LENGTH} characters.`, { param: 'name' });
  }
  return clean;
}

/**
 * Creates an API key for `accountId`: one transaction puts the key row, increments keyCount under the
 * condition keyCount < 5, and sets the account's `keys.<h16>` entry (status, limit, window) on the root
 * and on every other fund shard. Transaction conflicts (concurrent creates) are retried with jitter.
 * @throws KeyLimitExceededError (409) when the account already has 5 keys; AccountNotFoundError (404);
 *         InvalidRequestError for an empty or overlong name or a bad limit; StoreUnavailableError (503).
 */
export async function createKey(accountId: string, name: string, opts: CreateKeyOptions = {}): Promise<CreatedKey> {
  const cleanName = cleanKeyName(name);
  if (opts.limitNanoUsd !== undefined && !(Number.isSafeInteger(opts.limitNanoUsd) && opts.limitNanoUsd >= 0)) {
    throw new InvalidRequestError('The key limit must be a non-negative amount.', { param: 'limit' });
  }
  const { key, keyHash, hint } = generateApiKey();
  const createdAt = new Date().toISOString();
  const item: KeyItem = {
    keyHash, accountId, name: cleanName, hint, status: 'active', createdAt, updatedAt: createdAt,
    ...(opts.limitNanoUsd === undefined ? {} : { limitNanoUsd: opts.limitNanoUsd, ...(opts.limitReset ? { limitReset: opts.limitReset } : {}) }),
  };
  const state = freshKeyState('active', opts.limitNanoUsd, opts.limitNanoUsd === undefined ? undefined : opts.limitReset);
  const tables = tableNames();
  for (let attempt = 1; ; attempt++) {
    const shape = await readAccountShape(accountId);
    if (!shape.exists) throw new AccountNotFoundError(accountId);
    const guard = shardsGuard(shape);
    try {
      await withKeysMap(accountId, () =>
        transactWrite([
          { Put: { TableName: tables.keys, Item: item, ConditionExpression: KEY_IS_NEW } },
          {
            Update: {
              TableName: tables.accounts,
              Key: { accountId },
              UpdateExpression: 'SET keyCount = keyCount + :one, #keys.#h = :state',
              ConditionExpression: `${ACCOUNT_EXISTS_AND_HAS_KEY_ROOM} AND ${guard.condition}`,
              ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(keyHash) },
              ExpressionAttributeValues: { ':one': 1, ':max': MAX_KEYS_PER_ACCOUNT, ':state': state, ...guard.values },
            },
          },
          ...otherShardUpdates(accountId, keyHash, shape, { set: ['#keys.#h = :state'], values: { ':state': shardKeyState('active', opts.limitNanoUsd) }, mustExist: false }),
        ]),
      );
      break;
    } catch (err) {
      if (cancellationCodes(err)?.[1] !== 'ConditionalCheckFailed') throw err;
      // Full, gone, or sharded meanwhile: one read tells which (only on this refusal path).
      const after = await readAccountShape(accountId);
      if (!after.exists) throw new AccountNotFoundError(accountId);
      if (after.shards === shape.shards || attempt >= 3) throw new KeyLimitExceededError();
    }
  }
  return { key, keyHash, hint, name: cleanName, createdAt, item, state };
}

export { listKeys } from './key-list';
export { deleteKey, revokeKey } from './key-delete';
export { authenticate } from './authenticate';
export type { KeyInfo } from './key-item';
