/**
 * The per-key state kept on the account item, `keys.<h16>` (DATA-MODEL §2): written with the key row in
 * ONE TransactWriteItems (key-store.ts, key-update.ts, key-delete.ts), so the single conditional write
 * of a request's hold (billing, issue 10) sees a disable, delete or limit change at once in every
 * container. Money in nano-USD.
 */
import type { KeyStatus, LimitReset } from './key-item';

/** The map attribute on the account item. */
export const KEYS_MAP = 'keys';

/** The key of a key's entry in the account's `keys` map: the first 16 hex characters of its hash. */
export function keyStateId(keyHash: string): string {
  return keyHash.slice(0, 16);
}

/** One key's entry (fields beyond these — holds, rate limits, lastUsedAt — belong to billing). */
export interface KeyState {
  status: Exclude<KeyStatus, 'deleted'>;
  /** Spend limit per window, nano-USD; absent = no limit. */
  limitNanoUsd?: number;
  limitReset?: LimitReset;
  /** Id of the current limit window (see {@link limitWindowId}); present with a limit. */
  window?: string;
  /** Limit left in the window, nano-USD (limit − settled − held in it); present with a limit. */
  leftNanoUsd?: number;
  /** Held by the key's requests in flight, nano-USD. */
  heldNanoUsd?: number;
  /** Lifetime spend of the key, nano-USD (ADDed by each settle). */
  usedNanoUsd?: number;
  /** ISO 8601 of the last settled request. */
  lastUsedAt?: string;
}

/**
 * The id of the limit window `now` falls in, in UTC: `2026-11-24` (daily), `2026-W48` (weekly, ISO 8601
 * week, Monday first), `2026-11` (monthly), `all` (a limit that never resets).
 */
export function limitWindowId(reset: LimitReset | undefined, now: Date = new Date()): string {
  const iso = now.toISOString();
  switch (reset) {
    case 'daily':
      return iso.slice(0, 10);
    case 'monthly':
      return iso.slice(0, 7);
    case 'weekly': {
      // ISO week: the week's Thursday decides its year (ISO 8601 §3.2.2).
      const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const weekday = day.getUTCDay() || 7;
      day.setUTCDate(day.getUTCDate() + 4 - weekday);
      const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
      const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
      return `${day.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
    }
    case undefined:
      return 'all';
    default:
      return 'all';
  }
}

/**
 * The entry of a new key, or of a key whose limit starts afresh: with a limit, the window starts now
 * with the whole limit left (spend before the limit was set does not count against it).
 */
export function freshKeyState(status: KeyState['status'], limitNanoUsd: number | undefined, limitReset: LimitReset | undefined, now = new Date()): KeyState {
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
 * What is left of a key's limit now, nano-USD: the stored `leftNanoUsd` while its window is current;
 * in a window that has begun since (the hold starts it afresh), the whole limit less what is held.
 * @returns undefined when the key has no limit.
 */
export function limitRemainingNanoUsd(state: KeyState | undefined, limitNanoUsd: number | undefined, now = new Date()): number | undefined {
  if (limitNanoUsd === undefined) return undefined;
  const held = state?.heldNanoUsd ?? 0;
  const current = state?.window === limitWindowId(state?.limitReset, now);
  const left = current && state?.leftNanoUsd !== undefined ? state.leftNanoUsd : limitNanoUsd - held;
  return Math.max(0, left);
}

