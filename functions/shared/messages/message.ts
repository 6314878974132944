import type { CompletionParts, FinishReason, UpstreamEventText, Usage } from '../openai/chat-response';

/**
 * The Anthropic `Message` a buffered `POST /v1/messages` answers (official SDK `Message`;
 * docs/anthropic-messages.md), from the chat core's answer: verbatim from a Claude upstream's own
 * events ({@link messageFromEvents}), or translated from any other model's ({@link messageFromParts}).
 */

/** Anthropic's `usage` (tokens). `input_tokens` excludes cache reads and writes (they are additive). */
export interface MessagesUsage {
  input_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  output_tokens: number;
  [field: string]: unknown;
}

/** An Anthropic `Message` (fields modelmux writes; a Claude upstream's extra fields are kept). */
export interface MessageObject {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Record<string, unknown>[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
  [field: string]: unknown;
}

/** Our message id: `msg_` + our request id, so the answer and the ledger entry name the same request. */
export function messageId(requestId: string): string {
  return `msg_${requestId}`;
}

/**
 * The chat core's usage in Anthropic's shape: the prompt's cache reads and writes (`cached_tokens`
 * and `cache_write_tokens`, subsets of `prompt_tokens` in the core's shape, usage/token-usage.ts)
 * become `cache_read_input_tokens` and `cache_creation_input_tokens` and leave `input_tokens`
 * (Anthropic's counts are additive). Claude upstreams' own usage is passed through verbatim.
 */
export function messagesUsage(usage: Usage | undefined): MessagesUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    output_tokens: usage?.completion_tokens ?? 0,
  };
}

/** OpenAI `finish_reason` → Anthropic `stop_reason`. */
export function stopReason(finish: FinishReason | null): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * A translated answer: thinking (from `reasoning_content`; no signature: only Claude signs its
 * thinking), text, then one `tool_use` per call (`input` parsed from the call's JSON text, `{}` when
 * it is not a JSON object).
 */
export function messageFromParts(parts: CompletionParts, id: string, model: string, usage: Usage | undefined): MessageObject {
  const choice = parts.choices[0];
  const content: Record<string, unknown>[] = [];
  const message = choice?.message;
  if (message?.reasoning_content) content.push({ type: 'thinking', thinking: message.reasoning_content, signature: '' });
  const text = (message?.content ?? '') || (message?.refusal ?? '');
  if (text !== '') content.push({ type: 'text', text });
  for (const call of message?.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
  }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(choice?.finish_reason ?? null),
    stop_sequence: null,
    usage: messagesUsage(usage),
  };
}

/** A tool call's JSON text as the `input` object Anthropic's `tool_use` carries. */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * A Claude upstream's answer from its own stream events, accumulated as the official SDK's
 * `MessageStream` does: `message_start` gives the message, blocks start with their
 * `content_block_start` and grow by `text_delta`, `citations_delta`, `thinking_delta`,
 * `signature_delta` and `input_json_delta` (parsed at the block's stop); `message_delta` sets the stop
 * reason and the cumulative usage. Blocks and fields the SDK does not know are kept as sent. `id` and
 * `model` are ours (the client's model name).
 */
export function messageFromEvents(events: readonly UpstreamEventText[], id: string, model: string): MessageObject {
  let message: MessageObject = {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: messagesUsage(undefined),
  };
  const json = new Map<number, string>();
  for (const e of events) {
    const ev = JSON.parse(e.data) as Record<string, unknown>;
    const index = typeof ev['index'] === 'number' ? ev['index'] : -1;
    const delta = (ev['delta'] ?? {}) as Record<string, unknown>;
    const block = message.content[index];
    switch (ev['type']) {
      case 'message_start':
        message = { ...(ev['message'] as MessageObject), id, model, content: [] };
        break;
      case 'content_block_start':
        message.content[index] = { ...(ev['content_block'] as Record<string, unknown>) };
        break;
      case 'content_block_delta':
        if (block !== undefined) applyDelta(block, delta, index, json);
        break;
      case 'content_block_stop':
        if (block !== undefined && json.has(index)) block['input'] = toolInput(json.get(index) ?? '');
        break;
      case 'message_delta':
        Object.assign(message, delta);
        message.usage = { ...message.usage, ...(ev['usage'] as Record<string, unknown> | undefined) };
        break;
    }
  }
  return message;
}

function applyDelta(block: Record<string, unknown>, delta: Record<string, unknown>, index: number, json: Map<number, string>): void {
  switch (delta['type']) {
    case 'text_delta':
      block['text'] = String(block['text'] ?? '') + String(delta['text'] ?? '');
      break;
    case 'thinking_delta':
      block['thinking'] = String(block['thinking'] ?? '') + String(delta['thinking'] ?? '');
      break;
    case 'signature_delta':
      block['signature'] = delta['signature'];
      break;
    case 'citations_delta':
      block['citations'] = [...((block['citations'] as unknown[] | undefined) ?? []), delta['citation']];
      break;
    case 'input_json_delta':
      json.set(index, (json.get(index) ?? '') + String(delta['partial_json'] ?? ''));
      break;
  }
}
