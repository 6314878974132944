import { GatewayError, InvalidRequestError, UpstreamUnavailableError } from '../errors/gateway-errors';
import { UpstreamAttemptError, type AdapterContext, type UpstreamFailure } from '../providers/types';
import { transportFailure } from '../providers/upstream-failure';
import type { Attempt } from './attempt-plan';
import type { CircuitBreaker, FailureOrigin } from './circuit-breaker';
import type { RetryTuning } from './retry-policy';
import type { TargetHealth } from './target-health';
import type { AttemptLimits, Timeouts } from './timeouts';
import { AttemptAbortedError } from './upstream-call';

/**
 * The contract between the attempt loop (attempt-loop.ts) and the runners that make one attempt
 * (fallback-router.ts): what an attempt is given, what it comes to ({@link AttemptOutcome}), what a
 * plan comes to ({@link PlanOutcome}), the options of a routed call — and THE place failures are
 * classified: whatever an attempt threw becomes an outcome here ({@link attemptOutcome}), and a plan
 * that ran out becomes its client's error here ({@link exhausted}). The loop decides on these
 * values, never on the type of a thrown error; an exception is thrown only at the router's boundary
 * (fallback-router.ts `route*`), where the plan's error becomes the HTTP answer.
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

/** What a runner returns for a target that cannot serve this kind of request (no record, no breaker verdict). */
export const SKIP: unique symbol = Symbol('skip');

/**
 * Runs one attempt to its result, or {@link SKIP}. It may throw (the adapters and the HTTP call report
 * failures as UpstreamAttemptError / AttemptAbortedError, our own bugs as {@link OwnFailure}): the loop
 * turns that into an {@link AttemptOutcome} with {@link attemptOutcome}.
 */
export type AttemptRunner<T> = (attempt: Attempt, ctx: AdapterContext, run: AttemptRun) => Promise<T | typeof SKIP>;

/** What one attempt came to. */
export type AttemptOutcome<T> =
  | { kind: 'answered'; value: T }
  /** The target cannot serve this kind of request: the next one is tried, nothing is recorded. */
  | { kind: 'skipped' }
  /** Our own code failed (a bug): the request fails alone with a 500 ({@link OwnFailure}). */
  | { kind: 'own-failure'; error: unknown }
  /**
   * The upstream failed, or refused the request as the client's fault (`failure.clientError`): the
   * loop retries, falls back or ends by the failure's kind.
   */
  | { kind: 'failed'; failure: UpstreamFailure };

/** What a plan came to: an answer, or the error its client gets (its own 4xx, 499, 500, 502/503/504). */
export type PlanOutcome<T> = ({ ok: true; result: T; health: TargetHealth } & RoutedBase) | { ok: false; error: GatewayError };

/** What the loop needs to know per attempt, besides running it. */
export interface PlanHooks {
  /** The attempt's time limits, before they are clipped to the deadline. */
  timeouts(attempt: Attempt): Timeouts;
  /** ms from its start after which a first-token-less attempt gets a parallel one; undefined: never. */
  hedgeAfterMs?(attempt: Attempt): number | undefined;
  /** An attempt stopped because the other one won. */
  onHedgeLost?(attempt: Attempt): void;
  /** Called for each failed attempt that does not end the request (for logs). */
  onFailure?(attempt: Attempt, failure: UpstreamFailure): void;
  /** Report success to the breaker at once (buffered answers) rather than through `health` (streams). */
  successOnResolve: boolean;
}

/**
 * Our own code failed while building or reading an attempt (a bug, a request our serialisation could
 * not handle): the request fails alone with a 500 — never a retry, a fallback or a breaker tick, which
 * would let one tenant's request reroute everyone's traffic (tenants are isolated).
 */
export class OwnFailure extends Error {
  constructor(readonly original: unknown) {
    super('internal failure while preparing or reading an upstream attempt', { cause: original });
  }
}

/**
 * Runs our own code for an attempt (building the upstream request, parsing its answer); anything
 * thrown that is not a GatewayError (the client's 400) or an UpstreamAttemptError (the upstream's
 * fault) is a bug of ours and becomes {@link OwnFailure}.
 */
export function ours<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof GatewayError || err instanceof UpstreamAttemptError) throw err;
    throw new OwnFailure(err);
  }
}

/** The outcome of an attempt that threw `err` (the one classification of attempt failures). */
export function attemptOutcome(err: unknown): AttemptOutcome<never> {
  if (err instanceof OwnFailure) return { kind: 'own-failure', error: err.original };
  return { kind: 'failed', failure: toFailure(err) };
}

/**
 * The verdict on anything an attempt threw: the adapter's (UpstreamAttemptError), our timers' or the
 * network's (AttemptAbortedError: `timeout` when one of our limits fired, else `connection`), the
 * client's (a GatewayError, e.g. a 400 the adapter raised: kind `client`), else a transport failure.
 */
export function toFailure(err: unknown): UpstreamFailure {
  if (err instanceof UpstreamAttemptError) return err.failure;
  if (err instanceof AttemptAbortedError) return transportFailure(err.cause ?? err, err.timedOut);
  if (err instanceof GatewayError) return { kind: 'client', retryable: false, status: err.status, message: err.message, clientError: err };
  return transportFailure(err, false);
}

/** The client went away: nothing more to try, and nobody to answer. */
export function clientGone(): GatewayError {
  return new GatewayError(499, 'invalid_request_error', 'The client closed the request.', { code: 'client_closed_request' });
}

/** OpenAI's error code for a prompt over the model's context window (Chat Completions API errors). */
const CONTEXT_LENGTH_EXCEEDED = 'context_length_exceeded';

/**
 * Every attempt failed: 504 when they all timed out (or the deadline came), 503 when upstreams were
 * overloaded, rate limited or unreachable, 502 when an upstream answered badly.
 *
 * A prompt too long for a target is the client's to fix: when any attempt failed on the context
 * length (and the deadline did not cut the plan short), the answer is OpenAI's own 400
 * `context_length_exceeded` on `messages` — retrying the same prompt cannot help — even if a
 * larger-window equivalent failed for another reason meanwhile.
 * @param all every attempt's record (`hedge-lost` ones are ignored).
 * @param largestTooSmallWindow the largest context window (tokens) that refused the prompt, 0 if none.
 */
export function exhausted(all: readonly AttemptRecord[], deadlineReached: boolean, largestTooSmallWindow = 0): GatewayError {
  // An attempt stopped because a parallel one answered first says nothing about why the plan failed.
  const records = all.filter((r) => r.outcome !== 'hedge-lost');
  const tried =
    records
      .map((r) => r.publicModel)
      .filter((m, i, a) => a.indexOf(m) === i)
      .join(', ') || 'the model';
  if (!deadlineReached && records.some((r) => r.outcome === 'context-length')) {
    const window = largestTooSmallWindow > 0 ? ` (the largest context window tried holds ${largestTooSmallWindow} tokens)` : '';
    return new InvalidRequestError(
      `The messages are too long for every model that could serve this request: ${tried}${window}. Please reduce the length of the messages.`,
      { param: 'messages', code: CONTEXT_LENGTH_EXCEEDED },
    );
  }
  if (deadlineReached || (records.length > 0 && records.every((r) => r.outcome === 'timeout'))) {
    return new UpstreamUnavailableError(504, `Every upstream for ${tried} timed out. Please retry.`);
  }
  // Unavailable: nobody could take the request now (5xx, overload, rate limit, network, timeout).
  // Anything else (a malformed 200, a retired model, our key refused) is a bad answer: 502.
  const unavailable = (r: AttemptRecord): boolean =>
    r.outcome === 'rate-limit' ||
    r.outcome === 'overloaded' ||
    r.outcome === 'connection' ||
    r.outcome === 'timeout' ||
    (r.outcome === 'server' && r.status >= 500);
  if (records.every(unavailable)) {
    return new UpstreamUnavailableError(503, `Every upstream for ${tried} is unavailable or overloaded right now. Please retry.`, {
      headers: { 'retry-after': '1' },
    });
  }
  return new UpstreamUnavailableError(502, `No upstream for ${tried} returned a usable answer. Please retry.`);
}
