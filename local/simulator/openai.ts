/**
 * The OpenAI-shaped endpoints, for every host whose manifest `wire` is `openai`: chat everywhere;
 * embeddings and images where the provider's adapter calls them (registry.ts), else the host's 404.
 * Reading a Chat Completions request, with each host's refusals: MiniMax's temperature in (0, 1] and
 * `n` = 1, `stream_options` only with `stream`, `n` 1–128, `top_logprobs` 0–20, OpenAI's per-model
 * field refusals and DeepSeek thinking mode's logprobs refusal (providers.md §1.1, §1.9, §4.3, §5.1).
 */
import { providerSpec } from '../../functions/shared/providers/registry.js';
import type { Reply } from './deliver.js';
import { openAIEmbeddings } from './embeddings.js';
import { openAIImages } from './images.js';
import { asArray, asNumber, asString, asStrings, field, isObject, type JsonObject } from './json-narrowing.js';
import { openAICompletion, openAIStream } from './openai-format.js';
import { chooseTools, type Conversation, conversationOf, type Message, planChoices, type ToolDecl } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';
import type { ProviderName } from '../../functions/shared/providers/manifest.js';

/** A validated chat request: the conversation plus the request fields the formatter needs. */
export interface OpenAIChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  /** MiniMax `reasoning_split: true`: reasoning in `reasoning_details` instead of `<think>` tags. */
  reasoningSplit: boolean;
  /** Number of choices (`n`). */
  n: number;
  /** Alternatives per token when logprobs were asked for (`top_logprobs`); undefined when not. */
  logprobs: number | undefined;
  conversation: Conversation;
}

/** Answer an OpenAI-shaped call; a {@link Problem} is rendered by the caller in the host's error shape. */
export function handleOpenAI(call: SimCall): Reply | Problem {
  const { op } = call.route;
  const adapter = providerSpec(call.provider).adapter;
  if (op === 'embeddings' && adapter.buildEmbeddingsRequest) return openAIEmbeddings(call);
  if (op === 'images' && adapter.buildImagesRequest) return openAIImages(call);
  if (op !== 'chat') return { kind: 'no-route', method: call.method, path: call.url.pathname };
  const req = readOpenAIChat(call.provider, call.body);
  if ('kind' in req) return req;
  if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
  const plans = planChoices(req.conversation, { replyWords: call.replyWords }, req.n);
  return req.stream ? openAIStream(call, req, plans) : openAICompletion(call, req, plans);
}

const ROLES = new Map<unknown, Message['role']>([
  ['user', 'user'],
  ['tool', 'tool'],
  ['system', 'note'],
  ['developer', 'note'],
]);

/** A message in the shared shape: text parts, images, tool calls; a tool message's text is its result. */
function messageOf(m: JsonObject): Message {
  const content = m['content'];
  const parts = asArray(content).filter(isObject);
  const texts =
    typeof content === 'string' ? [content] : parts.filter((p) => p['type'] === 'text' && typeof p['text'] === 'string').map((p) => p['text'] as string);
  const role = ROLES.get(m['role']) ?? 'assistant';
  const calls = asArray(m['tool_calls'])
    .map((c) => field(c, 'function'))
    .filter(isObject);
  return {
    role,
    texts: role === 'tool' ? [] : texts,
    images: parts.filter((p) => p['type'] === 'image_url').length,
    results: role === 'tool' ? [texts.join('\n')] : [],
    extra: calls.map((fn) => `${asString(fn['name']) ?? ''} ${asString(fn['arguments']) ?? ''}`),
  };
}

function toolsOf(body: JsonObject): ToolDecl[] {
  const tools = asArray(body['tools'])
    .filter((t) => isObject(t) && t['type'] === 'function' && typeof field(field(t, 'function'), 'name') === 'string')
    .map((t) => ({ name: field(field(t, 'function'), 'name') as string, parameters: field(field(t, 'function'), 'parameters') }));
  const choice = field(body['tool_choice'], 'function');
  return chooseTools(tools, body['tool_choice'] === 'none', isObject(choice) ? [choice['name']] : undefined);
}

/** `response_format` `json_object`, or `json_schema` with its schema. */
function structuredOf(body: JsonObject): { schema: unknown } | undefined {
  const format = body['response_format'];
  if (!isObject(format)) return undefined;
  if (format['type'] === 'json_object') return { schema: undefined };
  return format['type'] === 'json_schema' ? { schema: field(format['json_schema'], 'schema') } : undefined;
}

/** DeepSeek thinks on reasoner/R1 models or with `thinking: {type: "enabled"}`. */
function deepseekThinks(model: string, body: JsonObject): boolean {
  return /reasoner|r1/i.test(model) || field(body['thinking'], 'type') === 'enabled';
}

const badRequest = (message: string, param: string, code?: string): Problem => ({ kind: 'bad-request', message, param, ...(code ? { code } : {}) });

/** Validate and read the request; a {@link Problem} means answer 400. */
function readOpenAIChat(provider: ProviderName, body: unknown): OpenAIChatRequest | Problem {
  if (!isObject(body)) return { kind: 'bad-request', message: 'Request body must be a JSON object.' };
  const model = asString(body['model']);
  if (!model) return badRequest('you must provide a model parameter', 'model');
  const messages = asArray(body['messages']).filter(isObject);
  if (messages.length === 0) return badRequest("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages');
  const stream = body['stream'] === true;
  if (body['stream_options'] != null && !stream)
    return badRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  const temperature = asNumber(body['temperature']);
  if (provider === 'minimax' && temperature !== undefined && (temperature <= 0 || temperature > 1))
    return badRequest('invalid params, temperature must be in (0, 1]', 'temperature');
  const refused = checkOpenAIParams(provider, model, body);
  if (refused !== undefined) return refused;
  const n = body['n'] ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 128)
    return badRequest("Invalid 'n': expected an integer between 1 and 128.", 'n', 'invalid_value');
  if (provider === 'minimax' && n !== 1) return badRequest('invalid params, n must be 1', 'n');
  const top = body['top_logprobs'] ?? 0;
  if (typeof top !== 'number' || !Number.isInteger(top) || top < 0 || top > 20) {
    return badRequest("Invalid 'top_logprobs': expected an integer between 0 and 20.", 'top_logprobs', 'invalid_value');
  }
  const stop = body['stop'];
  return {
    model,
    stream,
    includeUsage: stream && field(body['stream_options'], 'include_usage') === true,
    reasoningSplit: body['reasoning_split'] === true,
    n,
    // MiniMax documents no logprobs; every other host returns them when asked.
    logprobs: body['logprobs'] === true && provider !== 'minimax' ? top : undefined,
    conversation: conversationOf(messages.map(messageOf), undefined, {
      tools: toolsOf(body),
      toolForced: body['tool_choice'] === 'required' || isObject(body['tool_choice']),
      maxTokens: asNumber(body['max_completion_tokens']) ?? asNumber(body['max_tokens']),
      stop: typeof stop === 'string' ? [stop] : asStrings(stop),
      // MiniMax M2 always thinks.
      reasoning: provider === 'minimax' || (provider === 'deepseek' && deepseekThinks(model, body)),
      json: structuredOf(body),
    }),
  };
}

/** Sampling fields OpenAI's o-series refuse. */
const O_SERIES_REJECTED = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias'] as const;

/**
 * The 400 `unsupported_parameter` for fields refused on `model`: o-series `max_tokens` and sampling
 * fields, other OpenAI models `reasoning_effort`, DeepSeek thinking mode `logprobs` / `top_logprobs`.
 */
function checkOpenAIParams(provider: ProviderName, model: string, body: JsonObject): Problem | undefined {
  const present = (f: string): boolean => body[f] !== undefined && body[f] !== null;
  const unsupported = (param: string, hint = ''): Problem =>
    badRequest(`Unsupported parameter: '${param}' is not supported with this model.${hint}`, param, 'unsupported_parameter');
  if (provider === 'deepseek' && deepseekThinks(model, body)) {
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
