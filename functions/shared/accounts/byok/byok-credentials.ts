/**
 * The request path's view of an account's own provider keys: read from the account item (projected to
 * the `byok` map, cached per container for `BYOK_CACHE_TTL_MS`, default 5 s, so a key attached or
 * removed in the dashboard is used or dropped everywhere within that time) and decrypted in memory
 * for this request only. Plaintext keys are never cached, logged or returned.
 */
import { ConfigUnavailableError } from '../../errors/gateway-errors';
import { logger } from '../../observability/logger';
import type { ProviderName } from '../../providers/manifest';
import { byokProviderNames } from '../../providers/manifest';
import { config } from '../../config/env';
import { TtlCache } from '../../store/ttl-cache';
import { readByokEntries, type ByokEntry } from './byok-store';
import { byokContext, open } from './envelope';

/** One decrypted user key, for one request. */
export interface ByokKey {
  provider: ProviderName;
  /** The plaintext key: pass to the upstream, never log. */
  apiKey: string;
  last4: string;
  allowFallback: boolean;
}

/** An account's usable keys for one request. */
export interface AccountByok {
  accountId: string;
  /** Where the user manages them (for the error naming a refused key). */
  dashboard: string;
  keys: ReadonlyMap<ProviderName, ByokKey>;
}

/** Each account's entries live for `BYOK_CACHE_TTL_MS` (config/env.ts), read when they are stored. */
const entries = new TtlCache<string, Record<string, ByokEntry>>({ ttlMs: 0, maxEntries: 1_000 });

/**
 * The account's own keys for the providers that allow them, decrypted; undefined when it has none.
 * @throws ConfigUnavailableError (503) when the store, or the key-encryption service, is unavailable.
 */
export async function loadAccountByok(accountId: string, dashboard: string): Promise<AccountByok | undefined> {
  let stored = entries.get(accountId);
  if (stored === undefined) {
    stored = await readByokEntries(accountId, { consistent: false });
    entries.set(accountId, stored, config().BYOK_CACHE_TTL_MS);
  }
  const keys = new Map<ProviderName, ByokKey>();
  for (const provider of byokProviderNames()) {
    const entry = stored[provider];
    if (entry === undefined) continue;
    try {
      const apiKey = await open(entry, byokContext(accountId, provider));
      keys.set(provider, { provider, apiKey, last4: entry.last4, allowFallback: entry.allowFallback });
    } catch (err) {
      logger.error('an attached provider key could not be decrypted', { accountId, provider, error: err as Error });
      throw new ConfigUnavailableError(`Your attached ${provider} key cannot be read right now. Please retry.`, { cause: err });
    }
  }
  return keys.size === 0 ? undefined : { accountId, dashboard, keys };
}

/** Forgets one account's cached map (after a change in this container). */
export function forgetCachedByok(accountId: string): void {
  entries.delete(accountId);
}

/** Empties the cache (tests). */
export function clearByokCache(): void {
  entries.clear();
}
