/** Reading one key: its row (by full hash) and its `keys.<h16>` entry on the account item. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { KeyNotFoundError } from './account-errors';
import { keyItemSchema, LIMIT_RESETS, type KeyItem } from './key-item';
import { KEYS_MAP, keyStateId, type KeyState } from './key-state';

const count = z.number().int();
/** Tolerant parse of a `keys.<h16>` entry (billing may add fields). */
export const keyStateSchema = z.object({
  status: z.enum(['active', 'disabled']).catch('active'),
  limitNanoUsd: count.optional(),
  limitReset: z.enum(LIMIT_RESETS).optional(),
  window: z.string().optional(),
  leftNanoUsd: count.optional(),
  heldNanoUsd: count.optional(),
  usedNanoUsd: count.optional(),
  lastUsedAt: z.string().optional(),
});

/**
 * The key row of `keyHash` if it belongs to `accountId` and is not deleted (strongly consistent read).
 * Another account's key and a deleted key look the same to the caller: not found.
 * @throws KeyNotFoundError (404); UpstreamUnavailableError (503).
 */
export async function getOwnedKey(accountId: string, keyHash: string): Promise<KeyItem> {
  if (!/^[0-9a-f]{64}$/.test(keyHash)) throw new KeyNotFoundError(accountId, keyHash);
  const out = await storeCall(() =>
    documentClient().send(new GetCommand({ TableName: tableNames().keys, Key: { keyHash }, ConsistentRead: true })),
  );
  const item = out.Item ? keyItemSchema.parse(out.Item) : undefined;
  if (!item || item.accountId !== accountId || item.status === 'deleted') throw new KeyNotFoundError(accountId, keyHash);
  return item;
}

/**
 * The account's per-key entries for the given hashes (one read of the account item, projected).
 * @returns entries by key hash; a hash without an entry is absent from the map.
 * @throws UpstreamUnavailableError (503).
 */
export async function readKeyStates(accountId: string, keyHashes: readonly string[], opts: { consistent?: boolean } = {}): Promise<Map<string, KeyState>> {
  const states = new Map<string, KeyState>();
  if (keyHashes.length === 0) return states;
  const names: Record<string, string> = { '#keys': KEYS_MAP };
  keyHashes.forEach((h, i) => (names[`#h${i}`] = keyStateId(h)));
  const out = await storeCall(() =>
    documentClient().send(
      new GetCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        ProjectionExpression: keyHashes.map((_, i) => `#keys.#h${i}`).join(', '),
        ExpressionAttributeNames: names,
        ConsistentRead: opts.consistent ?? true,
      }),
    ),
  );
  const map = (out.Item?.[KEYS_MAP] ?? {}) as Record<string, unknown>;
  for (const h of keyHashes) {
    const raw = map[keyStateId(h)];
    if (raw !== undefined) states.set(h, keyStateSchema.parse(raw) as KeyState);
  }
  return states;
}
