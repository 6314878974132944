import { parseUpstreamJson } from '../upstream-failure';
import type { ChunkDelta, ChunkParts, FinishReason } from '../../openai/chat-response';
import type { TokenUsage } from '../../usage/token-usage';
import type { AdapterContext, StreamTransform, UpstreamSseEvent } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure } from '../upstream-failure';
import { readCandidateParts, toToolCall } from './candidate-parts';
import { failureFromRpcError } from './gemini-errors';
import { mapFinishReason, withToolCalls } from './finish-reason';
import { mapUsage } from './usage';
import { generateContentResponse, type GenerateContentResponse } from './wire';

/**
 * `streamGenerateContent?alt=sse` → OpenAI chunk parts (Gemini API, providers.md §3.4). Each event
 * is `data: <GenerateContentResponse>` with incremental parts; there is no `[DONE]`: the stream ends
 * when the connection closes, so completeness is judged by whether a `finishReason` arrived.
 *
 * Emitted per candidate (choice index = candidate index):
 * 1. once, `{role:"assistant", content:""}`;
 * 2. per event, one delta with its thoughts (`reasoning_content`), text (`content`) and function
 *    calls (`tool_calls`: our own index counter, Gemini's id or a fresh random `call_…`, name, the
 *    full arguments and any thought signature (`extra_content`) in one delta, since Gemini sends a
 *    call whole);
 * 3. on `finishReason`, a separate `{delta:{}, finish_reason}` (`tool_calls` when a call was seen).
 * A blocked prompt (no candidates, `promptFeedback.blockReason`) gives 1 and a `content_filter` finish.
 * `usageMetadata` holds running totals: the last one is emitted by `end()` as `{choices:[], usage}`.
 *
 * Throws {@link UpstreamAttemptError}: an `error` in a chunk (classified by its RPC status), a broken
 * tool call finish (retryable `server`, see finish-reason.ts), a malformed event, and in `end()` a
 * stream that stopped before every candidate finished (retryable `server`: a cut, not an answer).
 */
export function createGeminiStreamTransform(_ctx: AdapterContext): StreamTransform {
  /** Per candidate index: tool calls emitted so far (our index counter), and whether it finished. */
  const choices = new Map<number, { calls: number; finished: boolean }>();
  let usage: TokenUsage | undefined;

  function choiceState(index: number, out: ChunkParts[]): { calls: number; finished: boolean } {
    let state = choices.get(index);
    if (state === undefined) {
      state = { calls: 0, finished: false };
      choices.set(index, state);
      out.push({ choices: [{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    }
    return state;
  }

  function finish(index: number, reason: FinishReason, out: ChunkParts[]): void {
    const state = choiceState(index, out);
    state.finished = true;
    out.push({ choices: [{ index, delta: {}, finish_reason: withToolCalls(reason, state.calls > 0) }] });
  }

  function onResponse(chunk: GenerateContentResponse, out: ChunkParts[]): void {
    if (chunk.error != null) throw new UpstreamAttemptError(failureFromRpcError(chunk.error, chunk.error.code ?? 200));
    const chunkUsage = mapUsage(chunk.usageMetadata);
    if (chunkUsage !== undefined) usage = chunkUsage;

    const candidates = chunk.candidates ?? [];
    if (candidates.length === 0 && chunk.promptFeedback?.blockReason != null) {
      finish(0, 'content_filter', out);
      return;
    }
    candidates.forEach((c, position) => {
      const reason = mapFinishReason(c.finishReason);
      if (reason === 'broken-tool-call') {
        throw new UpstreamAttemptError(makeFailure('server', 200, `gemini: candidate ended with ${c.finishReason ?? 'a broken tool call'}`));
      }
      const index = c.index ?? position;
      const state = choiceState(index, out);
      const parts = readCandidateParts(c.content?.parts);
      const delta: ChunkDelta = {};
      if (parts.reasoning !== '') delta.reasoning_content = parts.reasoning;
      if (parts.text !== '') delta.content = parts.text;
      if (parts.calls.length > 0) {
        delta.tool_calls = parts.calls.map((call) => ({ index: state.calls++, ...toToolCall(call) }));
      }
      if (Object.keys(delta).length > 0) out.push({ choices: [{ index, delta, finish_reason: null }] });
      if (reason !== null) finish(index, reason, out);
    });
  }

  return {
    push(event: UpstreamSseEvent): ChunkParts[] {
      if (event.data.trim() === '') return [];
      const json = parseUpstreamJson(event.data, 'gemini: stream event is not valid JSON');
      const out: ChunkParts[] = [];
      // The array-wrapped form is how Gemini's compatibility layer reports errors (§3.9); accepted here too.
      for (const item of Array.isArray(json) ? json : [json]) {
        const parsed = generateContentResponse.safeParse(item);
        if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, 'gemini: malformed stream chunk'));
        onResponse(parsed.data, out);
      }
      return out;
    },

    end(): ChunkParts[] {
      const unfinished = choices.size === 0 || [...choices.values()].some((s) => !s.finished);
      if (unfinished) throw new UpstreamAttemptError(makeFailure('server', 200, 'gemini: stream ended before a finishReason'));
      return usage === undefined ? [] : [{ choices: [], usage }];
    },
  };
}
