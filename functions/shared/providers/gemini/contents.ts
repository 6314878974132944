import type { ChatCompletionRequest } from '../../openai/chat-request';
import type { ChatMessage } from '../../openai/chat-messages';
import { InvalidRequestError } from '../../errors/gateway-errors';
import { functionCallsOnly } from '../unsupported-parameters';
import { toGeminiUserPart } from './media';
import { SKIP_SIGNATURE_VALIDATOR, signatureOf } from './thought-signature';
import type { GeminiContent, GeminiPart, GeminiRole, JsonObject } from './wire-request';

/**
 * OpenAI messages → Gemini `contents` + `systemInstruction` (Gemini API, providers.md §3.2, §7):
 *
 * - `system`/`developer` messages, wherever they stand, are hoisted in order into
 *   `systemInstruction.parts` (Gemini has one system instruction, no system turns).
 * - `assistant` → role `model`; its text and `tool_calls` (→ `functionCall {name, args}`) form one turn.
 * - A tool call's thought signature (`extra_content.google.thought_signature`, thought-signature.ts)
 *   goes back as `thoughtSignature` on its `functionCall` part, as Gemini 2.5/3 tool loops require.
 *   With `signCalls` (a Gemini 3 target), a call that carries none — not Gemini's, or its signature
 *   lost by the client — gets Google's sentinel instead (thought-signature.ts), which Gemini 3 accepts.
 * - `tool` results → `functionResponse {name, response}` parts in a `user` turn. Gemini matches
 *   results by name, OpenAI by id: the name is the one of the assistant tool call with that id, the
 *   latest such call winning (a history may repeat an id: older modelmux replies numbered Gemini
 *   calls `call_<n>` from 0 in every response). `response` must be an
 *   object: the tool's content is parsed as JSON, and anything that is not an object is wrapped as
 *   `{result: …}` (unparseable text as the string itself).
 * - Consecutive turns of the same role are merged (parallel tool results become one user turn, as
 *   Gemini expects), and turns left without parts are dropped (Gemini rejects empty parts and empty
 *   text).
 * - An assistant's echoed `reasoning_content` is not sent: Gemini's thoughts are not replayable as text.
 */

/** The converted conversation. */
export interface GeminiConversation {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
}

type Messages = ChatCompletionRequest['messages'];
type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/**
 * @throws InvalidRequestError for a tool result whose `tool_call_id` no earlier assistant message
 *   issued (OpenAI answers 400 there too), and for unsupported user parts (see {@link toGeminiUserPart}).
 */
export function toGeminiConversation(messages: Messages, signCalls = false): GeminiConversation {
  const contents: GeminiContent[] = [];
  const system: Array<{ text: string }> = [];
  const toolNames = new Map<string, string>();

  const push = (role: GeminiRole, parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(m.content));
        return;
      case 'user':
        push(
          'user',
          typeof m.content === 'string' ? textParts(m.content) : m.content.map((p, j) => toGeminiUserPart(p, `messages[${i}].content[${j}]`)).filter(nonEmpty),
        );
        return;
      case 'assistant':
        push('model', assistantParts(m, i, toolNames, signCalls));
        return;
      case 'tool': {
        const name = toolNames.get(m.tool_call_id);
        if (name === undefined) {
          throw new InvalidRequestError(
            `Invalid parameter: the message with role 'tool' answers tool_call_id '${m.tool_call_id}', which no preceding assistant message issued.`,
            { param: `messages[${i}].tool_call_id` },
          );
        }
        push('user', [{ functionResponse: { name, response: toResponseObject(joinText(m.content)) } }]);
        return;
      }
      case 'function':
        // Legacy function-calling result: it names its function itself.
        push('user', [{ functionResponse: { name: m.name, response: toResponseObject(m.content ?? '') } }]);
        return;
      default:
        return m satisfies never;
    }
  });

  const out: GeminiConversation = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };
  return out;
}

function assistantParts(m: AssistantMessage, index: number, toolNames: Map<string, string>, signCalls: boolean): GeminiPart[] {
  const parts: GeminiPart[] = [];
  if (typeof m.content === 'string') parts.push(...textParts(m.content));
  else if (m.content != null) {
    for (const p of m.content) parts.push(...textParts(p.type === 'text' ? p.text : p.refusal));
  }
  for (const call of functionCallsOnly(m.tool_calls, index) ?? []) {
    toolNames.set(call.id, call.function.name);
    const signature = signatureOf(call) ?? (signCalls ? SKIP_SIGNATURE_VALIDATOR : undefined);
    const part: GeminiPart = { functionCall: { name: call.function.name, args: toArgsObject(call.function.arguments) } };
    parts.push(signature === undefined ? part : { ...part, thoughtSignature: signature });
  }
  if (m.function_call != null) {
    const part: GeminiPart = { functionCall: { name: m.function_call.name, args: toArgsObject(m.function_call.arguments) } };
    parts.push(signCalls ? { ...part, thoughtSignature: SKIP_SIGNATURE_VALIDATOR } : part);
  }
  return parts;
}

function textParts(content: string | ReadonlyArray<{ text: string }>): Array<{ text: string }> {
  const texts = typeof content === 'string' ? [content] : content.map((p) => p.text);
  return texts.filter((text) => text !== '').map((text) => ({ text }));
}

function nonEmpty(part: GeminiPart): boolean {
  return !('text' in part) || part.text !== '';
}

function joinText(content: string | ReadonlyArray<{ text: string }>): string {
  return typeof content === 'string' ? content : content.map((p) => p.text).join('');
}

function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A tool result as Gemini's `response` object: JSON objects as they are, anything else wrapped. */
function toResponseObject(text: string): JsonObject {
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // Plain text result: wrapped as a string below.
  }
  return isJsonObject(value) ? value : { result: value };
}

/**
 * Gemini's `args` is an object. Arguments that are not a JSON object (e.g. cut short by a length
 * stop on an earlier turn) are replayed as `{}` rather than failing the whole request.
 */
function toArgsObject(args: string): JsonObject {
  try {
    const value: unknown = JSON.parse(args);
    return isJsonObject(value) ? value : {};
  } catch {
    return {};
  }
}
