import { outputLimitOf } from '../openai/request-limits';
import { getModel } from '../catalogue/catalogue';
import { chatCompletionRequest } from '../openai/chat-request';
import { InvalidRequestError } from '../errors/gateway-errors';
import type { RoutedChatRequest } from '../providers/types';
import { safeParse } from '../validation/zod';
import type { GeminiContent, GeminiPart, GeminiRequest } from './request';

/**
 * A Gemini API request as the chat core's request (docs/providers.md §10), so any catalogue model
 * serves it through the same core (hold, plan, fallback, ledger) as `/v1/chat/completions`:
 *
 * - `systemInstruction` → a system message; `user` turns → user messages (text, `inlineData` as a
 *   data URL: a PDF as a `file` part, anything else as an `image_url`); `model` turns → assistant
 *   messages (thought parts dropped, `functionCall` → `tool_calls` with `args` as JSON text);
 *   `functionResponse` → a `tool` message;
 * - a call without an `id` gets `call_<turn>_<part>`, and a response without one answers the last
 *   call of its name;
 * - `functionDeclarations` → function tools (`parametersJsonSchema`, else `parameters`);
 *   `toolConfig.functionCallingConfig.mode` `ANY` → `required`, `NONE` → `none`;
 * - `generationConfig`: temperature, topP, maxOutputTokens (capped at the model's output limit),
 *   stopSequences (the first 4), `responseMimeType: application/json` with a schema → `json_schema`
 *   (without one → `json_object`), `thinkingConfig.thinkingBudget` > 0 or `thinkingLevel` →
 *   `reasoning_effort`; topK and candidateCount have no counterpart.
 * @param model the catalogue id.
 * @throws InvalidRequestError (400) when the translation is not a valid chat request.
 */
export function toChatRequest(body: GeminiRequest, model: string, stream: boolean): RoutedChatRequest {
  const chat: Record<string, unknown> = { model, messages: chatMessages(body) };
  const g = body.generationConfig;
  const limit = outputLimitOf(getModel(model, 'chat'));
  if (g?.maxOutputTokens !== undefined) chat['max_tokens'] = Math.min(g.maxOutputTokens, limit);
  if (stream) chat['stream'] = true;
  if (g?.temperature !== undefined) chat['temperature'] = g.temperature;
  if (g?.topP !== undefined) chat['top_p'] = g.topP;
  if (g?.stopSequences !== undefined && g.stopSequences.length > 0) chat['stop'] = g.stopSequences.slice(0, 4);
  if (g?.responseMimeType === 'application/json') {
    const schema = g.responseJsonSchema ?? g.responseSchema;
    chat['response_format'] = schema === undefined ? { type: 'json_object' } : { type: 'json_schema', json_schema: { name: 'response', schema } };
  }
  const t = g?.thinkingConfig;
  if (t?.thinkingLevel !== undefined) chat['reasoning_effort'] = t.thinkingLevel.toLowerCase() === 'high' ? 'high' : 'low';
  else if (t?.thinkingBudget !== undefined && t.thinkingBudget > 0) chat['reasoning_effort'] = t.thinkingBudget >= 8192 ? 'high' : 'medium';
  const tools = (body.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  if (tools.length > 0) {
    chat['tools'] = tools.map((d) => ({
      type: 'function',
      function: { name: d.name, description: d.description, parameters: d.parametersJsonSchema ?? d.parameters ?? { type: 'object', properties: {} } },
    }));
    const mode = body.toolConfig?.functionCallingConfig?.mode;
    if (mode === 'ANY') chat['tool_choice'] = 'required';
    if (mode === 'NONE') chat['tool_choice'] = 'none';
  }
  const parsed = safeParse(chatCompletionRequest, chat);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidRequestError(`The request cannot be served by ${model}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** The conversation as chat messages (also what `:countTokens` counts). */
export function chatMessages(body: GeminiRequest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const system = (body.systemInstruction?.parts ?? []).map((p) => p.text ?? '').join('\n');
  if (system !== '') out.push({ role: 'system', content: system });
  const calls: { id: string; name: string }[] = [];
  (body.contents ?? body.generateContentRequest?.contents ?? []).forEach((turn, i) => {
    out.push(...(turn.role === 'model' ? [assistantMessage(turn, i, calls)] : userMessages(turn, calls)));
  });
  return out;
}

function assistantMessage(turn: GeminiContent, i: number, calls: { id: string; name: string }[]): Record<string, unknown> {
  const text = turn.parts
    .filter((p) => p.text !== undefined && p.thought !== true)
    .map((p) => p.text)
    .join('');
  const toolCalls = turn.parts.flatMap((p, j) => {
    if (p.functionCall === undefined) return [];
    const id = p.functionCall.id ?? `call_${i}_${j}`;
    calls.push({ id, name: p.functionCall.name });
    return [{ id, type: 'function', function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) } }];
  });
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' ? null : text };
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  else if (text === '') message['content'] = ' ';
  return message;
}

function userMessages(turn: GeminiContent, calls: { id: string; name: string }[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const parts: Record<string, unknown>[] = [];
  for (const p of turn.parts) {
    if (p.functionResponse !== undefined) {
      const r = p.functionResponse;
      const id = r.id ?? [...calls].reverse().find((c) => c.name === r.name)?.id ?? `call_${r.name}`;
      out.push({ role: 'tool', tool_call_id: id, content: JSON.stringify(r.response ?? {}) });
    } else {
      const part = userPart(p);
      if (part !== undefined) parts.push(part);
    }
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

/**
 * One user part as a chat content part: `inlineData` as a data URL — a PDF as a `file` part (each
 * adapter's document input; Gemini gets it back as `inlineData`), any other type as an `image_url`.
 */
function userPart(p: GeminiPart): Record<string, unknown> | undefined {
  if (p.inlineData !== undefined) {
    const { mimeType, data } = p.inlineData;
    const url = `data:${mimeType};base64,${data}`;
    if (mimeType.toLowerCase() === 'application/pdf') return { type: 'file', file: { file_data: url, filename: p.inlineData.displayName ?? 'document.pdf' } };
    return { type: 'image_url', image_url: { url } };
  }
  if (p.text !== undefined && p.thought !== true) return { type: 'text', text: p.text };
  return undefined;
}
