import { GatewayError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import { recordFallback } from '../observability/metrics';
import { startSpan, type Span } from '../observability/tracer';
import { breakerKey, type Attempt } from './attempt-plan';
import { byokKeyRefused } from './byok-refusal';
import { breaker as defaultBreaker, type CircuitBreaker } from './circuit-breaker';
import { nextRetryDelay, type RetryPolicy } from '../retry/retry';
import { sleep } from '../retry/sleep';
import { upstreamRetryPolicy } from './retry-policy';
import type { AdapterContext, UpstreamFailure } from '../providers/types';
import { healthOf } from './target-health';
import { attemptLimits } from './timeouts';
import {
  attemptOutcome,
  clientGone,
  exhausted,
  SKIP,
  type AttemptOutcome,
  type AttemptRecord,
  type AttemptRunner,
  type PlanHooks,
  type PlanOutcome,
  type RouteOptions,
} from './attempt-contract';

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
 *
 * Outcomes are values: each attempt settles into an {@link AttemptOutcome} (attempt-contract.ts
 * classifies what it threw), and each step of the loop either goes on or ends the plan with a
 * {@link PlanOutcome} — nothing is thrown across the loop.
 */

/** A step of the loop that ended the plan (its client's error), or undefined: go on. */
type Ended = { ok: false; error: GatewayError } | undefined;

const end = (error: GatewayError): Ended => ({ ok: false, error });

interface Flight<T> {
  attempt: Attempt;
  retry: number;
  controller: AbortController;
  begunAt: number;
  started: boolean;
  /** Epoch ms of its first token. */
  firstTokenAt?: number;
  hedged: boolean;
  outcome?: AttemptOutcome<T>;
  /** The upstream call as an X-Ray subsegment (a no-op without tracing); a stream's ends with the stream. */
  span: Span;
}

/**
 * Runs `plan` until one attempt succeeds.
 * @returns the answering attempt, every attempt's record, the runner's result, and the answering
 *   target's breaker verdict handle (already reported when `successOnResolve`); or, when none does,
 *   the client's error: its own (a 4xx of the requested model, a refused BYOK key), 499 when the
 *   client left, 500 when our code failed, or {@link exhausted}'s 400/502/503/504.
 */
export function runPlan<T>(plan: readonly Attempt[], opts: RouteOptions, hooks: PlanHooks, run: AttemptRunner<T>): Promise<PlanOutcome<T>> {
  return new PlanRun(plan, opts, hooks, run).run();
}

/** The state of one {@link runPlan}: the targets left, the attempts in flight, the records. */
class PlanRun<T> {
  private readonly brk: CircuitBreaker;
  private readonly policy: RetryPolicy<UpstreamFailure>;
  private readonly deadline: number;
  private readonly requested: string | undefined;
  private readonly failOpen: boolean;
  /** The request's account: its own breaker state counts beside the shared one. */
  private readonly account: string | undefined;
  private readonly records: AttemptRecord[] = [];
  /** Targets not yet tried, in order (a hedge loser goes back to the front). */
  private readonly queue: Attempt[];
  private readonly flights = new Set<Flight<T>>();
  private tooSmallWindow = 0;
  private wake: (() => void) | undefined;
  /** BYOK: the account's own key refused by its provider (never reported to any breaker). */
  private byokRefusal: GatewayError | undefined;
  /** The first target launched: an answer from another one is a fallback (metric). */
  private firstKey: string | undefined;

  constructor(
    plan: readonly Attempt[],
    private readonly opts: RouteOptions,
    private readonly hooks: PlanHooks,
    private readonly runner: AttemptRunner<T>,
  ) {
    this.brk = opts.breaker ?? defaultBreaker;
    this.policy = upstreamRetryPolicy(opts.retry);
    this.deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
    this.requested = plan[0]?.publicModel;
    this.account = opts.origin?.accountId;
    this.failOpen = plan.every((a) => this.brk.isOpen(breakerKey(a), this.account));
    this.queue = [...plan];
  }

  async run(): Promise<PlanOutcome<T>> {
    try {
      for (;;) {
        const ended = this.flights.size === 0 ? this.launchNext() : undefined;
        if (ended !== undefined) return ended;
        const hedge = this.hedgeAt();
        await this.waitFor(hedge?.at);
        if (this.opts.signal.aborted) return { ok: false, error: clientGone() };
        const settled = [...this.flights].find((f) => f.outcome !== undefined);
        if (settled === undefined) {
          const hedged = hedge !== undefined && Date.now() >= hedge.at && this.flights.has(hedge.flight) ? this.startHedge(hedge.flight) : undefined;
          if (hedged !== undefined) return hedged;
          continue;
        }
        this.flights.delete(settled);
        const outcome = settled.outcome as AttemptOutcome<T>;
        if (outcome.kind === 'answered') return this.answered(settled, outcome.value);
        const failed = await this.failed(settled, outcome);
        if (failed !== undefined) return failed;
      }
    } finally {
      for (const f of [...this.flights]) this.drop(f, false);
    }
  }

  /** The next target the breaker allows and whose window is not known to be too small. */
  private nextAttempt(): Attempt | undefined {
    while (this.queue.length > 0) {
      const a = this.queue.shift() as Attempt;
      if (a.target.contextWindow <= this.tooSmallWindow) continue;
      if (!this.failOpen && !this.brk.allow(breakerKey(a), this.account)) continue;
      return a;
    }
    return undefined;
  }

  /** Launches the next target; ends the plan (exhausted) when no target is left. */
  private launchNext(): Ended {
    const next = this.nextAttempt();
    if (next === undefined) return end(this.byokRefusal ?? exhausted(this.records, false, this.tooSmallWindow));
    return this.launch(next, 0);
  }

  /** Launches `attempt`; ends the plan (exhausted, deadline reached) when no time is left. */
  private launch(attempt: Attempt, retry: number): Ended {
    const remaining = this.deadline - Date.now();
    if (remaining <= 0) {
      this.brk.release(breakerKey(attempt), this.account);
      return end(exhausted(this.records, true, this.tooSmallWindow));
    }
    // The loop's own stop (a lost race, the loop's end) beside the client's: one signal, no listener to
    // remove (AbortSignal.any holds its sources weakly), however long a started stream lives on.
    const controller = new AbortController();
    const signal = AbortSignal.any([this.opts.signal, controller.signal]);
    const span = startSpan('upstream');
    span.annotate('target', attempt.target.key);
    this.firstKey ??= attempt.target.key;
    const f: Flight<T> = { attempt, retry, controller, begunAt: Date.now(), started: false, hedged: false, span };
    this.flights.add(f);
    const settle = (outcome: AttemptOutcome<T>): void => {
      f.outcome = outcome;
      if (this.flights.has(f)) this.wake?.();
    };
    const ctx: AdapterContext = { target: attempt.target, endpoint: attempt.endpoint };
    const limits = attemptLimits(this.hooks.timeouts(attempt), remaining);
    this.runner(attempt, ctx, { limits, signal, started: () => this.onStarted(f) }).then(
      (value) => settle(value === SKIP ? { kind: 'skipped' } : { kind: 'answered', value }),
      (error: unknown) => settle(attemptOutcome(error)),
    );
    return undefined;
  }

  /** `f` has its first token: every other flight lost the race. */
  private onStarted(f: Flight<T>): void {
    if (f.started || !this.flights.has(f)) return;
    f.started = true;
    f.firstTokenAt = Date.now();
    for (const other of [...this.flights]) if (other !== f) this.drop(other, true);
  }

  /** Stops a flight that will not answer: no record unless it lost a race; its breaker permit back. */
  private drop(f: Flight<T>, lost: boolean): void {
    this.flights.delete(f);
    f.controller.abort();
    this.brk.release(breakerKey(f.attempt), this.account);
    f.span.annotate('outcome', lost ? 'hedge-lost' : 'stopped');
    f.span.end();
    if (!lost) return;
    this.records.push(record(f.attempt, 'hedge-lost', 0, f.begunAt));
    this.queue.unshift(f.attempt);
    this.hooks.onHedgeLost?.(f.attempt);
  }

  /** When the single flight in the air gets a parallel one (epoch ms), if ever. */
  private hedgeAt(): { flight: Flight<T>; at: number } | undefined {
    if (this.flights.size !== 1 || this.hooks.hedgeAfterMs === undefined) return undefined;
    const [f] = this.flights as unknown as [Flight<T>];
    if (f.started || f.hedged || f.outcome !== undefined) return undefined;
    const after = this.hooks.hedgeAfterMs(f.attempt);
    return after === undefined ? undefined : { flight: f, at: f.begunAt + after };
  }

  private startHedge(f: Flight<T>): Ended {
    f.hedged = true;
    const partner = this.nextAttempt();
    if (partner === undefined) return undefined;
    if (this.deadline - Date.now() > 0) return this.launch(partner, 0);
    this.brk.release(breakerKey(partner), this.account);
    return undefined;
  }

  /** Waits until a flight settles, the client leaves, or `until` (epoch ms) passes. */
  private waitFor(until: number | undefined): Promise<void> {
    const signal = this.opts.signal;
    return new Promise<void>((resolve) => {
      if ([...this.flights].some((f) => f.outcome !== undefined) || signal.aborted) return resolve();
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = until === undefined ? undefined : setTimeout(done, Math.max(0, until - Date.now()));
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private answered(f: Flight<T>, result: T): PlanOutcome<T> {
    this.flights.add(f);
    this.onStarted(f);
    this.flights.delete(f);
    this.records.push({ ...record(f.attempt, 'ok', 200, f.begunAt), firstTokenMs: (f.firstTokenAt ?? Date.now()) - f.begunAt });
    if (f.attempt.target.key !== this.firstKey && this.requested !== undefined) recordFallback(this.requested);
    f.span.annotate('outcome', 'ok');
    const health = healthOf(this.brk, breakerKey(f.attempt), f.span.end, this.opts.origin);
    if (this.hooks.successOnResolve) health.success();
    return { ok: true, attempt: f.attempt, attempts: this.records, result, health };
  }

  /**
   * A flight that did not answer: record it, tell the breaker, and decide — the client's error ends
   * the request; beside a flight still running, nothing more; else a retry of the same target when
   * the policy allows, or (undefined) the next target.
   */
  private async failed(f: Flight<T>, outcome: Exclude<AttemptOutcome<T>, { kind: 'answered' }>): Promise<Ended> {
    const { attempt } = f;
    if (outcome.kind === 'skipped') {
      this.brk.release(breakerKey(attempt), this.account);
      f.span.annotate('outcome', 'skipped');
      f.span.end();
      return undefined;
    }
    if (outcome.kind === 'own-failure') {
      this.brk.release(breakerKey(attempt), this.account);
      logger.error('internal failure on an upstream attempt; not counted against the upstream', {
        requestId: this.opts.requestId,
        target: attempt.target.key,
        error: outcome.error as Error,
      });
      return end(new GatewayError(500, 'server_error', 'The gateway had an internal error while preparing your request.', { cause: outcome.error }));
    }
    const { failure } = outcome;
    f.span.annotate('outcome', failure.kind);
    f.span.end();
    this.records.push(record(attempt, failure.kind, failure.status, f.begunAt));
    if (attempt.byok !== undefined && failure.kind === 'auth-config') {
      // The user's key, not ours: tell the user (at once unless the platform's key may serve).
      this.brk.release(breakerKey(attempt), this.account);
      this.byokRefusal = byokKeyRefused(attempt, attempt.byok, failure, this.opts.requestId);
      return attempt.byok.allowFallback ? undefined : end(this.byokRefusal);
    }
    this.brk.failure(breakerKey(attempt), failure.kind, this.opts.origin);
    if (failure.clientError) return attempt.publicModel === this.requested ? end(failure.clientError) : undefined;
    this.hooks.onFailure?.(attempt, failure);
    if (failure.kind === 'context-length') this.tooSmallWindow = Math.max(this.tooSmallWindow, attempt.target.contextWindow);
    if (this.flights.size > 0) return undefined;
    const wait = nextRetryDelay(this.policy, failure, f.retry, this.deadline - Date.now());
    if (wait === undefined) return undefined;
    if (!(await sleep(wait, this.opts.signal))) return end(clientGone());
    return this.launch(attempt, f.retry + 1);
  }
}

function record(attempt: Attempt, outcome: AttemptRecord['outcome'], status: number, begunAt: number): AttemptRecord {
  return {
    publicModel: attempt.publicModel,
    provider: attempt.target.provider,
    upstreamModel: attempt.target.upstreamModel,
    outcome,
    status,
    ms: Date.now() - begunAt,
    startedAt: begunAt,
  };
}

/**
 * modelmux's own time on an answered request (ms): from its arrival to the first upstream attempt,
 * plus from the answering attempt's end to `now`. Upstream time, and backoff between attempts, is not ours.
 * @param receivedAt epoch ms the request arrived; `attempts` as routed (the answering one last).
 */
export function overheadMs(receivedAt: number, attempts: readonly AttemptRecord[], now = Date.now()): number {
  const started = attempts.map((a) => a.startedAt).filter((t): t is number => t !== undefined);
  const last = attempts[attempts.length - 1];
  if (started.length === 0 || last?.startedAt === undefined) return now - receivedAt;
  return Math.min(...started) - receivedAt + (now - (last.startedAt + last.ms));
}
