import type { CatalogueTarget } from '../catalogue/catalogue';

/**
 * Time limits of an upstream attempt (ms): defaults, overridden per provider (registry) and per
 * catalogue target (`timeouts` in the data), in that order. Every limit is also clipped to the
 * request's deadline, which sits under the Lambda function's own timeout.
 */
export interface Timeouts {
  /** TCP + TLS connect. */
  connectMs: number;
  /** Request sent → response headers. Buffered calls: the whole generation happens before headers. */
  headersMs: number;
  /** Streams: headers → first content chunk (reasoning models think before their first token). */
  firstTokenMs: number;
  /** Longest silence between two chunks of a body. */
  idleMs: number;
}

export type TimeoutOverrides = Partial<Record<'stream' | 'buffered', Partial<Timeouts>>>;

/** Defaults for every provider. */
export const DEFAULT_TIMEOUTS: Record<'stream' | 'buffered', Timeouts> = {
  stream: { connectMs: 3_000, headersMs: 30_000, firstTokenMs: 60_000, idleMs: 30_000 },
  buffered: { connectMs: 3_000, headersMs: 240_000, firstTokenMs: 240_000, idleMs: 30_000 },
};

/** Resolves the limits of one attempt. */
export function timeoutsFor(mode: 'stream' | 'buffered', provider: TimeoutOverrides | undefined, target: CatalogueTarget): Timeouts {
  return { ...DEFAULT_TIMEOUTS[mode], ...provider?.[mode], ...target.timeouts?.[mode] };
}
