/**
 * OpenAI-shaped answers: the `chat.completion` body, the `chat.completion.chunk` stream (`data:`
 * events, `[DONE]` last, the usage chunk only with `stream_options.include_usage`) and logprobs, with
 * each host's differences:
 * - DeepSeek: `reasoning_content`, cache hit/miss usage, blank lines before buffered bodies and
 *   `: keep-alive` comments in streams;
 * - MiniMax: `<think>` inline or `reasoning_details` with `reasoning_split`, `base_resp`;
 * - OpenAI: a snapshot-like model id (`<model>-sim`), fingerprint and tier; other hosts plain.
 * Several choices (`n`): `choices[i].index` = i, usage counts the prompt once and every choice's
 * completion; streamed, every role chunk, then one piece of each choice in turn, then the finishes.
 * Sources: providers.md §1.3, §1.4, §4.3, §4.5, §5.2, §5.4.
 */
import { byStep, jsonEvent, type JsonReply, splitArguments, splitText, type SseEvent, type SseReply } from './deliver.js';
import { streamErrorEvent } from './errors.js';
import type { JsonObject } from './json-narrowing.js';
import type { OpenAIChatRequest } from './openai.js';
import { FILLER_WORDS, type ReplyPlan } from './reply.js';
import type { SimCall } from './types.js';

const FINISH = { stop: 'stop', stop_sequence: 'stop', length: 'length', tool_calls: 'tool_calls' } as const;

/** The host's usage object: the prompt once, the completion and reasoning tokens of every choice. */
function usageOf(call: SimCall, plans: readonly ReplyPlan[]): JsonObject {
  const prompt = plans[0]?.promptTokens ?? 0;
  const cached = plans[0]?.cachedTokens ?? 0;
  const completion = plans.reduce((sum, p) => sum + p.completionTokens, 0);
  const reasoning = { reasoning_tokens: plans.reduce((sum, p) => sum + p.reasoningTokens, 0) };
  const base = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  switch (call.provider) {
    case 'openai':
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
        completion_tokens_details: { ...reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      };
    case 'deepseek':
      // Every prompt token is a cache miss, but for a `[cached]` request's cache read.
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: cached },
        prompt_cache_hit_tokens: cached,
        prompt_cache_miss_tokens: prompt - cached,
        completion_tokens_details: reasoning,
      };
    case 'minimax':
      return { ...base, ...(cached > 0 ? { prompt_tokens_details: { cached_tokens: cached } } : {}), completion_tokens_details: reasoning };
    default:
      return base;
  }
}

/** A deterministic tool-call id, distinct per call, choice and request. */
function toolCallId(call: SimCall, choice: number, i: number): string {
  return `call_sim${call.seq.toString().padStart(4, '0')}${choice === 0 ? '' : `c${choice}`}x${i}`;
}

/** One MiniMax `reasoning_details` element carrying `text`. */
function reasoningDetail(text: string): JsonObject {
  return { type: 'reasoning.text', id: 'reasoning-text-1', format: 'MiniMax-response-v1', index: 0, text };
}

/** MiniMax without `reasoning_split` puts the reasoning inline, in think tags. */
function visibleContent(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan): string {
  return call.provider === 'minimax' && !req.reasoningSplit && plan.reasoning ? `<think>\n${plan.reasoning}\n</think>\n\n${plan.text}` : plan.text;
}

/** The fields every body or chunk of this host carries. */
function envelope(call: SimCall, req: OpenAIChatRequest, object: string): JsonObject {
  const out: JsonObject = { id: `chatcmpl-sim${call.seq}`, object, created: call.created, model: call.provider === 'openai' ? `${req.model}-sim` : req.model };
  if (call.provider === 'openai' || call.provider === 'deepseek') out['system_fingerprint'] = 'fp_sim';
  if (call.provider === 'openai') out['service_tier'] = 'default';
  return out;
}

/** MiniMax's extra top-level fields on a successful answer. */
const minimaxExtras = (call: SimCall): JsonObject =>
  call.provider === 'minimax' ? { input_sensitive: false, output_sensitive: false, base_resp: { status_code: 0, status_msg: '' } } : {};

/** Buffered `chat.completion`, one choice per plan; DeepSeek's body is preceded by blank lines. */
export function openAICompletion(call: SimCall, req: OpenAIChatRequest, plans: readonly ReplyPlan[]): JsonReply {
  const choices = plans.map((plan, index) => {
    const content = visibleContent(call, req, plan);
    const message: JsonObject = { role: 'assistant', content: plan.toolCalls.length > 0 && content === '' ? null : content };
    if (call.provider === 'openai') Object.assign(message, { refusal: null, annotations: [] });
    if (call.provider === 'deepseek' && plan.reasoning) message['reasoning_content'] = plan.reasoning;
    if (call.provider === 'minimax' && req.reasoningSplit && plan.reasoning) message['reasoning_details'] = [reasoningDetail(plan.reasoning)];
    if (plan.toolCalls.length > 0)
      message['tool_calls'] = plan.toolCalls.map((c, i) => ({
        id: toolCallId(call, index, i),
        type: 'function',
        function: { name: c.name, arguments: c.argsJson },
      }));
    return { index, message, logprobs: req.logprobs === undefined ? null : contentLogprobs(content, req.logprobs), finish_reason: FINISH[plan.finish] };
  });
  const body = { ...envelope(call, req, 'chat.completion'), choices, usage: usageOf(call, plans), ...minimaxExtras(call) };
  return { kind: 'json', status: 200, body, headers: { 'x-request-id': call.requestId }, ...(call.provider === 'deepseek' ? { preamble: '\n\n' } : {}) };
}

/** One choice's deltas after its role chunk: reasoning, content (with its logprobs), tool calls. */
function choiceDeltas(call: SimCall, req: OpenAIChatRequest, plan: ReplyPlan, index: number): Array<{ delta: JsonObject; logprobs: JsonObject | null }> {
  const deepseekThinks = call.provider === 'deepseek' && plan.reasoning !== undefined;
  const reasoning = plan.reasoning && (deepseekThinks || (call.provider === 'minimax' && req.reasoningSplit)) ? splitText(plan.reasoning) : [];
  return [
    ...reasoning.map((piece) => ({
      delta: deepseekThinks ? { content: null, reasoning_content: piece } : { reasoning_details: [reasoningDetail(piece)] },
      logprobs: null,
    })),
    ...splitText(visibleContent(call, req, plan)).map((piece) => ({
      delta: { content: piece },
      logprobs: req.logprobs === undefined ? null : contentLogprobs(piece, req.logprobs),
    })),
    ...plan.toolCalls.flatMap((c, i) => [
      { delta: { tool_calls: [{ index: i, id: toolCallId(call, index, i), type: 'function', function: { name: c.name, arguments: '' } }] }, logprobs: null },
      ...splitArguments(c.argsJson).map((frag) => ({ delta: { tool_calls: [{ index: i, function: { arguments: frag } }] }, logprobs: null })),
    ]),
  ];
}

/** Streamed chunks, `[DONE]` terminated. */
export function openAIStream(call: SimCall, req: OpenAIChatRequest, plans: readonly ReplyPlan[]): SseReply {
  const base = envelope(call, req, 'chat.completion.chunk');
  const chunk = (index: number, delta: JsonObject, finish: string | null = null, logprobs: JsonObject | null = null, extra: JsonObject = {}): JsonObject => ({
    ...base,
    choices: [{ index, delta, logprobs, finish_reason: finish }],
    ...(req.includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const events: SseEvent[] = plans.map((plan, index) =>
    jsonEvent(
      chunk(
        index,
        call.provider === 'deepseek' && plan.reasoning !== undefined
          ? { role: 'assistant', content: null, reasoning_content: '' }
          : { role: 'assistant', content: '' },
      ),
    ),
  );
  for (const { item, index } of byStep(plans.map((plan, index) => choiceDeltas(call, req, plan, index))).flat()) {
    events.push(jsonEvent(chunk(index, item.delta, null, item.logprobs), { content: true }));
  }
  plans.forEach((plan, index) => events.push(jsonEvent(chunk(index, {}, FINISH[plan.finish], null, index === plans.length - 1 ? minimaxExtras(call) : {}))));
  if (req.includeUsage) events.push(jsonEvent({ ...base, choices: [], usage: usageOf(call, plans) }));
  events.push({ data: '[DONE]' });
  // DeepSeek keeps busy connections alive with SSE comments: one first, then every few events.
  const withKeepAlives = events.flatMap((e, i) => (i % 4 === 3 && i < events.length - 1 ? [e, { comment: 'keep-alive' }] : [e]));
  return {
    kind: 'sse',
    eol: '\n',
    headers: { 'x-request-id': call.requestId },
    events: call.provider === 'deepseek' ? [{ comment: 'keep-alive' }, ...withKeepAlives] : events,
    errorEvent: streamErrorEvent('openai', call.requestId),
  };
}

/**
 * A choice's `logprobs` for `text` in OpenAI's shape `{content: [{token, logprob, bytes, top_logprobs}],
 * refusal: null}`: one token per word with the whitespace after it (so they join to the text, and count
 * its completion tokens); the chosen token's logprob comes from its characters, `top` alternatives
 * (filler words) each less likely.
 */
function contentLogprobs(text: string, top: number): JsonObject {
  const tokens = text.match(/\S+\s*/g) ?? [];
  const lead = text.match(/^\s*/)?.[0] ?? '';
  if (tokens.length > 0) tokens[0] = lead + tokens[0];
  const entry = (token: string, logprob: number): JsonObject => ({ token, logprob, bytes: [...Buffer.from(token, 'utf8')] });
  const content = tokens.map((token) => {
    let h = 0;
    for (const ch of token) h = (h * 31 + ch.codePointAt(0)!) % 997;
    const logprob = -Math.round((h / 997) * 1000) / 1000;
    const trail = token.match(/\s*$/)?.[0] ?? '';
    const alternatives = FILLER_WORDS.filter((w) => w + trail !== token).map((w, i) => entry(w + trail, logprob - 1.5 - i));
    return { ...entry(token, logprob), top_logprobs: [entry(token, logprob), ...alternatives].slice(0, top) };
  });
  return { content, refusal: null };
}
