/**
 * Rate limits (per account item and per key: a fixed epoch-minute window of requests, and requests in
 * flight): their arithmetic, the 429 a client sees, and the headers of every answer that took a hold.
 *
 * The 429 is OpenAI's (providers.md §1.5): type `requests`, code `rate_limit_exceeded`, and the headers
 * OpenAI sends — `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests`,
 * `x-ratelimit-reset-requests` (a Go-style duration such as `1s`, `6m0s`) — plus `retry-after` in whole
 * seconds, which the official SDKs honour when retrying (openai-node `retryRequest`: `retry-after-ms`,
 * then `retry-after`, if under 60 s).
 *
 * The same `x-ratelimit-*-requests` headers go on every answer that took a hold, read from the hold's
 * own write: the hold asks DynamoDB for the counters it updated (`ReturnValues: UPDATED_NEW`, no extra
 * read and no extra capacity: UpdateItem's consumed capacity does not depend on ReturnValues), so the
 * numbers are the store's, not this container's guess. No headers when the request-rate limit is off (0).
 */
import { GatewayError } from '../errors/gateway-errors';
import { keyEntryId } from './hold-record';

/** One minute, ms: the request-rate window. */
export const MINUTE_MS = 60_000;

/** The rate-limit window containing `ms` (epoch minutes). */
export function epochMinute(ms: number): number {
  return Math.floor(ms / MINUTE_MS);
}

/**
 * A duration as OpenAI writes it in `x-ratelimit-reset-*`: `850ms`, `1s`, `17.5s`, `6m0s`.
 */
function formatResetDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1_000) return `${whole}ms`;
  if (whole < MINUTE_MS) return `${Number((whole / 1_000).toFixed(3))}s`;
  const minutes = Math.floor(whole / MINUTE_MS);
  const seconds = Number(((whole % MINUTE_MS) / 1_000).toFixed(3));
  return `${minutes}m${seconds}s`;
}

/** What a 429 says: which limit, whose (account or key), and when to come back. */
export interface RateLimitRefusal {
  scope: 'account' | 'key';
  kind: 'rpm' | 'concurrent';
  limit: number;
  /** ms until a retry may succeed. */
  resetMs: number;
}

/**
 * 429 `rate_limit_exceeded`, with OpenAI's headers. For the per-minute limit the reset is the end of
 * the current minute; for concurrency, one second (a slot frees when any request in flight ends).
 */
export class RateLimitError extends GatewayError {
  override name = 'RateLimitError';
  constructor(r: RateLimitRefusal) {
    const whose = r.scope === 'key' ? 'this API key' : 'your account';
    const what = r.kind === 'rpm' ? `requests per minute (RPM): Limit ${r.limit}` : `concurrent requests: Limit ${r.limit}`;
    const wait = formatResetDuration(r.resetMs);
    super(429, 'requests', `Rate limit reached for ${whose} on ${what}. Please try again in ${wait}.`, {
      code: 'rate_limit_exceeded',
      headers: {
        'retry-after': String(Math.max(1, Math.ceil(r.resetMs / 1_000))),
        'x-ratelimit-limit-requests': String(r.limit),
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': wait,
      },
    });
  }
}

/**
 * How a per-minute counter is written: same window (+units), a new window (reset to units), or not at
 * all. `units` is 1 for a request, a lease's grant for a lease (lease.ts).
 */
export type RpmBranch = { kind: 'off' } | { kind: 'same'; window: number; limit: number; units: number } | { kind: 'new'; window: number; units: number };

/** The headers of one hold. */
export type RateHeaders = Record<'x-ratelimit-limit-requests' | 'x-ratelimit-remaining-requests' | 'x-ratelimit-reset-requests', string>;

/**
 * The headers of a written hold: the tighter of the account's and the key's request counters in the
 * current minute (both count against the same limit).
 * @param updated the hold write's `Attributes` (UPDATED_NEW): `rpmCount`, `keys.<h16>.rpmCount`.
 * @param limit requests per minute the hold was planned under (0: off).
 * @param now epoch ms.
 */
export function rateHeadersOf(
  updated: Record<string, unknown> | undefined,
  spec: { accountRpm: RpmBranch; keyRpm: RpmBranch },
  keyHash: string,
  limit: number,
  now: number,
): RateHeaders | undefined {
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
