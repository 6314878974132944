import type { GatewayRequest, GatewayResult } from '../http/types';
import { parseJsonBody } from '../openai/parse-body';
import { toResponseEvents } from '../responses/event-stream';
import { createResponseRequest, unknownParameter } from '../responses/request';
import { responseContext, toResponse } from '../responses/response-object';
import { toChatRequest } from '../responses/to-chat';
import { runChatExchange } from './chat-completions';
import { authenticateRequest } from './guard';

/**
 * `POST /v1/responses` (OpenAI's Responses API): authenticate → validate the Responses request →
 * translate it to a chat request (responses/to-chat.ts) → the chat core's own exchange
 * ({@link runChatExchange}: the same admission, plan, router, fallback, error rules and ledger as
 * `/v1/chat/completions`) → its answer in the Responses shape: a `response` object, or its typed
 * events when `stream` is true. No conversation state is kept: `previous_response_id` is a 400.
 */
export async function responses(req: GatewayRequest): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, createResponseRequest, unknownParameter);
  const chat = toChatRequest(body);
  const ctx = responseContext(req.requestId, req.receivedAt, body, chat);
  const result = await runChatExchange(req, caller, chat, (completion) => toResponse(ctx, completion));
  // A buffered answer comes back shaped already, also when held past the budget (JSON frames, not SSE).
  if (result.kind === 'json' || chat.stream !== true) return result;
  return { ...result, frames: toResponseEvents(result.frames, ctx) };
}
