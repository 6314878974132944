/**
 * Handler of the native Anthropic endpoints: `POST /v1/messages` and `GET /v1/models`.
 */
import { anthropicMessage, anthropicStream } from './anthropic-format.js';
import { readAnthropicMessages } from './anthropic-input.js';
import type { SimCall } from './call.js';
import type { Reply } from './deliver.js';
import { anthropicModelList, isRetiredModel } from './model-catalog.js';
import type { Problem } from './problem.js';
import { planReply } from './reply.js';

/** Answer a native Anthropic call; a {@link Problem} is rendered by the caller. */
export function handleAnthropic(call: SimCall): Reply | Problem {
  switch (call.route.op) {
    case 'anthropic-messages': {
      const req = readAnthropicMessages(call.body);
      if ('kind' in req) return req;
      if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
      const plan = planReply(req.conversation, { replyWords: call.replyWords });
      return req.stream ? anthropicStream(call, req, plan) : anthropicMessage(call, req, plan);
    }
    case 'anthropic-models':
      return { kind: 'json', status: 200, body: anthropicModelList(), headers: { 'request-id': call.requestId } };
    default:
      return { kind: 'no-route', method: call.method, path: call.url.pathname };
  }
}
