/**
 * Deleting an API key: the key row (status `deleted`), the account's keyCount and its `keys.<h16>`
 * entry (REMOVEd, on every fund shard item) change in ONE transaction, so the key stops authorising
 * requests everywhere at once. Holds of the key still in flight settle on the account alone
 * (billing/settle.ts tolerates the missing entry).
 */
import { InvalidRequestError } from '../errors/gateway-errors';
import { ACCOUNT_EXISTS_AND_HAS_KEYS, KEY_IS_LIVE_AND_OWNED } from '../store/conditions';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { KeyNotFoundError } from './account-errors';
import { API_KEY_PREFIX } from './api-key';
import { forgetCachedKey } from './authenticate';
import { toKeyInfo, type KeyInfo, type KeyItem } from './key-item';
import { queryAccountKeys } from './key-list';
import { getOwnedKey } from './key-read';
import { otherShardUpdates, readAccountShape, shardsGuard } from './key-state';
import { KEYS_MAP, keyStateId } from './key-state';
import { withKeysMap } from './key-state';

/** Positions of the items in a key delete's transaction (cancellation reasons come in this order). */
const DELETE_ITEM = { key: 0, accountShard0: 1 } as const;

/**
 * Deletes one live (active or disabled) key of `accountId`. One transaction marks the row deleted (only
 * if live and owned), decrements keyCount and removes the key's entry from the account's `keys` map.
 * This container forgets the key at once; the hold's check of `keys.<h16>` refuses it in every other.
 * @returns the row as it was before the delete.
 * @throws KeyNotFoundError (404) when the key is not a live key of the account (also: another
 *         account's key, or deleted concurrently); StoreUnavailableError (503).
 */
export async function deleteKey(accountId: string, keyHash: string): Promise<KeyItem> {
  const key = await getOwnedKey(accountId, keyHash);
  const tables = tableNames();
  const deletedAt = new Date().toISOString();
  try {
    for (let attempt = 1; ; attempt++) {
      const shape = await readAccountShape(accountId);
      const guard = shardsGuard(shape);
      try {
        await withKeysMap(accountId, () => transactWrite([
          {
            Update: {
              TableName: tables.keys,
              Key: { keyHash },
              UpdateExpression: 'SET #status = :deletedStatus, deletedAt = :at, updatedAt = :at',
              ConditionExpression: KEY_IS_LIVE_AND_OWNED,
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':accountId': accountId, ':deleted': 'deleted', ':revoked': 'revoked', ':deletedStatus': 'deleted', ':at': deletedAt },
            },
          },
          {
            Update: {
              TableName: tables.accounts,
              Key: { accountId },
              // REMOVE of a missing entry (a key older than the map) is a no-op, not an error.
              UpdateExpression: 'SET keyCount = keyCount - :one REMOVE #keys.#h',
              ConditionExpression: `${ACCOUNT_EXISTS_AND_HAS_KEYS} AND ${guard.condition}`,
              ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(keyHash) },
              ExpressionAttributeValues: { ':one': 1, ':zero': 0, ...guard.values },
            },
          },
          ...otherShardUpdates(accountId, keyHash, shape, { remove: ['#keys.#h'], mustExist: false }),
        ]));
        break;
      } catch (err) {
        // Sharded meanwhile: plan again with the new count.
        const codes = cancellationCodes(err);
        if (codes?.[DELETE_ITEM.key] === 'ConditionalCheckFailed' || codes?.[DELETE_ITEM.accountShard0] !== 'ConditionalCheckFailed' || attempt >= 3) throw err;
        if ((await readAccountShape(accountId)).shards === shape.shards) throw err;
      }
    }
  } catch (err) {
    // Deleted concurrently by someone else: to this caller it is simply no longer a key.
    if (cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') throw new KeyNotFoundError(accountId, keyHash);
    throw err;
  } finally {
    forgetCachedKey(keyHash);
  }
  return key;
}

/**
 * Finds the one live key of the account that `ref` names: a full hash, a hash prefix (≥ 6 hex
 * characters) or a hint (`sk-mux-abcd…`, with or without the ellipsis). For the admin CLI.
 */
async function resolveKeyRef(accountId: string, ref: string): Promise<KeyItem> {
  const wanted = ref.trim().replace(/(…|\.\.\.)$/, '');
  if (/^[0-9a-f]{64}$/.test(wanted)) return getOwnedKey(accountId, wanted);
  const byHint = wanted.startsWith(API_KEY_PREFIX);
  if (!byHint && !/^[0-9a-f]{6,63}$/.test(wanted)) throw new KeyNotFoundError(accountId, ref);
  const matches = (await queryAccountKeys(accountId)).filter(
    (k) => k.status !== 'deleted' && (byHint ? k.hint.replace(/…$/, '') === wanted : k.keyHash.startsWith(wanted)),
  );
  const [only, second] = matches;
  if (!only) throw new KeyNotFoundError(accountId, ref);
  if (second) {
    throw new InvalidRequestError(`"${ref}" matches ${matches.length} keys; give more of the key hash.`, { code: 'ambiguous_key' });
  }
  return only;
}

/**
 * Deletes (revokes) one key of `accountId`, named by full hash, hash prefix (≥ 6 hex characters) or hint.
 * @throws KeyNotFoundError (404); InvalidRequestError when the reference matches several keys;
 *         StoreUnavailableError (503).
 */
export async function revokeKey(accountId: string, keyRef: string): Promise<KeyInfo> {
  const key = await resolveKeyRef(accountId, keyRef);
  try {
    await deleteKey(accountId, key.keyHash);
  } catch (err) {
    if (err instanceof KeyNotFoundError) throw new KeyNotFoundError(accountId, keyRef);
    throw err;
  }
  return { ...toKeyInfo(key), status: 'deleted', deletedAt: new Date().toISOString() };
}
