/**
 * The per-key state kept on the account item, `keys.<h16>` (DATA-MODEL §2): written with the key row in
 * ONE TransactWriteItems (key-store.ts, key-update.ts, key-delete.ts), so the single conditional write
 * of a request's hold (billing/hold-write.ts) sees a disable, delete or limit change at once in every
 * container. Billing's own fields (held, in flight, rate-limit counters, usage) are only ever moved
 * relatively by the key writes, never reset. Money in nano-USD.
 *
 * Fund shards (DATA-MODEL §5): every shard item of the account carries the key's entry. The root
 * (shard 0) carries the spend limit's arithmetic (`window`, `leftNanoUsd`); the other shards carry the
 * status, their own held/in-flight/rate/usage counters, and `limitNanoUsd` as a marker only (a limited
 * key is served by shard 0: billing/shards.ts `pickShard`, billing/hold.ts).
 */
import { now as billingNow } from '../time/clock';
import { windowId } from './key-window';
import type { KeyStatus, LimitReset } from './key-item';

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
  const fields = { limitNanoUsd: num(r.limitNanoUsd), window: typeof r.window === 'string' ? r.window : undefined, leftNanoUsd: num(r.leftNanoUsd), heldNanoUsd: num(r.heldNanoUsd), usedNanoUsd: num(r.usedNanoUsd), lastUsedAt: typeof r.lastUsedAt === 'string' ? r.lastUsedAt : undefined, rpmWindow: num(r.rpmWindow), rpmCount: num(r.rpmCount), inflight: num(r.inflight) };
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
export function freshKeyState(status: KeyState['status'], limitNanoUsd: number | undefined, limitReset: LimitReset | undefined, now: Date = new Date(billingNow())): KeyState {
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
