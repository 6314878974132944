/**
 * Changing a key's billing state: disable/enable and its spend limit. Each change writes the key row
 * and the key's entry on every fund shard of the account in one TransactWriteItems, so it is effective
 * at once in every container: the next hold checks the entry (billing/hold-write.ts). Kept small on
 * purpose: the account API (PATCH /v1/keys/{hash}, issue 11) builds on these.
 */
import { InvalidRequestError } from '../openai/errors';
import { tableNames } from '../store/tables';
import { transactWrite, type TransactItems } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { readState } from '../billing/account-state';
import { keyEntryId } from '../billing/hold-record';
import { windowId, type LimitReset } from '../billing/key-window';
import { now } from '../billing/clock';
import { shardPk } from '../billing/shards';
import { KeyNotFoundError } from './account-errors';
import { forgetCachedKey } from './authenticate';

/** A key is written only while it belongs to the account and is not deleted. */
const KEY_IS_OWNED_AND_LIVE = 'accountId = :accountId AND (#status = :active OR #status = :disabled)';

/**
 * Disables (or enables again) a key of `accountId`: its row and `keys.<h16>.status` on every shard.
 * @throws KeyNotFoundError (404) when the key is not a live key of the account; UpstreamUnavailableError (503).
 */
export async function setKeyDisabled(accountId: string, keyHash: string, disabled: boolean): Promise<void> {
  const status = disabled ? 'disabled' : 'active';
  await writeKey(accountId, keyHash, { rowSet: '#status = :new', rowValues: { ':new': status }, entrySet: '#keys.#k.#status = :new', entryValues: { ':new': status } });
}

/**
 * Sets (or removes, with `limitNanoUsd` undefined) a key's spend limit. A new limit starts a window
 * now: what is left is the limit less what the key holds in flight.
 * @throws InvalidRequestError for a negative or fractional limit; KeyNotFoundError (404); 503.
 */
export async function setKeyLimit(accountId: string, keyHash: string, limitNanoUsd: number | undefined, limitReset?: LimitReset): Promise<void> {
  if (limitNanoUsd === undefined) {
    await writeKey(accountId, keyHash, {
      rowSet: '#status = #status REMOVE limitNanoUsd, limitReset',
      entrySet: '#keys.#k.#status = #keys.#k.#status REMOVE #keys.#k.limitNanoUsd, #keys.#k.limitReset, #keys.#k.#window, #keys.#k.leftNanoUsd',
    });
    return;
  }
  if (!Number.isSafeInteger(limitNanoUsd) || limitNanoUsd < 0) throw new InvalidRequestError('limit must be a non-negative amount of nano-USD.', { param: 'limit' });
  const reset = limitReset === undefined ? '' : ', limitReset = :reset';
  const entryReset = limitReset === undefined ? ' REMOVE #keys.#k.limitReset' : '';
  await writeKey(accountId, keyHash, {
    rowSet: `limitNanoUsd = :limit${reset}${limitReset === undefined ? ' REMOVE limitReset' : ''}`,
    rowValues: { ':limit': limitNanoUsd, ...(limitReset ? { ':reset': limitReset } : {}) },
    entrySet: `#keys.#k.limitNanoUsd = :limit, #keys.#k.#window = :window, #keys.#k.leftNanoUsd = :limit - if_not_exists(#keys.#k.heldNanoUsd, :zero)${limitReset ? ', #keys.#k.limitReset = :reset' : ''}${entryReset}`,
    entryValues: { ':limit': limitNanoUsd, ':window': windowId(limitReset, now()), ':zero': 0, ...(limitReset ? { ':reset': limitReset } : {}) },
    rootOnly: true,
  });
}

interface KeyWrite {
  rowSet: string;
  rowValues?: Record<string, unknown>;
  entrySet: string;
  entryValues?: Record<string, unknown>;
  /** Only shard 0 carries limits (billing/shards.ts). */
  rootOnly?: boolean;
}

async function writeKey(accountId: string, keyHash: string, w: KeyWrite): Promise<void> {
  const tables = tableNames();
  const account = await readState(accountId, { consistent: true });
  const h16 = keyEntryId(keyHash);
  if (account.keys?.[h16] === undefined) throw new KeyNotFoundError(accountId, keyHash.slice(0, 12));
  const shards = w.rootOnly ? 1 : account.shards;
  const entryNames = { '#keys': 'keys', '#k': h16, '#status': 'status', '#window': 'window' };
  const items: TransactItems = [
    {
      Update: {
        TableName: tables.keys,
        Key: { keyHash },
        UpdateExpression: `SET ${w.rowSet}`,
        ConditionExpression: KEY_IS_OWNED_AND_LIVE,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':accountId': accountId, ':active': 'active', ':disabled': 'disabled', ...w.rowValues },
      },
    },
    ...Array.from({ length: shards }, (_, k) => ({
      Update: {
        TableName: tables.accounts,
        Key: { accountId: shardPk(accountId, k) },
        UpdateExpression: `SET ${w.entrySet}`,
        ConditionExpression: 'attribute_exists(#keys.#k)',
        ExpressionAttributeNames: usedNames(entryNames, w.entrySet),
        ...(w.entryValues ? { ExpressionAttributeValues: w.entryValues } : {}),
      },
    })),
  ];
  try {
    await transactWrite(items);
  } catch (err) {
    if (cancellationCodes(err)?.some((c) => c === 'ConditionalCheckFailed')) throw new KeyNotFoundError(accountId, keyHash.slice(0, 12));
    throw err;
  } finally {
    forgetCachedKey(keyHash);
  }
}

/** DynamoDB refuses unused placeholders: keep the names the expression uses. */
function usedNames(names: Record<string, string>, expression: string): Record<string, string> {
  return Object.fromEntries(Object.entries(names).filter(([p]) => expression.includes(p) || p === '#keys' || p === '#k'));
}
