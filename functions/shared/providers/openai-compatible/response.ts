import type { MessageToolCall } from '../../openai/chat-request';
import type { CompletionChoice } from '../../openai/chat-response';
import type { AdapterContext } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure } from '../upstream-failure';
import { joinReasoningDetails, mapFinishReason, type UpstreamChoice, type UpstreamToolCall } from './wire';

/**
 * One choice of an OpenAI-compatible `chat.completion` body → ours (providers.md §1.3, §4.3, §5.2).
 *
 * - `message`: content, refusal, reasoning (DeepSeek `reasoning_content` or MiniMax
 *   `reasoning_details`, as `reasoning_content`), tool calls — function calls, and OpenAI's custom
 *   tool calls (`{type:"custom", custom:{name, input}}`) as they came;
 * - `logprobs`: passed through as the upstream sent it (OpenAI's `{content, refusal}` token lists
 *   when the client asked, else null): modelmux does not read it;
 * - `finish_reason` mapped (wire.ts), `stop` when absent.
 * @param position the choice's place in the array, its index when the upstream gives none.
 * @throws UpstreamAttemptError (retryable `server`) for a tool call that names no function or custom tool.
 */
export function toCompletionChoice(c: UpstreamChoice, position: number, ctx: AdapterContext): CompletionChoice {
  const m = c.message;
  const reasoning = m?.reasoning_content ?? joinReasoningDetails(m?.reasoning_details);
  const message: CompletionChoice['message'] = { role: 'assistant', content: m?.content ?? null, refusal: m?.refusal ?? null };
  if (reasoning != null) message.reasoning_content = reasoning;
  if (m?.tool_calls != null && m.tool_calls.length > 0) {
    message.tool_calls = m.tool_calls.map((t, j) => toToolCall(t, t.id ?? `call_${position}_${j}`, ctx));
  }
  return { index: c.index ?? position, message, logprobs: c.logprobs ?? null, finish_reason: mapFinishReason(c.finish_reason) ?? 'stop' };
}

function toToolCall(t: UpstreamToolCall, id: string, ctx: AdapterContext): MessageToolCall {
  if (t.type === 'custom' && t.custom != null) return { id, type: 'custom', custom: { name: t.custom.name, input: t.custom.input ?? '' } };
  if (t.function == null) {
    throw new UpstreamAttemptError(makeFailure('server', 200, `${ctx.endpoint.provider}: tool call without a function`));
  }
  return { id, type: 'function', function: { name: t.function.name, arguments: t.function.arguments ?? '' } };
}
