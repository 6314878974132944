/**
 * Renders planned replies as an OpenAI `chat.completion.chunk` stream (providers.md §1.4): `data:`
 * events, `[DONE]` last, the usage chunk only with `stream_options.include_usage`, with the hosts'
 * differences of openai-format.ts (DeepSeek reasoning deltas and `: keep-alive` comments, MiniMax
 * `reasoning_details` and `base_resp`).
 *
 * Several choices (`n`) interleave as OpenAI's do: every choice's role chunk, then one piece of each
 * choice in turn, then their finish chunks; each chunk carries one choice, by its `index`. With
 * `logprobs: true` a content chunk carries the logprobs of its own tokens (openai-logprobs.ts).
 */
import { jsonEvent, splitArguments, splitText, type SseEvent, type SseReply } from './deliver.js';
import type { JsonObject } from './json-narrowing.js';
import { openAIStreamError } from './openai-errors.js';
import { envelope, minimaxExtras, openAIFinishReason, reasoningDetail, toolCallId, usageOf, visibleContent } from './openai-format.js';
import type { OpenAIChatRequest } from './openai-input.js';
import { contentLogprobs } from './openai-logprobs.js';
import type { ReplyPlan } from './reply.js';
import type { SimCall } from './types.js';

/** One choice's stream deltas after its role chunk: reasoning, content (with its logprobs), tool calls. */
function choiceDeltas(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan, index: number): Array<{ delta: JsonObject; logprobs: JsonObject | null }> {
  const out: Array<{ delta: JsonObject; logprobs: JsonObject | null }> = [];
  const deepseekThinks = call.provider === 'deepseek' && plan.reasoning !== undefined;
  if (plan.reasoning && (deepseekThinks || (call.provider === 'minimax' && req.reasoningSplit))) {
    for (const piece of splitText(plan.reasoning)) {
      out.push({ delta: deepseekThinks ? { content: null, reasoning_content: piece } : { reasoning_details: [reasoningDetail(piece)] }, logprobs: null });
    }
  }
  for (const piece of splitText(visibleContent(call, req, plan))) {
    out.push({ delta: { content: piece }, logprobs: req.logprobs === undefined ? null : contentLogprobs(piece, req.logprobs) });
  }
  plan.toolCalls.forEach((c, i) => {
    out.push({ delta: { tool_calls: [{ index: i, id: toolCallId(call, index, i), type: 'function', function: { name: c.name, arguments: '' } }] }, logprobs: null });
    for (const frag of splitArguments(c.argsJson)) out.push({ delta: { tool_calls: [{ index: i, function: { arguments: frag } }] }, logprobs: null });
  });
  return out;
}

/** Streamed chunks, `[DONE]` terminated; the usage chunk only with `stream_options.include_usage`. */
export function openAIStream(call: SimCall, req: OpenAIChatRequest, plans: readonly ReplyPlan[]): SseReply {
  const base = envelope(call, req, 'chat.completion.chunk');
  const chunk = (index: number, delta: JsonObject, finish: string | null = null, extra: JsonObject = {}, logprobs: JsonObject | null = null): JsonObject => ({
    ...base,
    choices: [{ index, delta, logprobs, finish_reason: finish }],
    ...(req.includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const events: SseEvent[] = [];
  plans.forEach((plan, index) => {
    const deepseekThinks = call.provider === 'deepseek' && plan.reasoning !== undefined;
    const role = deepseekThinks ? { role: 'assistant', content: null, reasoning_content: '' } : { role: 'assistant', content: '' };
    events.push(jsonEvent(chunk(index, role)));
  });
  const deltas = plans.map((plan, index) => choiceDeltas(call, req, plan, index));
  for (let step = 0; step < Math.max(...deltas.map((d) => d.length)); step++) {
    deltas.forEach((list, index) => {
      const d = list[step];
      if (d !== undefined) events.push(jsonEvent(chunk(index, d.delta, null, {}, d.logprobs), { content: true }));
    });
  }
  const usage = usageOf(call, plans);
  plans.forEach((plan, index) => {
    const finalExtra: JsonObject = {};
    const last = index === plans.length - 1;
    if (call.provider === 'minimax' && last) Object.assign(finalExtra, minimaxExtras());
    events.push(jsonEvent(chunk(index, {}, openAIFinishReason(plan.finish), finalExtra)));
  });
  if (req.includeUsage) events.push(jsonEvent({ ...base, choices: [], usage }));
  events.push({ data: '[DONE]' });
  return {
    kind: 'sse',
    eol: '\n',
    headers: { 'x-request-id': call.requestId },
    events: call.provider === 'deepseek' ? withKeepAlives(events) : events,
    errorEvent: jsonEvent(openAIStreamError()),
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
