import { openAiUsage, type ChatCompletion, type ChunkParts, type CompletionParts, type Usage } from '../openai/chat-response';
import { createCompletionAssembler } from '../openai/completion-assembler';
import type { RequestBill } from '../billing/request-bill';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { TokenUsage } from '../usage/token-usage';
import { GatewayError, UpstreamUnavailableError, asGatewayError, toErrorBody } from '../errors/gateway-errors';
import type { GatewayRequest, JsonResult, SseFrame, StreamResult } from '../http/types';
import { UpstreamAttemptError } from '../providers/types';
import type { RoutedBase } from '../routing/attempt-contract';
import { overheadMs } from '../routing/attempt-loop';
import type { routeStream } from '../routing/fallback-router';
import { DONE_FRAME, dataFrame, errorFrame } from '../sse/encode';
import { warmTokenizer } from '../usage/estimate';
import { logger } from '../observability/logger';
import { recordOverhead, recordTimeToFirstToken } from '../observability/metrics';
import { answerUsage, completionText, estimateOr, settleRequest, usageEntry, type BillableUsage } from './settle-request';

/*
 * How a chat answer reaches the client, in its API's shape: the surface (chat, Responses, Anthropic
 * Messages), the routing headers, a buffered answer held past its budget (JSON-whitespace beats), the
 * stream after its first chunk, and a stream whose 200 was committed before its first token.
 */

/**
 * What one chat exchange carries from admission to its answer (buffered or streamed): the request,
 * the validated body, the open bill, and how its API presents a buffered answer.
 */
export interface CallContext {
  req: GatewayRequest;
  body: ChatCompletionRequest;
  bill: RequestBill;
  /** Unix seconds, the same on every chunk (OpenAI: "each chunk has the same created"). */
  created: number;
  /** How the client's API writes the answer (the completion and its chunks, a Messages answer and its events, …). */
  surface: ChatSurface;
}

/** `chatcmpl-` + our request id: the completion id and the ledger key name the same request. */
export function completionId(requestId: string): string {
  return `chatcmpl-${requestId}`;
}

/** nano-USD → USD as a JSON number (`usage.cost`). */
export function usdOf(nanoUsd: number): number {
  return nanoUsd / 1e9;
}

/**
 * An API surface over the one chat core (app/chat-completions.ts `runChatExchange`): how the answer
 * the core produced — typed parts, never another surface's wire text — is written in this API's
 * shape. Chat Completions is {@link chatSurface}; the Anthropic Messages API (app/messages.ts) and the
 * Responses API (app/responses.ts) bring their own. Admission, routing, fallback, hedging, breakers,
 * the hold, the ledger and the settle are the core's, the same for every surface.
 */
export interface ChatSurface {
  /**
   * The buffered answer's body. `completion` is the core's `chat.completion` (usage with `cost`),
   * `parts` what the router assembled (with the upstream's own events when it answered natively).
   */
  present(completion: ChatCompletion, parts: CompletionParts): unknown;
  /** Awaited with the presented body before it is sent (the Responses API stores it there). */
  beforeBody?(body: unknown): Promise<void>;
  /** The body of an error after the status was committed (a held buffered answer, {@link heldJson}). */
  errorBody(err: GatewayError): unknown;
  /** A fresh encoder for one stream. */
  streamEncoder(stream: StreamMeta): StreamEncoder;
}

/** What a stream encoder knows about its stream. */
export interface StreamMeta {
  /** Our id for this answer (`chatcmpl-<request id>`). */
  id: string;
  /** Unix seconds, the same on every event. */
  created: number;
  /** The model name the client asked for. */
  model: string;
  /** The routed outcome, absent when no attempt answered (only {@link StreamEncoder.failed} is then called). */
  outcome: RoutedBase | undefined;
}

/**
 * Writes one stream: `parts` for each part the core produced, in order; then `complete` once, after
 * a finished answer, or `failed` once, after a failure (the status is already 200). Frames are
 * wire-ready SSE text.
 */
export interface StreamEncoder {
  /** True when `complete` needs the answer's final usage (which the core then prices first). */
  readonly wantsFinalUsage: boolean;
  parts(parts: ChunkParts): SseFrame[];
  /**
   * @param usage the final usage with `cost` (USD), when {@link wantsFinalUsage}. May wait (the
   *   Responses API stores the response before its last event).
   */
  complete(usage: Usage | undefined): SseFrame[] | Promise<SseFrame[]>;
  failed(err: GatewayError): SseFrame[] | Promise<SseFrame[]>;
}

/**
 * `POST /v1/chat/completions`: the completion as is; chunks as `data:` frames, the usage chunk only
 * when the client asked (`stream_options.include_usage`), `[DONE]` after a finished answer; OpenAI's
 * error body, and its error frame mid-stream (sse/encode.ts).
 */
export function chatSurface(includeUsage: boolean): ChatSurface {
  return {
    present: (completion) => completion,
    errorBody: (err) => toErrorBody(err),
    streamEncoder: ({ id, created, model }) => ({
      wantsFinalUsage: includeUsage,
      parts(parts) {
        if (parts.choices.length === 0) return [];
        return [
          dataFrame(
            includeUsage
              ? { id, object: 'chat.completion.chunk', created, model, choices: parts.choices, usage: null }
              : { id, object: 'chat.completion.chunk', created, model, choices: parts.choices },
          ),
        ];
      },
      complete(usage) {
        return usage === undefined ? [DONE_FRAME] : [dataFrame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage }), DONE_FRAME];
      },
      failed: (err) => [errorFrame(err)],
    }),
  };
}

/** Tells the client who answered, without changing the body's `model` (the name it asked for). */
export function routingHeaders(outcome: RoutedBase): Record<string, string> {
  return {
    'x-modelmux-model': outcome.attempt.publicModel,
    'x-modelmux-provider': outcome.attempt.target.provider,
    'x-modelmux-attempts': String(outcome.attempts.length),
  };
}

/**
 * The routing headers' content for a stream whose headers went out before routing ended, as one SSE
 * comment line, e.g. `: x-modelmux-model=gpt-4o; provider=openai; attempts=2`. Comments are ignored
 * by SSE clients (WHATWG HTML, "Server-sent events": lines starting with a colon), so the OpenAI
 * SDK sees nothing; a raw reader can still learn who answered.
 */
function routingComment(outcome: RoutedBase): string {
  const h = routingHeaders(outcome);
  return `: x-modelmux-model=${h['x-modelmux-model']}; provider=${h['x-modelmux-provider']}; attempts=${h['x-modelmux-attempts']}\n\n`;
}

/*
 * A buffered answer that is not ready when its status must go out. A buffered response sends nothing
 * until it is whole, and CloudFront gives up on an origin silent for its origin read timeout (60 s,
 * lib/constructs/api-distribution.ts), answering the client with its own 504 while the gateway would
 * go on and bill an answer nobody receives. So at BUFFERED_CHAT_BUDGET_MS the 200 is committed and
 * JSON whitespace — a line feed every {@link HOLD_BEAT_MS} — keeps the connection alive until the
 * answer is written after it. Leading whitespace is valid JSON (RFC 8259 §2), so every JSON parser,
 * the openai SDK's included, reads the body as usual; DeepSeek's own API holds busy buffered requests
 * the same way (providers.md §4.5). CloudFront's read timeout is also the longest wait between two
 * packets, so the beats reset it.
 *
 * Fallback goes on behind the beats (nothing of the answer has been sent). If every target fails
 * after the commit, the status is already 200: the body is then OpenAI's error object
 * `{"error":{…}}` instead of a completion — rare (the answer took longer than the budget AND every
 * target failed) and documented in the README.
 */

/** A JSON-whitespace beat is written this often while the held answer is produced (ms). */
export const HOLD_BEAT_MS = 10_000;

/** What a held answer sends while it waits: a line feed, insignificant whitespace before the JSON. */
export const HOLD_BEAT = '\n';

/** Resolves true when `p` settles (either way) within `ms`; the caller then awaits `p` itself. */
export function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), Math.max(0, ms));
    const done = (): void => {
      clearTimeout(t);
      resolve(true);
    };
    p.then(done, done);
  });
}

/**
 * The held response: 200 `application/json` now, beats while `answer` is produced, then its body (or
 * OpenAI's error body if it failed). `after` runs the answer's own `after` (the settle), so an answer
 * produced for a client that has gone is still billed, as for any buffered answer.
 * @param answer the buffered result being produced (rejects with the routing's error).
 * @param requestId for the log line of a failure after the commit.
 * @param errorBody the error body in the client's API (OpenAI's by default).
 */
export function heldJson(
  answer: Promise<JsonResult>,
  signal: AbortSignal,
  requestId: string,
  errorBody: (err: GatewayError) => unknown = toErrorBody,
): StreamResult {
  // Handled from the start: the frames may never run (a client gone before the first byte), and a
  // rejection nobody listens to would end the process.
  answer.catch(() => undefined);
  async function* frames(): AsyncGenerator<string> {
    let result: JsonResult | undefined;
    let failure: unknown;
    const done = answer.then(
      (r) => void (result = r),
      (e: unknown) => void (failure = e),
    );
    yield HOLD_BEAT;
    while (!(await settledWithin(done, HOLD_BEAT_MS))) yield HOLD_BEAT;
    if (result !== undefined) {
      yield JSON.stringify(result.body);
      return;
    }
    if (signal.aborted) return;
    const error = asGatewayError(failure);
    logger.warn('buffered answer failed after its 200 was committed', { requestId, status: error.status, code: error.code });
    yield JSON.stringify(errorBody(error));
  }
  return {
    kind: 'stream',
    status: 200,
    headers: { 'content-type': 'application/json' },
    frames: frames(),
    after: async () => {
      const result = await answer.catch(() => undefined);
      await result?.after?.();
    },
  };
}

/**
 * The stream: the first chunk has already arrived (fallback is over). Parts are handed to the
 * surface's encoder as they come (the {@link ChatSurface}: chat chunks, Anthropic events, …); its
 * `complete` frames only after a finished answer. A failure after the first chunk ends the stream with
 * the encoder's error event and the tokens produced so far are still billed.
 *
 * Billing counts what the upstream produced (every batch as it is received, the first one included),
 * not only what reached the client: a client that leaves before a batch is written still caused it.
 * @param preface frames sent before the first chunk (the routing comment of a late-committed stream).
 */
export function streamed(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeStream>>, preface?: string): StreamResult {
  recordTimeToFirstToken(Date.now() - ctx.req.receivedAt);
  recordOverhead(overheadMs(ctx.req.receivedAt, outcome.attempts));
  const encoder = ctx.surface.streamEncoder({ id: completionId(ctx.req.requestId), created: ctx.created, model: ctx.body.model, outcome });
  let usage: TokenUsage | undefined;
  // What was produced, kept as received and assembled as a buffered answer is only when an estimate
  // needs its text (no usage from the upstream, an answer cut short), so both count the same text.
  const batches: (readonly ChunkParts[])[] = [];
  const text = (): string => {
    const produce = createCompletionAssembler();
    for (const b of batches) produce.push(b);
    return completionText(produce.result().choices);
  };
  let status: 'complete' | 'partial' | 'aborted' = 'partial';
  /** The usage the final chunk reported (and priced): the settle bills exactly it. */
  let finalUsage: BillableUsage | undefined;
  /** The first choice's finish reason, for the ledger (`GET /v1/generation`). */
  let finishReason: string | null | undefined;
  const produced = (batch: readonly ChunkParts[]): void => {
    batches.push(batch);
    for (const parts of batch) {
      if (parts.usage) usage = parts.usage;
      for (const c of parts.choices) if (c.index === 0 && c.finish_reason != null) finishReason = c.finish_reason;
    }
  };
  produced(outcome.first);

  /** The final usage, priced: what the settle will bill, with `cost` (USD). */
  const pricedFinal = async (): Promise<Usage> => {
    // An answer cut at its hold (usage/output-meter.ts) reports our count, not the upstream's.
    const cut = outcome.outputCut();
    finalUsage = await answerUsage(ctx.body, outcome.attempt.target, usage, cut, text);
    const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: finalUsage, status, finishReason });
    return { ...openAiUsage(finalUsage.tokens), cost: usdOf(ctx.bill.charge(entry).costNanoUsd) };
  };

  async function* frames(): AsyncGenerator<string> {
    // The function's time is finite: stop the upstream at the deadline, so the stream ends with an
    // error event and the ledger is settled within the reserve, instead of Lambda killing the
    // invocation mid-answer with nothing billed and no end signalled to the client.
    const deadline = ctx.req.deadline;
    const deadlineTimer = deadline === undefined ? undefined : setTimeout(() => outcome.close('deadline'), Math.max(0, deadline - Date.now()));
    try {
      if (preface !== undefined) yield preface;
      for (let batch: ChunkParts[] | undefined = outcome.first; batch !== undefined;) {
        // One frame string per upstream read: the writer's gzip flush and socket write are per frame.
        let out = '';
        for (const parts of batch) for (const frame of encoder.parts(parts)) out += frame;
        if (out !== '') yield out;
        const next = await outcome.rest.next();
        batch = next.done === true ? undefined : next.value;
        if (batch !== undefined) produced(batch);
      }
      status = 'complete';
      yield (await encoder.complete(encoder.wantsFinalUsage ? await pricedFinal() : undefined)).join('');
    } catch (err) {
      if (ctx.req.signal.aborted) return;
      logger.warn('stream failed after first chunk', { requestId: ctx.req.requestId, error: describe(err) });
      yield (await encoder.failed(midStreamError(err))).join('');
    } finally {
      if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
      outcome.close();
      if (ctx.req.signal.aborted && status !== 'complete') status = 'aborted';
    }
  }

  return {
    kind: 'stream',
    status: 200,
    headers: routingHeaders(outcome),
    frames: frames(),
    after: async () => {
      // Frames that never ran (the client left before the first byte) leave the upstream open: stop it.
      outcome.close();
      if (ctx.req.signal.aborted && status !== 'complete') status = 'aborted';
      const billable =
        status !== 'complete'
          ? await estimateOr(usage, ctx.body, outcome.attempt.target, text())
          : (finalUsage ?? (await answerUsage(ctx.body, outcome.attempt.target, usage, outcome.outputCut(), text)));
      const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: billable, status, finishReason });
      await settleRequest(ctx.bill, entry, { requestId: ctx.req.requestId, receivedAt: ctx.req.receivedAt, attempts: outcome.attempts.length });
      await warmTokenizer();
    },
  };
}

function midStreamError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const detail = err instanceof UpstreamAttemptError ? err.failure.kind : 'connection';
  return new UpstreamUnavailableError(502, `The upstream model failed mid-stream (${detail}); the answer above is incomplete. Tokens delivered were billed.`);
}

function describe(err: unknown): string {
  return err instanceof UpstreamAttemptError ? `${err.failure.kind}: ${err.failure.message}` : err instanceof Error ? err.name : 'unknown';
}

/** A keep-alive comment is sent this often while the first token is awaited after commit (ms). */
const KEEPALIVE_EVERY_MS = 10_000;
const KEEPALIVE_FRAME = ': modelmux waiting for the first token\n\n';

/**
 * A stream committed before its first token: 200 now, keep-alive comments while routing goes on,
 * then the answer, or — if every target failed — an error event (the status is already sent). The
 * routing headers are unknown at commit time, so the outcome they would carry goes out as an SSE
 * comment just before the first data chunk (see {@link routingComment}).
 */
export function streamedLate(ctx: CallContext, routing: Promise<Awaited<ReturnType<typeof routeStream>>>): StreamResult {
  let inner: StreamResult | undefined;
  async function* frames(): AsyncGenerator<string> {
    let outcome: Awaited<typeof routing> | undefined;
    let failure: unknown;
    const settled = routing.then(
      (o) => void (outcome = o),
      (e: unknown) => void (failure = e),
    );
    yield KEEPALIVE_FRAME;
    while (!(await settledWithin(settled, KEEPALIVE_EVERY_MS))) yield KEEPALIVE_FRAME;
    if (outcome === undefined) {
      await ctx.bill.cancel();
      if (!ctx.req.signal.aborted)
        yield* await ctx.surface
          .streamEncoder({ id: completionId(ctx.req.requestId), created: ctx.created, model: ctx.body.model, outcome: undefined })
          .failed(asGatewayError(failure));
      return;
    }
    inner = streamed(ctx, outcome, routingComment(outcome));
    yield* inner.frames;
  }
  return {
    kind: 'stream',
    status: 200,
    headers: {},
    frames: frames(),
    after: async () => {
      if (inner === undefined) {
        // The client left during the keep-alive phase: an answer that started anyway is stopped and
        // billed as aborted (prompt, and the first batch it produced), never dropped.
        const outcome = await routing.catch(() => undefined);
        if (outcome === undefined) return ctx.bill.cancel();
        inner = streamed(ctx, outcome);
      }
      await inner.after?.();
    },
  };
}
