import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChunkParts, CompletionParts } from '../openai/chat-response';
import { GatewayError, InvalidRequestError, UpstreamUnavailableError } from '../openai/errors';
import { logger } from '../observability/logger';
import { decodeSse } from '../sse/decode';
import { UpstreamStreamError, type AdapterContext, type UpstreamFailure, type UpstreamHttpRequest } from '../providers/types';
import { makeFailure, transportFailure } from '../providers/upstream-failure';
import { breakerKey, type Attempt } from './attempt-plan';
import { byokKeyRefused } from './byok-refusal';
import { breaker as defaultBreaker, type CircuitBreaker } from './circuit-breaker';
import { healthOf, reportingHealth, type TargetHealth } from './target-health';
import { DEFAULT_RETRY, retryDelay, sleep, type RetryPolicy } from './retry-policy';
import { timeoutsFor, type Timeouts } from './timeouts';
import { AttemptAbortedError, readText, startAttempt, type LiveAttempt } from './upstream-call';

/**
 * Sends a request down an attempt plan until one target answers (DESIGN.md: the router never names
 * a provider). Per target: up to `maxRetriesPerTarget` retries with jittered backoff or the
 * upstream's retry-after; then the next target (the model's own, then its equivalents). Targets
 * whose breaker is open are skipped. A context-length failure only falls back to larger windows.
 * A failure the client caused (an upstream 400 about the request) is returned at once. For streams,
 * an attempt counts only once its first chunk has arrived, so every failure before the first token
 * is recovered by fallback (peers.md B3).
 *
 * Time: every attempt has its own timers (timeouts.ts) and one that is never reset, set to what is
 * left of the request's budget, so no attempt outlives the deadline however its bytes trickle in.
 */

/** What happened to one attempt (for headers, logs and the ledger's fallback path). */
export interface AttemptRecord {
  publicModel: string;
  provider: string;
  upstreamModel: string;
  /** `ok`, or the failure kind. */
  outcome: 'ok' | UpstreamFailure['kind'];
  status: number;
  ms: number;
}

export interface RoutedBase {
  /** The attempt that answered. */
  attempt: Attempt;
  /** Every attempt, in order, the answering one last. */
  attempts: AttemptRecord[];
}

export interface BufferedOutcome extends RoutedBase {
  parts: CompletionParts;
}

/**
 * A stream whose first chunk has arrived. `rest` yields the following parts; it throws
 * {@link UpstreamStreamError} if the upstream fails later. `close` stops the upstream request.
 */
export interface StreamOutcome extends RoutedBase {
  first: ChunkParts[];
  rest: AsyncGenerator<ChunkParts[]>;
  /** Stops the upstream request (`deadline` when the function's time is up). */
  close(reason?: 'deadline'): void;
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
type AttemptLimits = Timeouts & { totalMs: number };

/** Runs one attempt to its result; throws on failure. */
type AttemptRunner<T> = (attempt: Attempt, ctx: AdapterContext, limits: AttemptLimits) => Promise<T>;

/** Thrown by an attempt runner for a target that cannot serve this kind of request (no record, no breaker). */
class SkipTarget extends Error {}

/**
 * The bounded attempt loop shared by buffered and streamed calls.
 *
 * Breaker: each target is asked `allow()` only when the loop reaches it, and every allowed attempt
 * reports success or failure (or is released), so a half-open probe is never left hanging. A stream
 * that has started is reported by its caller through the returned `health`, once it ends: its
 * success is the whole answer, not the first token. Fail open:
 * when every target's breaker is open, all are tried anyway rather than refusing outright.
 * Client errors: one from the requested model's own targets is the client's to fix and is returned at
 * once; one from an equivalent (another model, another provider's rules) only rules that target out.
 */
async function runPlan<T>(plan: readonly Attempt[], opts: RouteOptions, mode: 'stream' | 'buffered', run: AttemptRunner<T>): Promise<RoutedBase & { result: T; health: TargetHealth }> {
  const records: AttemptRecord[] = [];
  const brk = opts.breaker ?? defaultBreaker;
  const policy = opts.retry ?? DEFAULT_RETRY;
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  const requested = plan[0]?.publicModel;
  const failOpen = plan.every((a) => brk.isOpen(breakerKey(a)));
  let tooSmallWindow = 0;
  // BYOK: the user's own key refused by its provider (never reported to any breaker).
  let byokRefusal: GatewayError | undefined;
  for (const attempt of plan) {
    const key = breakerKey(attempt);
    if (attempt.target.contextWindow <= tooSmallWindow) continue;
    if (!failOpen && !brk.allow(key)) continue;
    let reported = false;
    try {
      const ctx: AdapterContext = { target: attempt.target, endpoint: attempt.endpoint };
      for (let retry = 0; ; retry++) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw exhausted(records, true, tooSmallWindow);
        const started = Date.now();
        try {
          const result = await run(attempt, ctx, clip(timeoutsFor(mode, attempt.providerTimeouts, attempt.target), remaining));
          reported = true;
          records.push(record(attempt, 'ok', 200, started));
          const health = healthOf(brk, key);
          if (mode === 'buffered') health.success();
          return { attempt, attempts: records, result, health };
        } catch (err) {
          if (err instanceof SkipTarget) break;
          // A client that left says nothing about the target's health.
          if (opts.signal.aborted) throw clientGone();
          const failure = toFailure(err);
          records.push(record(attempt, failure.kind, failure.status, started));
          if (attempt.byok !== undefined && failure.kind === 'auth-config') {
            // The user's key, not ours: tell the user (at once unless the platform's key may serve).
            byokRefusal = byokKeyRefused(attempt, attempt.byok, failure, opts.requestId);
            if (!attempt.byok.allowFallback) throw byokRefusal;
            break;
          }
          brk.failure(key, failure.kind);
          reported = true;
          if (failure.clientError) {
            if (attempt.publicModel === requested) throw failure.clientError;
            break;
          }
          logFailure(attempt, failure, opts.requestId);
          if (failure.kind === 'context-length') tooSmallWindow = Math.max(tooSmallWindow, attempt.target.contextWindow);
          const wait = retryDelay(failure, retry, deadline - Date.now(), policy);
          if (wait === undefined) break;
          if (!(await sleep(wait, opts.signal))) throw clientGone();
        }
      }
    } finally {
      if (!reported) brk.release(key);
    }
  }
  throw byokRefusal ?? exhausted(records, false, tooSmallWindow);
}

/** Never let an attempt's timers run past the request's deadline; `totalMs` is what is left of it. */
function clip(t: Timeouts, remainingMs: number): AttemptLimits {
  const r = Math.max(1, remainingMs);
  return { connectMs: Math.min(t.connectMs, r), headersMs: Math.min(t.headersMs, r), firstTokenMs: Math.min(t.firstTokenMs, r), idleMs: Math.min(t.idleMs, r), totalMs: r };
}

/**
 * A buffered call (chat or embeddings): the first attempt whose response parses wins.
 * `build` makes the upstream request (undefined skips a target that cannot serve it); `parse` reads
 * a 2xx body and throws UpstreamStreamError when it is unusable.
 * @throws GatewayError — the client's own error from an upstream 400, or 502/503/504 when every
 *   attempt failed (see {@link exhausted}).
 */
export async function routeBufferedCall<T>(
  plan: readonly Attempt[],
  opts: RouteOptions,
  build: (attempt: Attempt, ctx: AdapterContext) => UpstreamHttpRequest | undefined,
  parse: (text: string, attempt: Attempt, ctx: AdapterContext) => T,
): Promise<RoutedBase & { result: T }> {
  const out = await runPlan(plan, opts, 'buffered', async (attempt, ctx, limits) => {
    const upstreamReq = build(attempt, ctx);
    if (upstreamReq === undefined) throw new SkipTarget();
    const answerBy = Date.now() + limits.headersMs;
    const live = await startAttempt(upstreamReq, opts.signal, limits);
    try {
      const text = await readText(live, answerBy);
      if (!live.ok) throw new UpstreamStreamError(attempt.adapter.classifyError(live.status, text, live.headers()));
      return parse(text, attempt, ctx);
    } finally {
      live.close();
    }
  });
  return { attempt: out.attempt, attempts: out.attempts, result: out.result };
}

/** Buffered chat over {@link routeBufferedCall}. */
export async function routeBuffered(req: ChatCompletionRequest, plan: readonly Attempt[], opts: RouteOptions): Promise<BufferedOutcome> {
  const out = await routeBufferedCall(
    plan,
    opts,
    (a, ctx) => a.adapter.buildChatRequest(req, ctx, false),
    (text, a, ctx) => a.adapter.parseChatResponse(text, ctx),
  );
  return { attempt: out.attempt, attempts: out.attempts, parts: out.result };
}

/**
 * Streamed chat: an attempt counts once it has produced its first chunk within `firstTokenMs`; until
 * then any failure — an error status, a reset, a stall, a malformed or error event — moves on, so the
 * client's 200 is committed only for a stream that has started.
 *
 * Until the first token the idle limit is max(idleMs, firstTokenMs): a reasoning model may be silent
 * for its whole first-token allowance (o3-mini 180 s) while the idle limit is shorter (30 s), and an
 * idle cut there would make firstTokenMs meaningless. Once output flows, idleMs applies.
 * A failure after the first token (not a client abort, not our deadline) counts against the target's
 * breaker: a target that starts answers and then drops them is not healthy.
 */
export async function routeStream(req: ChatCompletionRequest, plan: readonly Attempt[], opts: RouteOptions): Promise<StreamOutcome> {
  const out = await runPlan(plan, opts, 'stream', async (attempt, ctx, limits) => {
    const untilFirstToken = { ...limits, idleMs: Math.max(limits.idleMs, limits.firstTokenMs) };
    const live = await startAttempt(attempt.adapter.buildChatRequest(req, ctx, true), opts.signal, untilFirstToken);
    try {
      if (!live.ok) {
        const text = await readText(live);
        throw new UpstreamStreamError(attempt.adapter.classifyError(live.status, text, live.headers()));
      }
      const rest = streamParts(live, attempt, ctx);
      const firstTokenTimer = setTimeout(() => live.abort('first-token-timeout'), limits.firstTokenMs);
      try {
        // Preamble chunks (a role-only delta) are held with the first real token: until then the
        // attempt can still fail over invisibly.
        const first: ChunkParts[] = [];
        while (!first.some(carriesOutput)) {
          const next = await rest.next();
          if (next.done === true) throw new UpstreamStreamError(makeFailure('server', 200, 'upstream stream ended before its first token'));
          first.push(...next.value);
        }
        live.setIdle(limits.idleMs);
        return { first, rest, live };
      } finally {
        clearTimeout(firstTokenTimer);
      }
    } catch (err) {
      live.close();
      throw err;
    }
  });
  const { first, rest, live } = out.result;
  const { health } = out;
  let stoppedByUs = false;
  return {
    attempt: out.attempt,
    attempts: out.attempts,
    first,
    // The deadline is ours too: the attempt's total timer may stop it before the caller's close('deadline').
    rest: reportingHealth(rest, health, () => stoppedByUs || opts.signal.aborted || live.abortedBy() === 'deadline'),
    close: (reason) => {
      stoppedByUs = true;
      health.release();
      if (reason) live.abort(reason);
      else live.close();
    },
  };
}

/** True when a part carries something the client would see as output (not just the role preamble). */
function carriesOutput(p: ChunkParts): boolean {
  return p.choices.some(
    (c) => c.finish_reason !== null || !!c.delta.content || !!c.delta.reasoning_content || !!c.delta.refusal || (c.delta.tool_calls?.length ?? 0) > 0,
  );
}

/** Decodes, transforms and yields non-empty batches of parts; every error becomes UpstreamStreamError. */
async function* streamParts(live: LiveAttempt, attempt: Attempt, ctx: AdapterContext): AsyncGenerator<ChunkParts[]> {
  const transform = attempt.adapter.createStreamTransform(ctx);
  try {
    for await (const event of decodeSse(live.body)) {
      const parts = transform.push(event);
      if (parts.length > 0) yield parts;
    }
    const tail = transform.end();
    if (tail.length > 0) yield tail;
  } catch (err) {
    throw err instanceof UpstreamStreamError ? err : new UpstreamStreamError(toFailure(err));
  } finally {
    live.close();
  }
}

/** Normalises anything an attempt threw into a verdict. */
export function toFailure(err: unknown): UpstreamFailure {
  if (err instanceof UpstreamStreamError) return err.failure;
  if (err instanceof AttemptAbortedError) return transportFailure(err.cause ?? err, err.timedOut);
  if (err instanceof GatewayError) return { kind: 'client', retryable: false, status: err.status, message: err.message, clientError: err };
  return transportFailure(err, false);
}

function record(attempt: Attempt, outcome: AttemptRecord['outcome'], status: number, started: number): AttemptRecord {
  return { publicModel: attempt.publicModel, provider: attempt.target.provider, upstreamModel: attempt.target.upstreamModel, outcome, status, ms: Date.now() - started };
}

/** Our upstream key rejected is our misconfiguration: the operator must hear it loudly. */
function logFailure(attempt: Attempt, failure: UpstreamFailure, requestId: string | undefined): void {
  const fields = { requestId, target: attempt.target.key, kind: failure.kind, status: failure.status, detail: failure.message };
  if (failure.kind === 'auth-config') logger.error('upstream rejected our credentials; check the provider key', fields);
  else logger.warn('upstream attempt failed; falling back', fields);
}

/** OpenAI's error code for a prompt over the model's context window (Chat Completions API errors). */
const CONTEXT_LENGTH_EXCEEDED = 'context_length_exceeded';

/** The client went away: nothing more to try, and nobody to answer. */
function clientGone(): GatewayError {
  return new GatewayError(499, 'invalid_request_error', 'The client closed the request.', { code: 'client_closed_request' });
}

/**
 * Every attempt failed: 504 when they all timed out (or the deadline came), 503 when upstreams were
 * overloaded, rate limited or unreachable, 502 when an upstream answered badly.
 *
 * A prompt too long for a target is the client's to fix: when any attempt failed on the context
 * length (and the deadline did not cut the plan short), the answer is OpenAI's own 400
 * `context_length_exceeded` on `messages` — retrying the same prompt cannot help — even if a
 * larger-window equivalent failed for another reason meanwhile.
 * @param largestTooSmallWindow the largest context window (tokens) that refused the prompt, 0 if none.
 */
export function exhausted(records: readonly AttemptRecord[], deadlineReached: boolean, largestTooSmallWindow = 0): GatewayError {
  const tried = records.map((r) => r.publicModel).filter((m, i, a) => a.indexOf(m) === i).join(', ') || 'the model';
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
    r.outcome === 'rate-limit' || r.outcome === 'overloaded' || r.outcome === 'connection' || r.outcome === 'timeout' || (r.outcome === 'server' && r.status >= 500);
  if (records.every(unavailable)) {
    return new UpstreamUnavailableError(503, `Every upstream for ${tried} is unavailable or overloaded right now. Please retry.`, {
      headers: { 'retry-after': '1' },
    });
  }
  return new UpstreamUnavailableError(502, `No upstream for ${tried} returned a usable answer. Please retry.`);
}
