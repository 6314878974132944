/**
 * The money and rate-limit state of one account item (a fund shard, DATA-MODEL §2 and §5) as billing
 * reads it, and this container's view of it: the last state read (a GetItem or a failed condition's
 * ALL_OLD), updated locally by this container's own holds and settles. The view only predicts: every
 * hold is a conditional write, so a stale view costs one failed attempt, never a wrong balance.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '../store/commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { TtlCache } from '../store/ttl-cache';
import { keyStateOf, type KeyState as KeyEntry } from '../accounts/key-state';
import { decodeInlineHold, HOLDS_MAP, slotsOf } from './hold-record';
import { balanceWatchOf, type BalanceWatch } from './balance-settings';

/** Per-key state on the account item (`keys.<h16>`, accounts/key-state.ts), as billing reads it. Money in nano-USD. */
export type KeyState = KeyEntry & { heldNanoUsd: number };

/** One account item's billing state. Tokens and nano-USD. */
export interface ShardState {
  /** False when the item does not exist (the account is gone). */
  exists: boolean;
  freeTokens: number;
  creditNanoUsd: number;
  heldNanoUsd: number;
  /** Of `heldNanoUsd`, what credit leases hold (lease.ts): leased, not yet known to be spent. */
  leasedNanoUsd?: number;
  purchasedNanoUsd: number;
  /** Fund shards of the account (root item only; absent = 1). */
  shards: number;
  /** Live keys of the account (root item only). */
  keyCount?: number;
  rpmWindow?: number;
  rpmCount?: number;
  inflight?: number;
  /** Undefined on an item written before per-key state existed. */
  keys: Record<string, KeyState> | undefined;
  /** Holds in flight on the item that took a concurrency slot (hold-plan.ts frees the expired ones' slots). */
  slotHolds?: SlotHold[];
  /** Auto top-up, low-balance and spend-limit alert state (root item; balance-settings.ts). */
  watch?: BalanceWatch;
}

/** A hold in flight that took a concurrency slot: its request id, expiry (epoch ms) and which slots. */
export interface SlotHold {
  requestId: string;
  expiresAt: number;
  accountSlot: boolean;
  /** The key entry (`h16`) whose slot it took, if it took one. */
  keySlot: string | undefined;
  /** Slots it took on each (a lease's grant; else 1). */
  slots: number;
}

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const opt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Reads a stored (unmarshalled) account item; `undefined` = no item. */
export function shardStateOf(item: Record<string, unknown> | undefined): ShardState {
  if (item === undefined) return { exists: false, freeTokens: 0, creditNanoUsd: 0, heldNanoUsd: 0, purchasedNanoUsd: 0, shards: 1, keys: undefined };
  const keysRaw = item.keys;
  let keys: Record<string, KeyState> | undefined;
  if (typeof keysRaw === 'object' && keysRaw !== null) {
    keys = {};
    for (const [h16, raw] of Object.entries(keysRaw as Record<string, unknown>)) {
      const entry = keyStateOf(raw);
      keys[h16] = { ...entry, heldNanoUsd: entry.heldNanoUsd ?? 0 };
    }
  }
  return {
    exists: true,
    freeTokens: num(item.freeTokens),
    creditNanoUsd: num(item.creditNanoUsd),
    heldNanoUsd: num(item.heldNanoUsd),
    leasedNanoUsd: opt(item.leasedNanoUsd),
    purchasedNanoUsd: num(item.purchasedNanoUsd),
    shards: Math.max(1, Math.floor(num(item.shards, 1))),
    keyCount: opt(item.keyCount),
    rpmWindow: opt(item.rpmWindow),
    rpmCount: opt(item.rpmCount),
    inflight: opt(item.inflight),
    keys,
    slotHolds: slotHoldsOf(item[HOLDS_MAP]),
    watch: balanceWatchOf(item),
  };
}

function slotHoldsOf(holds: unknown): SlotHold[] {
  if (typeof holds !== 'object' || holds === null) return [];
  const out: SlotHold[] = [];
  for (const [requestId, value] of Object.entries(holds as Record<string, unknown>)) {
    const h = decodeInlineHold('', requestId, value);
    if (h !== undefined && (h.accountSlot || h.keySlot)) out.push({ requestId, expiresAt: h.holdExpiresAt, accountSlot: h.accountSlot, keySlot: h.keySlot ? h.h16 : undefined, slots: slotsOf(h) });
  }
  return out;
}

/** A raw ALL_OLD item from a cancelled transaction (marshalled; lib-dynamodb leaves it so). */
export function unmarshallItem(item: unknown): Record<string, unknown> | undefined {
  if (typeof item !== 'object' || item === null || Object.keys(item).length === 0) return undefined;
  return unmarshall(item as Record<string, AttributeValue>);
}

/** A view entry: the state and when it was read (epoch ms). */
interface ViewEntry {
  state: ShardState;
  readAt: number;
}

/** Up to 1,000 account items per container (~1 KB each). */
const views = new TtlCache<string, ViewEntry>({ ttlMs: 10 * 60_000, maxEntries: 1_000 });

/** The view of an account item (pk), with its age; undefined when this container has none. */
export function viewOf(pk: string): ViewEntry | undefined {
  return views.get(pk);
}

/** Remembers `state` as read from the store now. */
export function rememberState(pk: string, state: ShardState): void {
  views.set(pk, { state, readAt: Date.now() });
}

/** Applies a committed change to the view without making it younger. */
export function updateView(pk: string, change: (s: ShardState) => void): void {
  views.update(pk, (v) => {
    change(v.state);
    return v;
  });
}

/** Forgets every view (tests). */
export function clearViews(): void {
  views.clear();
}

/**
 * Reads an account item (eventually consistent unless asked: the hold's condition is the check, the
 * read only predicts) and remembers it.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function readState(pk: string, opts: { consistent?: boolean } = {}): Promise<ShardState> {
  const out = await storeCall(() =>
    documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId: pk }, ConsistentRead: opts.consistent ?? false })),
  );
  const state = shardStateOf(out.Item);
  if (state.exists) rememberState(pk, state);
  return state;
}
