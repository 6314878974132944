/** The keys table's item shape (pk `keyHash`; GSI `byAccount` on accountId + createdAt). */
import * as z from 'zod';

/**
 * Status of a key (DATA-MODEL §3): `disabled` keys can be enabled again; `deleted` (and `revoked`, its
 * older name, read as deleted) keys stay in the table for the record but never authenticate.
 */
export type KeyStatus = 'active' | 'disabled' | 'deleted' | 'revoked';

/** Parses a stored key item; tolerant of extra attributes. The key itself is never stored. */
export const keyItemSchema = z.object({
  /** SHA-256 hex of the full key. */
  keyHash: z.string(),
  accountId: z.string(),
  name: z.string(),
  /** `sk-mux-` + first 4 secret characters + `…`. */
  hint: z.string(),
  status: z.enum(['active', 'disabled', 'deleted', 'revoked']),
  /** ISO 8601. */
  createdAt: z.string(),
  revokedAt: z.string().nullish(),
  /** Spend limit per window, nano-USD; absent = none. */
  limitNanoUsd: z.number().int().nonnegative().optional(),
  limitReset: z.enum(['daily', 'weekly', 'monthly']).optional(),
});

/** A stored key record. */
export type KeyItem = z.infer<typeof keyItemSchema>;

/** Characters of the key hash shown in listings: enough to name a key, useless to an attacker. */
export const KEY_HASH_PREFIX_LENGTH = 12;

/** A key as listed: never the key, only a prefix of its hash. */
export interface KeyInfo {
  /** First {@link KEY_HASH_PREFIX_LENGTH} hex characters of the key's SHA-256. */
  keyHashPrefix: string;
  name: string;
  hint: string;
  status: KeyStatus;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, revoked keys only. */
  revokedAt?: string;
}

/** The listing view of a stored key. */
export function toKeyInfo(k: KeyItem): KeyInfo {
  return {
    keyHashPrefix: k.keyHash.slice(0, KEY_HASH_PREFIX_LENGTH),
    name: k.name,
    hint: k.hint,
    status: k.status,
    createdAt: k.createdAt,
    ...(k.revokedAt ? { revokedAt: k.revokedAt } : {}),
  };
}
