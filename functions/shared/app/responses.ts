import type { GatewayRequest, GatewayResult, SseFrame } from '../http/types';
import { parseJsonBody } from '../openai/parse-body';
import { conversationInput } from '../responses/conversation-state';
import { toResponseEvents } from '../responses/event-stream';
import { createResponseRequest, unknownParameter } from '../responses/request';
import { responseContext, toResponse, type ResponseObject } from '../responses/response-object';
import { responseSaver, type SaveResponse } from '../responses/stored-response-writer';
import { toChatRequest } from '../responses/to-chat';
import type { ChatCompletion } from '../openai/chat-response';
import { runChatExchange } from './chat-completions';
import { chatSurface } from './chat-surface';
import { authenticateRequest } from './guard';
import { HOLD_BEAT } from './held-json';

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
  let presented: ResponseObject | undefined;
  const surface = { ...chatSurface(chat.stream_options?.include_usage === true), present: (completion: ChatCompletion) => (presented = toResponse(ctx, completion)) };
  const result = await runChatExchange(req, caller, chat, surface);
  if (result.kind === 'json') {
    if (presented !== undefined) await save?.(presented);
    return result;
  }
  if (chat.stream === true) return { ...result, frames: toResponseEvents(result.frames, ctx, save) };
  // A buffered answer held past the budget (app/held-json.ts): beats, then the body in one frame.
  return save === undefined ? result : { ...result, frames: savedBeforeBody(result.frames, () => presented, save) };
}

/** The held answer's frames, with the response stored before the frame that carries it. */
async function* savedBeforeBody(frames: AsyncIterable<SseFrame>, presented: () => ResponseObject | undefined, save: SaveResponse): AsyncGenerator<SseFrame> {
  for await (const frame of frames) {
    const response = frame === HOLD_BEAT ? undefined : presented();
    if (response !== undefined) await save(response);
    yield frame;
  }
}
