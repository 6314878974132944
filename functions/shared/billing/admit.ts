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
 *
 * Store outages — an accepted, bounded exception to "no upstream call without the store": a warm
 * container that has not yet seen DynamoDB fail still admits a key and account it has cached (key
 * cache and balance cache, each within its TTL) without any store call, so it cannot know the store
 * is gone. Bound: the requests one container admits from cache before its first failed store call.
 * In Lambda (one request per container at a time) that is ONE request per warm container — the one
 * in flight when DynamoDB went away, or the next one admitted after — because its settle is that
 * first failed call: the settle logs the entry at error level for replay (app/settle-request.ts) and
 * sets storeOutageSuspected() (so does a settle that has not answered within SETTLE_TIMEOUT_MS). From then on every admission reads the store first and answers 503
 * before any upstream call, until a store call succeeds again. (Locally, where one process serves
 * concurrent requests, the ones admitted in the meantime too.) Why accept it: distrusting the caches
 * would cost a DynamoDB read per request in normal operation, and the tokens it lets through are not
 * lost, only billed late, by replaying the logged entries.
 * Tested: test/integration/store-outage.test.ts.
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
