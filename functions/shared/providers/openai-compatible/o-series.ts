import type { ChatCompletionRequest } from '../../openai/chat-request';
import type { AdapterContext } from '../types';
import { refuseLogprobs } from '../unsupported-parameters';
import type { UpstreamBody } from './adapter';

/**
 * OpenAI's reasoning models (o-series; catalogue `capabilities.reasoning: 'hidden'`), providers.md §1.9.
 */

/** Sampling fields the o-series rejects with 400 `unsupported_parameter` (§1.9). */
const O_SERIES_REJECTED = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias'] as const;

/**
 * For o-series targets: `max_tokens` is refused, `max_completion_tokens` is the same bound including
 * reasoning tokens; rejected sampling fields are dropped (modelmux always sends a temperature, the
 * spec's 0.7 default). `reasoning_effort` is passed as sent.
 * @throws InvalidRequestError (400 `unsupported_parameter`) for `logprobs: true` / `top_logprobs > 0`:
 *   dropping those would answer with null logprobs the client asked for; OpenAI refuses them too (§1.9).
 */
export function openAIAdjust(body: UpstreamBody, req: ChatCompletionRequest, ctx: AdapterContext): void {
  if (ctx.target.capabilities.reasoning !== 'hidden') return;
  refuseLogprobs(req);
  if (body.max_tokens != null && body.max_completion_tokens == null) body.max_completion_tokens = body.max_tokens;
  delete body.max_tokens;
  for (const f of O_SERIES_REJECTED) delete body[f];
}
