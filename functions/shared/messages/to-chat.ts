import { outputLimitOf } from '../openai/request-limits';
import { getModel } from '../catalogue/catalogue';
import { chatCompletionRequest } from '../openai/chat-request';
import { InvalidRequestError } from '../errors/gateway-errors';
import { NATIVE_REQUEST, type RoutedChatRequest } from '../providers/types';
import { safeParse } from '../validation/zod';
import { metadataCaller } from './metadata-user';
import type { ContentBlock, CountTokensRequest, MessageParam, MessagesRequest } from './request';

/**
 * An Anthropic Messages request as the chat core's request (docs/anthropic-messages.md, "Other
 * models"), carrying the original under `NATIVE_REQUEST` so a Claude target gets it unchanged; the
 * translation serves every other target, the hold's estimate and the plan's capabilities.
 *
 * - `system` (and a `system` turn among the messages) → a system message; `tool_result` blocks → `tool` messages (before the user's other
 *   blocks); `tool_use` → `tool_calls` (`input` as JSON text); `thinking` → `reasoning_content`
 *   (each adapter decides whether to send it back); `redacted_thinking` is dropped;
 * - `image` (base64 or URL) → `image_url`; a base64 `document` → a `file` part (data URL); a `text`
 *   document → text; any other block is given as its JSON text, so nothing the model was sent is lost;
 * - client tools → function tools, except those with `defer_loading: true` (Anthropic's tool search
 *   keeps them from the model until searched for; Claude Code sends a `DeferredToolPlaceholder` so);
 *   Anthropic's versioned tools (`type` set: `bash_…`, `web_search_…`)
 *   exist only on Claude and are dropped; `tool_choice` `any` → `required`, `tool` → that function,
 *   `disable_parallel_tool_use` → `parallel_tool_calls: false`;
 * - `max_tokens` (required here, a cap: Claude Code sends 32000 whatever the model) → `max_tokens`, never
 *   above the model's output limit (README, "The Anthropic Messages API"), so a cap past a smaller
 *   model's limit is served at that limit, not refused as OpenAI refuses `max_tokens` on its own API
 *   (openai/request-limits.ts); each target's adapter lowers it to its own limit;
 * - `stop_sequences` → `stop` (OpenAI takes 4: the first 4), `metadata.user_id` → `user` (and, as
 *   Claude Code fills it, `session_id`: messages/metadata-user.ts); `top_k`,
 *   `thinking`, `cache_control` and beta fields have no counterpart and only reach Claude targets.
 * @param model the catalogue id the request's model name resolved to.
 * @throws InvalidRequestError (400) when the translation is not a valid chat request, or
 *   `metadata.user_id` is too long (messages/metadata-user.ts).
 */
export function toChatRequest(body: MessagesRequest, model: string, headers: Record<string, string>): RoutedChatRequest {
  const chat: Record<string, unknown> = {
    model,
    messages: chatMessages(body),
    max_tokens: Math.min(body.max_tokens, outputLimitOf(getModel(model, 'chat'))),
  };
  if (body.stream === true) chat['stream'] = true;
  if (body.temperature !== undefined) chat['temperature'] = body.temperature;
  if (body.top_p !== undefined) chat['top_p'] = body.top_p;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) chat['stop'] = body.stop_sequences.slice(0, 4);
  Object.assign(chat, metadataCaller(body.metadata?.user_id));
  Object.assign(chat, chatTools(body));
  const parsed = safeParse(chatCompletionRequest, chat);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidRequestError(`The request cannot be served by ${model}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const routed: RoutedChatRequest = parsed.data;
  routed[NATIVE_REQUEST] = { protocol: 'anthropic-messages', body, headers };
  return routed;
}

/** The conversation of a count_tokens or messages request, as chat messages (for estimates). */
export function chatMessages(body: Pick<CountTokensRequest, 'system' | 'messages'>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const system = body.system === undefined ? '' : typeof body.system === 'string' ? body.system : body.system.map(blockText).join('\n');
  if (system !== '') out.push({ role: 'system', content: system });
  for (const m of body.messages) {
    if (m.role === 'system') out.push({ role: 'system', content: blocksOf(m).map(blockText).join('\n') });
    else out.push(...(m.role === 'user' ? userMessages(m) : [assistantMessage(m)]));
  }
  return out;
}

function blocksOf(m: Pick<MessageParam, 'content'>): ContentBlock[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
}

function userMessages(m: MessageParam): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const parts: Record<string, unknown>[] = [];
  for (const b of blocksOf(m)) {
    if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: str(b['tool_use_id']), content: toolResultText(b) || ' ' });
    else parts.push(userPart(b));
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function assistantMessage(m: MessageParam): Record<string, unknown> {
  let text = '';
  let reasoning = '';
  const calls: Record<string, unknown>[] = [];
  for (const b of blocksOf(m)) {
    if (b.type === 'tool_use')
      calls.push({ id: str(b['id']), type: 'function', function: { name: str(b['name']), arguments: JSON.stringify(b['input'] ?? {}) } });
    else if (b.type === 'thinking') reasoning += str(b['thinking']);
    else if (b.type !== 'redacted_thinking') text += blockText(b);
  }
  const msg: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) msg['tool_calls'] = calls;
  if (reasoning !== '') msg['reasoning_content'] = reasoning;
  return msg;
}

function userPart(b: ContentBlock): Record<string, unknown> {
  const source = b['source'] as Record<string, unknown> | undefined;
  if (b.type === 'image' && source !== undefined) {
    const url = source['type'] === 'base64' ? `data:${str(source['media_type'])};base64,${str(source['data'])}` : str(source['url']);
    return { type: 'image_url', image_url: { url } };
  }
  if (b.type === 'document' && source?.['type'] === 'base64') {
    return {
      type: 'file',
      file: { file_data: `data:${str(source['media_type'])};base64,${str(source['data'])}`, filename: str(b['title']) || 'document.pdf' },
    };
  }
  return { type: 'text', text: blockText(b) };
}

/** A block's text: `text`, a text document's data, else the block as JSON. */
function blockText(b: ContentBlock): string {
  if (b.type === 'text') return str(b['text']);
  const source = b['source'] as Record<string, unknown> | undefined;
  if (b.type === 'document' && source?.['type'] === 'text') return str(source['data']);
  return JSON.stringify(b);
}

function toolResultText(b: ContentBlock): string {
  const content = b['content'];
  const text = typeof content === 'string' ? content : Array.isArray(content) ? (content as ContentBlock[]).map(blockText).join('\n') : '';
  return b['is_error'] === true ? `Error: ${text}` : text;
}

function chatTools(body: MessagesRequest): Record<string, unknown> {
  const tools = (body.tools ?? [])
    .filter((t) => (t.type == null || t.type === 'custom') && t.input_schema !== undefined && t['defer_loading'] !== true)
    .map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  if (tools.length === 0) return {};
  const out: Record<string, unknown> = { tools };
  const choice = body.tool_choice;
  if (choice === undefined) return out;
  if (choice.type === 'auto') out['tool_choice'] = 'auto';
  else if (choice.type === 'any') out['tool_choice'] = 'required';
  else if (choice.type === 'none') out['tool_choice'] = 'none';
  else out['tool_choice'] = { type: 'function', function: { name: choice.name ?? '' } };
  if (choice.disable_parallel_tool_use === true) out['parallel_tool_calls'] = false;
  return out;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
