import { admit } from '../billing/admit';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import type { GatewayRequest, GatewayResult, JsonResult, StreamResult } from '../http/types';
import { chatCompletionRequest, type ChatCompletionRequest } from '../openai/chat-request';
import type { ChatCompletion, ChatCompletionChunk, ChunkParts, Usage } from '../openai/chat-response';
import { makeUsage } from '../openai/chat-response';
import { GatewayError, UpstreamUnavailableError } from '../openai/errors';
import { parseJsonBody } from '../openai/parse-body';
import { loadUpstreamCredentials } from '../providers/credentials';
import { UpstreamStreamError } from '../providers/types';
import { planAttempts, requiredCapabilities } from '../routing/attempt-plan';
import { routeBuffered, routeStream, type RoutedBase } from '../routing/chat-router';
import { DONE_FRAME, dataFrame, errorFrame } from '../sse/encode';
import { estimatePromptTokens, estimateTextTokens } from '../usage/estimate';
import { logger } from '../observability/logger';
import { authenticateRequest, routeOptions } from './guard';
import { settleRequest, type BillableUsage } from './settle-request';

/**
 * `POST /v1/chat/completions`: authenticate → validate → resolve the model → admit (402 before any
 * upstream call) → route (fallback inside) → answer → settle the ledger after the answer is out.
 */
export async function chatCompletions(req: GatewayRequest): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, chatCompletionRequest);
  const entry = getModel(body.model, 'chat');
  await admit(caller.accountId);
  const plan = planAttempts(entry, CATALOGUE, await loadUpstreamCredentials(), requiredCapabilities(body));
  const ctx: CallContext = { req, body, accountId: caller.accountId, created: Math.floor(req.receivedAt / 1000) };
  return body.stream === true ? streamed(ctx, await routeStream(body, plan, routeOptions(req))) : buffered(ctx, await routeBuffered(body, plan, routeOptions(req)));
}

interface CallContext {
  req: GatewayRequest;
  body: ChatCompletionRequest;
  accountId: string;
  /** Unix seconds, the same on every chunk (OpenAI: "each chunk has the same created"). */
  created: number;
}

/** Tells the client who answered, without changing the body's `model` (the name it asked for). */
function routingHeaders(outcome: RoutedBase): Record<string, string> {
  return {
    'x-modelmux-model': outcome.attempt.publicModel,
    'x-modelmux-provider': outcome.attempt.target.provider,
    'x-modelmux-attempts': String(outcome.attempts.length),
  };
}

async function buffered(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeBuffered>>): Promise<JsonResult> {
  const { parts } = outcome;
  const billable = parts.usage
    ? fromUsage(parts.usage)
    : await estimate(ctx.body, parts.choices.map((c) => (c.message.content ?? '') + (c.message.reasoning_content ?? '') + JSON.stringify(c.message.tool_calls ?? '')).join(''));
  const completion: ChatCompletion = {
    id: completionId(ctx.req.requestId),
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.body.model,
    choices: parts.choices,
    usage: parts.usage ?? makeUsage(billable.promptTokens, billable.completionTokens),
    system_fingerprint: parts.system_fingerprint ?? null,
  };
  return {
    kind: 'json',
    status: 200,
    headers: routingHeaders(outcome),
    body: completion,
    after: () => settleRequest({ accountId: ctx.accountId, requestId: ctx.req.requestId, requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: billable, status: 'complete' }),
  };
}

/**
 * The stream: the first chunk has already arrived (fallback is over). Chunks are forwarded as they
 * come; the usage chunk only if the client asked (`stream_options.include_usage`), `[DONE]` only
 * after a finished answer. A failure after the first chunk ends the stream with an error event and
 * the tokens produced so far are still billed.
 */
function streamed(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeStream>>): StreamResult {
  const includeUsage = ctx.body.stream_options?.include_usage === true;
  const id = completionId(ctx.req.requestId);
  let usage: Usage | undefined;
  let text = '';
  let status: 'complete' | 'partial' | 'aborted' = 'partial';

  const chunk = (choices: ChunkParts['choices']): ChatCompletionChunk => {
    const c: ChatCompletionChunk = { id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.body.model, choices };
    if (includeUsage) c.usage = null;
    return c;
  };

  async function* frames(): AsyncGenerator<string> {
    try {
      for (let batch: ChunkParts[] | undefined = outcome.first; batch !== undefined; ) {
        for (const parts of batch) {
          if (parts.usage) usage = parts.usage;
          if (parts.choices.length === 0) continue;
          for (const c of parts.choices) text += (c.delta.content ?? '') + (c.delta.reasoning_content ?? '') + (c.delta.tool_calls?.map((t) => t.function?.arguments ?? '').join('') ?? '');
          yield dataFrame(chunk(parts.choices));
        }
        const next = await outcome.rest.next();
        batch = next.done === true ? undefined : next.value;
      }
      status = 'complete';
      if (includeUsage) {
        const final = usage ?? toUsage(await estimate(ctx.body, text));
        yield dataFrame({ id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.body.model, choices: [], usage: final });
      }
      yield DONE_FRAME;
    } catch (err) {
      if (ctx.req.signal.aborted) return;
      logger.warn('stream failed after first chunk', { requestId: ctx.req.requestId, error: describe(err) });
      yield errorFrame(midStreamError(err));
    } finally {
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
      const billable = usage !== undefined && status === 'complete' ? fromUsage(usage) : await estimateOr(usage, ctx.body, text);
      await settleRequest({ accountId: ctx.accountId, requestId: ctx.req.requestId, requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: billable, status });
    },
  };
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

async function estimate(body: ChatCompletionRequest, completionText: string): Promise<BillableUsage> {
  return { promptTokens: await estimatePromptTokens(body.messages), completionTokens: await estimateTextTokens(completionText), estimated: true };
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
  const detail = err instanceof UpstreamStreamError ? err.failure.kind : 'connection';
  return new UpstreamUnavailableError(502, `The upstream model failed mid-stream (${detail}); the answer above is incomplete. Tokens delivered were billed.`);
}

function describe(err: unknown): string {
  return err instanceof UpstreamStreamError ? `${err.failure.kind}: ${err.failure.message}` : err instanceof Error ? err.name : 'unknown';
}
