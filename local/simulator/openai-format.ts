/** OpenAI-shaped answers: the buffered body, the chunk stream and their logprobs. */
import { jsonEvent, type JsonReply, splitArguments, splitText, type SseEvent, type SseReply } from './deliver.js';
import type { JsonObject } from './json-narrowing.js';
import { openAIStreamError } from './openai-errors.js';
import type { OpenAIChatRequest } from './openai-input.js';
import { FILLER_WORDS, type Finish, type ReplyPlan } from './reply.js';
import type { SimCall } from './types.js';

// Renders planned replies as an OpenAI `chat.completion` body (providers.md §1.3; the stream is
// openAIStream below, §1.4), with each OpenAI-compatible host's differences:
// - DeepSeek: `reasoning_content` (message, and deltas before content), cache hit/miss usage, blank
//   lines before buffered bodies and `: keep-alive` comments in streams (§4.3-4.5);
// - MiniMax: `<think>` inline or `reasoning_details` with `reasoning_split`, `base_resp` (§5.2, §5.4);
// - OpenAI itself: snapshot-like model id (`<model>-sim`), system fingerprint; any other host (a new
//   manifest entry) answers plain Chat Completions.
//
// Several choices (`n`, one {@link ReplyPlan} each): `choices[i].index` = i; usage counts the prompt
// once and the completion tokens of every choice, as OpenAI bills all of them (§1.1). With
// `logprobs: true` each choice carries `{content: [...], refusal: null}` for its content tokens
// (contentLogprobs below); otherwise `logprobs: null`. The stream: openAIStream below.
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

// Renders planned replies as an OpenAI `chat.completion.chunk` stream (providers.md §1.4): `data:`
// events, `[DONE]` last, the usage chunk only with `stream_options.include_usage`, with the hosts'
// differences of openai-format.ts (DeepSeek reasoning deltas and `: keep-alive` comments, MiniMax
// `reasoning_details` and `base_resp`).
//
// Several choices (`n`) interleave as OpenAI's do: every choice's role chunk, then one piece of each
// choice in turn, then their finish chunks; each chunk carries one choice, by its `index`. With
// `logprobs: true` a content chunk carries the logprobs of its own tokens (contentLogprobs below).
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

// Token log probabilities in OpenAI's shape (openai-node 6.x `ChatCompletionTokenLogprob`;
// providers.md §1.3–1.4): a choice's `logprobs` is `{content: [...], refusal: null}`, one entry per
// token `{token, logprob, bytes, top_logprobs}`, where `bytes` are the token's UTF-8 bytes and
// `top_logprobs` the `top` most likely tokens at that position, most likely first (at most 20).
//
// The simulator's tokens are its words (countWords), each carrying the whitespace after it (the
// first also any before it), as its stream pieces do (deliver.ts): the tokens of a text, or of each
// streamed piece of it, concatenate to that text, and their number is its completion tokens. Values are deterministic: the chosen token's
// logprob comes from its characters, alternatives (filler words) are each less likely.
/** The tokens of `text`: words with their trailing whitespace (the first keeps any leading space too). */
export function tokensOf(text: string): string[] {
  const tokens = text.match(/\S+\s*/g) ?? [];
  const lead = text.match(/^\s*/)?.[0] ?? '';
  if (tokens.length > 0 && lead !== '') tokens[0] = lead + tokens[0];
  return tokens;
}

function bytesOf(token: string): number[] {
  return [...Buffer.from(token, 'utf8')];
}

/** A stable logprob in (-1, 0] for a token: the model's simulated confidence. */
function chosenLogprob(token: string): number {
  let h = 0;
  for (const ch of token) h = (h * 31 + ch.codePointAt(0)!) % 997;
  return -Math.round((h / 997) * 1000) / 1000;
}

function entry(token: string, logprob: number): JsonObject {
  return { token, logprob, bytes: bytesOf(token) };
}

/** One `ChatCompletionTokenLogprob` with `top` alternatives (the chosen token first). */
function tokenLogprob(token: string, top: number): JsonObject {
  const logprob = chosenLogprob(token);
  const trail = token.match(/\s*$/)?.[0] ?? '';
  const alternatives = FILLER_WORDS.filter((w) => w + trail !== token).map((w, i) => entry(w + trail, logprob - 1.5 - i));
  return { ...entry(token, logprob), top_logprobs: [entry(token, logprob), ...alternatives].slice(0, top) };
}

/** A choice's `logprobs` for the content `text` (`top` alternatives per token, 0–20). */
export function contentLogprobs(text: string, top: number): JsonObject {
  return { content: tokensOf(text).map((t) => tokenLogprob(t, top)), refusal: null };
}
