import type { ChatCompletionRequest } from '../openai/chat-request';
import type { FunctionTool, MessageToolCall, ToolCall, ToolChoice } from '../openai/chat-tools';
import { InvalidRequestError } from '../errors/gateway-errors';

/**
 * Request features a target may not be able to honour, refused with the 400 OpenAI itself answers
 * for a parameter a model does not take (providers.md §1.5, §1.9): type `invalid_request_error`, code
 * `unsupported_parameter`, `param` naming the field, message "Unsupported parameter: '<param>' is not
 * supported with this model." — never silently dropped, so a client is not handed an answer that
 * quietly lacks what it asked for (null logprobs, one choice for `n: 3`, a function call for a
 * custom tool).
 *
 * Thrown while the upstream request is built, the error is the client's answer when the requested
 * model's own target refuses, and only rules that target out when an equivalent does (fallback-router).
 */

/** The 400 for `param`, worded as OpenAI words it, with an optional hint. */
export function unsupportedParameter(param: string, hint?: string): InvalidRequestError {
  const message = `Unsupported parameter: '${param}' is not supported with this model.${hint === undefined ? '' : ` ${hint}`}`;
  return new InvalidRequestError(message, { param, code: 'unsupported_parameter' });
}

/**
 * For a target that returns no token log probabilities (Anthropic, which has none; Gemini, whose API
 * answers 400 "Logprobs is not enabled for models/gemini-2.5-…" for every 2.5 model the catalogue
 * serves [OBS: googleapis/python-genai#1921, vercel/ai#5418, mscraftsman/generative-ai#135]).
 * @throws InvalidRequestError for `logprobs: true` or `top_logprobs` above 0; `false`/`0`/null ask
 *   for nothing and pass.
 */
export function refuseLogprobs(req: ChatCompletionRequest): void {
  if (req.logprobs === true) throw unsupportedParameter('logprobs', 'This model does not return log probabilities.');
  if (req.top_logprobs != null && req.top_logprobs > 0) throw unsupportedParameter('top_logprobs', 'This model does not return log probabilities.');
}

/**
 * For a target that returns one answer per request (Anthropic Messages, providers.md §2.9 "`n` must
 * be exactly 1"; MiniMax §5.1).
 * @throws InvalidRequestError for `n` above 1.
 */
export function refuseSeveralChoices(req: ChatCompletionRequest): void {
  if (req.n != null && req.n > 1) throw unsupportedParameter('n', 'This model returns one choice per request; n must be 1.');
}

/** `tool_choice` without OpenAI's custom-tool and `allowed_tools` forms. */
export type FunctionToolChoice = Exclude<ToolChoice, { type: 'custom' | 'allowed_tools' }>;

/**
 * For a target with function calling only: custom tools (`type: "custom"`), a `tool_choice` naming a
 * custom tool or an `allowed_tools` set, and custom tool calls in the history are OpenAI's own
 * (openai-node 6.x `ChatCompletionCustomTool`, `ChatCompletionAllowedToolChoice`).
 * @returns the request's function tools and tool choice, narrowed.
 * @throws InvalidRequestError naming the first such field (`tools[i].type`, `tool_choice`,
 *   `messages[i].tool_calls[j].type`).
 */
export function functionToolsOnly(req: ChatCompletionRequest): { tools: FunctionTool[] | undefined; toolChoice: FunctionToolChoice | undefined } {
  req.tools?.forEach((t, i) => {
    if (t.type !== 'function') throw unsupportedParameter(`tools[${i}].type`, 'Custom tools are not supported by this model; use function tools.');
  });
  const choice = req.tool_choice;
  if (typeof choice === 'object' && choice.type !== 'function') {
    throw unsupportedParameter(
      'tool_choice',
      `A tool_choice of type '${choice.type}' is not supported by this model; use 'auto', 'required', 'none' or a named function.`,
    );
  }
  req.messages.forEach((m, i) => {
    if (m.role === 'assistant') functionCallsOnly(m.tool_calls, i);
  });
  return { tools: req.tools?.filter(isFunctionTool), toolChoice: choice as FunctionToolChoice | undefined };
}

/**
 * An assistant message's tool calls, all function calls.
 * @param index the message's position, for the error's `param`.
 * @throws InvalidRequestError for a custom tool call.
 */
export function functionCallsOnly(calls: readonly MessageToolCall[] | undefined, index: number): ToolCall[] | undefined {
  calls?.forEach((c, j) => {
    if (c.type !== 'function') throw unsupportedParameter(`messages[${index}].tool_calls[${j}].type`, 'Custom tool calls are not supported by this model.');
  });
  return calls?.filter(isFunctionCall);
}

function isFunctionTool(t: NonNullable<ChatCompletionRequest['tools']>[number]): t is FunctionTool {
  return t.type === 'function';
}

function isFunctionCall(c: MessageToolCall): c is ToolCall {
  return c.type === 'function';
}

/**
 * For a target other than OpenAI: the OpenAI-only features whose absence the client would read as an
 * answer — audio output (`modalities: ["audio"]`, `audio`), web search (`web_search_options`) and
 * moderated completions (`moderation`, whose `block` mode a client relies on to stop unsafe output).
 * Anthropic, Gemini, DeepSeek, MiniMax and the Llama hosts have none of them in the form OpenAI
 * defines (providers.md §2–§6). Hints that change no answer (`prediction`, `verbosity`,
 * `service_tier`, cache keys) are not refused: each adapter drops them.
 * @throws InvalidRequestError naming the first such field.
 */
export function refuseOpenAIOnlyFeatures(req: ChatCompletionRequest): void {
  if (req.modalities?.includes('audio') === true) throw unsupportedParameter('modalities', 'This model answers in text only.');
  if (req.audio != null) throw unsupportedParameter('audio', 'This model answers in text only.');
  if (req.web_search_options !== undefined) throw unsupportedParameter('web_search_options', 'This model cannot search the web.');
  if (req.moderation != null) throw unsupportedParameter('moderation', 'Moderated completions are an OpenAI feature.');
}
