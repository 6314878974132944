import type { GatewayRequest, GatewayResult, SseFrame } from '../http/types';
import type { ChatCompletion, ChatCompletionChunk, ChunkChoice, Usage } from '../openai/chat-response';
import { toErrorBody } from '../errors/gateway-errors';
import { parseJsonBody } from '../openai/parse-body';
import { conversationInput } from '../responses/conversation-state';
import { createResponseRequest, unknownParameter } from '../responses/request';
import { responseContext, toResponse, type ResponseContext, type ResponseObject } from '../responses/response-object';
import { createResponsesStreamEncoder } from '../responses/stream-events';
import { responseSaver, type SaveResponse } from '../responses/stored-response-writer';
import { toChatRequest } from '../responses/to-chat';
import { runChatExchange } from './chat-completions';
import { authenticateRequest } from './guard';
import type { ChatSurface } from './chat-answer';

/**
 * `POST /v1/responses` (OpenAI's Responses API): authenticate → validate the Responses request → its
 * stored context (`previous_response_id`, `item_reference` items: responses/conversation-state.ts) →
 * translate it to a chat request (responses/to-chat.ts) → the chat core's own exchange
 * ({@link runChatExchange}: the same admission, plan, router, fallback, error rules and ledger as
 * `/v1/chat/completions`) → its answer in the Responses shape: a `response` object, or its typed
 * events when `stream` is true.
 *
 * With `store` true (the default) the finished response — completed, incomplete, or failed after its
 * first token, as OpenAI keeps them — is written to the account's stored responses before the client
 * gets it: before the body when buffered (also a body held past the budget), before the last event
 * when streamed, and waited for until the request's deadline at most. Billing is the chat core's
 * (billing/request-bill.ts: the hold before the upstream call covers the prompt actually sent, the
 * stored history and referenced items included) and never depends on the store: a failed or late
 * write leaves the answer and its settle as they are.
 */
export async function responses(req: GatewayRequest): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, createResponseRequest, unknownParameter);
  const input = await conversationInput(caller.accountId, body);
  const chat = toChatRequest({ ...body, input: input.resolved });
  const ctx = responseContext(req.requestId, req.receivedAt, body, chat);
  const save = responseSaver(caller.accountId, body, input.stored, req.requestId, { deadline: req.deadline });
  const result = await runChatExchange(req, caller, chat, responsesSurface(ctx, save));
  // The chat core names the chat field it dropped; this caller sent `reasoning`.
  const dropped = result.headers?.['x-modelmux-dropped-params'];
  if (dropped === undefined) return result;
  return { ...result, headers: { ...result.headers, 'x-modelmux-dropped-params': dropped.replace('reasoning_effort', 'reasoning') } };
}

/**
 * The Responses API as a surface of the chat core (app/chat-answer.ts): a buffered answer is a
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
      const chunk = (choices: ChunkChoice[], usage?: Usage): ChatCompletionChunk => ({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices,
        ...(usage === undefined ? {} : { usage }),
      });
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
