import { parseUpstreamJson } from '../upstream-failure';
import type { ChunkParts, FinishReason } from '../../openai/chat-response';
import type { AdapterContext, StreamTransform, UpstreamSseEvent } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure } from '../upstream-failure';
import { failureFromErrorObject } from './anthropic-errors';
import { mapStopReason } from './finish-reason';
import { createContentBlockMapper, part } from './stream-blocks';
import { mapAnthropicUsage, mergeUsage } from './usage';
import { streamEvent, type AnthropicUsage } from './wire';

/**
 * Anthropic Messages SSE (providers.md §2.6: `message_start`, per block `content_block_start` /
 * `content_block_delta`… / `content_block_stop`, `message_delta`, `message_stop`; `ping` and `error`
 * at any point) → OpenAI chunk parts, one choice (index 0):
 *
 * - first part `{role:"assistant", content:""}`; then `text_delta` → `content`, `thinking_delta` →
 *   `reasoning_content` (`signature_delta` dropped: clients cannot send signatures back);
 * - a `tool_use` block start → `tool_calls[{index, id, type, function:{name, arguments:""}}]` where
 *   `index` is our own 0, 1, 2… counter over tool blocks (Anthropic's block index also counts text
 *   and thinking blocks); each non-empty `input_json_delta` → `function.arguments` for that index
 *   (`{}` at the block's stop when it sent none: a call without arguments);
 * - `message_delta` → the finish part (`delta: {}`); `message_stop` → the usage part
 *   `{choices: [], usage}`: prompt side from `message_start` (plus cache), `output_tokens` from the last
 *   `message_delta`. Counts are cumulative: later values replace earlier ones, never add.
 *
 * The role part is held back until the first content, finish or usage part, so an `error` event right
 * after `message_start` (Anthropic's usual "Overloaded" after a 200) fails the attempt before its
 * first chunk, and the router can still fall back (peers.md, fallbacks during streaming).
 *
 * `push` throws {@link UpstreamAttemptError} for an `error` event (kind from its `error.type`) or a
 * malformed event; `end` throws a retryable `server` failure when `message_stop` never came.
 */
export function createAnthropicStreamTransform(ctx: AdapterContext): StreamTransform {
  const provider = ctx.endpoint.provider;
  let usage: AnthropicUsage = {};
  let roleSent = false;
  let finishSent = false;
  let stopped = false;

  const malformed = (what: string): UpstreamAttemptError =>
    new UpstreamAttemptError(makeFailure('server', 200, `${provider}: malformed stream event (${what})`));
  const blocks = createContentBlockMapper(malformed);

  /** Prefixes the role part to the first parts that carry anything. */
  function emit(parts: ChunkParts[]): ChunkParts[] {
    if (parts.length === 0 || roleSent) return parts;
    roleSent = true;
    return [part({ role: 'assistant', content: '' }), ...parts];
  }

  function finish(reason: FinishReason): ChunkParts[] {
    finishSent = true;
    return [part({}, reason)];
  }

  return {
    push(event: UpstreamSseEvent): ChunkParts[] {
      if (stopped || event.data === '') return [];
      const parts = translate(event);
      // The event itself, verbatim, for a surface that speaks Anthropic's protocol (ChunkParts.upstreamEvent).
      parts.push({ choices: [], upstreamEvent: { event: event.event, data: event.data } });
      return parts;
    },

    end(): ChunkParts[] {
      if (!stopped) throw new UpstreamAttemptError(makeFailure('server', 200, `${provider}: stream ended before message_stop`));
      return [];
    },
  };

  function translate(event: UpstreamSseEvent): ChunkParts[] {
    const parsed = streamEvent.safeParse(parseUpstreamJson(event.data, 'anthropic: stream event is not valid JSON'));
    if (!parsed.success) throw malformed('unexpected shape');
    const ev = parsed.data;
    switch (ev.type ?? event.event) {
      case 'message_start':
        usage = mergeUsage(usage, ev.message?.usage);
        return [];
      case 'content_block_start':
        return emit(blocks.start(ev));
      case 'content_block_delta':
        return emit(blocks.delta(ev));
      case 'content_block_stop':
        return emit(blocks.stop(ev));
      case 'message_delta': {
        usage = mergeUsage(usage, ev.usage);
        const reason = mapStopReason(ev.delta?.stop_reason);
        return reason === null ? [] : emit(finish(reason));
      }
      case 'message_stop': {
        stopped = true;
        const final = mapAnthropicUsage(usage);
        // A message that stopped without a stop_reason still ended: say so rather than leave the client waiting.
        const tail = finishSent ? [] : finish('stop');
        return emit(final === undefined ? tail : [...tail, { choices: [], usage: final }]);
      }
      case 'error':
        throw new UpstreamAttemptError(failureFromErrorObject(ev.error ?? undefined, 200));
      case 'ping':
        return [];
      default:
        // Event types added after 2023-06-01 are ignored, as the SDK does.
        return [];
    }
  }
}
