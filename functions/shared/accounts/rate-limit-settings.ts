/**
 * The rate limits in force, as the account API and `GET /v1/key` report them (DATA-MODEL §6; issue 10
 * enforces them inside each request's hold). Read from the environment through zod on first use:
 * `RATE_LIMIT_RPM`, `RATE_LIMIT_CONCURRENT` (paid accounts) and `RATE_LIMIT_FREE_RPM`,
 * `RATE_LIMIT_FREE_CONCURRENT` (accounts that never bought credit); 0 or unset = no limit.
 */
import * as z from 'zod';

/** Limits of one tier; null = no limit. */
export interface RateLimits {
  /** Requests per minute. */
  requestsPerMinute: number | null;
  /** Requests in flight at once. */
  concurrentRequests: number | null;
}

const count = z.preprocess((v) => (v === undefined || v === '' ? 0 : Number(v)), z.number().int().nonnegative());
const schema = z.object({ RATE_LIMIT_RPM: count, RATE_LIMIT_CONCURRENT: count, RATE_LIMIT_FREE_RPM: count, RATE_LIMIT_FREE_CONCURRENT: count });

/**
 * The limits of the paid or the free tier.
 * @throws Error naming the variable when one is not a non-negative integer.
 */
export function rateLimitsFor(freeTier: boolean, env: NodeJS.ProcessEnv = process.env): RateLimits {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw new Error(`Invalid rate limit setting ${String(parsed.error.issues[0]?.path[0] ?? '')}: must be a non-negative integer.`);
  const e = parsed.data;
  const orNull = (n: number) => (n === 0 ? null : n);
  return freeTier
    ? { requestsPerMinute: orNull(e.RATE_LIMIT_FREE_RPM), concurrentRequests: orNull(e.RATE_LIMIT_FREE_CONCURRENT) }
    : { requestsPerMinute: orNull(e.RATE_LIMIT_RPM), concurrentRequests: orNull(e.RATE_LIMIT_CONCURRENT) };
}
