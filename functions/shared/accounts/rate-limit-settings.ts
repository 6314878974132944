/**
 * The rate limits in force, as the account API (`GET /v1/account`) and `GET /v1/key` report them
 * (DATA-MODEL §6). ONE source: billing's settings (billing/billing-config.ts — `RATE_LIMIT_RPM`,
 * `RATE_LIMIT_CONCURRENT` for paid accounts, `RATE_LIMIT_FREE_RPM`, `RATE_LIMIT_FREE_CONCURRENT` for
 * accounts that never bought credit; defaults 600/50 and 20/5), which the holds enforce per account and
 * per key (billing/hold.ts). 0 (off) is shown as null.
 */
import { billingConfig } from '../billing/billing-config';
import { rateLimitsFor as enforcedLimits } from '../billing/rate-limit';

/** Limits of one tier; null = no limit. */
export interface RateLimits {
  /** Requests per minute. */
  requestsPerMinute: number | null;
  /** Requests in flight at once. */
  concurrentRequests: number | null;
}

/**
 * The limits of the paid or the free tier, as enforced.
 * @throws Error naming the variable when one is not a non-negative integer (billing-config.ts).
 */
export function rateLimitsFor(freeTier: boolean, env: NodeJS.ProcessEnv = process.env): RateLimits {
  const limits = enforcedLimits(freeTier ? 0 : 1, billingConfig(env));
  const orNull = (n: number) => (n === 0 ? null : n);
  return { requestsPerMinute: orNull(limits.rpm), concurrentRequests: orNull(limits.concurrent) };
}
