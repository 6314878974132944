/**
 * `KeyRecord`: one API key as the account API shows it (OpenRouter's key shape, plus ours; DATA-MODEL
 * §7). Never contains the key itself; `hash` (SHA-256 hex of the key) is its id.
 */
import type { KeyItem } from '../accounts/keys/api-key-item';
import { limitRemainingNanoUsd, type KeyState } from '../accounts/keys/key-account-entry';
import { usd } from './json';

/** The JSON shape. Money: USD numbers with the exact nano-USD integers beside them. */
export interface KeyRecord {
  hash: string;
  name: string;
  /** Display hint, e.g. `sk-mux-AbCd…`. */
  label: string;
  disabled: boolean;
  /** Spend limit per window, USD; null = none. */
  limit: number | null;
  limit_nano_usd: number | null;
  /** What is left of the limit in the current window (never below 0); null = no limit. */
  limit_remaining: number | null;
  limit_remaining_nano_usd: number | null;
  limit_reset: 'daily' | 'weekly' | 'monthly' | null;
  /** Lifetime spend of the key, USD. */
  usage: number;
  usage_nano_usd: number;
  /** ISO 8601. */
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

/** The record of a stored key and its `keys.<h16>` entry. */
export function toKeyRecord(item: KeyItem, state: KeyState | undefined): KeyRecord {
  const limit = item.limitNanoUsd ?? undefined;
  const remaining = limitRemainingNanoUsd(state, limit);
  const used = state?.usedNanoUsd ?? 0;
  return {
    hash: item.keyHash,
    name: item.name,
    label: item.hint,
    disabled: item.status === 'disabled',
    limit: limit === undefined ? null : usd(limit),
    limit_nano_usd: limit ?? null,
    limit_remaining: remaining === undefined ? null : usd(remaining),
    limit_remaining_nano_usd: remaining ?? null,
    limit_reset: limit === undefined ? null : (item.limitReset ?? null),
    usage: usd(used),
    usage_nano_usd: used,
    created_at: item.createdAt,
    updated_at: item.updatedAt ?? item.createdAt,
    last_used_at: state?.lastUsedAt ?? null,
  };
}
