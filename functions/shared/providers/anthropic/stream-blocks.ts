import type { ChunkDelta, ChunkParts, FinishReason } from '../../openai/chat-response';
import type { UpstreamAttemptError } from '../types';
import type { StreamEvent } from './wire';

/**
 * The content blocks of one Anthropic Messages stream → OpenAI chunk parts for choice 0 (providers.md
 * §2.6): `text_delta` → `content`, `thinking_delta` → `reasoning_content` (`signature_delta` dropped:
 * clients cannot send signatures back); a `tool_use` block → `tool_calls[{index, id, type, function}]`,
 * where `index` is our own 0, 1, 2… counter over tool blocks (Anthropic's block index also counts text
 * and thinking blocks). Keeps, per stream, which block is which tool call and which calls sent arguments.
 */
export interface ContentBlockMapper {
  /** `content_block_start` → its first parts (a `tool_use` start names the call, arguments `""`). */
  start(ev: StreamEvent): ChunkParts[];
  /** `content_block_delta` → its parts (none for `signature_delta`, empty fragments, unknown types). */
  delta(ev: StreamEvent): ChunkParts[];
  /** `content_block_stop` → `arguments: "{}"` for a tool call that streamed no input, else nothing. */
  stop(ev: StreamEvent): ChunkParts[];
}

/**
 * @param malformed builds the failure thrown for an event that breaks the protocol (a start without
 *   `content_block`, a delta without `delta`, input JSON outside a tool_use block).
 */
export function createContentBlockMapper(malformed: (what: string) => UpstreamAttemptError): ContentBlockMapper {
  let nextToolIndex = 0;
  /** Anthropic content-block index → our tool-call index, for tool_use blocks only. */
  const toolIndexByBlock = new Map<number, number>();
  /** Tool-call indexes that have sent some argument text. */
  const toolHasInput = new Set<number>();
  const toolIndexOf = (ev: StreamEvent): number | undefined => (ev.index == null ? undefined : toolIndexByBlock.get(ev.index));

  return {
    start(ev) {
      const block = ev.content_block;
      if (block == null) throw malformed('content_block_start without content_block');
      switch (block.type) {
        case 'text':
          return block.text ? [part({ content: block.text })] : [];
        case 'thinking':
          return block.thinking ? [part({ reasoning_content: block.thinking })] : [];
        case 'tool_use': {
          const index = nextToolIndex++;
          if (ev.index != null) toolIndexByBlock.set(ev.index, index);
          const id = block.id ?? `toolu_${index}`;
          return [part({ tool_calls: [{ index, id, type: 'function', function: { name: block.name ?? '', arguments: '' } }] })];
        }
        default:
          // redacted_thinking, server tool blocks: nothing an OpenAI client can use.
          return [];
      }
    },

    delta(ev) {
      const delta = ev.delta;
      if (delta == null) throw malformed('content_block_delta without delta');
      switch (delta.type) {
        case 'text_delta':
          return delta.text ? [part({ content: delta.text })] : [];
        case 'thinking_delta':
          return delta.thinking ? [part({ reasoning_content: delta.thinking })] : [];
        case 'input_json_delta': {
          // The first fragment is often empty (providers.md §2.6): nothing to send.
          if (!delta.partial_json) return [];
          const index = toolIndexOf(ev);
          if (index === undefined) throw malformed('input_json_delta outside a tool_use block');
          toolHasInput.add(index);
          return [part({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
        }
        default:
          // signature_delta, citations_delta, and delta types added later.
          return [];
      }
    },

    stop(ev) {
      // A tool called without arguments streams no input text: its arguments are `{}`, as the
      // buffered answer's empty `input` object serialises and as OpenAI sends them.
      const index = toolIndexOf(ev);
      if (index === undefined || toolHasInput.has(index)) return [];
      toolHasInput.add(index);
      return [part({ tool_calls: [{ index, function: { arguments: '{}' } }] })];
    },
  };
}

/** One chunk part for choice 0. */
export function part(delta: ChunkDelta, finishReason: FinishReason | null = null): ChunkParts {
  return { choices: [{ index: 0, delta, finish_reason: finishReason }] };
}
