import type { ChatCompletionChunk } from '../openai/chat-response';
import type { OpenAIErrorBody } from '../openai/errors';
import type { SseFrame } from '../http/types';
import type { ResponseContext, ResponseObject } from './response-object';
import { createResponsesStreamEncoder } from './stream-events';

/**
 * The chat core's SSE frames (sse/encode.ts: `data: <chunk>`, `data: [DONE]`, an error event
 * `data: {"error":…}`, and `:` comment lines) as the Responses API's event stream. Comments — the
 * keep-alives of a stream committed before its first token, and the routing comment — pass through
 * unchanged; SSE clients ignore them (WHATWG HTML, "Server-sent events").
 *
 * The chat route and this one share the exchange itself (routing, fallback, the ledger): only the
 * wire form of the answer differs, so it is translated here, frame by frame, as it flows.
 * @param beforeLast awaited with the whole response before the last event (`response.completed`,
 *   `.incomplete` or `.failed`) is sent: the store writes it there, so a client that sends its next
 *   turn at once finds it.
 */
export async function* toResponseEvents(chatFrames: AsyncIterable<SseFrame>, ctx: ResponseContext, beforeLast?: (response: ResponseObject) => Promise<void>): AsyncGenerator<SseFrame> {
  const encoder = createResponsesStreamEncoder(ctx);
  const finalised = async (): Promise<void> => {
    const response = encoder.final();
    if (response !== undefined) await beforeLast?.(response);
  };
  for await (const frame of chatFrames) {
    for (const event of splitEvents(frame)) {
      if (event.data === undefined) {
        yield event.raw;
        continue;
      }
      if (event.data === '[DONE]') {
        const last = encoder.done();
        await finalised();
        yield* last;
        return;
      }
      const payload = JSON.parse(event.data) as ChatCompletionChunk | OpenAIErrorBody;
      if ('error' in payload) {
        const last = encoder.failed(payload.error);
        await finalised();
        yield* last;
        return;
      }
      yield* encoder.chunk(payload);
    }
  }
}

/** One event of a frame: its `data` (joined lines), or none for a comment-only block (kept raw). */
interface FrameEvent {
  data: string | undefined;
  raw: string;
}

/** Splits wire-ready SSE text into its events (blocks separated by a blank line). */
function splitEvents(frame: SseFrame): FrameEvent[] {
  const events: FrameEvent[] = [];
  for (const block of frame.split('\n\n')) {
    if (block === '') continue;
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    events.push({ data: data.length > 0 ? data.join('\n') : undefined, raw: `${block}\n\n` });
  }
  return events;
}
