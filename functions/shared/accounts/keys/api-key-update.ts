/**
 * Changing a key (name, disabled, spend limit, limit reset): the key row and the account's `keys.<h16>`
 * entry change in ONE transaction, so a disable or a new limit binds the very next hold everywhere.
 *
 * Limit arithmetic (nano-USD): a limit set on a key without one, or whose reset schedule changes,
 * starts a fresh window with `left = limit − held` (spend before does not count); a changed limit on
 * the same schedule moves `left` by the difference (`left += new − old`), guarded by the condition that
 * the limit is still the one read, so two concurrent changes cannot both apply their difference. What
 * billing keeps on the entry (held, in flight, rate-limit counters, usage, last use) is never written
 * here: a rename, disable or limit change leaves it as it is.
 *
 * Fund shards (DATA-MODEL §5): the status and the limit marker are written on every shard's entry in the
 * same transaction (keys/key-account-entry.ts); the limit's arithmetic lives on the root only.
 */
import { InvalidRequestError } from '../../errors/gateway-errors';
import { KEY_IS_LIVE_AND_OWNED, KEY_STATE_LIMIT_UNCHANGED, ACCOUNT_EXISTS_AND_HAS_KEYS } from '../../store/conditions';
import { tableNames } from '../../store/tables';
import { accountUpdateItem } from '../../store/account-item';
import { transactWrite, type TransactItems } from '../../store/transact-write';
import { cancellationCodes } from '../../store/transaction-retry';
import { atOnce, retrying, TryAgain } from '../../retry/retry';
import {
  repairKeyEntry,
  shardPk,
  otherShardUpdates,
  shardsGuard,
  type AccountShape,
  freshKeyState,
  KEYS_MAP,
  keyStateId,
  limitWindowId,
  type KeyState,
  withKeysMap,
  readAccountShape,
} from './key-account-entry';
import { KeyNotFoundError } from '../account-errors';
import { forgetCachedKey } from '../authenticate';
import { type KeyItem, type LimitReset, toKeyInfo, type KeyInfo } from './api-key-item';
import { getOwnedKey, readKeyEntries, cleanKeyName, queryAccountKeys } from './api-key-store';
import { API_KEY_PREFIX } from '../api-key';

/** Positions of the items in a key update's transaction (cancellation reasons come in this order). */
const UPDATE_ITEM = { key: 0, accountShard0: 1, firstOtherShard: 2 } as const;

/** A change to a key; absent fields stay as they are, `null` removes a limit or its reset. */
export interface KeyPatch {
  name?: string;
  disabled?: boolean;
  /** nano-USD per window, or null for no limit. */
  limitNanoUsd?: number | null;
  limitReset?: LimitReset | null;
}

/** Attempts when a concurrent change moved the limit between our read and our write. */
const MAX_UPDATE_ATTEMPTS = 4;

/**
 * Applies `patch` to a live key of `accountId`.
 * @returns the row and the entry after the change.
 * @throws KeyNotFoundError (404) for a key that is not a live key of the account; InvalidRequestError
 *         (400) for a bad name, a negative limit, or a reset without a limit; StoreUnavailableError (503).
 */
export async function updateKey(accountId: string, keyHash: string, patch: KeyPatch): Promise<{ item: KeyItem; state: KeyState }> {
  if (patch.limitNanoUsd != null && !(Number.isSafeInteger(patch.limitNanoUsd) && patch.limitNanoUsd >= 0)) {
    throw new InvalidRequestError('The key limit must be a non-negative amount.', { param: 'limit' });
  }
  return retrying(async (attempt) => {
    const item = await getOwnedKey(accountId, keyHash);
    const before = await readKeyEntries(accountId, [keyHash]);
    const state = before.states.get(keyHash);
    const next = nextValues(item, patch);
    try {
      await withKeysMap(accountId, () => transactWrite(transaction(accountId, item, state, before, next)));
      // The entry moved relative to what it was (held and spent money in flight): read it back.
      const written = (await readKeyEntries(accountId, [keyHash])).states.get(keyHash) ?? next.state;
      return { item: next.item, state: written };
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes?.[UPDATE_ITEM.key] === 'ConditionalCheckFailed') throw new KeyNotFoundError(accountId, keyHash);
      const shardMissing = codes?.slice(UPDATE_ITEM.firstOtherShard).some((c) => c === 'ConditionalCheckFailed') ?? false;
      if ((codes?.[UPDATE_ITEM.accountShard0] !== 'ConditionalCheckFailed' && !shardMissing) || attempt >= MAX_UPDATE_ATTEMPTS) throw err;
      // A shard without the key's entry (a key older than the shard's entries): add it, then again.
      if (shardMissing) for (let k = 1; k < before.shards; k++) await repairKeyEntry(shardPk(accountId, k), keyHash, k);
      throw new TryAgain('key entry moved');
    } finally {
      forgetCachedKey(keyHash);
    }
  }, atOnce(MAX_UPDATE_ATTEMPTS));
}

interface NextValues {
  item: KeyItem;
  /** The entry of a key whose entry is (re)created whole; otherwise the write is relative ({@link accountUpdate}). */
  state: KeyState;
  limitNanoUsd: number | undefined;
  limitReset: LimitReset | undefined;
}

function nextValues(item: KeyItem, patch: KeyPatch): NextValues {
  const limitNanoUsd = patch.limitNanoUsd === undefined ? (item.limitNanoUsd ?? undefined) : (patch.limitNanoUsd ?? undefined);
  const limitReset = limitNanoUsd === undefined ? undefined : patch.limitReset === undefined ? (item.limitReset ?? undefined) : (patch.limitReset ?? undefined);
  if (limitNanoUsd === undefined && patch.limitReset != null) {
    throw new InvalidRequestError('limit_reset needs a limit: set `limit` too.', { param: 'limit_reset' });
  }
  const status: KeyState['status'] =
    patch.disabled === undefined ? (item.status === 'disabled' ? 'disabled' : 'active') : patch.disabled ? 'disabled' : 'active';
  const next: KeyItem = {
    ...item,
    name: patch.name === undefined ? item.name : cleanKeyName(patch.name),
    status,
    updatedAt: new Date().toISOString(),
    limitNanoUsd: limitNanoUsd ?? null,
    limitReset: limitReset ?? null,
  };
  return { item: next, state: freshKeyState(status, limitNanoUsd, limitReset), limitNanoUsd, limitReset };
}

function transaction(accountId: string, item: KeyItem, state: KeyState | undefined, shape: AccountShape, next: NextValues): TransactItems {
  const tables = tableNames();
  const limitSet = next.limitNanoUsd !== undefined;
  const set = [
    '#name = :name',
    '#status = :status',
    'updatedAt = :at',
    ...(limitSet ? ['limitNanoUsd = :limit'] : []),
    ...(next.limitReset ? ['limitReset = :reset'] : []),
  ];
  const remove = [...(limitSet ? [] : ['limitNanoUsd']), ...(next.limitReset ? [] : ['limitReset'])];
  return [
    {
      Update: {
        TableName: tables.keys,
        Key: { keyHash: item.keyHash },
        UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
        ConditionExpression: KEY_IS_LIVE_AND_OWNED,
        ExpressionAttributeNames: { '#name': 'name', '#status': 'status' },
        ExpressionAttributeValues: {
          ':accountId': accountId,
          ':deleted': 'deleted',
          ':revoked': 'revoked',
          ':name': next.item.name,
          ':status': next.item.status,
          ':at': next.item.updatedAt,
          ...(limitSet ? { ':limit': next.limitNanoUsd } : {}),
          ...(next.limitReset ? { ':reset': next.limitReset } : {}),
        },
      },
    },
    accountUpdateItem(accountId, guarded(accountUpdate(item.keyHash, state, next), shape)),
    ...otherShardUpdates(accountId, item.keyHash, shape, {
      set: ['#keys.#h.#status = :status', ...(next.limitNanoUsd === undefined ? [] : ['#keys.#h.limitNanoUsd = :limit'])],
      ...(next.limitNanoUsd === undefined ? { remove: ['#keys.#h.limitNanoUsd'] } : {}),
      values: { ':status': next.state.status, ...(next.limitNanoUsd === undefined ? {} : { ':limit': next.limitNanoUsd }) },
      names: { '#status': 'status' },
      mustExist: true,
    }),
  ];
}

/** The root's update, also conditioned on the shard count its shard items were planned for. */
function guarded(u: AccountUpdate, shape: AccountShape): AccountUpdate {
  if (shape.shards <= 1) return u;
  const guard = shardsGuard(shape);
  return {
    ...u,
    ConditionExpression: `(${u.ConditionExpression}) AND ${guard.condition}`,
    ExpressionAttributeValues: { ...u.ExpressionAttributeValues, ...guard.values },
  };
}

/** The root item's Update expression parts. */
interface AccountUpdate {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** The account's half: the entry's status and limit fields, relative where money is in flight. */
function accountUpdate(keyHash: string, state: KeyState | undefined, next: NextValues): AccountUpdate {
  const names = { '#keys': KEYS_MAP, '#h': keyStateId(keyHash) };
  if (state === undefined) {
    // A key older than the per-key map: its entry is created now, whole.
    return {
      UpdateExpression: 'SET #keys.#h = :state',
      ConditionExpression: 'attribute_exists(accountId) AND attribute_not_exists(#keys.#h)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':state': next.state },
    };
  }
  const set = ['#keys.#h.#status = :status'];
  const remove: string[] = [];
  const values: Record<string, unknown> = { ':status': next.state.status };
  let condition = 'attribute_exists(#keys.#h)';
  if (next.limitNanoUsd === undefined) {
    remove.push('#keys.#h.limitNanoUsd', '#keys.#h.limitReset', '#keys.#h.#window', '#keys.#h.leftNanoUsd');
  } else if (state.limitNanoUsd === undefined || state.limitReset !== next.limitReset) {
    set.push('#keys.#h.limitNanoUsd = :limit', '#keys.#h.#window = :window', '#keys.#h.leftNanoUsd = :limit - if_not_exists(#keys.#h.heldNanoUsd, :zero)');
    Object.assign(values, { ':limit': next.limitNanoUsd, ':window': limitWindowId(next.limitReset), ':zero': 0 });
    if (next.limitReset) (set.push('#keys.#h.limitReset = :reset'), (values[':reset'] = next.limitReset));
    else remove.push('#keys.#h.limitReset');
  } else if (state.limitNanoUsd !== next.limitNanoUsd) {
    // A missing `left` (no window yet) is started afresh by the next hold anyway (hold-plan.ts).
    set.push('#keys.#h.limitNanoUsd = :limit', '#keys.#h.leftNanoUsd = if_not_exists(#keys.#h.leftNanoUsd, :oldLimit) + :delta');
    Object.assign(values, { ':limit': next.limitNanoUsd, ':delta': next.limitNanoUsd - state.limitNanoUsd, ':oldLimit': state.limitNanoUsd });
    condition = KEY_STATE_LIMIT_UNCHANGED;
  }
  return {
    UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: { ...names, '#status': 'status', ...(set.concat(remove).some((s) => s.includes('#window')) ? { '#window': 'window' } : {}) },
    ExpressionAttributeValues: values,
  };
}

// ---------------------------------------------------------------------------------------------------
/*
 * Deleting an API key: the key row (status `deleted`), the account's keyCount and its `keys.<h16>`
 * entry (REMOVEd, on every fund shard item) change in ONE transaction, so the key stops authorising
 * requests everywhere at once. Holds of the key still in flight settle on the account alone
 * (billing/settle.ts tolerates the missing entry).
 */

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
    // Sharded meanwhile: plan again with the new count (3 tries in all).
    await retrying(async (attempt) => {
      const shape = await readAccountShape(accountId);
      const guard = shardsGuard(shape);
      try {
        await withKeysMap(accountId, () =>
          transactWrite([
            {
              Update: {
                TableName: tables.keys,
                Key: { keyHash },
                UpdateExpression: 'SET #status = :deletedStatus, deletedAt = :at, updatedAt = :at',
                ConditionExpression: KEY_IS_LIVE_AND_OWNED,
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':accountId': accountId,
                  ':deleted': 'deleted',
                  ':revoked': 'revoked',
                  ':deletedStatus': 'deleted',
                  ':at': deletedAt,
                },
              },
            },
            accountUpdateItem(accountId, {
              // REMOVE of a missing entry (a key older than the map) is a no-op, not an error.
              UpdateExpression: 'SET keyCount = keyCount - :one REMOVE #keys.#h',
              ConditionExpression: `${ACCOUNT_EXISTS_AND_HAS_KEYS} AND ${guard.condition}`,
              ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(keyHash) },
              ExpressionAttributeValues: { ':one': 1, ':zero': 0, ...guard.values },
            }),
            ...otherShardUpdates(accountId, keyHash, shape, { remove: ['#keys.#h'], mustExist: false }),
          ]),
        );
      } catch (err) {
        const codes = cancellationCodes(err);
        if (codes?.[DELETE_ITEM.key] === 'ConditionalCheckFailed' || codes?.[DELETE_ITEM.accountShard0] !== 'ConditionalCheckFailed' || attempt >= 3) throw err;
        if ((await readAccountShape(accountId)).shards === shape.shards) throw err;
        throw new TryAgain('sharded meanwhile');
      }
    }, atOnce(3));
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
