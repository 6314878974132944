import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { chatDemand } from '../billing/hold-demand';
import { startBill, type RequestBill } from '../billing/request-bill';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import type { GatewayRequest, GatewayResult, JsonResult, StreamResult } from '../http/types';
import { chatCompletionRequest, type ChatCompletionRequest } from '../openai/chat-request';
import type { ChatCompletion, ChatCompletionChunk, ChunkParts, Usage } from '../openai/chat-response';
import { makeUsage } from '../openai/chat-response';
import { GatewayError, UpstreamUnavailableError } from '../openai/errors';
import { parseJsonBody } from '../openai/parse-body';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { UpstreamAttemptError } from '../providers/types';
import { planAttempts, requestFallbacks, requiredCapabilities } from '../routing/attempt-plan';
import { overheadMs, routeBuffered, routeStream } from '../routing/fallback-router';
import { BUFFERED_CHAT_BUDGET_MS } from '../routing/request-budget';
import { DONE_FRAME, dataFrame, errorFrame } from '../sse/encode';
import { estimatePromptTokens, estimateTextTokens, warmTokenizer } from '../usage/estimate';
import { logger } from '../observability/logger';
import { dashboardUrl } from '../http/public-url';
import { recordOverhead, recordTimeToFirstToken } from '../observability/metrics';
import type { AuthenticatedKey } from '../accounts/authenticate';
import { authenticateRequest, routeOptions } from './guard';
import { heldJson, settledWithin } from './held-json';
import { settleRequest, usageEntry, type BillableUsage } from './settle-request';
import { holdEndsAt } from './hold-timing';
import { routingComment, routingHeaders } from './routing-headers';
import { config } from '../config/env';

/**
 * `POST /v1/chat/completions`: authenticate → validate → {@link runChatExchange}.
 */
export async function chatCompletions(req: GatewayRequest): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  return runChatExchange(req, caller, parseJsonBody(req.body, chatCompletionRequest));
}

/**
 * One chat exchange for an authenticated caller and a validated chat request: resolve the model (and
 * the client's `models` fallback list) → hold the most it can cost (402/429 before any upstream call;
 * billing/request-bill.ts) → route (fallback inside) → answer (`chat.completion`, or its chunks as
 * SSE) → settle the hold after the answer is out. When this container's view of the account predicts
 * the hold, the upstream is connected while the hold is written; nothing reaches the client before
 * the hold is confirmed, and an upstream started for a refused hold is aborted. `present` shapes a buffered answer's
 * body (applied before the held-JSON commit too, so a late buffered answer keeps its API's shape);
 * streamed frames are the caller's to translate. `POST /v1/responses` runs its requests
 * through this same function (responses/), so both APIs share one plan, router, admission, settle
 * and error rules.
 * @throws GatewayError before any byte is sent (404 unknown model, 402, 400, 5xx when no upstream answered).
 */
export async function runChatExchange(
  req: GatewayRequest,
  caller: AuthenticatedKey,
  body: ChatCompletionRequest,
  present: (completion: ChatCompletion) => unknown = (completion) => completion,
): Promise<GatewayResult> {
  const entry = getModel(body.model, 'chat');
  const fallbacks = requestFallbacks(body.models, CATALOGUE);
  // [issue 11] The account's own provider keys (BYOK) go first in the plan, and price its attempts
  // at the platform fee alone (the hold's most, and the settle's price: billing/attempt-price.ts).
  const [credentials, byok] = await Promise.all([loadUpstreamCredentials(), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  const plan = planAttempts(entry, CATALOGUE, credentials, requiredCapabilities(body), fallbacks, byok);
  const { demand, promptTokensEstimate, outputLimit } = chatDemand(body, entry, plan);
  const bill = startBill({ accountId: caller.accountId, keyHash: caller.keyHash, requestId: req.requestId, publicModel: body.model, demand, promptTokensEstimate, endsAt: holdEndsAt(req) });
  if (!bill.predicted) await bill.confirmed;
  // The held output limit always goes upstream, so no completion can outgrow the hold.
  const sent: ChatCompletionRequest = body.max_completion_tokens == null && body.max_tokens == null ? { ...body, max_tokens: outputLimit } : body;
  const upstream = new AbortController();
  req.signal.addEventListener('abort', () => upstream.abort(), { once: true });
  const opts = { ...routeOptions(req), signal: upstream.signal };
  const ctx: CallContext = { req, body, bill, created: Math.floor(req.receivedAt / 1000), present };
  if (body.stream !== true) {
    // Routing runs to the function's deadline; the status waits for the answer until the budget,
    // then is committed with JSON-whitespace beats (held-json.ts).
    const routing = routeBuffered(sent, plan, opts);
    routing.catch(() => undefined); // may fail (a client error) while the hold is still being written
    await holdBeforeAnswer(bill, routing, upstream);
    const answered = routing.catch(cancelling(bill));
    if (await settledWithin(answered, req.receivedAt + BUFFERED_CHAT_BUDGET_MS - Date.now())) return buffered(ctx, await answered);
    return heldJson(answered.then((outcome) => buffered(ctx, outcome)), req.signal, req.requestId);
  }
  const routing = routeStream(sent, plan, opts);
  routing.catch(() => undefined); // may fail (a client error) while the hold is still being written
  await holdBeforeAnswer(bill, routing, upstream);
  // Counted from the request's arrival: the hold's time is part of what the client waits.
  const early = await settledWithin(routing, Math.max(0, streamCommitAfterMs() - (Date.now() - req.receivedAt)));
  return early ? streamed(ctx, await routing.catch(cancelling(bill))) : streamedLate(ctx, routing);
}

/**
 * Waits for the hold before anything can reach the client. A refused hold aborts the upstream
 * (as a client abort: no breaker tick) and closes a stream that already started.
 */
async function holdBeforeAnswer(bill: RequestBill, routing: Promise<unknown>, upstream: AbortController): Promise<void> {
  try {
    await bill.confirmed;
  } catch (err) {
    upstream.abort();
    routing.then((o) => (o as { close?: () => void }).close?.(), () => undefined);
    throw err;
  }
}

/** A routing failure after the hold: release the hold (durably), then let the error answer. */
function cancelling(bill: RequestBill): (err: unknown) => Promise<never> {
  return async (err) => {
    await bill.cancel();
    throw err;
  };
}

/**
 * How long a stream may wait for its first token before the 200 is committed (ms; env
 * `STREAM_COMMIT_AFTER_MS`, default 10 s). Until then every failure keeps its own status code; after,
 * SSE comments keep the connection alive — CloudFront cuts an origin silent for 60 s (peers.md B11) —
 * and fallback goes on invisibly, since comments carry no content.
 */
function streamCommitAfterMs(): number {
  return config().STREAM_COMMIT_AFTER_MS;
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
function streamedLate(ctx: CallContext, routing: Promise<Awaited<ReturnType<typeof routeStream>>>): StreamResult {
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
      if (!ctx.req.signal.aborted) yield errorFrame(failure);
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

interface CallContext {
  req: GatewayRequest;
  body: ChatCompletionRequest;
  bill: RequestBill;
  /** Unix seconds, the same on every chunk (OpenAI: "each chunk has the same created"). */
  created: number;
  /** The buffered answer's body as its API shows it (the completion itself, or a Responses `response`). */
  present: (completion: ChatCompletion) => unknown;
}

async function buffered(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeBuffered>>): Promise<JsonResult> {
  const { parts } = outcome;
  const billable = parts.usage
    ? fromUsage(parts.usage)
    : await estimate(ctx.body, parts.choices.map((c) => (c.message.content ?? '') + (c.message.reasoning_content ?? '') + JSON.stringify(c.message.tool_calls ?? '')).join(''));
  const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: billable, status: 'complete' });
  const completion: ChatCompletion = {
    id: completionId(ctx.req.requestId),
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.body.model,
    choices: parts.choices,
    // `cost` (OpenRouter's): what this request was billed, USD — the same charge the settle writes.
    usage: { ...(parts.usage ?? makeUsage(billable.promptTokens, billable.completionTokens)), cost: usdOf(ctx.bill.charge(entry).costNanoUsd) },
  };
  // A string or absent, never null (OpenAI's OpenAPI description): only OpenAI-compatible hosts send one.
  if (typeof parts.system_fingerprint === 'string') completion.system_fingerprint = parts.system_fingerprint;
  recordOverhead(overheadMs(ctx.req.receivedAt, outcome.attempts));
  return {
    kind: 'json',
    status: 200,
    headers: routingHeaders(outcome),
    body: ctx.present(completion),
    after: async () => {
      await settleRequest(ctx.bill, entry, { requestId: ctx.req.requestId, receivedAt: ctx.req.receivedAt, attempts: outcome.attempts.length });
      await warmTokenizer();
    },
  };
}

/** nano-USD → USD as a JSON number (`usage.cost`). */
function usdOf(nanoUsd: number): number {
  return nanoUsd / 1e9;
}

/**
 * The stream: the first chunk has already arrived (fallback is over). Chunks are forwarded as they
 * come; the usage chunk only if the client asked (`stream_options.include_usage`), `[DONE]` only
 * after a finished answer. A failure after the first chunk ends the stream with an error event and
 * the tokens produced so far are still billed.
 *
 * Billing counts what the upstream produced (every batch as it is received, the first one included),
 * not only what reached the client: a client that leaves before a batch is written still caused it.
 * @param preface frames sent before the first chunk (the routing comment of a late-committed stream).
 */
function streamed(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeStream>>, preface?: string): StreamResult {
  recordTimeToFirstToken(Date.now() - ctx.req.receivedAt);
  recordOverhead(overheadMs(ctx.req.receivedAt, outcome.attempts));
  const includeUsage = ctx.body.stream_options?.include_usage === true;
  const id = completionId(ctx.req.requestId);
  let usage: Usage | undefined;
  let text = '';
  let status: 'complete' | 'partial' | 'aborted' = 'partial';
  /** The usage the final chunk reported (and priced): the settle bills exactly it. */
  let finalUsage: BillableUsage | undefined;
  const produced = (batch: readonly ChunkParts[]): void => {
    for (const parts of batch) {
      if (parts.usage) usage = parts.usage;
      for (const c of parts.choices) text += (c.delta.content ?? '') + (c.delta.reasoning_content ?? '') + (c.delta.tool_calls?.map(toolCallText).join('') ?? '');
    }
  };
  produced(outcome.first);

  const chunk = (choices: ChunkParts['choices']): ChatCompletionChunk => {
    const c: ChatCompletionChunk = { id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.body.model, choices };
    if (includeUsage) c.usage = null;
    return c;
  };

  async function* frames(): AsyncGenerator<string> {
    // The function's time is finite: stop the upstream at the deadline, so the stream ends with an
    // error event and the ledger is settled within the reserve, instead of Lambda killing the
    // invocation mid-answer with nothing billed and no end signalled to the client.
    const deadline = ctx.req.deadline;
    const deadlineTimer = deadline === undefined ? undefined : setTimeout(() => outcome.close('deadline'), Math.max(0, deadline - Date.now()));
    try {
      if (preface !== undefined) yield preface;
      for (let batch: ChunkParts[] | undefined = outcome.first; batch !== undefined; ) {
        for (const parts of batch) {
          if (parts.choices.length === 0) continue;
          yield dataFrame(chunk(parts.choices));
        }
        const next = await outcome.rest.next();
        batch = next.done === true ? undefined : next.value;
        if (batch !== undefined) produced(batch);
      }
      status = 'complete';
      if (includeUsage) {
        finalUsage = usage !== undefined ? fromUsage(usage) : await estimate(ctx.body, text);
        const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: finalUsage, status });
        const final: Usage = { ...(usage ?? toUsage(finalUsage)), cost: usdOf(ctx.bill.charge(entry).costNanoUsd) };
        yield dataFrame({ id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.body.model, choices: [], usage: final });
      }
      yield DONE_FRAME;
    } catch (err) {
      if (ctx.req.signal.aborted) return;
      logger.warn('stream failed after first chunk', { requestId: ctx.req.requestId, error: describe(err) });
      yield errorFrame(midStreamError(err));
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
      const billable = status === 'complete' && finalUsage !== undefined ? finalUsage : usage !== undefined && status === 'complete' ? fromUsage(usage) : await estimateOr(usage, ctx.body, text);
      const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: billable, status });
      await settleRequest(ctx.bill, entry, { requestId: ctx.req.requestId, receivedAt: ctx.req.receivedAt, attempts: outcome.attempts.length });
      await warmTokenizer();
    },
  };
}

/** What a (streamed) tool call produced, for a token estimate: function or custom tool name and input. */
function toolCallText(t: NonNullable<ChunkParts['choices'][number]['delta']['tool_calls']>[number]): string {
  return (t.function?.name ?? '') + (t.function?.arguments ?? '') + (t.custom?.name ?? '') + (t.custom?.input ?? '');
}

/** `chatcmpl-` + our request id: the completion id and the ledger key name the same request. */
function completionId(requestId: string): string {
  return `chatcmpl-${requestId}`;
}

function fromUsage(u: Usage): BillableUsage {
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, estimated: false };
}

function toUsage(b: BillableUsage): Usage {
  return makeUsage(b.promptTokens, b.completionTokens);
}

/**
 * Our count of a request's tokens, when the upstream gave none. Billing must never fail for want of
 * a tokenizer: if it cannot load, a conservative characters/3 count is used (still marked estimated).
 */
async function estimate(body: ChatCompletionRequest, completionText: string): Promise<BillableUsage> {
  try {
    return { promptTokens: await estimatePromptTokens(body.messages), completionTokens: await estimateTextTokens(completionText), estimated: true };
  } catch (err) {
    logger.error('tokenizer unavailable; billing a characters/3 estimate', { error: err as Error });
    const promptChars = JSON.stringify(body.messages).length;
    return { promptTokens: Math.ceil(promptChars / 3), completionTokens: Math.ceil(completionText.length / 3), estimated: true };
  }
}

/**
 * A stream that did not finish: the upstream's usage when it sent one (some send it before the end),
 * else our estimate of what was produced. Never less than what the client received.
 */
async function estimateOr(usage: Usage | undefined, body: ChatCompletionRequest, text: string): Promise<BillableUsage> {
  const est = await estimate(body, text);
  if (usage === undefined) return est;
  return { promptTokens: usage.prompt_tokens, completionTokens: Math.max(usage.completion_tokens, est.completionTokens), estimated: usage.completion_tokens < est.completionTokens };
}

function midStreamError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const detail = err instanceof UpstreamAttemptError ? err.failure.kind : 'connection';
  return new UpstreamUnavailableError(502, `The upstream model failed mid-stream (${detail}); the answer above is incomplete. Tokens delivered were billed.`);
}

function describe(err: unknown): string {
  return err instanceof UpstreamAttemptError ? `${err.failure.kind}: ${err.failure.message}` : err instanceof Error ? err.name : 'unknown';
}
