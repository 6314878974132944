/** The keys table's item shape (pk `keyHash`; GSI `byAccount` on accountId + createdAt), DATA-MODEL §3. */
import * as z from '../../validation/zod';

/**
 * Status of a key. `disabled` keys stay listed and may be enabled again; `deleted` keys stay in the
 * table for the record but are never listed or accepted. Rows written before the account API say
 * `revoked`: read as `deleted`.
 */
export type KeyStatus = 'active' | 'disabled' | 'deleted';

/** How often a key's spend limit starts afresh (UTC): midnight, Monday 00:00, the 1st 00:00. */
export const LIMIT_RESETS = ['daily', 'weekly', 'monthly'] as const;

/** One of {@link LIMIT_RESETS}. */
export type LimitReset = (typeof LIMIT_RESETS)[number];

/** Parses a stored key item; tolerant of extra attributes. The key itself is never stored. */
export const keyItemSchema = z.object({
  /** SHA-256 hex of the full key. */
  keyHash: z.string(),
  accountId: z.string(),
  name: z.string(),
  /** `sk-mux-` + first 4 secret characters + `…`. */
  hint: z.string(),
  status: z.pipe(
    z.enum(['active', 'disabled', 'deleted', 'revoked']),
    z.transform((s): KeyStatus => (s === 'revoked' ? 'deleted' : s)),
  ),
  /** ISO 8601. */
  createdAt: z.string(),
  /** ISO 8601 of the last change (name, status, limit); absent on rows older than the account API. */
  updatedAt: z.nullish(z.string()),
  /** ISO 8601, deleted keys only (`revokedAt` on older rows). */
  deletedAt: z.nullish(z.string()),
  revokedAt: z.nullish(z.string()),
  /** Spend limit per window, nano-USD; absent = no limit. */
  limitNanoUsd: z.nullish(z.number().check(z.int(), z.nonnegative())),
  limitReset: z.nullish(z.enum(LIMIT_RESETS)),
});

/** A stored key record. */
export type KeyItem = z.infer<typeof keyItemSchema>;

/** Characters of the key hash shown in the admin CLI's listings: enough to name a key, useless to an attacker. */
export const KEY_HASH_PREFIX_LENGTH = 12;

/** A key as the admin CLI lists it: never the key, only a prefix of its hash. */
export interface KeyInfo {
  /** First {@link KEY_HASH_PREFIX_LENGTH} hex characters of the key's SHA-256. */
  keyHashPrefix: string;
  name: string;
  hint: string;
  status: KeyStatus;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, deleted keys only. */
  deletedAt?: string;
}

/** The admin listing view of a stored key. */
export function toKeyInfo(k: KeyItem): KeyInfo {
  const deletedAt = k.deletedAt ?? k.revokedAt;
  return {
    keyHashPrefix: k.keyHash.slice(0, KEY_HASH_PREFIX_LENGTH),
    name: k.name,
    hint: k.hint,
    status: k.status,
    createdAt: k.createdAt,
    ...(deletedAt ? { deletedAt } : {}),
  };
}
