/**
 * The pre-flight check before any upstream call: does the account have anything left to spend?
 *
 * Overdraft bound: admission checks the balance, not the price of a request whose size is unknown
 * until it ends, so credit can go negative by at most the cost of requests already admitted and in
 * flight; the first admit after the balance is seen at or below zero refuses. The cached balance may
 * lag other containers' spending by up to ACCOUNT_CACHE_TTL_MS (default 5 s).
 */
import { AuthenticationError, InsufficientCreditError } from '../openai/errors';
import { storeOutageSuspected } from '../store/store-errors';
import { cachedBalance, readBalance, type CachedBalance } from './balance-cache';

const hasFunds = (b: CachedBalance) => b.freeTokens > 0 || b.creditNanoUsd > 0;

/**
 * Resolves when the account may start a request (free tokens > 0 or credit > 0). A warm container
 * answers from its balance cache. It refuses only on a balance as read from the store: a balance it
 * lowered itself after settles is re-read (strongly consistent) first. A top-up is therefore seen at
 * once after local spending, else within ACCOUNT_CACHE_TTL_MS. After a store outage the cache is
 * bypassed until a store call succeeds again.
 * @throws InsufficientCreditError (402, `insufficient_quota`) when freeTokens ≤ 0 and credit ≤ 0;
 *         AuthenticationError (401) when the account no longer exists;
 *         UpstreamUnavailableError (503) when DynamoDB is unavailable.
 */
export async function admit(accountId: string): Promise<void> {
  // After a store outage (e.g. a settle that failed), prove the store is back before admitting more
  // work: the read either succeeds (and clears the suspicion) or fails with 503, before any upstream call.
  let balance = storeOutageSuspected() ? undefined : cachedBalance(accountId);
  if (balance && hasFunds(balance)) return;
  if (!balance || !balance.freeTokensExact || !balance.creditExact) {
    balance = await readBalance(accountId, { consistent: balance !== undefined });
  }
  if (!balance) throw new AuthenticationError('The account this API key belongs to no longer exists.', 'invalid_api_key');
  if (!hasFunds(balance)) throw new InsufficientCreditError();
}
