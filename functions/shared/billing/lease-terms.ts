/**
 * What one credit lease takes (lease.ts, docs/credit-leases.md "Rate limits"): a slice of the credit,
 * and — when the account's tier has rate limits (config/env.ts `rateLimitsFor`) — request-rate units of
 * the current minute and concurrency slots, granted by the same conditional write (hold-plan.ts
 * `grant`: the counters move by n instead of 1, never past their limit). A pure function of the
 * account's state, so who leases is unit-tested.
 */
import type { ShardState } from './account-state';
import { rateLimitsFor, type Config } from '../config/env';
import type { HoldDemand, RateGrant } from './hold-plan';
import { keyAllowance } from './hold-plan';
import { computeCharge } from '../money/price';
import { epochMinute, formatResetDuration, MINUTE_MS } from './rate-limit';

/** A slice must cover at least this many of the request's most (else the account leases per request). */
const MIN_REQUESTS_PER_LEASE = 8;

/** What a lease asks for: nano-USD of credit, and up to `rpm` units / `slots` slots (0: that limit is off). */
export interface LeaseTerms extends RateGrant {
  nanoUsd: number;
}

/** The request's most, nano-USD, with no free tokens (a lease is credit only). */
export function requestCost(demand: HoldDemand): number {
  return computeCharge({ promptTokens: demand.promptTokens, completionTokens: demand.outputTokens, freeTokensAvailable: 0, inputPrice: demand.inputPrice, outputPrice: demand.outputPrice }).costNanoUsd;
}

/**
 * The lease this instance would take from an account item, or undefined when the account leases per
 * request: leases off, free tokens, fund shards, an inactive key, a slice smaller than
 * {@link MIN_REQUESTS_PER_LEASE} of the request's most, or a rate limit with nothing left (the
 * per-request hold then answers the 429 from the store's own counters).
 *
 * - credit: CREDIT_LEASE_SHARE_PERCENT of what the account (or the key's spend limit) has;
 * - request rate: the same share of the units left in the current minute (at least 1);
 * - concurrency: as many slots as this instance has requests of the account and key in flight or
 *   waiting (`demand`), plus half again (at least 1: a per-invocation Lambda container, which serves
 *   one request at a time, takes 1), never more than are left.
 * @param demand requests of this account and key in flight or waiting in this instance, the asking one included.
 * @param now epoch ms (billing clock).
 */
export function leaseTerms(state: ShardState, h16: string, costNanoUsd: number, cfg: Config, now: number, demand = 1): LeaseTerms | undefined {
  if (cfg.CREDIT_LEASE_VALIDITY_MS <= 0 || !state.exists || state.shards > 1 || state.freeTokens > 0) return undefined;
  const key = state.keys?.[h16];
  if (key === undefined || key.status !== 'active') return undefined;
  const share = cfg.CREDIT_LEASE_SHARE_PERCENT / 100;
  const available = Math.min(state.creditNanoUsd, keyAllowance(key, now));
  const nanoUsd = Math.floor(available * share);
  if (nanoUsd < MIN_REQUESTS_PER_LEASE * Math.max(1, costNanoUsd)) return undefined;
  const limits = rateLimitsFor(state.purchasedNanoUsd, cfg);
  let rpm = 0;
  if (limits.rpm > 0) {
    const minute = epochMinute(now);
    const used = Math.max(state.rpmWindow === minute ? (state.rpmCount ?? 0) : 0, key.rpmWindow === minute ? (key.rpmCount ?? 0) : 0);
    const left = limits.rpm - used;
    if (left < 1) return undefined;
    rpm = Math.max(1, Math.ceil(left * share));
  }
  let slots = 0;
  if (limits.concurrent > 0) {
    const left = limits.concurrent - Math.max(state.inflight ?? 0, key.inflight ?? 0);
    if (left < 1) return undefined;
    slots = Math.min(left, Math.max(1, demand + Math.floor(demand / 2)));
  }
  return { nanoUsd, rpm, slots };
}

/**
 * OpenAI's request-rate headers of a request admitted against a lease: the lease's write counted
 * `rpmUnits` for the minute and answered the counters (remaining `afterGrant`); each admission spends
 * one, so `remaining = afterGrant + rpmLeft` (exact while this instance is the only one spending the minute).
 * @param nowMs epoch ms (billing clock).
 */
export function leasedRateHeaders(limit: number, afterGrant: number, rpmLeft: number, window: number, nowMs: number): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(Math.max(0, afterGrant + rpmLeft)),
    'x-ratelimit-reset-requests': formatResetDuration((window + 1) * MINUTE_MS - nowMs),
  };
}
