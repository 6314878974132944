/**
 * Handler of the native Anthropic endpoint the gateway calls: `POST /v1/messages`.
 */
import { anthropicMessage, anthropicStream } from './anthropic-format.js';
import { readAnthropicMessages } from './anthropic-input.js';
import type { SimCall } from './call.js';
import type { Reply } from './deliver.js';
import type { Problem } from './problem.js';
import { planReply } from './reply.js';
import { isRetiredModel } from './retired-models.js';

/** Answer a native Anthropic call; a {@link Problem} is rendered by the caller. */
export function handleAnthropic(call: SimCall): Reply | Problem {
  if (call.route.op !== 'anthropic-messages') return { kind: 'no-route', method: call.method, path: call.url.pathname };
  const req = readAnthropicMessages(call.body);
  if ('kind' in req) return req;
  if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
  const plan = planReply(req.conversation, { replyWords: call.replyWords });
  return req.stream ? anthropicStream(call, req, plan) : anthropicMessage(call, req, plan);
}
