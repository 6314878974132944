import type { ChatSurface } from './chat-surface';
import type { ChatCompletion, ChatCompletionChunk, ChunkChoice, Usage } from '../openai/chat-response';
import { toErrorBody } from '../errors/gateway-errors';
import type { SseFrame } from '../http/types';
import { toResponse, type ResponseContext, type ResponseObject } from '../responses/response-object';
import { createResponsesStreamEncoder } from '../responses/stream-events';
import type { SaveResponse } from '../responses/stored-response-writer';

/**
 * The Responses API as a surface of the chat core (app/chat-surface.ts): a buffered answer is a
 * `response` object (responses/response-object.ts), a stream OpenAI's typed events
 * (responses/stream-events.ts) encoded from the core's typed parts as they come; errors are OpenAI's.
 * The stored response (`save`, when `store` is on) is written before the client gets it: before the
 * body (also one held past the budget), or before the last event (`response.completed`,
 * `.incomplete` or `.failed`), so a client that sends its next turn at once finds it.
 */
export function responsesSurface(ctx: ResponseContext, save: SaveResponse | undefined): ChatSurface {
  return {
    present: (completion: ChatCompletion) => toResponse(ctx, completion),
    beforeBody: async (body) => {
      await save?.(body as ResponseObject);
    },
    errorBody: (err) => toErrorBody(err),
    streamEncoder: ({ id, created, model }) => {
      const encoder = createResponsesStreamEncoder(ctx);
      const chunk = (choices: ChunkChoice[], usage?: Usage): ChatCompletionChunk => ({ id, object: 'chat.completion.chunk', created, model, choices, ...(usage === undefined ? {} : { usage }) });
      /** The last events, after the response they carry is stored. */
      const last = async (events: SseFrame[]): Promise<SseFrame[]> => {
        const response = encoder.final();
        if (response !== undefined) await save?.(response);
        return events;
      };
      return {
        wantsFinalUsage: true,
        parts: (parts) => (parts.choices.length === 0 ? [] : encoder.chunk(chunk(parts.choices))),
        complete: async (usage) => {
          const usageEvents = usage === undefined ? [] : encoder.chunk(chunk([], usage));
          return [...usageEvents, ...(await last(encoder.done()))];
        },
        failed: (err) => last(encoder.failed(toErrorBody(err).error)),
      };
    },
  };
}
