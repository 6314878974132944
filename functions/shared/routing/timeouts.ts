import * as z from 'zod';
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
  /**
   * Longest silence between two chunks of a body. Streams: from the first token on; before it the
   * silence may last up to firstTokenMs when that is longer (chat-router.ts).
   */
  idleMs: number;
}

export type TimeoutOverrides = Partial<Record<'stream' | 'buffered', Partial<Timeouts>>>;

/** Built-in defaults for every provider. */
export const BUILT_IN_TIMEOUTS: Record<'stream' | 'buffered', Timeouts> = {
  stream: { connectMs: 3_000, headersMs: 30_000, firstTokenMs: 60_000, idleMs: 30_000 },
  buffered: { connectMs: 3_000, headersMs: 240_000, firstTokenMs: 240_000, idleMs: 30_000 },
};

const ms = z.number().int().positive();
const partialTimeouts = z.strictObject({ connectMs: ms, headersMs: ms, firstTokenMs: ms, idleMs: ms }).partial();
const overridesSchema = z.strictObject({ stream: partialTimeouts.optional(), buffered: partialTimeouts.optional() });

/**
 * The operator's defaults: `UPSTREAM_TIMEOUTS_MS`, JSON like `{"stream":{"idleMs":20000}}`, replaces
 * the built-in defaults field by field (provider and target overrides still apply on top).
 * @throws Error at load when the variable is not valid JSON of that shape.
 */
export function defaultTimeouts(env: string | undefined = process.env.UPSTREAM_TIMEOUTS_MS): Record<'stream' | 'buffered', Timeouts> {
  if (env === undefined || env === '') return BUILT_IN_TIMEOUTS;
  const o = overridesSchema.parse(JSON.parse(env));
  return { stream: { ...BUILT_IN_TIMEOUTS.stream, ...o.stream }, buffered: { ...BUILT_IN_TIMEOUTS.buffered, ...o.buffered } };
}

/** This container's defaults (read once at load). */
export const DEFAULT_TIMEOUTS = defaultTimeouts();

/** Resolves the limits of one attempt. */
export function timeoutsFor(mode: 'stream' | 'buffered', provider: TimeoutOverrides | undefined, target: CatalogueTarget): Timeouts {
  return { ...DEFAULT_TIMEOUTS[mode], ...provider?.[mode], ...target.timeouts?.[mode] };
}
