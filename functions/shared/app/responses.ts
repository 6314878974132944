import type { GatewayRequest, GatewayResult } from '../http/types';
import { parseJsonBody } from '../openai/parse-body';
import { conversationInput } from '../responses/conversation-state';
import { createResponseRequest, unknownParameter } from '../responses/request';
import { responseContext } from '../responses/response-object';
import { responsesSurface } from './responses-surface';
import { responseSaver } from '../responses/stored-response-writer';
import { toChatRequest } from '../responses/to-chat';
import { runChatExchange } from './chat-completions';
import { authenticateRequest } from './guard';

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
  return runChatExchange(req, caller, chat, responsesSurface(ctx, save));
}
