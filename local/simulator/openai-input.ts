/** Reading an OpenAI Chat Completions request, and the parameters each OpenAI-shaped host refuses. */
import { asArray, asNumber, asString, isObject, type JsonObject } from './json-narrowing.js';
import { compactResult, type Conversation, type LastTurn, type ToolDecl } from './reply.js';
import { openAIStructured, optionalJson } from './structured-output.js';
import type { Problem, SimProvider } from './types.js';

// Reads an OpenAI Chat Completions request (providers.md §1.1-1.2) into the neutral
// {@link Conversation}, with the per-host validation the simulator enforces: MiniMax's temperature
// range (0, 1] (§5.1), MiniMax `n` must be 1 (§5.1), `stream_options`
// only with `stream`, `n` 1–128 and `top_logprobs` 0–20 (§1.1), and the per-model field refusals
// (checkOpenAIParams: OpenAI §1.9, DeepSeek reasoner's logprobs §4.3).
/** A validated chat request: the conversation plus the request fields the formatter needs. */
export interface OpenAIChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  /** MiniMax `reasoning_split: true`: reasoning in `reasoning_details` instead of `<think>` tags. */
  reasoningSplit: boolean;
  /** Number of choices (`n`, default 1). */
  n: number;
  /** Alternatives per token when the client asked for logprobs (`top_logprobs`, 0–20); undefined when it did not. */
  logprobs: number | undefined;
  conversation: Conversation;
}

/** Text of a `content` that is a string or an array of parts; images counted separately. */
function contentText(content: unknown): { text: string; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  const texts: string[] = [];
  let images = 0;
  for (const part of asArray(content)) {
    if (!isObject(part)) continue;
    if (part['type'] === 'text' && typeof part['text'] === 'string') texts.push(part['text']);
    if (part['type'] === 'image_url') images++;
  }
  return { text: texts.join('\n'), images };
}

function messageText(m: JsonObject): string {
  const texts = [contentText(m['content']).text];
  for (const call of asArray(m['tool_calls'])) {
    const fn = isObject(call) ? call['function'] : undefined;
    if (isObject(fn)) texts.push(`${asString(fn['name']) ?? ''} ${asString(fn['arguments']) ?? ''}`);
  }
  return texts.filter((t) => t !== '').join(' ');
}

/**
 * The turn the model answers: the last message, system and developer notes after it aside (a model
 * answers the user or the tool results before such a note, as Claude Code's mid-conversation
 * environment notes expect).
 */
function lastTurnOf(all: readonly JsonObject[]): LastTurn {
  let end = all.length;
  while (end > 0 && (all[end - 1]!['role'] === 'system' || all[end - 1]!['role'] === 'developer')) end--;
  const messages = all.slice(0, end);
  const last = messages[messages.length - 1];
  if (!last) return { kind: 'other' };
  if (last['role'] === 'user') return { kind: 'user', ...contentText(last['content']) };
  if (last['role'] === 'tool') {
    const results: string[] = [];
    for (let i = messages.length - 1; i >= 0 && messages[i]!['role'] === 'tool'; i--) {
      results.unshift(compactResult(contentText(messages[i]!['content']).text));
    }
    return { kind: 'tool-result', results };
  }
  return { kind: 'other' };
}

function toolsOf(body: JsonObject): ToolDecl[] {
  const tools: ToolDecl[] = [];
  for (const t of asArray(body['tools'])) {
    const fn = isObject(t) ? t['function'] : undefined;
    if (isObject(t) && t['type'] === 'function' && isObject(fn) && typeof fn['name'] === 'string') {
      tools.push({ name: fn['name'], parameters: fn['parameters'] });
    }
  }
  const choice = body['tool_choice'];
  if (choice === 'none') return [];
  if (isObject(choice) && isObject(choice['function'])) {
    const name = choice['function']['name'];
    return tools.filter((t) => t.name === name);
  }
  return tools;
}

function stopOf(stop: unknown): string[] {
  if (typeof stop === 'string') return [stop];
  return asArray(stop).filter((s): s is string => typeof s === 'string');
}

/** Deepseek thinks on reasoner/R1 models or with `thinking: {type: "enabled"}` (§4.2-4.3); MiniMax M2
 * always thinks (§5.2). */
function wantsReasoning(provider: SimProvider, model: string, body: JsonObject): boolean {
  if (provider === 'minimax') return true;
  if (provider !== 'deepseek') return false;
  const thinking = body['thinking'];
  return /reasoner|r1/i.test(model) || (isObject(thinking) && thinking['type'] === 'enabled');
}

/**
 * Every OpenAI-shaped host returns logprobs when asked (OpenAI, DeepSeek's chat models: §4.3, its
 * reasoner refuses them, checkOpenAIParams; the Llama hosts) but MiniMax, which documents none (§5.1).
 */
const returnsLogprobs = (provider: SimProvider): boolean => provider !== 'minimax';

/** Validate and read the request; a {@link Problem} means answer 400. */
export function readOpenAIChat(provider: SimProvider, body: unknown): OpenAIChatRequest | Problem {
  if (!isObject(body)) return { kind: 'bad-request', message: 'Request body must be a JSON object.' };
  const model = asString(body['model']);
  if (!model) return { kind: 'bad-request', message: "you must provide a model parameter", param: 'model' };
  const messages = asArray(body['messages']).filter(isObject);
  if (messages.length === 0) return { kind: 'bad-request', message: "Invalid 'messages': empty array. Expected an array with minimum length 1.", param: 'messages' };
  const stream = body['stream'] === true;
  if (body['stream_options'] != null && !stream) {
    return { kind: 'bad-request', message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param: 'stream_options' };
  }
  const temperature = asNumber(body['temperature']);
  if (provider === 'minimax' && temperature !== undefined && (temperature <= 0 || temperature > 1)) {
    return { kind: 'bad-request', message: 'invalid params, temperature must be in (0, 1]', param: 'temperature' };
  }
  const refused = checkOpenAIParams(provider, model, body);
  if (refused !== undefined) return refused;
  const n = body['n'] ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 128) {
    return { kind: 'bad-request', message: "Invalid 'n': expected an integer between 1 and 128.", param: 'n', code: 'invalid_value' };
  }
  if (provider === 'minimax' && n !== 1) return { kind: 'bad-request', message: 'invalid params, n must be 1', param: 'n' };
  const top = body['top_logprobs'] ?? 0;
  if (typeof top !== 'number' || !Number.isInteger(top) || top < 0 || top > 20) {
    return { kind: 'bad-request', message: "Invalid 'top_logprobs': expected an integer between 0 and 20.", param: 'top_logprobs', code: 'invalid_value' };
  }
  const lastUser = [...messages].reverse().find((m) => m['role'] === 'user');
  const maxTokens = asNumber(body['max_completion_tokens']) ?? asNumber(body['max_tokens']);
  const streamOptions = body['stream_options'];
  return {
    model,
    stream,
    includeUsage: stream && isObject(streamOptions) && streamOptions['include_usage'] === true,
    reasoningSplit: body['reasoning_split'] === true,
    n,
    logprobs: body['logprobs'] === true && returnsLogprobs(provider) ? top : undefined,
    conversation: {
      messageTexts: messages.map(messageText),
      lastTurn: lastTurnOf(messages),
      lastUserText: lastUser ? contentText(lastUser['content']).text : '',
      tools: toolsOf(body),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      stop: stopOf(body['stop']),
      reasoning: wantsReasoning(provider, model, body),
      ...optionalJson(openAIStructured(body)),
    },
  };
}

// Request fields OpenAI itself refuses per model family (providers.md §1.1, §1.9), answered with its
// 400 `invalid_request_error` / `unsupported_parameter`:
//
// - o-series reasoning models (`o1`, `o3-mini`, …): `max_tokens` ("use max_completion_tokens") and the
//   sampling fields temperature, top_p, presence/frequency penalties, logprobs, top_logprobs, logit_bias;
// - other chat models: `reasoning_effort`, which only reasoning models take.
//
// DeepSeek in thinking mode (reasoner / R1 ids, or `thinking: {type: "enabled"}`, §4.2) refuses `logprobs` / `top_logprobs` (§4.3, "→ error"; the wording here is ours).
// Other compatible hosts document their own, looser rules.
const O_SERIES_REJECTED = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias'] as const;

function unsupported(param: string, hint = ''): Problem {
  return { kind: 'bad-request', message: `Unsupported parameter: '${param}' is not supported with this model.${hint}`, param, code: 'unsupported_parameter' };
}

/** @returns the 400 OpenAI answers for these fields on `model`, or undefined. */
export function checkOpenAIParams(provider: SimProvider, model: string, body: JsonObject): Problem | undefined {
  const present = (f: string): boolean => body[f] !== undefined && body[f] !== null;
  const thinking = body['thinking'];
  const deepseekThinks = /reasoner|r1/i.test(model) || (isObject(thinking) && thinking['type'] === 'enabled');
  if (provider === 'deepseek' && deepseekThinks) {
    const asked = body['logprobs'] === true ? 'logprobs' : present('top_logprobs') ? 'top_logprobs' : undefined;
    return asked === undefined ? undefined : unsupported(asked);
  }
  if (provider !== 'openai') return undefined;
  if (/^o\d/.test(model)) {
    if (present('max_tokens')) return unsupported('max_tokens', " Use 'max_completion_tokens' instead.");
    const sampling = O_SERIES_REJECTED.find(present);
    return sampling === undefined ? undefined : unsupported(sampling);
  }
  return present('reasoning_effort') ? unsupported('reasoning_effort') : undefined;
}
