import { chatCompletionRequest, type ChatCompletionRequest } from '../openai/chat-request';
import { InvalidRequestError } from '../errors/gateway-errors';
import { unsupportedParameter } from '../providers/unsupported-parameters';
import { toChatMessages } from './input-items';
import { checkedFlatName } from './namespaced-tools';
import type { CreateResponseRequest } from './request';

/**
 * A Responses request as the chat request the core runs (OpenAI's Responses → Chat Completions
 * migration guide; field by field):
 *
 * | Responses | chat |
 * |---|---|
 * | `instructions`, `input` | `messages` (input-items.ts) |
 * | `tools[]` `{type:"function", name, description, parameters, strict}` | `tools[]` `{type:"function", function:{…}}` |
 * | `tools[]` `{type:"namespace", name: ns, tools:[{type:"function", name, …}]}` | one function per tool, named `ns__name` (namespaced-tools.ts) |
 * | `tool_choice` `{type:"function", name}` | `{type:"function", function:{name}}` |
 * | `max_output_tokens` | `max_completion_tokens` |
 * | `text.format` (`json_schema` with `name`, `schema`, `strict`) | `response_format` (`json_schema.{…}`) |
 * | `text.verbosity`, `reasoning.effort` | `verbosity`, `reasoning_effort` |
 * | `include: ["message.output_text.logprobs"]` + `top_logprobs` | `logprobs: true` + `top_logprobs` |
 * | `temperature`, `top_p`, `parallel_tool_calls`, `user`, `safety_identifier`, `prompt_cache_*`, `service_tier`, `moderation` | the same |
 * | `stream` | `stream`, always with `stream_options.include_usage` (the usage of `response.completed`) |
 *
 * `metadata` stays with the response (it is echoed, not sent upstream); `store` and
 * `previous_response_id` are the Responses layer's (stored responses: app/responses.ts,
 * conversation-state.ts), so `input` here already holds the history; `include: ["reasoning.encrypted_content"]` and
 * `stream_options.include_obfuscation` ask for nothing modelmux could leave out (no reasoning is
 * hidden from the client, and no padding is added).
 *
 * @throws InvalidRequestError (400) naming the field, for what needs state or features the chat core
 *   does not have: `conversation`, `prompt`, `background`, `truncation:
 *   "auto"`, `max_tool_calls`, built-in tools and their tool choices, other `include` values.
 *   `reasoning.summary` is accepted (Codex CLI sends it on every model): a model that exposes its
 *   reasoning returns it as the summary (response-object.ts `wantsReasoningSummary`); `client_metadata` stays here.
 */
export function toChatRequest(req: CreateResponseRequest): ChatCompletionRequest {
  refuseStateful(req);
  const logprobs = req.include?.includes('message.output_text.logprobs') === true;
  const chat: Record<string, unknown> = {
    model: req.model,
    messages: toChatMessages(req),
    stream: req.stream === true,
  };
  if (req.stream === true) chat['stream_options'] = { include_usage: true };
  const copy = (from: keyof CreateResponseRequest, to: string = from): void => {
    if (req[from] != null) chat[to] = req[from];
  };
  copy('temperature');
  copy('top_p');
  copy('max_output_tokens', 'max_completion_tokens');
  copy('parallel_tool_calls');
  copy('user');
  copy('safety_identifier');
  copy('prompt_cache_key');
  copy('prompt_cache_retention');
  copy('prompt_cache_options');
  copy('moderation');
  if (req.service_tier != null) {
    if (req.service_tier === 'ultrafast') throw unsupportedParameter('service_tier', "Use 'auto', 'default', 'flex', 'scale', 'priority' or 'fast'.");
    chat['service_tier'] = req.service_tier;
  }
  if (logprobs) {
    chat['logprobs'] = true;
    chat['top_logprobs'] = req.top_logprobs ?? 0;
  }
  if (req.reasoning?.effort != null) chat['reasoning_effort'] = req.reasoning.effort;
  if (req.text?.verbosity != null) chat['verbosity'] = req.text.verbosity;
  const format = req.text?.format;
  if (format !== undefined) chat['response_format'] = format.type === 'json_schema' ? { type: 'json_schema', json_schema: jsonSchemaOf(format) } : format;
  Object.assign(chat, toChatTools(req));
  const parsed = chatCompletionRequest.safeParse(chat);
  if (!parsed.success) {
    // Every Responses field is validated before this, so a refusal here is a combination the chat
    // core does not take; its message still names the chat field.
    throw new InvalidRequestError(`Invalid request: ${parsed.error.issues[0]?.message ?? 'the request cannot be served'}.`, { code: 'invalid_value' });
  }
  return parsed.data;
}

function jsonSchemaOf(format: Extract<NonNullable<NonNullable<CreateResponseRequest['text']>['format']>, { type: 'json_schema' }>): Record<string, unknown> {
  const out: Record<string, unknown> = { name: format.name, schema: format.schema };
  if (format.description !== undefined) out['description'] = format.description;
  if (format.strict != null) out['strict'] = format.strict;
  return out;
}

type FunctionTool = Extract<NonNullable<CreateResponseRequest['tools']>[number], { type: 'function' }>;

/** One function tool in the chat shape, under `name` (its own, or its flattened namespaced name). */
function chatFunction(t: FunctionTool, name: string): Record<string, unknown> {
  const fn: Record<string, unknown> = { name };
  if (t.description != null) fn['description'] = t.description;
  if (t.parameters != null) fn['parameters'] = t.parameters;
  if (t.strict != null) fn['strict'] = t.strict;
  return { type: 'function', function: fn };
}

/** Hosted web search, in each of the type names OpenAI gives it. */
const WEB_SEARCH = /^web_search/;

/**
 * A built-in tool's 400. Hosted web search names why: no target is routed to a provider's native
 * search tool yet, so a search would silently not happen.
 */
function refuseBuiltInTool(type: string, i: number): never {
  if (WEB_SEARCH.test(type))
    throw new InvalidRequestError(
      `The hosted '${type}' tool is not available through modelmux yet: no model here is routed to a provider's native web search, so the model could not search. Remove it (Codex CLI: web_search = "disabled" in config.toml), or declare a function tool that searches.`,
      { param: `tools[${i}].type`, code: 'unsupported_parameter' },
    );
  throw unsupportedParameter(
    `tools[${i}].type`,
    `The '${type}' tool is not available through modelmux; declare function tools (alone or in a namespace) instead.`,
  );
}

/** Function tools in the chat shape (a namespace's flattened); any other tool or tool choice is a 400 naming it. */
function toChatTools(req: CreateResponseRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (req.tools !== undefined && req.tools.length > 0) {
    out['tools'] = req.tools.flatMap((t, i) => {
      if (t.type === 'function') return [chatFunction(t, t.name)];
      if (t.type === 'namespace') return t.tools.map((inner, j) => chatFunction(inner, checkedFlatName(t.name, inner.name, i, j)));
      return refuseBuiltInTool(t.type, i);
    });
  }
  const choice = req.tool_choice;
  if (choice === undefined) return out;
  if (typeof choice === 'string') out['tool_choice'] = choice;
  else if (choice.type === 'function' && typeof choice['name'] === 'string') out['tool_choice'] = { type: 'function', function: { name: choice['name'] } };
  else
    throw unsupportedParameter(
      'tool_choice',
      `A tool_choice of type '${choice.type}' is not available through modelmux; use 'auto', 'required', 'none' or a named function.`,
    );
  return out;
}

/** What needs a conversation object, a background worker, or output modelmux cannot produce. */
function refuseStateful(req: CreateResponseRequest): void {
  if (req.conversation != null)
    throw unsupportedParameter(
      'conversation',
      'Conversation objects are not available through modelmux: continue with previous_response_id, or send the conversation in `input`.',
    );
  if (req.prompt != null) throw unsupportedParameter('prompt', 'Stored prompt templates are not available through modelmux; send `instructions` and `input`.');
  if (req.background === true) throw unsupportedParameter('background', 'Responses run in the foreground only; stream long answers instead.');
  if (req.truncation === 'auto')
    throw unsupportedParameter('truncation', "Only 'disabled' is supported: a prompt over the context window is a 400 context_length_exceeded.");
  if (req.max_tool_calls != null) throw unsupportedParameter('max_tool_calls');
  const r = req.reasoning;
  if (r?.mode != null) throw unsupportedParameter('reasoning.mode');
  if (r?.context != null) throw unsupportedParameter('reasoning.context');
  const other = req.include?.find((v) => v !== 'reasoning.encrypted_content' && v !== 'message.output_text.logprobs');
  if (other !== undefined) throw unsupportedParameter('include', `'${other}' belongs to a built-in tool modelmux does not offer.`);
}
