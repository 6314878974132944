/** Reading one key: its row (by full hash) and its `keys.<h16>` entry on the account's items. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { shardPks } from './key-state';
import { KeyNotFoundError } from './account-errors';
import { keyItemSchema, type KeyItem } from './key-item';
import { KEYS_MAP, keyStateId, keyStateOf, type KeyState } from './key-state';
import type { AccountShape } from './key-state';

/**
 * The key row of `keyHash` if it belongs to `accountId` and is not deleted (strongly consistent read).
 * Another account's key and a deleted key look the same to the caller: not found.
 * @throws KeyNotFoundError (404); StoreUnavailableError (503).
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
  const read = (pk: string) =>
    storeCall(() =>
      documentClient().send(
        new GetCommand({
          TableName: tableNames().accounts,
          Key: { accountId: pk },
          ProjectionExpression: projection,
          ...(keyHashes.length > 0 ? { ExpressionAttributeNames: names } : {}),
          ConsistentRead: opts.consistent ?? true,
        }),
      ),
    );
  const root = (await read(accountId)).Item;
  const shards = typeof root?.shards === 'number' ? Math.max(1, Math.floor(root.shards)) : 1;
  const others = shards > 1 ? await Promise.all(shardPks(accountId, shards).slice(1).map(async (pk) => (await read(pk)).Item)) : [];
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
