/**
 * Handler of the native Anthropic endpoint the gateway calls: `POST /v1/messages`.
 */
import { anthropicMessage, anthropicStream } from './anthropic-format.js';
import { readAnthropicMessages } from './anthropic-input.js';
import type { Reply } from './deliver.js';
import { isObject, promptTokens } from './json-narrowing.js';
import { planReply } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';

/**
 * Answer a native Anthropic call (`/v1/messages`, or `/v1/messages/count_tokens`: `{input_tokens}`
 * by the simulator's counting rule, countWords); a {@link Problem} is rendered by the caller.
 */
export function handleAnthropic(call: SimCall): Reply | Problem {
  if (call.route.op === 'anthropic-count-tokens') return countTokens(call);
  if (call.route.op !== 'anthropic-messages') return { kind: 'no-route', method: call.method, path: call.url.pathname };
  const req = readAnthropicMessages(call.body);
  if ('kind' in req) return req;
  if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
  const plan = planReply(req.conversation, { replyWords: call.replyWords });
  return req.stream ? anthropicStream(call, req, plan) : anthropicMessage(call, req, plan);
}

function countTokens(call: SimCall): Reply | Problem {
  // count_tokens takes no max_tokens; the reader's rules about it do not apply.
  const body = isObject(call.body) && call.body['max_tokens'] === undefined ? { ...call.body, max_tokens: Number.MAX_SAFE_INTEGER } : call.body;
  const req = readAnthropicMessages(body);
  if ('kind' in req) return req;
  if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
  return { kind: 'json', status: 200, headers: { 'request-id': call.requestId }, body: { input_tokens: promptTokens(req.conversation.messageTexts) } };
}
