/**
 * Renders planned replies as an OpenAI `chat.completion` body (providers.md §1.3; the stream is
 * openai-stream.ts, §1.4), with each OpenAI-compatible host's differences:
 * - DeepSeek: `reasoning_content` (message, and deltas before content), cache hit/miss usage, blank
 *   lines before buffered bodies and `: keep-alive` comments in streams (§4.3-4.5);
 * - MiniMax: `<think>` inline or `reasoning_details` with `reasoning_split`, `base_resp` (§5.2, §5.4);
 * - OpenAI itself: snapshot-like model id (`<model>-sim`), system fingerprint; any other host (a new
 *   manifest entry) answers plain Chat Completions.
 *
 * Several choices (`n`, one {@link ReplyPlan} each): `choices[i].index` = i; usage counts the prompt
 * once and the completion tokens of every choice, as OpenAI bills all of them (§1.1). With
 * `logprobs: true` each choice carries `{content: [...], refusal: null}` for its content tokens
 * (openai-logprobs.ts); otherwise `logprobs: null`. The stream: openai-stream.ts.
 */
import type { JsonReply } from './deliver.js';
import type { JsonObject } from './json-narrowing.js';
import type { OpenAIChatRequest } from './openai-input.js';
import { contentLogprobs } from './openai-logprobs.js';
import type { Finish, ReplyPlan } from './reply.js';
import type { SimCall } from './types.js';

/** OpenAI finish_reason for a neutral finish. */
export function openAIFinishReason(finish: Finish): string {
  switch (finish) {
    case 'length':
      return 'length';
    case 'tool_calls':
      return 'tool_calls';
    case 'stop':
    case 'stop_sequence':
      return 'stop';
    default:
      return 'stop';
  }
}

function responseModel(call: SimCall, model: string): string {
  return call.provider === 'openai' ? `${model}-sim` : model;
}

/** The plans' totals: the prompt once, completion and reasoning tokens of every choice. */
function totals(plans: readonly ReplyPlan[]): Required<Pick<ReplyPlan, 'promptTokens' | 'completionTokens' | 'reasoningTokens' | 'cachedTokens'>> {
  return {
    promptTokens: plans[0]?.promptTokens ?? 0,
    cachedTokens: plans[0]?.cachedTokens ?? 0,
    completionTokens: plans.reduce((sum, p) => sum + p.completionTokens, 0),
    reasoningTokens: plans.reduce((sum, p) => sum + p.reasoningTokens, 0),
  };
}

/** The host's usage object for the plans (every choice's completion tokens; providers.md §1.3, §4.4). */
export function usageOf(call: SimCall, plans: readonly ReplyPlan[]): JsonObject {
  const plan = totals(plans);
  const base = { prompt_tokens: plan.promptTokens, completion_tokens: plan.completionTokens, total_tokens: plan.promptTokens + plan.completionTokens };
  switch (call.provider) {
    case 'openai':
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: plan.cachedTokens, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: plan.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      };
    case 'deepseek':
      // Every prompt token is a cache miss, but for a `[cached]` request's cache read (reply.ts).
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: plan.cachedTokens },
        prompt_cache_hit_tokens: plan.cachedTokens,
        prompt_cache_miss_tokens: plan.promptTokens - plan.cachedTokens,
        completion_tokens_details: { reasoning_tokens: plan.reasoningTokens },
      };
    case 'minimax':
      return { ...base, ...(plan.cachedTokens > 0 ? { prompt_tokens_details: { cached_tokens: plan.cachedTokens } } : {}), completion_tokens_details: { reasoning_tokens: plan.reasoningTokens } };
    default:
      return base;
  }
}

/** A deterministic tool-call id, distinct per call, choice and request. */
export function toolCallId(call: SimCall, choice: number, i: number): string {
  return `call_sim${call.seq.toString().padStart(4, '0')}${choice === 0 ? '' : `c${choice}`}x${i}`;
}

/** One MiniMax `reasoning_details` element carrying `text` (§5.2). */
export function reasoningDetail(text: string): JsonObject {
  return { type: 'reasoning.text', id: 'reasoning-text-1', format: 'MiniMax-response-v1', index: 0, text };
}

/** MiniMax without `reasoning_split` puts the reasoning inline, wrapped in think tags (§5.2). */
export function visibleContent(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan): string {
  if (call.provider === 'minimax' && !req.reasoningSplit && plan.reasoning) {
    return `<think>\n${plan.reasoning}\n</think>\n\n${plan.text}`;
  }
  return plan.text;
}

/** The fields every body or chunk of this host carries: id, object, created, model (+ fingerprint, tier). */
export function envelope(call: SimCall, req: OpenAIChatRequest, object: string): JsonObject {
  const out: JsonObject = { id: `chatcmpl-sim${call.seq}`, object, created: call.created, model: responseModel(call, req.model) };
  if (call.provider === 'openai' || call.provider === 'deepseek') out['system_fingerprint'] = 'fp_sim';
  if (call.provider === 'openai') out['service_tier'] = 'default';
  return out;
}

/** MiniMax's extra top-level fields on a successful answer (§5.4). */
export function minimaxExtras(): JsonObject {
  return { input_sensitive: false, output_sensitive: false, base_resp: { status_code: 0, status_msg: '' } };
}

/** Buffered `chat.completion`, one choice per plan; DeepSeek's body is preceded by blank lines. */
export function openAICompletion(call: SimCall, req: OpenAIChatRequest, plans: readonly ReplyPlan[]): JsonReply {
  const choices = plans.map((plan, index) => {
    const content = visibleContent(call, req, plan);
    const message: JsonObject = { role: 'assistant', content: plan.toolCalls.length > 0 && content === '' ? null : content };
    if (call.provider === 'openai') Object.assign(message, { refusal: null, annotations: [] });
    if (call.provider === 'deepseek' && plan.reasoning) message['reasoning_content'] = plan.reasoning;
    if (call.provider === 'minimax' && req.reasoningSplit && plan.reasoning) message['reasoning_details'] = [reasoningDetail(plan.reasoning)];
    if (plan.toolCalls.length > 0) {
      message['tool_calls'] = plan.toolCalls.map((c, i) => ({ id: toolCallId(call, index, i), type: 'function', function: { name: c.name, arguments: c.argsJson } }));
    }
    const logprobs = req.logprobs === undefined ? null : contentLogprobs(content, req.logprobs);
    return { index, message, logprobs, finish_reason: openAIFinishReason(plan.finish) };
  });
  const body: JsonObject = { ...envelope(call, req, 'chat.completion'), choices, usage: usageOf(call, plans) };
  if (call.provider === 'minimax') Object.assign(body, minimaxExtras());
  return { kind: 'json', status: 200, body, headers: { 'x-request-id': call.requestId }, ...(call.provider === 'deepseek' ? { preamble: '\n\n' } : {}) };
}
