import { GatewayError } from '../openai/errors';
import type { AdapterContext, UpstreamFailure } from '../providers/types';
import type { Attempt } from './attempt-plan';
import { breaker as defaultBreaker, type CircuitBreaker } from './circuit-breaker';
import { DEFAULT_RETRY, retryDelay, sleep, type RetryPolicy } from './retry-policy';
import { healthOf, type TargetHealth } from './target-health';
import type { Timeouts } from './timeouts';

/**
 * The bounded attempt loop shared by every routed call (DESIGN.md: routing never names a provider):
 * targets in plan order; per target up to `maxRetriesPerTarget` retries with jittered backoff or the
 * upstream's retry-after; targets whose breaker is open are skipped (all are tried, fail open, when
 * every one is open); a context-length failure only moves on to larger windows; a client error from
 * the requested model's own targets is returned at once, one from another model only rules that
 * target out.
 *
 * Hedging (opt-in per model, catalogue `hedge`): while a single attempt is in flight and has produced
 * no first token after its `hedgeAfterMs`, the next target of the plan starts beside it. The first to
 * report its first token (`started`) wins; the other is aborted, recorded as `hedge-lost` (its prompt
 * is the operator's cost: `onHedgeLost`), gives its breaker permit back — being stopped by us says
 * nothing about its health — and goes back to the front of the plan, in case the winner fails later
 * (a buffered answer can still fail over after its first token). At most two attempts run at once.
 * When one of two fails, the other goes on alone, without a retry of the failed one.
 *
 * Breaker: each target is asked `allow()` only when the loop reaches it, and every allowed attempt
 * reports success, failure or release exactly once, so a half-open probe is never left hanging.
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
  retry?: RetryPolicy;
  breaker?: CircuitBreaker;
}

/** An attempt's limits (ms): its timeouts clipped to the deadline, and `totalMs`, what is left of the budget. */
export type AttemptLimits = Timeouts & { totalMs: number };

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

interface Flight<T> {
  attempt: Attempt;
  retry: number;
  controller: AbortController;
  begunAt: number;
  started: boolean;
  hedged: boolean;
  outcome?: { ok: true; value: T } | { ok: false; error: unknown };
}

/**
 * Runs `plan` until one attempt succeeds.
 * @returns the answering attempt, every attempt's record, the runner's result, and the answering
 *   target's breaker verdict handle (already reported when `successOnResolve`).
 * @throws GatewayError — the client's own error, 499 when the client left, or `hooks.exhausted(...)`.
 */
export async function runPlan<T>(plan: readonly Attempt[], opts: RouteOptions, hooks: PlanHooks, run: AttemptRunner<T>): Promise<RoutedBase & { result: T; health: TargetHealth }> {
  const brk = opts.breaker ?? defaultBreaker;
  const policy = opts.retry ?? DEFAULT_RETRY;
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  const requested = plan[0]?.publicModel;
  const failOpen = plan.every((a) => brk.isOpen(a.target.key));
  const records: AttemptRecord[] = [];
  const queue = [...plan];
  const flights = new Set<Flight<T>>();
  let tooSmallWindow = 0;
  let wake: (() => void) | undefined;

  const nextAttempt = (): Attempt | undefined => {
    while (queue.length > 0) {
      const a = queue.shift() as Attempt;
      if (a.target.contextWindow <= tooSmallWindow) continue;
      if (!failOpen && !brk.allow(a.target.key)) continue;
      return a;
    }
    return undefined;
  };

  /** Stops a flight that will not answer: no record unless it lost a race; its breaker permit back. */
  const drop = (f: Flight<T>, lost: boolean): void => {
    flights.delete(f);
    f.controller.abort();
    brk.release(f.attempt.target.key);
    if (!lost) return;
    records.push(record(f.attempt, 'hedge-lost', 0, f.begunAt));
    queue.unshift(f.attempt);
    hooks.onHedgeLost?.(f.attempt);
  };

  const onStarted = (f: Flight<T>): void => {
    if (f.started || !flights.has(f)) return;
    f.started = true;
    for (const other of [...flights]) if (other !== f) drop(other, true);
  };

  const launch = (attempt: Attempt, retry: number): void => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      brk.release(attempt.target.key);
      throw hooks.exhausted(records, true, tooSmallWindow);
    }
    const controller = new AbortController();
    // Never removed: a stream that has started keeps listening for the client after the loop ends.
    if (opts.signal.aborted) controller.abort();
    else opts.signal.addEventListener('abort', () => controller.abort(), { once: true });
    const f: Flight<T> = { attempt, retry, controller, begunAt: Date.now(), started: false, hedged: false };
    flights.add(f);
    const ctx: AdapterContext = { target: attempt.target, endpoint: attempt.endpoint };
    const limits = clip(hooks.timeouts(attempt), remaining);
    const settle = (outcome: NonNullable<Flight<T>['outcome']>): void => {
      f.outcome = outcome;
      if (flights.has(f)) wake?.();
    };
    run(attempt, ctx, { limits, signal: controller.signal, started: () => onStarted(f) }).then(
      (value) => settle({ ok: true, value }),
      (error: unknown) => settle({ ok: false, error }),
    );
  };

  /** When the single flight in the air gets a parallel one (epoch ms), if ever. */
  const hedgeAt = (): { flight: Flight<T>; at: number } | undefined => {
    if (flights.size !== 1 || hooks.hedgeAfterMs === undefined) return undefined;
    const [f] = flights as unknown as [Flight<T>];
    if (f.started || f.hedged || f.outcome !== undefined) return undefined;
    const after = hooks.hedgeAfterMs(f.attempt);
    return after === undefined ? undefined : { flight: f, at: f.begunAt + after };
  };

  /** Waits until a flight settles, the client leaves, or `until` (epoch ms) passes. */
  const waitFor = (until: number | undefined): Promise<void> =>
    new Promise<void>((resolve) => {
      if ([...flights].some((f) => f.outcome !== undefined) || opts.signal.aborted) return resolve();
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        opts.signal.removeEventListener('abort', done);
        wake = undefined;
        resolve();
      };
      const timer = until === undefined ? undefined : setTimeout(done, Math.max(0, until - Date.now()));
      wake = done;
      opts.signal.addEventListener('abort', done, { once: true });
    });

  try {
    for (;;) {
      if (flights.size === 0) {
        const next = nextAttempt();
        if (next === undefined) throw hooks.exhausted(records, false, tooSmallWindow);
        launch(next, 0);
      }
      const hedge = hedgeAt();
      await waitFor(hedge?.at);
      if (opts.signal.aborted) throw clientGone();
      const settled = [...flights].find((f) => f.outcome !== undefined);
      if (settled === undefined) {
        if (hedge !== undefined && Date.now() >= hedge.at && flights.has(hedge.flight)) {
          hedge.flight.hedged = true;
          const partner = nextAttempt();
          if (partner !== undefined && deadline - Date.now() > 0) launch(partner, 0);
          else if (partner !== undefined) brk.release(partner.target.key);
        }
        continue;
      }
      const outcome = settled.outcome as NonNullable<Flight<T>['outcome']>;
      const { attempt } = settled;
      if (outcome.ok) {
        onStarted(settled);
        flights.delete(settled);
        records.push(record(attempt, 'ok', 200, settled.begunAt));
        const health = healthOf(brk, attempt.target.key);
        if (hooks.successOnResolve) health.success();
        return { attempt, attempts: records, result: outcome.value, health };
      }
      flights.delete(settled);
      if (outcome.error instanceof SkipTarget) {
        brk.release(attempt.target.key);
        continue;
      }
      const failure = hooks.toFailure(outcome.error);
      records.push(record(attempt, failure.kind, failure.status, settled.begunAt));
      brk.failure(attempt.target.key, failure.kind);
      if (failure.clientError) {
        if (attempt.publicModel === requested) throw failure.clientError;
        continue;
      }
      hooks.onFailure?.(attempt, failure);
      if (failure.kind === 'context-length') tooSmallWindow = Math.max(tooSmallWindow, attempt.target.contextWindow);
      if (flights.size > 0) continue;
      const wait = retryDelay(failure, settled.retry, deadline - Date.now(), policy);
      if (wait === undefined) continue;
      if (!(await sleep(wait, opts.signal))) throw clientGone();
      launch(attempt, settled.retry + 1);
    }
  } finally {
    for (const f of [...flights]) drop(f, false);
  }
}

/** Never let an attempt's timers run past the request's deadline; `totalMs` is what is left of it. */
function clip(t: Timeouts, remainingMs: number): AttemptLimits {
  const r = Math.max(1, remainingMs);
  return { connectMs: Math.min(t.connectMs, r), headersMs: Math.min(t.headersMs, r), firstTokenMs: Math.min(t.firstTokenMs, r), idleMs: Math.min(t.idleMs, r), totalMs: r };
}

function record(attempt: Attempt, outcome: AttemptRecord['outcome'], status: number, begunAt: number): AttemptRecord {
  return { publicModel: attempt.publicModel, provider: attempt.target.provider, upstreamModel: attempt.target.upstreamModel, outcome, status, ms: Date.now() - begunAt };
}

/** The client went away: nothing more to try, and nobody to answer. */
export function clientGone(): GatewayError {
  return new GatewayError(499, 'invalid_request_error', 'The client closed the request.', { code: 'client_closed_request' });
}
