import type { GatewayRequest, GatewayResult, JsonResult } from '../http/types';
import { asGatewayError } from '../openai/errors';
import { logger } from '../observability/logger';
import { parseJsonBody } from '../openai/parse-body';
import { messagesErrorBody, messagesErrorKind } from '../messages/errors';
import { messageFromEvents, messageFromParts, messageId } from '../messages/message';
import { resolveMessagesModel } from '../messages/model-names';
import { forwardedHeaders, messagesRequest } from '../messages/request';
import { messagesStreamEncoder } from '../messages/stream-encoder';
import { toChatRequest } from '../messages/to-chat';
import { runChatExchange } from './chat-completions';
import type { ChatSurface } from './chat-surface';
import { authenticateRequest } from './guard';

/**
 * `POST /v1/messages` (Anthropic's Messages API; `?beta=true` as Claude Code sends it is the same
 * route): authenticate (`x-api-key` or `Authorization: Bearer`) → validate → resolve the model name
 * (messages/model-names.ts) → the chat core's own exchange ({@link runChatExchange}: the same hold,
 * rate and key limits, BYOK, plan, fallback, hedging, breakers, settle and ledger as
 * `/v1/chat/completions`), carrying the original body so a Claude target gets it unchanged
 * (messages/to-chat.ts) → the answer as an Anthropic `Message` or its event stream.
 * Every error is Anthropic's body with Anthropic's status (messages/errors.ts).
 */
export function messages(req: GatewayRequest): Promise<GatewayResult> {
  return inMessagesApi(req, async () => {
    const caller = await authenticateRequest(req);
    const body = parseJsonBody(req.body, messagesRequest);
    const chat = toChatRequest(body, resolveMessagesModel(body.model), forwardedHeaders(req.headers));
    return runChatExchange(req, caller, chat, messagesSurface(req.requestId));
  });
}

/** How the chat core's answer is written on this API. */
export function messagesSurface(requestId: string): ChatSurface {
  const id = messageId(requestId);
  return {
    present: (completion, parts) =>
      parts.upstreamEvents !== undefined ? messageFromEvents(parts.upstreamEvents, id, completion.model) : messageFromParts(parts, id, completion.model, completion.usage),
    errorBody: (err) => messagesErrorBody(err, requestId),
    streamEncoder: (meta) => messagesStreamEncoder({ ...meta, id }, requestId),
  };
}

/**
 * Runs a route of this API: its result with Anthropic's `request-id` header (the SDKs read it), any
 * error thrown before the answer as Anthropic's error body and status, its headers (`retry-after`,
 * rate-limit headers) kept.
 */
export async function inMessagesApi(req: GatewayRequest, route: () => Promise<GatewayResult>): Promise<GatewayResult> {
  try {
    const result = await route();
    return { ...result, headers: { ...result.headers, 'request-id': req.requestId } };
  } catch (err) {
    const error = asGatewayError(err);
    // As the edge logs the errors it renders (edge/function-url.ts), which this one never reaches.
    if (error.status >= 500) logger.error('request failed', { requestId: req.requestId, path: req.path, status: error.status, error: err as Error });
    else logger.info('request refused', { requestId: req.requestId, path: req.path, status: error.status, code: error.code });
    const result: JsonResult = {
      kind: 'json',
      status: messagesErrorKind(error.status).status,
      headers: { ...error.headers, 'request-id': req.requestId },
      body: messagesErrorBody(error, req.requestId),
    };
    return result;
  }
}
