import type { ChatMessage } from '../../openai/chat-messages';
import type { ToolCall } from '../../openai/chat-tools';
import { InvalidRequestError } from '../../errors/gateway-errors';
import { functionCallsOnly } from '../unsupported-parameters';
import { userPartToBlock, withCacheControl } from './content';
import type {
  AnthropicCacheControl,
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
} from './request-body';

/**
 * OpenAI conversation → Anthropic `system` + alternating `messages` (providers.md §2.2–2.3, §7).
 *
 * - `system` / `developer` messages, wherever they stand, are hoisted into one `system` string, their
 *   texts joined with a blank line (Anthropic has no system role; their position is lost, as on
 *   Anthropic's own compatibility endpoint, §2.9).
 * - `tool` messages become `tool_result` blocks of a user turn; consecutive ones share one turn.
 * - Assistant `tool_calls` become `tool_use` blocks after the assistant's text.
 * - Consecutive same-role turns are merged here rather than left to the API (which would merge them
 *   too, §2.2), so that in a merged user turn the `tool_result` blocks go first and each answers a
 *   `tool_use` of the assistant turn just before it, as Anthropic requires.
 * - Our `reasoning_content` on assistant messages is not sent back: Anthropic only accepts thinking
 *   blocks with the signature it issued, which OpenAI clients never see.
 * - `cache_control` on a message marks its last block; on a tool call, its `tool_use` block.
 * - `name` on messages has no Anthropic counterpart and is dropped.
 */

/** The converted conversation. */
export interface AnthropicConversation {
  /** Undefined when the client sent no system text and nothing was added; blocks when one carries a cache breakpoint. */
  system: string | AnthropicTextBlock[] | undefined;
  messages: AnthropicMessage[];
}

/**
 * Converts the client's messages. `extraSystem` is appended to the hoisted system text (e.g. the
 * JSON-mode instruction).
 * @throws InvalidRequestError (400) for legacy `function` messages and content Anthropic cannot take.
 */
export function toAnthropicConversation(messages: readonly ChatMessage[], extraSystem: readonly string[] = []): AnthropicConversation {
  const system: AnthropicTextBlock[] = [];
  const turns: Array<{ role: AnthropicMessage['role']; blocks: AnthropicContentBlock[] }> = [];
  const push = (role: AnthropicMessage['role'], blocks: AnthropicContentBlock[]): void => {
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  };

  messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...markLast(textBlocks(m.content), m.cache_control));
        return;
      case 'user':
        push(
          'user',
          markLast(
            typeof m.content === 'string' ? [text(m.content)] : m.content.map((p, j) => userPartToBlock(p, `messages[${i}].content[${j}]`)),
            m.cache_control,
          ),
        );
        return;
      case 'assistant': {
        const blocks = markLast(assistantBlocks(m, i), m.cache_control);
        // An assistant message with neither text nor tool calls says nothing; Anthropic rejects empty turns.
        if (blocks.length > 0) push('assistant', blocks);
        return;
      }
      case 'tool':
        push('user', [withCacheControl(toolResult(m.tool_call_id, m.content), m.cache_control)]);
        return;
      case 'function':
        throw new InvalidRequestError('The legacy `function` role is not supported for this model; use `tools` and `tool` messages.', {
          param: `messages[${i}].role`,
        });
      default:
        throw new InvalidRequestError('Unsupported message role.', { param: `messages[${i}].role` });
    }
  });

  system.push(...extraSystem.map(text));
  return {
    system: systemOf(system),
    messages: turns.map((t) => ({ role: t.role, content: compact(t.role === 'user' ? toolResultsFirst(t.blocks) : t.blocks) })),
  };
}

/**
 * Anthropic tool ids must match `^[a-zA-Z0-9_-]+$` (its 400 on other ids is widely reported); ids
 * minted by another provider are mapped the same way on the `tool_use` and the `tool_result` side, so
 * the pair still matches.
 */
export function toolUseId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/**
 * A tool call's `arguments` (a JSON string the model produced) → the `input` object Anthropic wants.
 * Arguments that are not a JSON object (empty, truncated by a length stop, or a bare value) become
 * `{}`: the call stays in the history, paired with its result, instead of failing the whole request
 * for a fault of an earlier model reply.
 */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through: not JSON
  }
  return {};
}

const text = (t: string): AnthropicTextBlock => ({ type: 'text', text: t });

type TextParts = string | ReadonlyArray<{ text: string; cache_control?: AnthropicCacheControl | undefined }>;

/** Text parts as blocks, each with the client's cache breakpoint when it set one. */
function textBlocks(content: TextParts): AnthropicTextBlock[] {
  return typeof content === 'string' ? [text(content)] : content.map((p) => withCacheControl(text(p.text), p.cache_control));
}

/**
 * The system prompt: its texts joined with a blank line into one string — or, when a client put a cache
 * breakpoint on a system text, as blocks (empty ones dropped), so the breakpoint reaches Anthropic.
 */
function systemOf(blocks: readonly AnthropicTextBlock[]): string | AnthropicTextBlock[] | undefined {
  const kept = blocks.filter((b) => b.text !== '');
  if (kept.length === 0) return undefined;
  if (kept.some((b) => b.cache_control !== undefined)) return kept;
  return kept.map((b) => b.text).join('\n\n');
}

function assistantBlocks(m: Extract<ChatMessage, { role: 'assistant' }>, index: number): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  if (typeof m.content === 'string') blocks.push(text(m.content));
  else if (m.content != null) for (const p of m.content) blocks.push(p.type === 'text' ? withCacheControl(text(p.text), p.cache_control) : text(p.refusal));
  // Anthropic rejects empty text blocks; clients often send content "" beside tool_calls.
  const nonEmpty = blocks.filter((b) => b.type !== 'text' || b.text !== '');
  if (nonEmpty.length === 0 && m.refusal != null && m.refusal !== '') nonEmpty.push(text(m.refusal));
  for (const call of functionCallsOnly(m.tool_calls, index) ?? []) nonEmpty.push(toolUse(call));
  return nonEmpty;
}

function toolUse(call: ToolCall): AnthropicToolUseBlock {
  return withCacheControl<AnthropicToolUseBlock>(
    { type: 'tool_use', id: toolUseId(call.id), name: call.function.name, input: toolInput(call.function.arguments) },
    call.cache_control,
  );
}

/**
 * A breakpoint set on a whole message (opencode's and @ai-sdk/openai-compatible's `cache_control` on the
 * message object) goes on its last block, where the cached prefix ends, as Anthropic marks a turn
 * (providers.md §2.2). The blocks unchanged when there is none, or when the last already has one.
 */
function markLast<B extends AnthropicContentBlock>(blocks: B[], cacheControl: AnthropicCacheControl | undefined): B[] {
  const last = blocks.at(-1);
  if (cacheControl === undefined || last === undefined || last.cache_control !== undefined) return blocks;
  return [...blocks.slice(0, -1), { ...last, cache_control: cacheControl }];
}

function toolResult(toolCallId: string, content: TextParts): AnthropicToolResultBlock {
  return {
    type: 'tool_result',
    tool_use_id: toolUseId(toolCallId),
    content: typeof content === 'string' ? content : textBlocks(content),
  };
}

/** Stable partition: tool results before anything else in a user turn. */
function toolResultsFirst(blocks: AnthropicContentBlock[]): AnthropicContentBlock[] {
  return [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
}

/** A turn of a single text block (without a cache breakpoint) is sent as a plain string, the API's shorthand for it. */
function compact(blocks: AnthropicContentBlock[]): AnthropicMessage['content'] {
  const only = blocks.length === 1 ? blocks[0] : undefined;
  return only !== undefined && only.type === 'text' && only.cache_control === undefined ? only.text : blocks;
}
