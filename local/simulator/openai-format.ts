/**
 * Renders a planned reply as an OpenAI `chat.completion` body or `chat.completion.chunk` stream
 * (providers.md §1.3-1.4), with each OpenAI-compatible host's differences:
 * - DeepSeek: `reasoning_content` (message, and deltas before content), cache hit/miss usage, blank
 *   lines before buffered bodies and `: keep-alive` comments in streams (§4.3-4.5);
 * - MiniMax: `<think>` inline or `reasoning_details` with `reasoning_split`, `base_resp` (§5.2, §5.4);
 * - Groq: `x_groq` (§6); OpenAI itself: snapshot-like model id (`<model>-sim`), system fingerprint.
 */
import { splitArguments, splitText } from './chunking.js';
import type { JsonReply, SseReply } from './deliver.js';
import type { JsonObject } from './json-narrowing.js';
import { openAIStreamError } from './openai-errors.js';
import type { OpenAIChatRequest } from './openai-input.js';
import type { Finish, ReplyPlan } from './reply.js';
import { jsonEvent, type SseEvent } from './sse.js';
import type { SimCall } from './call.js';

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

function usageOf(call: SimCall, plan: ReplyPlan): JsonObject {
  const base = { prompt_tokens: plan.promptTokens, completion_tokens: plan.completionTokens, total_tokens: plan.promptTokens + plan.completionTokens };
  switch (call.provider) {
    case 'openai':
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: plan.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      };
    case 'deepseek':
      // No prompt cache is simulated: every prompt token is a cache miss.
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: 0 },
        prompt_cache_hit_tokens: 0,
        prompt_cache_miss_tokens: plan.promptTokens,
        completion_tokens_details: { reasoning_tokens: plan.reasoningTokens },
      };
    case 'minimax':
      return { ...base, completion_tokens_details: { reasoning_tokens: plan.reasoningTokens } };
    default:
      return base;
  }
}

function toolCallId(call: SimCall, i: number): string {
  return `call_sim${call.seq.toString().padStart(4, '0')}x${i}`;
}

function reasoningDetail(text: string): JsonObject {
  return { type: 'reasoning.text', id: 'reasoning-text-1', format: 'MiniMax-response-v1', index: 0, text };
}

/** MiniMax without `reasoning_split` puts the reasoning inline, wrapped in think tags (§5.2). */
function visibleContent(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan): string {
  if (call.provider === 'minimax' && !req.reasoningSplit && plan.reasoning) {
    return `<think>\n${plan.reasoning}\n</think>\n\n${plan.text}`;
  }
  return plan.text;
}

function envelope(call: SimCall, req: OpenAIChatRequest, object: string): JsonObject {
  const out: JsonObject = { id: `chatcmpl-sim${call.seq}`, object, created: call.created, model: responseModel(call, req.model) };
  if (call.provider === 'openai' || call.provider === 'deepseek') out['system_fingerprint'] = 'fp_sim';
  if (call.provider === 'openai') out['service_tier'] = 'default';
  return out;
}

function minimaxExtras(): JsonObject {
  return { input_sensitive: false, output_sensitive: false, base_resp: { status_code: 0, status_msg: '' } };
}

/** Buffered `chat.completion`; DeepSeek's body is preceded by blank lines. */
export function openAICompletion(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan): JsonReply {
  const content = visibleContent(call, req, plan);
  const message: JsonObject = { role: 'assistant', content: plan.toolCalls.length > 0 && content === '' ? null : content };
  if (call.provider === 'openai') Object.assign(message, { refusal: null, annotations: [] });
  if (call.provider === 'deepseek' && plan.reasoning) message['reasoning_content'] = plan.reasoning;
  if (call.provider === 'minimax' && req.reasoningSplit && plan.reasoning) message['reasoning_details'] = [reasoningDetail(plan.reasoning)];
  if (plan.toolCalls.length > 0) {
    message['tool_calls'] = plan.toolCalls.map((c, i) => ({ id: toolCallId(call, i), type: 'function', function: { name: c.name, arguments: c.argsJson } }));
  }
  const body: JsonObject = {
    ...envelope(call, req, 'chat.completion'),
    choices: [{ index: 0, message, logprobs: null, finish_reason: openAIFinishReason(plan.finish) }],
    usage: usageOf(call, plan),
  };
  if (call.provider === 'groq') body['x_groq'] = { id: `req_sim${call.seq}` };
  if (call.provider === 'minimax') Object.assign(body, minimaxExtras());
  return { kind: 'json', status: 200, body, headers: { 'x-request-id': call.requestId }, ...(call.provider === 'deepseek' ? { preamble: '\n\n' } : {}) };
}

/** Streamed chunks, `[DONE]` terminated; the usage chunk only with `stream_options.include_usage`. */
export function openAIStream(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan): SseReply {
  const base = envelope(call, req, 'chat.completion.chunk');
  const chunk = (delta: JsonObject, finish: string | null = null, extra: JsonObject = {}): JsonObject => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(req.includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const events: SseEvent[] = [];
  const deepseekThinks = call.provider === 'deepseek' && plan.reasoning !== undefined;
  events.push(jsonEvent(chunk(deepseekThinks ? { role: 'assistant', content: null, reasoning_content: '' } : { role: 'assistant', content: '' }, null, call.provider === 'groq' ? { x_groq: { id: `req_sim${call.seq}` } } : {})));
  if (plan.reasoning && (deepseekThinks || (call.provider === 'minimax' && req.reasoningSplit))) {
    for (const piece of splitText(plan.reasoning)) {
      const delta = deepseekThinks ? { content: null, reasoning_content: piece } : { reasoning_details: [reasoningDetail(piece)] };
      events.push(jsonEvent(chunk(delta), { content: true }));
    }
  }
  for (const piece of splitText(visibleContent(call, req, plan))) events.push(jsonEvent(chunk({ content: piece }), { content: true }));
  plan.toolCalls.forEach((c, index) => {
    events.push(jsonEvent(chunk({ tool_calls: [{ index, id: toolCallId(call, index), type: 'function', function: { name: c.name, arguments: '' } }] }), { content: true }));
    for (const frag of splitArguments(c.argsJson)) {
      events.push(jsonEvent(chunk({ tool_calls: [{ index, function: { arguments: frag } }] }), { content: true }));
    }
  });
  const usage = usageOf(call, plan);
  const finalExtra: JsonObject = {};
  // Groq historically reports stream usage on the final chunk's x_groq (providers.md §6).
  if (call.provider === 'groq') finalExtra['x_groq'] = { id: `req_sim${call.seq}`, usage };
  if (call.provider === 'minimax') Object.assign(finalExtra, minimaxExtras());
  events.push(jsonEvent(chunk({}, openAIFinishReason(plan.finish), finalExtra)));
  if (req.includeUsage) events.push(jsonEvent({ ...base, choices: [], usage }));
  events.push({ data: '[DONE]' });
  return {
    kind: 'sse',
    eol: '\n',
    headers: { 'x-request-id': call.requestId },
    events: call.provider === 'deepseek' ? withKeepAlives(events) : events,
    errorEvent: jsonEvent(openAIStreamError(call.provider)),
  };
}

/** DeepSeek keeps busy connections alive with SSE comments (§4.5): one first, then every few events. */
function withKeepAlives(events: readonly SseEvent[]): SseEvent[] {
  const out: SseEvent[] = [{ comment: 'keep-alive' }];
  events.forEach((e, i) => {
    out.push(e);
    if (i % 4 === 3 && i < events.length - 1) out.push({ comment: 'keep-alive' });
  });
  return out;
}
