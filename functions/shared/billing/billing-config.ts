/**
 * Billing and rate-limit settings, from the container's config (config/env.ts: zod, parsed once, each
 * with its default). A malformed value fails with an error naming the variable.
 *
 * Rate limits (0 = off), per account AND per key, enforced inside the hold's conditional write
 * (billing/hold.ts): requests per minute (a fixed window: the epoch minute) and concurrent requests
 * (requests in flight, released by settle). Free-tier accounts (nothing ever purchased) get the
 * stricter `RATE_LIMIT_FREE_*`; 20 requests per minute is OpenRouter's limit for free usage (peers.md A,
 * "Rate limiting"). Paid defaults: 600 requests per minute (10 per second) and 50 in flight, so one tenant
 * cannot take more than a small share of the account's 1,000 concurrent Lambda executions (peers.md C).
 */
import { config, loadConfig, resetConfigForTests, type Config } from '../config/env';

/** The settings, all integers. */
export interface BillingConfig {
  /** Paid accounts: requests per minute per account and per key; 0 = off. */
  rpm: number;
  /** Paid accounts: concurrent requests per account and per key; 0 = off. */
  concurrent: number;
  /** Free-tier accounts (purchasedNanoUsd = 0): requests per minute; 0 = off. */
  freeRpm: number;
  /** Free-tier accounts: concurrent requests; 0 = off. */
  freeConcurrent: number;
  /** How long after its expiry an unsettled hold is settled as orphaned by the sweep (ms). */
  sweepGraceMs: number;
  /** How long a container trusts its view of an account to start the upstream call beside the hold (ms). */
  viewTtlMs: number;
  /** Credit leases: how long a lease admits requests (ms); 0 = leases off (lease.ts). */
  leaseValidityMs: number;
  /** Share of the available credit (or key allowance) one lease takes (percent). */
  leaseSharePercent: number;
  /** How long an unused lease is kept before it is returned (ms). */
  leaseIdleMs: number;
}

/** Defaults of {@link BillingConfig}. */
export const BILLING_DEFAULTS: Readonly<BillingConfig> = {
  rpm: 600,
  concurrent: 50,
  freeRpm: 20,
  freeConcurrent: 5,
  sweepGraceMs: 120_000,
  viewTtlMs: 5_000,
  leaseValidityMs: 0,
  leaseSharePercent: 10,
  leaseIdleMs: 2_000,
};

/**
 * The settings from `env`: `process.env` through the container's config (config/env.ts, parsed once),
 * any other object parsed as given (tests).
 * @throws ConfigError naming the variable when one is set but not a non-negative integer.
 */
export function billingConfig(env: NodeJS.ProcessEnv = process.env): BillingConfig {
  const c = env === process.env ? config() : loadConfig(env);
  let out = derived.get(c);
  if (out === undefined) derived.set(c, (out = fromConfig(c)));
  return out;
}

/** One BillingConfig per parsed config: the hold reads it several times per request. */
const derived = new WeakMap<Config, BillingConfig>();

function fromConfig(c: Config): BillingConfig {
  return {
    rpm: c.RATE_LIMIT_RPM,
    concurrent: c.RATE_LIMIT_CONCURRENT,
    freeRpm: c.RATE_LIMIT_FREE_RPM,
    freeConcurrent: c.RATE_LIMIT_FREE_CONCURRENT,
    sweepGraceMs: c.HOLD_SWEEP_GRACE_MS,
    viewTtlMs: c.ACCOUNT_CACHE_TTL_MS,
    leaseValidityMs: c.CREDIT_LEASE_VALIDITY_MS,
    leaseSharePercent: c.CREDIT_LEASE_SHARE_PERCENT,
    leaseIdleMs: c.CREDIT_LEASE_IDLE_MS,
  };
}

/** Forgets the parsed settings so the next call re-reads the environment (tests). */
export function resetBillingConfig(): void {
  resetConfigForTests();
}
