/**
 * OpenAI's request-rate headers on every answer that took a hold (providers.md §1.5):
 * `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`
 * (a Go-style duration, rate-limit.ts `formatResetDuration`), read from the hold's own write: the hold
 * asks DynamoDB for the counters it updated (`ReturnValues: UPDATED_NEW`, no extra read and no extra
 * capacity: UpdateItem's consumed capacity does not depend on ReturnValues), so the numbers are the
 * store's, not this container's guess. No headers when the request-rate limit is off (0).
 */
import type { HoldSpec } from './hold-plan';
import { keyEntryId } from './hold-record';
import { formatResetDuration, MINUTE_MS } from './rate-limit';

/** The headers of one hold. */
export type RateHeaders = Record<'x-ratelimit-limit-requests' | 'x-ratelimit-remaining-requests' | 'x-ratelimit-reset-requests', string>;

/**
 * The headers of a written hold: the tighter of the account's and the key's request counters in the
 * current minute (both count against the same limit).
 * @param updated the hold write's `Attributes` (UPDATED_NEW): `rpmCount`, `keys.<h16>.rpmCount`.
 * @param limit requests per minute the hold was planned under (0: off).
 * @param now epoch ms.
 */
export function rateHeadersOf(updated: Record<string, unknown> | undefined, spec: HoldSpec, keyHash: string, limit: number, now: number): RateHeaders | undefined {
  const branch = spec.accountRpm.kind !== 'off' ? spec.accountRpm : spec.keyRpm;
  if (branch.kind === 'off' || limit <= 0) return undefined;
  const accountCount = numberOr(updated?.rpmCount, 1);
  const keys = updated?.keys as Record<string, { rpmCount?: unknown } | undefined> | undefined;
  const keyCount = numberOr(keys?.[keyEntryId(keyHash)]?.rpmCount, 1);
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(Math.max(0, limit - Math.max(accountCount, keyCount))),
    'x-ratelimit-reset-requests': formatResetDuration((branch.window + 1) * MINUTE_MS - now),
  };
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}
