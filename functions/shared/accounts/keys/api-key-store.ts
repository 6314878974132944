/**
 * API keys: creating, listing and reading them (updating and deleting: keys/api-key-update.ts; authenticating:
 * authenticate.ts). The key row, the account's keyCount and the account's `keys.<h16>` entry change together
 * in ONE TransactWriteItems, so keyCount always equals the number of non-deleted keys, never exceeds
 * {@link MAX_KEYS_PER_ACCOUNT} (also under concurrent creates), and the per-key state a hold checks
 * exists exactly for the live keys (DynamoDB Developer Guide, "Amazon DynamoDB Transactions") — on
 * every fund shard item of the account (keys/key-account-entry.ts).
 */
import { QueryCommand, GetCommand } from '../../store/dynamo-commands';
import { InvalidRequestError } from '../../errors/gateway-errors';
import { ACCOUNT_EXISTS_AND_HAS_KEY_ROOM, KEY_IS_NEW } from '../../store/conditions';
import { tableNames } from '../../store/tables';
import { transactWrite } from '../../store/transact-write';
import { cancellationCodes } from '../../store/transaction-retry';
import { atOnce, retrying, TryAgain } from '../../retry/retry';
import { AccountNotFoundError, KeyLimitExceededError, KeyNotFoundError } from '../account-errors';
import { generateApiKey } from '../api-key';
import { type KeyItem, type LimitReset, keyItemSchema, toKeyInfo, type KeyInfo } from './api-key-item';
import {
  otherShardUpdates,
  readAccountShape,
  shardsGuard,
  freshKeyState,
  KEYS_MAP,
  keyStateId,
  shardKeyState,
  type KeyState,
  withKeysMap,
  shardPks,
  keyStateOf,
  type AccountShape,
} from './key-account-entry';
import { MAX_KEYS_PER_ACCOUNT } from '../limits';
import { documentClient } from '../../store/dynamo';
import { storeCall } from '../../store/store-errors';
import { accountUpdateItem, readAccountItem } from '../../store/account-item';

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
    keyHash,
    accountId,
    name: cleanName,
    hint,
    status: 'active',
    createdAt,
    updatedAt: createdAt,
    ...(opts.limitNanoUsd === undefined ? {} : { limitNanoUsd: opts.limitNanoUsd, ...(opts.limitReset ? { limitReset: opts.limitReset } : {}) }),
  };
  const state = freshKeyState('active', opts.limitNanoUsd, opts.limitNanoUsd === undefined ? undefined : opts.limitReset);
  // Sharded meanwhile: plan again with the new count (3 tries in all).
  await retrying(async (attempt) => {
    const shape = await readAccountShape(accountId);
    if (!shape.exists) throw new AccountNotFoundError(accountId);
    const guard = shardsGuard(shape);
    try {
      await withKeysMap(accountId, () =>
        transactWrite([
          { Put: { TableName: tableNames().keys, Item: item, ConditionExpression: KEY_IS_NEW } },
          accountUpdateItem(accountId, {
            UpdateExpression: 'SET keyCount = keyCount + :one, #keys.#h = :state',
            ConditionExpression: `${ACCOUNT_EXISTS_AND_HAS_KEY_ROOM} AND ${guard.condition}`,
            ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(keyHash) },
            ExpressionAttributeValues: { ':one': 1, ':max': MAX_KEYS_PER_ACCOUNT, ':state': state, ...guard.values },
          }),
          ...otherShardUpdates(accountId, keyHash, shape, {
            set: ['#keys.#h = :state'],
            values: { ':state': shardKeyState('active', opts.limitNanoUsd) },
            mustExist: false,
          }),
        ]),
      );
    } catch (err) {
      if (cancellationCodes(err)?.[1] !== 'ConditionalCheckFailed') throw err;
      // Full, gone, or sharded meanwhile: one read tells which (only on this refusal path).
      const after = await readAccountShape(accountId);
      if (!after.exists) throw new AccountNotFoundError(accountId);
      if (after.shards === shape.shards || attempt >= 3) throw new KeyLimitExceededError();
      throw new TryAgain('sharded meanwhile');
    }
  }, atOnce(3));
  return { key, keyHash, hint, name: cleanName, createdAt, item, state };
}

// ---------------------------------------------------------------------------------------------------
/* Listing an account's keys through the keys table's `byAccount` index. */

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

// ---------------------------------------------------------------------------------------------------
/* Reading one key: its row (by full hash) and its `keys.<h16>` entry on the account's items. */

/**
 * The key row of `keyHash` if it belongs to `accountId` and is not deleted (strongly consistent read).
 * Another account's key and a deleted key look the same to the caller: not found.
 * @throws KeyNotFoundError (404); StoreUnavailableError (503).
 */
export async function getOwnedKey(accountId: string, keyHash: string): Promise<KeyItem> {
  if (!/^[0-9a-f]{64}$/.test(keyHash)) throw new KeyNotFoundError(accountId, keyHash);
  const out = await storeCall(() => documentClient().send(new GetCommand({ TableName: tableNames().keys, Key: { keyHash }, ConsistentRead: true })));
  const item = out.Item ? keyItemSchema.parse(out.Item) : undefined;
  if (!item || item.accountId !== accountId || item.status === 'deleted') throw new KeyNotFoundError(accountId, keyHash);
  return item;
}

/** The account's shape and its keys' entries, as {@link readKeyEntries} reads them. */
export interface KeyEntries extends AccountShape {
  /**
   * By key hash: the root's entry (status, limit, window, left, held — only the root's holds count
   * against a limit), with `usedNanoUsd` summed and `lastUsedAt` the latest over every fund shard.
   * A hash without an entry is absent.
   */
  states: Map<string, KeyState>;
}

/**
 * The entries of the given keys on every item of the account (the root, then the other fund shards;
 * each read projected to those entries, strongly consistent unless asked otherwise).
 * @throws StoreUnavailableError (503).
 */
export async function readKeyEntries(accountId: string, keyHashes: readonly string[], opts: { consistent?: boolean } = {}): Promise<KeyEntries> {
  const names: Record<string, string> = { '#keys': KEYS_MAP };
  keyHashes.forEach((h, i) => (names[`#h${i}`] = keyStateId(h)));
  const projection = ['accountId', 'shards', ...keyHashes.map((_, i) => `#keys.#h${i}`)].join(', ');
  const read = (pk: string) => readAccountItem(pk, { projection, ...(keyHashes.length > 0 ? { names } : {}), consistent: opts.consistent ?? true });
  const root = await read(accountId);
  const shards = typeof root?.shards === 'number' ? Math.max(1, Math.floor(root.shards)) : 1;
  const others =
    shards > 1
      ? await Promise.all(
          shardPks(accountId, shards)
            .slice(1)
            .map((pk) => read(pk)),
        )
      : [];
  const states = new Map<string, KeyState>();
  const entryOf = (item: Record<string, unknown> | undefined, h: string): unknown => ((item?.[KEYS_MAP] ?? {}) as Record<string, unknown>)[keyStateId(h)];
  for (const h of keyHashes) {
    const raw = entryOf(root, h);
    if (raw === undefined) continue;
    const state = keyStateOf(raw);
    for (const item of others) {
      const shard = entryOf(item, h);
      if (shard === undefined) continue;
      const s = keyStateOf(shard);
      state.usedNanoUsd = (state.usedNanoUsd ?? 0) + (s.usedNanoUsd ?? 0);
      if (s.lastUsedAt !== undefined && (state.lastUsedAt === undefined || s.lastUsedAt > state.lastUsedAt)) state.lastUsedAt = s.lastUsedAt;
    }
    states.set(h, state);
  }
  return { exists: root !== undefined, shards, states };
}

/**
 * The account's per-key entries for the given hashes ({@link readKeyEntries}).
 * @returns entries by key hash; a hash without an entry is absent from the map.
 * @throws StoreUnavailableError (503).
 */
export async function readKeyStates(accountId: string, keyHashes: readonly string[], opts: { consistent?: boolean } = {}): Promise<Map<string, KeyState>> {
  if (keyHashes.length === 0) return new Map();
  return (await readKeyEntries(accountId, keyHashes, opts)).states;
}
