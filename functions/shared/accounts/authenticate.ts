/**
 * API key → account, with a per-container cache so a warm Lambda answers without reading DynamoDB.
 *
 * Revocation latency: a revoked key keeps authenticating in a warm container that cached it for at
 * most `KEY_CACHE_TTL_MS` (default 30 s) after its last DynamoDB read; the container that revokes
 * forgets it at once. Unknown or revoked keys are cached for at most 5 s, in a separate, smaller cache
 * so a flood of bad keys cannot evict good ones.
 */
import { GetCommand } from '../store/dynamo-commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { config } from '../config/env';
import { TtlCache } from '../store/ttl-cache';
import { now } from '../time/clock';
import { hashApiKey, incorrectApiKeyError, isWellFormedApiKey } from './api-key';
import { keyItemSchema } from './keys/api-key-item';

/** Who a valid key belongs to. */
export interface AuthenticatedKey {
  accountId: string;
  /** SHA-256 hex of the key (the key itself is not kept). */
  keyHash: string;
}

/** Longest lifetime of a cached unknown/revoked key, ms (never longer than KEY_CACHE_TTL_MS). */
const NEGATIVE_KEY_CACHE_TTL_MS = 5_000;

/**
 * Bounded so a container serving many keys keeps memory flat (~200 bytes an entry). Each entry lives
 * for `KEY_CACHE_TTL_MS` (config/env.ts), read when it is stored; the cache's own default stores nothing.
 * Both caches age on the billing clock (time/clock.ts), so a test moves it past a TTL instead of waiting.
 */
const validKeys = new TtlCache<string, AuthenticatedKey>({ ttlMs: 0, maxEntries: 1_000, now });
const invalidKeys = new TtlCache<string, true>({ ttlMs: NEGATIVE_KEY_CACHE_TTL_MS, maxEntries: 100, now });

/**
 * The account a key belongs to. Reads the key row (strongly consistent, so a key works the moment it
 * is created) unless this container verified it within the cache TTL. Only `active` keys pass: a
 * disabled or deleted key is refused like an unknown one.
 * @param dashboard the dashboard URL the 401 message points to.
 * @throws AuthenticationError (401, `invalid_api_key`) for a malformed, unknown or revoked key;
 *         StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function authenticate(apiKey: string, dashboard?: string): Promise<AuthenticatedKey> {
  if (!isWellFormedApiKey(apiKey)) throw incorrectApiKeyError(apiKey, dashboard);
  const keyHash = hashApiKey(apiKey);
  const cached = validKeys.get(keyHash);
  if (cached) return cached;
  if (invalidKeys.get(keyHash)) throw incorrectApiKeyError(apiKey, dashboard);

  const out = await storeCall(() => documentClient().send(new GetCommand({ TableName: tableNames().keys, Key: { keyHash }, ConsistentRead: true })));
  const item = out.Item ? keyItemSchema.parse(out.Item) : undefined;
  const ttlMs = config().KEY_CACHE_TTL_MS;
  if (!item || item.status !== 'active') {
    invalidKeys.set(keyHash, true, Math.min(NEGATIVE_KEY_CACHE_TTL_MS, ttlMs));
    throw incorrectApiKeyError(apiKey, dashboard);
  }
  const result: AuthenticatedKey = { accountId: item.accountId, keyHash };
  validKeys.set(keyHash, result, ttlMs);
  return result;
}

/** Drops one key from this container's caches (after it is revoked here). */
export function forgetCachedKey(keyHash: string): void {
  validKeys.delete(keyHash);
  invalidKeys.delete(keyHash);
}

/** Empties this container's key caches (tests). */
export function clearKeyCache(): void {
  validKeys.clear();
  invalidKeys.clear();
}
