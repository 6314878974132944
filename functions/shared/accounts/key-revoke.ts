/** Revoking an API key: the key row and the account's keyCount change in one transaction. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { InvalidRequestError } from '../openai/errors';
import { ACCOUNT_EXISTS_AND_HAS_KEYS, KEY_IS_ACTIVE_AND_OWNED } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { KeyNotFoundError } from './account-errors';
import { API_KEY_PREFIX } from './api-key';
import { forgetCachedKey } from './authenticate';
import { keyItemSchema, toKeyInfo, type KeyInfo, type KeyItem } from './key-item';
import { queryAccountKeys } from './key-list';
import { readState } from '../billing/account-state';
import { keyEntryId } from '../billing/hold-record';
import { shardPk } from '../billing/shards';

/**
 * Finds the one active key of the account that `ref` names: a full hash (read directly), a hash prefix
 * (≥ 6 hex characters) or a hint (`sk-mux-abcd…`, with or without the ellipsis).
 */
async function resolveKeyRef(accountId: string, ref: string): Promise<KeyItem> {
  const wanted = ref.trim().replace(/(…|\.\.\.)$/, '');
  if (/^[0-9a-f]{64}$/.test(wanted)) {
    const out = await storeCall(() =>
      documentClient().send(new GetCommand({ TableName: tableNames().keys, Key: { keyHash: wanted }, ConsistentRead: true })),
    );
    const item = out.Item ? keyItemSchema.parse(out.Item) : undefined;
    if (!item || item.accountId !== accountId || item.status !== 'active') throw new KeyNotFoundError(accountId, ref);
    return item;
  }
  const byHint = wanted.startsWith(API_KEY_PREFIX);
  if (!byHint && !/^[0-9a-f]{6,63}$/.test(wanted)) throw new KeyNotFoundError(accountId, ref);
  const matches = (await queryAccountKeys(accountId)).filter(
    (k) => k.status === 'active' && (byHint ? k.hint.replace(/…$/, '') === wanted : k.keyHash.startsWith(wanted)),
  );
  const [only, second] = matches;
  if (!only) throw new KeyNotFoundError(accountId, ref);
  if (second) {
    throw new InvalidRequestError(`"${ref}" matches ${matches.length} active keys; give more of the key hash.`, {
      code: 'ambiguous_key',
    });
  }
  return only;
}

/**
 * Revokes one active key of `accountId`, named by full hash, hash prefix (≥ 6 hex characters) or hint
 * (`sk-mux-abcd…`). One transaction marks it revoked (only if active and owned), decrements keyCount and
 * removes its billing entry `keys.<h16>` from every fund shard, so the next hold with it fails at once
 * in every container (billing/hold-write.ts), whatever their key caches say.
 * @throws KeyNotFoundError (404) when no active key of the account matches; InvalidRequestError when
 *         the reference matches several; UpstreamUnavailableError (503).
 */
export async function revokeKey(accountId: string, keyRef: string): Promise<KeyInfo> {
  const key = await resolveKeyRef(accountId, keyRef);
  const tables = tableNames();
  const revokedAt = new Date().toISOString();
  const account = await readState(accountId, { consistent: true });
  const names = { '#keys': 'keys', '#k': keyEntryId(key.keyHash) };
  const removeEntry = account.keys === undefined ? '' : ' REMOVE #keys.#k';
  const shardItems = Array.from({ length: account.keys === undefined ? 0 : account.shards - 1 }, (_, i) => ({
    Update: { TableName: tables.accounts, Key: { accountId: shardPk(accountId, i + 1) }, UpdateExpression: 'REMOVE #keys.#k', ExpressionAttributeNames: names },
  }));
  try {
    await transactWrite([
      {
        Update: {
          TableName: tables.keys,
          Key: { keyHash: key.keyHash },
          UpdateExpression: 'SET #status = :revoked, revokedAt = :revokedAt',
          ConditionExpression: KEY_IS_ACTIVE_AND_OWNED,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':accountId': accountId, ':active': 'active', ':revoked': 'revoked', ':revokedAt': revokedAt },
        },
      },
      {
        Update: {
          TableName: tables.accounts,
          Key: { accountId },
          UpdateExpression: `SET keyCount = keyCount - :one${removeEntry}`,
          ConditionExpression: ACCOUNT_EXISTS_AND_HAS_KEYS,
          ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
          ...(removeEntry ? { ExpressionAttributeNames: names } : {}),
        },
      },
      ...shardItems,
    ]);
  } catch (err) {
    // Revoked concurrently by someone else: to this caller it is simply no longer an active key.
    if (cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') throw new KeyNotFoundError(accountId, keyRef);
    throw err;
  } finally {
    forgetCachedKey(key.keyHash);
  }
  return { ...toKeyInfo(key), status: 'revoked', revokedAt };
}
