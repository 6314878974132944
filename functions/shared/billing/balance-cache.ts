/**
 * Per-container view of account balances, so the warm request path does no read: `admit` reads it,
 * `settle` updates it locally after each debit. Entries live `ACCOUNT_CACHE_TTL_MS` (default 5 s) from
 * their last store read; local debits never extend that life.
 *
 * Local arithmetic can drift low (a credit top-up elsewhere, or a debit that committed just before a
 * read being subtracted again), never high except by other containers' spending. So each value carries
 * `…Exact` ("as read from the store, nothing subtracted since"), and a decision that a low value would
 * make wrongly (refusing a request, charging credit where free tokens may remain) re-reads first.
 */
import { getAccount } from '../accounts/account-store';
import { envMs, TtlCache } from '../store/ttl-cache';

/** A cached balance. Tokens and nano-USD as on the account item. */
export interface CachedBalance {
  freeTokens: number;
  creditNanoUsd: number;
  /** freeTokens is a store read with no local debit since (it may only be stale-high). */
  freeTokensExact: boolean;
  /** creditNanoUsd is a store read with no local debit since. */
  creditExact: boolean;
}

/** Environment variable: balance cache lifetime, ms (default {@link DEFAULT_ACCOUNT_CACHE_TTL_MS}; 0 disables). */
export const ACCOUNT_CACHE_TTL_ENV = 'ACCOUNT_CACHE_TTL_MS';
/** Default balance cache lifetime, ms. */
export const DEFAULT_ACCOUNT_CACHE_TTL_MS = 5_000;

const balances = new TtlCache<string, CachedBalance>({ ttlMs: DEFAULT_ACCOUNT_CACHE_TTL_MS, maxEntries: 1_000 });

/** The live cached balance, or `undefined`. */
export function cachedBalance(accountId: string): CachedBalance | undefined {
  return balances.get(accountId);
}

/**
 * Reads the account from the store (strongly consistent when asked) and caches its balance.
 * `undefined` when the account does not exist.
 * @throws UpstreamUnavailableError (503) when DynamoDB is unavailable.
 */
export async function readBalance(accountId: string, opts: { consistent: boolean }): Promise<CachedBalance | undefined> {
  const account = await getAccount(accountId, { consistent: opts.consistent });
  if (!account) {
    balances.delete(accountId);
    return undefined;
  }
  const balance: CachedBalance = {
    freeTokens: account.freeTokens,
    creditNanoUsd: account.creditNanoUsd,
    freeTokensExact: true,
    creditExact: true,
  };
  balances.set(accountId, balance, envMs(ACCOUNT_CACHE_TTL_ENV, DEFAULT_ACCOUNT_CACHE_TTL_MS));
  return balance;
}

/** Applies a committed debit to the cached balance (if any) without extending its life. */
export function applyDebit(accountId: string, debit: { freeTokensUsed: number; costNanoUsd: number }): void {
  balances.update(accountId, (b) => ({
    freeTokens: b.freeTokens - debit.freeTokensUsed,
    creditNanoUsd: b.creditNanoUsd - debit.costNanoUsd,
    freeTokensExact: b.freeTokensExact && debit.freeTokensUsed === 0,
    creditExact: b.creditExact && debit.costNanoUsd === 0,
  }));
}

/** Empties this container's balance cache (tests). */
export function clearBalanceCache(): void {
  balances.clear();
}
