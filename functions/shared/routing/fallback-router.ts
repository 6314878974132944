/**
 * Routes one request through its fallback plan (chat streamed or buffered, and embeddings through
 * {@link routeBufferedCall}): runs each attempt under its time limits (timeouts.ts) through the attempt
 * loop (attempt-loop.ts: retries, fallback, hedging; failures classified in attempt-contract.ts), and
 * is the boundary where a plan's error is thrown to its caller. It never names a provider: the plan
 * carries the adapters.
 */
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChunkParts, CompletionParts } from '../openai/chat-response';
import { createCompletionAssembler } from '../openai/completion-assembler';
import { logger } from '../observability/logger';
import { decodeSse } from '../sse/decode';
import { outputMeter, type OutputMeter } from '../usage/output-meter';
import {
  NATIVE_REQUEST,
  UpstreamAttemptError,
  type AdapterContext,
  type RoutedChatRequest,
  type UpstreamFailure,
  type UpstreamHttpRequest,
} from '../providers/types';
import { makeFailure } from '../providers/upstream-failure';
import type { Attempt } from './attempt-plan';
import { ours, SKIP, toFailure, type AttemptRun, type PlanHooks, type PlanOutcome, type RoutedBase, type RouteOptions } from './attempt-contract';
import { runPlan } from './attempt-loop';
import { logHedgeLoss } from './hedge';
import { reportingHealth } from './target-health';
import { answerBy, bufferedTimeouts, chatTimeouts, hedgeAfterMs, promptAllowanceMs, streamedAttemptTimeouts } from './timeouts';
import { roughChatPromptTokens } from '../usage/prompt-tokens';
import { readText, startAttempt, type LiveAttempt } from './upstream-call';

/**
 * The router's two chat entry points and the buffered call for embeddings (DESIGN.md: the router never
 * names a provider). The attempt loop — order, retries, breaker, hedging — is attempt-loop.ts.
 *
 * Every chat attempt STREAMS upstream, whatever the client asked: a hang, a stall or a slow start is
 * then seen within the first-token and idle limits (timeouts.ts), not at the end of a whole buffered
 * generation, and a buffered answer is assembled from the stream parts
 * (openai/completion-assembler.ts). An attempt counts once its first token has arrived; until then
 * any failure — an error status, a reset, a stall, keep-alive bytes only, a malformed or error event —
 * moves on to the next target.
 *
 * Time: every attempt has its own timers (upstream-call.ts) and one that is never reset, set to what
 * is left of the request's deadline, so no attempt outlives it however its bytes trickle in.
 */

export interface BufferedOutcome extends RoutedBase {
  parts: CompletionParts;
  /**
   * Set when the answer was cut at `opts.outputBudget`: the output tokens counted (usage/output-meter.ts). The
   * upstream's usage, if any came, is then not the answer's: bill this count.
   */
  outputCut?: number;
}

/**
 * A stream whose first chunk has arrived. `rest` yields the following parts; it throws
 * {@link UpstreamAttemptError} if the upstream fails later. `close` stops the upstream request.
 */
export interface StreamOutcome extends RoutedBase {
  first: ChunkParts[];
  rest: AsyncGenerator<ChunkParts[]>;
  /** Stops the upstream request (`deadline` when the function's time is up). */
  close(reason?: 'deadline'): void;
  /** Once `rest` is done: the output tokens counted if the answer was cut at `opts.outputBudget`, else undefined. */
  outputCut(): number | undefined;
}

/** A streamed chat attempt that has produced its first token. */
interface StartedStream {
  first: ChunkParts[];
  rest: AsyncGenerator<ChunkParts[]>;
  live: LiveAttempt;
  meter: OutputMeter | undefined;
}

/** The loop's hooks for a chat request: its limits per target, hedging, and the hedge-loss log. */
function chatHooks(req: ChatCompletionRequest, opts: RouteOptions, successOnResolve: boolean): PlanHooks {
  const allowance = promptAllowanceMs(roughChatPromptTokens(req));
  const timeouts = (a: Attempt) => chatTimeouts(a.target, a.providerTimeouts, req, allowance);
  return {
    timeouts,
    hedgeAfterMs: (a) => hedgeAfterMs(a.hedge, timeouts(a), allowance),
    onHedgeLost: (a) => logHedgeLoss(a, roughChatPromptTokens(req), opts.requestId),
    onFailure: (a, f) => logFailure(a, f, opts.requestId),
    successOnResolve,
  };
}

/**
 * Starts one streamed chat attempt and waits for its first token: output of any kind (content,
 * reasoning, refusal, a tool call, a finish). The first-token limit counts from the request being
 * sent; until it passes, silence may last that long (a reasoning model thinks in silence, and the idle
 * limit is often shorter); once output flows, the idle limit applies. Preamble parts (a role-only
 * delta) are held with the first real token, so until then the attempt can still fail over invisibly.
 * @throws UpstreamAttemptError / AttemptAbortedError for every failure before the first token.
 */
async function startChatStream(req: ChatCompletionRequest, attempt: Attempt, ctx: AdapterContext, run: AttemptRun, opts: RouteOptions): Promise<StartedStream> {
  const { limits } = run;
  const meter = opts.outputBudget === undefined ? undefined : outputMeter(opts.outputBudget, req.n ?? 1);
  const live = await startAttempt(
    ours(() => attempt.adapter.buildChatRequest(req, ctx)),
    run.signal,
    streamedAttemptTimeouts(limits),
  );
  try {
    if (!live.ok) {
      const text = await readText(live);
      throw new UpstreamAttemptError(attempt.adapter.classifyError(live.status, text, live.headers()));
    }
    const rest = streamParts(live, attempt, ctx, meter, opts.requestId);
    const first: ChunkParts[] = [];
    while (!first.some(carriesOutput)) {
      const next = await rest.next();
      if (next.done === true) throw new UpstreamAttemptError(makeFailure('server', 200, 'upstream stream ended before its first token'));
      first.push(...next.value);
    }
    live.markFirstToken();
    live.setIdle(limits.idleMs);
    run.started();
    return { first, rest, live, meter };
  } catch (err) {
    live.close();
    throw err;
  }
}

/**
 * A buffered call for embeddings: the first attempt whose response parses wins.
 * `build` makes the upstream request (undefined skips a target that cannot serve it); `parse` reads
 * a 2xx body and throws UpstreamAttemptError when it is unusable.
 * @throws GatewayError — the client's own error from an upstream 400, or 502/503/504 when every
 *   attempt failed (see `exhausted` in attempt-contract.ts).
 */
export async function routeBufferedCall<T>(
  plan: readonly Attempt[],
  opts: RouteOptions,
  build: (attempt: Attempt, ctx: AdapterContext) => UpstreamHttpRequest | undefined,
  parse: (text: string, attempt: Attempt, ctx: AdapterContext) => T,
): Promise<RoutedBase & { result: T }> {
  const hooks: PlanHooks = {
    timeouts: (a) => bufferedTimeouts(a.target, a.providerTimeouts),
    onFailure: (a, f) => logFailure(a, f, opts.requestId),
    successOnResolve: true,
  };
  const out = answered(
    await runPlan(plan, opts, hooks, async (attempt, ctx, { limits, signal }) => {
      const upstreamReq = ours(() => build(attempt, ctx));
      if (upstreamReq === undefined) return SKIP;
      const answerDue = answerBy(limits);
      const live = await startAttempt(upstreamReq, signal, limits);
      try {
        const text = await readText(live, answerDue);
        if (!live.ok) throw new UpstreamAttemptError(attempt.adapter.classifyError(live.status, text, live.headers()));
        return ours(() => parse(text, attempt, ctx));
      } finally {
        live.close();
      }
    }),
  );
  return { attempt: out.attempt, attempts: out.attempts, result: out.result };
}

/**
 * Buffered chat: each attempt streams upstream, and the answer is assembled from its parts. A
 * failure before the first token, or AFTER it — nothing has reached the client yet — moves on to the
 * next target like any other. Hedging races the first token; the winner's whole answer is awaited.
 *
 * Contract (also for the Responses API, which routes through here): resolves with the answering
 * attempt, every attempt's record, and the `chat.completion` parts (usage undefined when the upstream
 * sent none: the caller estimates); never resolves before the whole answer is in.
 * @throws GatewayError — the client's own error (4xx), 499 when the client left, or 502/503/504
 *   (`exhausted` in attempt-contract.ts) when no target answered by `opts.deadline`.
 */
export async function routeBuffered(req: RoutedChatRequest, plan: readonly Attempt[], opts: RouteOptions): Promise<BufferedOutcome> {
  const out = answered(
    await runPlan(plan, opts, chatHooks(req, opts, true), async (attempt, ctx, run) => {
      const started = await startChatStream(req, attempt, ctx, run, opts);
      const assembler = createCompletionAssembler(attempt.adapter.assembly, req[NATIVE_REQUEST] !== undefined);
      assembler.push(started.first);
      for await (const batch of started.rest) assembler.push(batch);
      return { parts: assembler.result(), outputCut: cutAt(started.meter) };
    }),
  );
  const { parts, outputCut } = out.result;
  return { attempt: out.attempt, attempts: out.attempts, parts, ...(outputCut !== undefined ? { outputCut } : {}) };
}

/**
 * Streamed chat: resolves once an attempt has produced its first token (so the client's 200 is
 * committed only for a stream that has started).
 *
 * Contract (also for the Responses API): `first` holds the parts up to and including the first
 * token; `rest` yields the following batches and throws {@link UpstreamAttemptError} when the upstream
 * fails later (no fallback is possible once output may have reached the client); `close()` must be
 * called when the consumer stops. A failure after the first token (not a client abort, not our
 * deadline) counts against the target's breaker: a target that starts answers and then drops them is
 * not healthy.
 * @throws GatewayError as {@link routeBuffered}, before any output.
 */
export async function routeStream(req: ChatCompletionRequest, plan: readonly Attempt[], opts: RouteOptions): Promise<StreamOutcome> {
  const out = answered(await runPlan(plan, opts, chatHooks(req, opts, false), (attempt, ctx, run) => startChatStream(req, attempt, ctx, run, opts)));
  const { first, rest, live, meter } = out.result;
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
    outputCut: () => cutAt(meter),
  };
}

/**
 * The router's boundary: a plan's answer, or its client's error thrown for the caller to answer with
 * (edge/function-url.ts renders it).
 * @throws GatewayError the plan's error.
 */
function answered<T>(out: PlanOutcome<T>): Extract<PlanOutcome<T>, { ok: true }> {
  if (!out.ok) throw out.error;
  return out;
}

/** The output tokens counted when a meter cut the answer; undefined when it did not. */
const cutAt = (meter: OutputMeter | undefined): number | undefined => (meter?.spent === true ? meter.counted : undefined);

/** True when a part carries something the client would see as output (not just the role preamble). */
function carriesOutput(p: ChunkParts): boolean {
  return p.choices.some(
    (c) => c.finish_reason !== null || !!c.delta.content || !!c.delta.reasoning_content || !!c.delta.refusal || (c.delta.tool_calls?.length ?? 0) > 0,
  );
}

/**
 * Decodes, transforms and yields non-empty batches of parts, one per network read (sse/decode.ts);
 * every error becomes UpstreamAttemptError.
 * With a meter, the parts are counted against the answer's output budget: at the batch that spends
 * it, the answer ends there and the upstream request is stopped (`live.close()` below).
 */
async function* streamParts(
  live: LiveAttempt,
  attempt: Attempt,
  ctx: AdapterContext,
  meter: OutputMeter | undefined,
  requestId: string | undefined,
): AsyncGenerator<ChunkParts[]> {
  const transform = attempt.adapter.createStreamTransform(ctx);
  const admit = (parts: ChunkParts[]): ChunkParts[] => (meter === undefined ? parts : meter.admit(parts));
  try {
    for await (const events of decodeSse(live.body)) {
      const parts = admit(events.flatMap((event) => transform.push(event)));
      if (parts.length > 0) yield parts;
      if (meter?.spent === true) {
        logger.warn('answer cut at its held output', { requestId, target: attempt.target.key, outputTokens: meter.counted });
        return;
      }
    }
    const tail = admit(transform.end());
    if (tail.length > 0) yield tail;
  } catch (err) {
    throw err instanceof UpstreamAttemptError ? err : new UpstreamAttemptError(toFailure(err));
  } finally {
    live.close();
  }
}

/** Our upstream key rejected is our misconfiguration: the operator must hear it loudly. */
function logFailure(attempt: Attempt, failure: UpstreamFailure, requestId: string | undefined): void {
  const fields = { requestId, target: attempt.target.key, kind: failure.kind, status: failure.status, detail: failure.message };
  if (failure.kind === 'auth-config') logger.error('upstream rejected our credentials; check the provider key', fields);
  else logger.warn('upstream attempt failed; falling back', fields);
}
