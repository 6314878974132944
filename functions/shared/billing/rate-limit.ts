/**
 * Rate-limit arithmetic and the 429 a client sees (OpenAI's shape, providers.md §1.5): type
 * `requests`, code `rate_limit_exceeded`, and the headers OpenAI sends — `x-ratelimit-limit-requests`,
 * `x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests` (a Go-style duration such as `1s`,
 * `6m0s`) — plus `retry-after` in whole seconds, which the official SDKs honour when retrying
 * (openai-node `retryRequest`: `retry-after-ms`, then `retry-after`, if under 60 s).
 */
import { GatewayError } from '../errors/gateway-errors';

/** One minute, ms: the request-rate window. */
export const MINUTE_MS = 60_000;

/** The rate-limit window containing `ms` (epoch minutes). */
export function epochMinute(ms: number): number {
  return Math.floor(ms / MINUTE_MS);
}

/**
 * A duration as OpenAI writes it in `x-ratelimit-reset-*`: `850ms`, `1s`, `17.5s`, `6m0s`.
 */
export function formatResetDuration(ms: number): string {
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
