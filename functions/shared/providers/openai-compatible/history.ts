import type { ChatMessage } from '../../openai/chat-messages';
import type { MessageToolCall, ToolCall } from '../../openai/chat-tools';
import type { AdapterContext } from '../types';

/**
 * The conversation as an OpenAI-compatible upstream receives it. Clients echo our own replies back,
 * with fields other upstreams produced: `reasoning_content` (ours, DeepSeek's convention) and a tool
 * call's `extra_content` (Gemini's thought signature, gemini/thought-signature.ts). Each provider
 * decides what to do with an assistant's reasoning ({@link ReasoningReplay}); `extra_content` is never
 * forwarded (no OpenAI-compatible upstream defines it).
 */

/** One message as sent upstream (JSON object). */
export type UpstreamMessage = Record<string, unknown>;

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/**
 * How an assistant message's `reasoning_content` is replayed.
 * @param inToolLoop the message comes after the last user message: it belongs to the tool loop the
 *   model is in the middle of (assistant tool calls and tool results since the user last spoke).
 */
export type ReasoningReplay = (m: AssistantMessage, inToolLoop: boolean, ctx: AdapterContext) => UpstreamMessage;

/** The default: no reasoning goes back (OpenAI and most hosts reject or ignore the unknown field). */
export const dropReasoning: ReasoningReplay = (m) => withoutReasoning(m);

/**
 * DeepSeek (providers.md §4.3): original R1 answers 400 when `reasoning_content` is sent back; V3.2+ /
 * V4 thinking mode with tool calls requires it on the assistant messages of the current tool loop.
 * So it is kept only there, and only for a target that thinks (`capabilities.reasoning: 'exposed'`).
 */
export const replayReasoningInToolLoop: ReasoningReplay = (m, inToolLoop, ctx) =>
  inToolLoop && ctx.target.capabilities.reasoning === 'exposed' ? m : withoutReasoning(m);

/**
 * The client's messages, ready for the upstream body: assistant messages go through `replay`, and
 * their tool calls lose `extra_content`. Other messages are passed as they are.
 */
export function toUpstreamMessages(messages: readonly ChatMessage[], ctx: AdapterContext, replay: ReasoningReplay = dropReasoning): UpstreamMessage[] {
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') lastUser = i;
  });
  return messages.map((m, i) => withoutCacheControl(m.role === 'assistant' ? replay(withoutExtraContent(m), i > lastUser, ctx) : m));
}

/**
 * The message without Anthropic `cache_control` breakpoints on itself, its tool calls and its content parts (the same object when
 * it has none): OpenAI-compatible upstreams cache automatically and may refuse the unknown field.
 */
function withoutCacheControl<M extends UpstreamMessage>(message: M): M {
  const m = dropKey(message as M & Record<string, unknown>, 'cache_control');
  const calls = 'tool_calls' in m && Array.isArray(m.tool_calls) ? (m.tool_calls as Array<Record<string, unknown>>) : undefined;
  const unmarked = calls?.some((c) => 'cache_control' in c) === true ? { ...m, tool_calls: calls.map((c) => dropKey(c, 'cache_control')) } : m;
  const content = unmarked.content;
  if (!Array.isArray(content) || !content.some((p) => typeof p === 'object' && p !== null && 'cache_control' in p)) return unmarked;
  return { ...unmarked, content: content.map((p: Record<string, unknown>) => dropKey(p, 'cache_control')) };
}

/** `o` without `key` (the same object when it has none). */
export function dropKey<T extends Record<string, unknown>>(o: T, key: string): T {
  if (!(key in o)) return o;
  const { [key]: _dropped, ...rest } = o;
  return rest as T;
}

/** The message without `reasoning_content` (the same object when it has none). */
export function withoutReasoning(m: AssistantMessage): AssistantMessage {
  if (!('reasoning_content' in m)) return m;
  const { reasoning_content: _dropped, ...rest } = m;
  return rest;
}

function withoutExtraContent(m: AssistantMessage): AssistantMessage {
  const signed = (t: MessageToolCall): boolean => t.type === 'function' && t.extra_content !== undefined;
  if (m.tool_calls === undefined || !m.tool_calls.some(signed)) return m;
  return { ...m, tool_calls: m.tool_calls.map((t) => (t.type === 'function' ? stripExtraContent(t) : t)) };
}

function stripExtraContent({ extra_content: _dropped, ...call }: ToolCall): ToolCall {
  return call;
}
