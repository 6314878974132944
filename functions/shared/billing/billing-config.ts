/**
 * Billing and rate-limit settings, read once (on first use) from the environment through zod, each
 * with its default. A malformed value fails with an error naming the variable.
 *
 * Rate limits (0 = off), per account AND per key, enforced inside the hold's conditional write
 * (billing/hold.ts): requests per minute (a fixed window: the epoch minute) and concurrent requests
 * (requests in flight, released by settle). Free-tier accounts (nothing ever purchased) get the
 * stricter `RATE_LIMIT_FREE_*`; 20 requests per minute is OpenRouter's limit for free usage (peers.md A,
 * "Rate limiting"). Paid defaults: 600 requests per minute (10 per second) and 50 in flight, so one tenant
 * cannot take more than a small share of the account's 1,000 concurrent Lambda executions (peers.md C).
 */
import * as z from 'zod';

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
}

/** Defaults of {@link BillingConfig}. */
export const BILLING_DEFAULTS: Readonly<BillingConfig> = {
  rpm: 600,
  concurrent: 50,
  freeRpm: 20,
  freeConcurrent: 5,
  sweepGraceMs: 120_000,
  viewTtlMs: 5_000,
};

const ENV: Record<keyof BillingConfig, string> = {
  rpm: 'RATE_LIMIT_RPM',
  concurrent: 'RATE_LIMIT_CONCURRENT',
  freeRpm: 'RATE_LIMIT_FREE_RPM',
  freeConcurrent: 'RATE_LIMIT_FREE_CONCURRENT',
  sweepGraceMs: 'HOLD_SWEEP_GRACE_MS',
  viewTtlMs: 'ACCOUNT_CACHE_TTL_MS',
};

const count = z.coerce.number().int().nonnegative();

let cached: BillingConfig | undefined;

/**
 * The settings from `env` (default `process.env`), parsed once per container.
 * @throws Error naming the variable when one is set but not a non-negative integer.
 */
export function billingConfig(env: NodeJS.ProcessEnv = process.env): BillingConfig {
  if (cached !== undefined && env === process.env) return cached;
  const out = { ...BILLING_DEFAULTS };
  for (const key of Object.keys(ENV) as Array<keyof BillingConfig>) {
    const raw = env[ENV[key]];
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = count.safeParse(raw);
    if (!parsed.success) throw new Error(`${ENV[key]} must be a non-negative integer, got "${raw}".`);
    out[key] = parsed.data;
  }
  if (env === process.env) cached = out;
  return out;
}

/** Forgets the parsed settings so the next call re-reads the environment (tests). */
export function resetBillingConfig(): void {
  cached = undefined;
}
