/**
 * The per-key entry on the account item (`keys.<h16>`, DATA-MODEL §2): its initial shape, and the
 * one-time repair of accounts written before per-key state existed.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { keyEntryId } from './hold-record';
import type { LimitReset } from './key-window';

/** A new key's entry: active, nothing held or used; with its spend limit when it has one. */
export function newKeyEntry(opts: { limitNanoUsd?: number; limitReset?: LimitReset } = {}): Record<string, unknown> {
  return {
    status: 'active',
    heldNanoUsd: 0,
    usedNanoUsd: 0,
    inflight: 0,
    ...(opts.limitNanoUsd !== undefined ? { limitNanoUsd: opts.limitNanoUsd, ...(opts.limitReset ? { limitReset: opts.limitReset } : {}) } : {}),
  };
}

/**
 * Adds the entry of an ACTIVE key to an account item that lacks it (data written before this
 * release). One transaction checks the key row is still active and the entry still absent, so a key
 * deleted meanwhile is never brought back. Returns false when the key row is not active.
 * @throws UpstreamUnavailableError (503) when DynamoDB is unavailable.
 */
export async function repairKeyEntry(pk: string, keyHash: string): Promise<boolean> {
  const tables = tableNames();
  const row = await storeCall(() => documentClient().send(new GetCommand({ TableName: tables.keys, Key: { keyHash }, ConsistentRead: true })));
  const status = row.Item?.status;
  if (status !== 'active') return false;
  const h16 = keyEntryId(keyHash);
  const keyRowActive = {
    ConditionCheck: {
      TableName: tables.keys,
      Key: { keyHash },
      ConditionExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
    },
  };
  const attempts: Array<{ UpdateExpression: string; ConditionExpression: string; names: Record<string, string> }> = [
    // The map exists: add the entry.
    { UpdateExpression: 'SET #keys.#k = :entry', ConditionExpression: 'attribute_exists(accountId) AND attribute_exists(#keys) AND attribute_not_exists(#keys.#k)', names: { '#keys': 'keys', '#k': h16 } },
    // No map yet: create it with the entry.
    { UpdateExpression: 'SET #keys = :map', ConditionExpression: 'attribute_exists(accountId) AND attribute_not_exists(#keys)', names: { '#keys': 'keys' } },
  ];
  for (const a of attempts) {
    try {
      await transactWrite([
        keyRowActive,
        {
          Update: {
            TableName: tables.accounts,
            Key: { accountId: pk },
            UpdateExpression: a.UpdateExpression,
            ConditionExpression: a.ConditionExpression,
            ExpressionAttributeNames: a.names,
            ExpressionAttributeValues: a.UpdateExpression.includes(':map') ? { ':map': { [h16]: newKeyEntry() } } : { ':entry': newKeyEntry() },
          },
        },
      ]);
      return true;
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes?.[0] === 'ConditionalCheckFailed') return false;
      if (codes?.[1] !== 'ConditionalCheckFailed') throw err;
    }
  }
  return true; // the entry exists now (added by a concurrent request)
}
