import { capCacheBreakpoints } from './cache-breakpoints';
import type { CatalogueTarget } from '../../catalogue/catalogue';
import type { ChatCompletionRequest } from '../../openai/chat-request';
import { InvalidRequestError } from '../../errors/gateway-errors';
import { NATIVE_REQUEST, type AdapterContext, type NativeRequest, type RoutedChatRequest, type UpstreamHttpRequest } from '../types';
import { functionToolsOnly, refuseLogprobs, refuseOpenAIOnlyFeatures, refuseSeveralChoices } from '../unsupported-parameters';
import { jsonModeInstruction } from './json-mode';
import { toAnthropicConversation } from './messages';
import type { AnthropicRequestBody } from './request-body';
import { planThinking } from './thinking';
import { toAnthropicToolChoice, toAnthropicTools } from './tools';

/**
 * Builds `POST {baseUrl}/v1/messages` from the validated OpenAI request (Anthropic Messages API,
 * providers.md §2.1–2.4).
 *
 * Fields with no Anthropic counterpart that change nothing the client reads are dropped, as
 * Anthropic's own compatibility endpoint does (§2.9): presence/frequency penalties, logit_bias, seed,
 * store, service_tier, `modalities: ["text"]`, prediction, verbosity, OpenAI `metadata`,
 * prompt_cache_key / prompt_cache_options / OpenAI's content-part `prompt_cache_breakpoint`s. Anthropic's own
 * `cache_control` breakpoints (on messages — their last block —, tool calls, content parts, system
 * texts, tool results and tools, and top-level automatic caching) are passed as sent, the last four
 * block breakpoints kept (cache-breakpoints.ts; docs/prices.md).
 * Fields whose absence the client would read as an answer — `logprobs` (Anthropic has none), `n > 1`,
 * custom tools, audio output, web search, moderation — are refused with a 400 `unsupported_parameter` (unsupported-parameters.ts), where
 * the compatibility endpoint silently returns null logprobs.
 */

/** The `anthropic-version` header value this adapter speaks (providers.md §2.1). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The upstream HTTP request, streamed (`stream: true`): URL, auth and version headers, JSON body. A request that arrived as an
 * Anthropic Messages request (`POST /v1/messages`) goes as the client sent it ({@link nativeBody}),
 * with its `anthropic-version` and `anthropic-beta` headers unchanged.
 */
export function buildAnthropicRequest(req: RoutedChatRequest, ctx: AdapterContext): UpstreamHttpRequest {
  const native = req[NATIVE_REQUEST]?.protocol === 'anthropic-messages' ? req[NATIVE_REQUEST] : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'x-api-key': ctx.endpoint.apiKey,
    'anthropic-version': native?.headers['anthropic-version'] ?? ANTHROPIC_VERSION,
  };
  const beta = native?.headers['anthropic-beta'];
  if (beta !== undefined) headers['anthropic-beta'] = beta;
  const body = native === undefined ? buildAnthropicBody(req, ctx.target) : nativeBody(native, req, ctx.target);
  return { url: `${ctx.endpoint.baseUrl}/v1/messages`, headers, body: JSON.stringify(body) };
}

/**
 * The client's own Messages body, lossless (content blocks, thinking and its signatures,
 * `redacted_thinking`, `cache_control`, `top_k`, `metadata`, beta fields), with only what routing
 * owns replaced: `model` (this target's upstream id), `max_tokens` (the held output limit, never above
 * the target's: billing/hold-demand.ts holds exactly that) and `stream`; then the catalogue's fixed
 * fields for the target, as for translated requests.
 */
function nativeBody(native: NativeRequest, req: ChatCompletionRequest, target: CatalogueTarget): Record<string, unknown> {
  const held = req.max_completion_tokens ?? req.max_tokens ?? target.maxOutputTokens;
  const body: Record<string, unknown> = { ...native.body, model: target.upstreamModel, max_tokens: Math.min(held, target.maxOutputTokens), stream: true };
  if (target.upstreamParams !== undefined) Object.assign(body, target.upstreamParams);
  return body;
}

/**
 * The Messages request body.
 * - `max_tokens` (required upstream): the client's `max_completion_tokens`, else `max_tokens`, else
 *   the target's `maxOutputTokens`; never above the target's limit (tokens).
 * - Sampling: `temperature` clamped from OpenAI's 0–2 to Anthropic's 0–1, or `top_p` instead when the
 *   client sent one. Claude Sonnet/Haiku 4.5 and later answer 400 "`temperature` and `top_p` cannot
 *   both be specified for this model" (quoted in public issue threads; every Claude target in the
 *   catalogue is such a model), and modelmux always has a temperature (spec default 0.7), so a
 *   client `top_p` is the explicit choice. With thinking on, neither is sent: Anthropic does not allow
 *   changing temperature while thinking [MEM, extended thinking docs].
 * - `stop` → `stop_sequences`; `user` (or `safety_identifier`) → `metadata.user_id`.
 * @throws InvalidRequestError (400 `unsupported_parameter`) for `n > 1` (Anthropic returns one
 *   answer), `logprobs: true` / `top_logprobs > 0`, custom tools / tool choices / tool calls, the
 *   legacy `functions` API, and content Anthropic cannot take (see {@link toAnthropicConversation}).
 */
function buildAnthropicBody(req: ChatCompletionRequest, target: CatalogueTarget): AnthropicRequestBody {
  refuseSeveralChoices(req);
  refuseLogprobs(req);
  refuseOpenAIOnlyFeatures(req);
  const { tools: functionTools, toolChoice } = functionToolsOnly(req);
  if (req.functions !== undefined || req.function_call !== undefined) {
    throw new InvalidRequestError('The legacy `functions` parameter is not supported for this model; use `tools`.', {
      param: req.functions !== undefined ? 'functions' : 'function_call',
      code: 'unsupported_parameter',
    });
  }

  const maxTokens = Math.min(req.max_completion_tokens ?? req.max_tokens ?? target.maxOutputTokens, target.maxOutputTokens);
  const instruction = jsonModeInstruction(req.response_format);
  const { system, messages } = toAnthropicConversation(req.messages, instruction === undefined ? [] : [instruction]);
  const thinking = planThinking(req, target, maxTokens);

  const body: AnthropicRequestBody = { model: target.upstreamModel, max_tokens: maxTokens, messages, stream: true };
  if (system !== undefined) body.system = system;
  if (thinking !== undefined) body.thinking = thinking;
  else if (req.top_p != null) body.top_p = req.top_p;
  else body.temperature = Math.min(1, req.temperature);
  const stop = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (stop.length > 0) body.stop_sequences = stop;
  const userId = req.user ?? req.safety_identifier;
  if (userId != null && userId !== '') body.metadata = { user_id: userId };
  const tools = toAnthropicTools(functionTools);
  if (tools !== undefined) {
    body.tools = tools;
    // A tool_choice without tools has nothing to choose from: sent only beside tools.
    const choice = toAnthropicToolChoice(toolChoice, req.parallel_tool_calls);
    if (choice !== undefined) body.tool_choice = choice;
  }
  if (req.cache_control != null) body.cache_control = req.cache_control;
  // Breakpoints on messages, tool calls, parts and tools: the last four are kept (cache-breakpoints.ts).
  capCacheBreakpoints(body);
  // Catalogue-level fixed fields for this target, last, as for the other adapters.
  if (target.upstreamParams !== undefined) Object.assign(body, target.upstreamParams);
  return body;
}
