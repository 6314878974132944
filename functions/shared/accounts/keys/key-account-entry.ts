/**
 * The per-key state kept on the account item, `keys.<h16>` (DATA-MODEL §2): written with the key row in
 * ONE TransactWriteItems (keys/api-key-store.ts, keys/api-key-update.ts), so the single conditional write
 * of a request's hold (billing/hold-plan.ts) sees a disable, delete or limit change at once in every
 * container. Billing's own fields (held, in flight, rate-limit counters, usage) are only ever moved
 * relatively by the key writes, never reset. Money in nano-USD.
 *
 * Fund shards (DATA-MODEL §5): every shard item of the account carries the key's entry. The root
 * (shard 0) carries the spend limit's arithmetic (`window`, `leftNanoUsd`); the other shards carry the
 * status, their own held/in-flight/rate/usage counters, and `limitNanoUsd` as a marker only (a limited
 * key is served by shard 0: billing/shards.ts `pickShard`, billing/hold.ts).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '../../store/dynamo-commands';
import { accountUpdateItem, readAccountItem, updateAccountItem } from '../../store/account-item';
import { now as billingNow } from '../../time/clock';
import { type KeyStatus, type LimitReset, keyItemSchema } from './api-key-item';
import { ACCOUNT_EXISTS_WITHOUT_MAP, ACCOUNT_SHARDS_UNCHANGED, KEY_STATE_EXISTS, SHARD_EXISTS } from '../../store/conditions';
import { documentClient } from '../../store/dynamo';
import { storeCall } from '../../store/store-errors';
import { tableNames } from '../../store/tables';
import { cancellationCodes } from '../../store/transaction-retry';
import { type TransactItems, transactWrite } from '../../store/transact-write';

/** The map attribute on the account item. */
export const KEYS_MAP = 'keys';

/** The key of a key's entry in the account's `keys` map: the first 16 hex characters of its hash. */
export function keyStateId(keyHash: string): string {
  return keyHash.slice(0, 16);
}

/** One key's entry. */
export interface KeyState {
  status: Exclude<KeyStatus, 'deleted'>;
  /** Spend limit per window, nano-USD; absent = no limit. */
  limitNanoUsd?: number;
  limitReset?: LimitReset;
  /** Id of the current limit window (see {@link limitWindowId}); present with a limit (root item). */
  window?: string;
  /** Limit left in the window, nano-USD (limit − settled − held in it); present with a limit (root item). */
  leftNanoUsd?: number;
  /** Held by the key's requests in flight, nano-USD. */
  heldNanoUsd?: number;
  /** Lifetime spend of the key, nano-USD (ADDed by each settle). */
  usedNanoUsd?: number;
  /** ISO 8601 of the last settled request. */
  lastUsedAt?: string;
  /** Rate limits: the epoch minute of `rpmCount`, requests in it, requests in flight. */
  rpmWindow?: number;
  rpmCount?: number;
  inflight?: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * Reads a stored (unmarshalled) `keys.<h16>` entry, tolerant of missing or foreign fields: an absent
 * status is `active` (entries are only ever written by the key lifecycle above).
 */
export function keyStateOf(raw: unknown): KeyState {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const reset = r.limitReset;
  const state: KeyState = { status: r.status === 'disabled' ? 'disabled' : 'active' };
  const fields = {
    limitNanoUsd: num(r.limitNanoUsd),
    window: typeof r.window === 'string' ? r.window : undefined,
    leftNanoUsd: num(r.leftNanoUsd),
    heldNanoUsd: num(r.heldNanoUsd),
    usedNanoUsd: num(r.usedNanoUsd),
    lastUsedAt: typeof r.lastUsedAt === 'string' ? r.lastUsedAt : undefined,
    rpmWindow: num(r.rpmWindow),
    rpmCount: num(r.rpmCount),
    inflight: num(r.inflight),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) (state as unknown as Record<string, unknown>)[k] = v;
  if (reset === 'daily' || reset === 'weekly' || reset === 'monthly') state.limitReset = reset;
  return state;
}

/**
 * The id of the limit window `now` falls in, in UTC: `2026-11-24` (daily), `2026-W48` (weekly, ISO 8601
 * week, Monday first), `2026-11` (monthly), `all` (a limit that never resets). Default `now`: the
 * billing clock (time/clock.ts), so the account API and the holds agree on the window.
 */
export function limitWindowId(reset: LimitReset | undefined, now: Date = new Date(billingNow())): string {
  return windowId(reset, now.getTime());
}

/**
 * The entry of a new key, or of a key whose limit starts afresh: with a limit, the window starts now
 * with the whole limit left (spend before the limit was set does not count against it).
 */
export function freshKeyState(
  status: KeyState['status'],
  limitNanoUsd: number | undefined,
  limitReset: LimitReset | undefined,
  now: Date = new Date(billingNow()),
): KeyState {
  const state: KeyState = { status, heldNanoUsd: 0, usedNanoUsd: 0 };
  if (limitNanoUsd !== undefined) {
    state.limitNanoUsd = limitNanoUsd;
    if (limitReset !== undefined) state.limitReset = limitReset;
    state.window = limitWindowId(limitReset, now);
    state.leftNanoUsd = limitNanoUsd;
  }
  return state;
}

/**
 * The entry a key has on a fund shard other than the root: its status, nothing held or used, and its
 * limit as a marker only (the hold moves a limited key's request to the root).
 */
export function shardKeyState(status: KeyState['status'], limitNanoUsd: number | undefined): KeyState {
  return { status, heldNanoUsd: 0, usedNanoUsd: 0, ...(limitNanoUsd === undefined ? {} : { limitNanoUsd }) };
}

/**
 * What is left of a key's limit now, nano-USD: the stored `leftNanoUsd` while its window is current;
 * in a window that has begun since (the next hold starts it afresh: billing/hold-plan.ts), the whole
 * limit less what is held.
 * @param state the root's entry (sums over shards for `heldNanoUsd` are fine: only the root's holds
 *   count against a limit, the others are zero for a limited key).
 * @returns undefined when the key has no limit.
 */
export function limitRemainingNanoUsd(state: KeyState | undefined, limitNanoUsd: number | undefined, now: Date = new Date(billingNow())): number | undefined {
  if (limitNanoUsd === undefined) return undefined;
  const held = state?.heldNanoUsd ?? 0;
  const current = state?.window !== undefined && state.window === limitWindowId(state.limitReset, now);
  const left = current && state?.leftNanoUsd !== undefined && state.limitNanoUsd === limitNanoUsd ? state.leftNanoUsd : limitNanoUsd - held;
  return Math.max(0, left);
}

// ---------------------------------------------------------------------------------------------------
/*
 * Accounts created before a map attribute existed (the per-key map `keys`, the BYOK map `byok`) lack
 * it, and DynamoDB refuses to SET `keys.<h16>` under a missing map ("The document path provided in the
 * update expression is invalid for update"). {@link withAccountMap} adds the empty map once
 * (conditional: never overwrites one) and retries.
 */

/** True when `err` says an update expression named a path under a missing map. */
export function isMissingDocumentPath(err: unknown): boolean {
  const text = (e: unknown): string => (e instanceof Error ? `${e.name} ${e.message}` : '');
  if (/document path provided in the update expression is invalid/i.test(text(err))) return true;
  // Inside a transaction the reason is per item: ValidationError with the same message.
  const reasons = (err as { CancellationReasons?: Array<{ Code?: string; Message?: string }> } | null)?.CancellationReasons;
  return (cancellationCodes(err)?.includes('ValidationError') ?? false) && (reasons ?? []).some((r) => /document path/i.test(r.Message ?? ''));
}

/**
 * Runs `op`; if it failed for want of the account's map attribute `mapName`, creates the empty map and
 * runs `op` again.
 * @throws whatever `op` throws otherwise; StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function withAccountMap<T>(accountId: string, mapName: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (!isMissingDocumentPath(err)) throw err;
  }
  try {
    await updateAccountItem(accountId, {
      UpdateExpression: 'SET #map = :empty',
      ConditionExpression: ACCOUNT_EXISTS_WITHOUT_MAP,
      ExpressionAttributeNames: { '#map': mapName },
      ExpressionAttributeValues: { ':empty': {} },
    });
  } catch (err) {
    // Someone else added it meanwhile (or the account is gone: `op` will say so).
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
  return op();
}

/** {@link withAccountMap} for the per-key map `keys`. */
export function withKeysMap<T>(accountId: string, op: () => Promise<T>): Promise<T> {
  return withAccountMap(accountId, KEYS_MAP, op);
}

// ---------------------------------------------------------------------------------------------------
/*
 * Key writes on a sharded account (DATA-MODEL §5): every fund shard item carries the key's entry, so a
 * key's create, status change, limit change and delete write the key row, the root's entry and each
 * other shard's entry in ONE TransactWriteItems (at most 2 + 31 items: billing/shards.ts MAX_SHARDS).
 * The root's part is guarded by {@link ACCOUNT_SHARDS_UNCHANGED}, so a write planned for S shards never
 * misses one added meanwhile.
 */

/** The account item (and ledger partition) of shard `k`. */
export function shardPk(accountId: string, k: number): string {
  return k === 0 ? accountId : `${accountId}#${k}`;
}

/** Every item of an account (shard 0 first), for readers that sum them. */
export function shardPks(accountId: string, shards: number): string[] {
  return Array.from({ length: Math.max(1, shards) }, (_, k) => shardPk(accountId, k));
}

/** What a key write needs to know of the account: whether it exists, and its fund shard count. */
export interface AccountShape {
  exists: boolean;
  /** ≥ 1. */
  shards: number;
}

/**
 * The account's shape (one strongly consistent, projected read of the root item).
 * @throws StoreUnavailableError (503).
 */
export async function readAccountShape(accountId: string): Promise<AccountShape> {
  const item = await readAccountItem(accountId, { projection: 'accountId, shards', consistent: true });
  const shards = typeof item?.shards === 'number' ? Math.max(1, Math.floor(item.shards)) : 1;
  return { exists: item !== undefined, shards };
}

/** The root's condition clause for {@link readAccountShape}'s count, and its value. */
export function shardsGuard(shape: AccountShape): { condition: string; values: { ':shards': number } } {
  return { condition: ACCOUNT_SHARDS_UNCHANGED, values: { ':shards': shape.shards } };
}

/** One change to the key's entry on the shards other than the root: SET and REMOVE clauses on `#keys.#h…`. */
export interface ShardEntryChange {
  set?: string[];
  remove?: string[];
  values?: Record<string, unknown>;
  /** Extra `#name` placeholders the clauses use (`#keys` and `#h` are given). */
  names?: Record<string, string>;
  /** The entry must exist (a change) or not (a create: `set` then puts the whole entry). */
  mustExist: boolean;
}

/** The Update items of shards 1..S−1 for one key entry change (none when the account has one shard). */
export function otherShardUpdates(accountId: string, keyHash: string, shape: AccountShape, change: ShardEntryChange): TransactItems {
  const set = change.set ?? [];
  const remove = change.remove ?? [];
  const expression = `${set.length > 0 ? `SET ${set.join(', ')}` : ''}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`.trim();
  return Array.from({ length: shape.shards - 1 }, (_, i) =>
    accountUpdateItem(shardPk(accountId, i + 1), {
      UpdateExpression: expression,
      ConditionExpression: change.mustExist ? KEY_STATE_EXISTS : SHARD_EXISTS,
      ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(keyHash), ...change.names },
      ...(change.values !== undefined && Object.keys(change.values).length > 0 ? { ExpressionAttributeValues: change.values } : {}),
    }),
  );
}

// ---------------------------------------------------------------------------------------------------
/*
 * Spend-limit windows of API keys (DATA-MODEL §2 `keys.<h16>.window`): `daily` resets at 00:00 UTC,
 * `weekly` on Monday 00:00 UTC, `monthly` on the 1st 00:00 UTC, none = one window forever (`all`).
 * Window ids of one kind sort in time order as strings (`2026-11-24`, `2026-W48`, `2026-11`), so a
 * condition `window < :current` rolls a window forward and never back.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The id of the window that contains `ms` (epoch ms) for a reset kind; `all` when it never resets. */
export function windowId(reset: LimitReset | undefined, ms: number): string {
  const d = new Date(ms);
  switch (reset) {
    case 'daily':
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    case 'monthly':
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
    case 'weekly': {
      const { year, week } = isoWeek(d);
      return `${year}-W${pad(week)}`;
    }
    default:
      return 'all';
  }
}

/** When the window that contains `ms` ends (epoch ms); undefined when it never resets. */
export function windowEnd(reset: LimitReset | undefined, ms: number): number | undefined {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (reset) {
    case 'daily':
      return Date.UTC(y, m, d.getUTCDate() + 1);
    case 'monthly':
      return Date.UTC(y, m + 1, 1);
    case 'weekly': {
      const daysSinceMonday = (d.getUTCDay() + 6) % 7;
      return Date.UTC(y, m, d.getUTCDate() - daysSinceMonday + 7);
    }
    default:
      return undefined;
  }
}

/** ISO 8601 week of a date (weeks start on Monday; week 1 holds the year's first Thursday). */
function isoWeek(d: Date): { year: number; week: number } {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = (t.getUTCDay() + 6) % 7; // Monday = 0
  t.setUTCDate(t.getUTCDate() - day + 3); // the Thursday of this week
  const firstThursday = new Date(Date.UTC(t.getUTCFullYear(), 0, 4));
  const week = 1 + Math.round(((t.getTime() - firstThursday.getTime()) / 86_400_000 - 3 + ((firstThursday.getUTCDay() + 6) % 7)) / 7);
  return { year: t.getUTCFullYear(), week };
}

// ---------------------------------------------------------------------------------------------------
/*
 * The one-time repair of a key's entry (`keys.<h16>`, DATA-MODEL §2) on an account item that lacks it:
 * keys created before per-key state existed, or a fund shard that missed it. The entry is made from the
 * key row (status, limit) in one transaction that checks the row is still so, so a key deleted or
 * changed meanwhile is never brought back or mis-stated.
 */

/** Positions of the items in the key-entry repair transaction (cancellation reasons come in this order). */
const ENTRY_ITEM = { keyRow: 0, accountEntry: 1 } as const;

/** The entry is added only where the item exists and the entry does not. */
const ENTRY_IS_MISSING = 'attribute_exists(accountId) AND attribute_exists(#keys) AND attribute_not_exists(#keys.#k)';

/**
 * Adds the entry of a live key to account item `pk` (fund shard `shard`) when it lacks it.
 * @returns true when the key row is active (the entry exists now), false when it is not (disabled,
 *   deleted, or another account's: a disabled key's entry is still added, as disabled).
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function repairKeyEntry(pk: string, keyHash: string, shard = 0): Promise<boolean> {
  const tables = tableNames();
  const out = await storeCall(() => documentClient().send(new GetCommand({ TableName: tables.keys, Key: { keyHash }, ConsistentRead: true })));
  const row = out.Item === undefined ? undefined : keyItemSchema.safeParse(out.Item).data;
  const owner = pk.split('#')[0];
  if (row === undefined || row.accountId !== owner || (row.status !== 'active' && row.status !== 'disabled')) return false;
  const status = row.status;
  const entry: KeyState =
    shard === 0 ? freshKeyState(status, row.limitNanoUsd ?? undefined, row.limitReset ?? undefined) : shardKeyState(status, row.limitNanoUsd ?? undefined);
  const h16 = keyStateId(keyHash);
  const rowUnchanged = {
    ConditionCheck: {
      TableName: tables.keys,
      Key: { keyHash },
      ConditionExpression: '#status = :status AND ' + (row.limitNanoUsd == null ? 'attribute_not_exists(limitNanoUsd)' : 'limitNanoUsd = :limit'),
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status, ...(row.limitNanoUsd == null ? {} : { ':limit': row.limitNanoUsd }) },
    },
  };
  const attempts: Array<{
    UpdateExpression: string;
    ConditionExpression: string;
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
  }> = [
    // The map exists: add the entry.
    {
      UpdateExpression: 'SET #keys.#k = :entry',
      ConditionExpression: ENTRY_IS_MISSING,
      ExpressionAttributeNames: { '#keys': 'keys', '#k': h16 },
      ExpressionAttributeValues: { ':entry': entry },
    },
    // No map yet: create it with the entry.
    {
      UpdateExpression: 'SET #map = :map',
      ConditionExpression: ACCOUNT_EXISTS_WITHOUT_MAP,
      ExpressionAttributeNames: { '#map': 'keys' },
      ExpressionAttributeValues: { ':map': { [h16]: entry } },
    },
  ];
  for (const a of attempts) {
    try {
      await transactWrite([rowUnchanged, accountUpdateItem(pk, a)]);
      return status === 'active';
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes?.[ENTRY_ITEM.keyRow] === 'ConditionalCheckFailed') return false; // the row changed meanwhile: read again next time
      if (codes?.[ENTRY_ITEM.accountEntry] !== 'ConditionalCheckFailed') throw err;
    }
  }
  return status === 'active'; // the entry exists now (added by a concurrent request)
}
