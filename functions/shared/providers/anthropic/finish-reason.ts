import type { FinishReason } from '../../openai/chat-response';

/**
 * Anthropic `stop_reason` → OpenAI `finish_reason` (Anthropic Messages API, stop_reason values,
 * providers.md §2.5 and its suggested mapping).
 *
 * - `end_turn`, `stop_sequence` → `stop`.
 * - `pause_turn` → `stop`: only server tools pause a turn, and modelmux sends client tools only; OpenAI
 *   has no "continue" value.
 * - `max_tokens`, `model_context_window_exceeded` → `length`: the answer was cut either way.
 * - `tool_use` → `tool_calls`; `refusal` → `content_filter`.
 * - An unknown future value → `stop` (the turn did end; `stop` is what OpenAI clients expect then).
 *
 * @returns null when the upstream has not stopped yet (null / absent).
 */
export function mapStopReason(reason: string | null | undefined): FinishReason | null {
  switch (reason) {
    case null:
    case undefined:
      return null;
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
