import { GatewayError } from '../errors/gateway-errors';
import { UpstreamAttemptError, type AdapterContext, type UpstreamFailure } from '../providers/types';
import type { Attempt } from './attempt-plan';
import type { CircuitBreaker, FailureOrigin } from './circuit-breaker';
import type { RetryTuning } from './retry-policy';
import type { AttemptLimits, Timeouts } from './timeouts';

/**
 * The contract between the attempt loop (attempt-loop.ts) and the runners that make one attempt
 * (fallback-router.ts): what an attempt is given, what it reports, the options of a routed call, and
 * how our own failures are told apart from the upstream's.
 */

/** What happened to one attempt (for headers, logs and the ledger's fallback path). */
export interface AttemptRecord {
  publicModel: string;
  provider: string;
  upstreamModel: string;
  /** `ok`, the failure kind, or `hedge-lost` (stopped by us because a parallel attempt answered first). */
  outcome: 'ok' | 'hedge-lost' | UpstreamFailure['kind'];
  status: number;
  ms: number;
  /** Epoch ms the attempt started (for the overhead metric: our time is what lies outside attempts). */
  startedAt?: number;
  /** The answering attempt: ms from its start to its first token (generation lookup, latency sort). */
  firstTokenMs?: number;
}

export interface RoutedBase {
  /** The attempt that answered. */
  attempt: Attempt;
  /** Every attempt, in order of their end, the answering one last. */
  attempts: AttemptRecord[];
}

/** Options of one routed call. */
export interface RouteOptions {
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Epoch ms after which no attempt may run (under the function's own timeout). */
  deadline?: number;
  /** Our request id, on every log line the routing writes. */
  requestId?: string;
  /** How often the same target is tried again (routing/retry-policy.ts); default DEFAULT_RETRY. */
  retry?: RetryTuning;
  breaker?: CircuitBreaker;
  /** Who sent the request (its account and raw body): the breaker counts content-caused failures for that account only. */
  origin?: FailureOrigin;
  /**
   * Chat: the output tokens the request's hold covers, over every choice (usage/output-meter.ts). An
   * answer is cut there (`finish_reason: "length"`) and its upstream request stopped. Absent: no cut.
   */
  outputBudget?: number;
}

/** What the loop gives one attempt. */
export interface AttemptRun {
  limits: AttemptLimits;
  /** Aborted when the client leaves or the loop stops this attempt (a lost hedge race). */
  signal: AbortSignal;
  /** The attempt has its first token: it wins any race. Resolving implies it. */
  started(): void;
}

/** Runs one attempt to its result; throws on failure ({@link SkipTarget}: not for this target). */
export type AttemptRunner<T> = (attempt: Attempt, ctx: AdapterContext, run: AttemptRun) => Promise<T>;

/** What the loop needs to know per attempt, besides running it. */
export interface PlanHooks {
  /** The attempt's time limits, before they are clipped to the deadline. */
  timeouts(attempt: Attempt): Timeouts;
  /** ms from its start after which a first-token-less attempt gets a parallel one; undefined: never. */
  hedgeAfterMs?(attempt: Attempt): number | undefined;
  /** An attempt stopped because the other one won. */
  onHedgeLost?(attempt: Attempt): void;
  /** Turns whatever an attempt threw into a verdict. */
  toFailure(err: unknown): UpstreamFailure;
  /** Called for each failed attempt that does not end the request (for logs). */
  onFailure?(attempt: Attempt, failure: UpstreamFailure): void;
  /** The error for a plan that ran out (deadline reached or not). */
  exhausted(records: readonly AttemptRecord[], deadlineReached: boolean, largestTooSmallWindow: number): GatewayError;
  /** Report success to the breaker at once (buffered answers) rather than through `health` (streams). */
  successOnResolve: boolean;
}

/** Thrown by a runner for a target that cannot serve this kind of request (no record, no breaker verdict). */
export class SkipTarget extends Error {}

/**
 * Our own code failed while building or reading an attempt (a bug, a request our serialisation could
 * not handle): the request fails alone with a 500 — never a retry, a fallback or a breaker tick, which
 * would let one tenant's request reroute everyone's traffic (issue 10, tenant isolation).
 */
export class OwnFailure extends Error {
  constructor(readonly original: unknown) {
    super('internal failure while preparing or reading an upstream attempt', { cause: original });
  }
}

/**
 * Runs our own code for an attempt (building the upstream request, parsing its answer); anything
 * thrown that is not a GatewayError (the client's 400), an UpstreamAttemptError (the upstream's fault)
 * or a SkipTarget becomes {@link OwnFailure}.
 */
export function ours<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof GatewayError || err instanceof UpstreamAttemptError || err instanceof SkipTarget) throw err;
    throw new OwnFailure(err);
  }
}
