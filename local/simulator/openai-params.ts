/**
 * Request fields OpenAI itself refuses per model family (providers.md §1.1, §1.9), answered with its
 * 400 `invalid_request_error` / `unsupported_parameter`:
 *
 * - o-series reasoning models (`o1`, `o3-mini`, …): `max_tokens` ("use max_completion_tokens") and the
 *   sampling fields temperature, top_p, presence/frequency penalties, logprobs, top_logprobs, logit_bias;
 * - other chat models: `reasoning_effort`, which only reasoning models take.
 *
 * DeepSeek in thinking mode (reasoner / R1 ids, or `thinking: {type: "enabled"}`, §4.2) refuses `logprobs` / `top_logprobs` (§4.3, "→ error"; the wording here is ours).
 * Other compatible hosts document their own, looser rules.
 */
import { isObject, type JsonObject } from './json-narrowing.js';
import type { Problem, SimProvider } from './types.js';

const O_SERIES_REJECTED = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias'] as const;

function unsupported(param: string, hint = ''): Problem {
  return { kind: 'bad-request', message: `Unsupported parameter: '${param}' is not supported with this model.${hint}`, param, code: 'unsupported_parameter' };
}

/** @returns the 400 OpenAI answers for these fields on `model`, or undefined. */
export function checkOpenAIParams(provider: SimProvider, model: string, body: JsonObject): Problem | undefined {
  const present = (f: string): boolean => body[f] !== undefined && body[f] !== null;
  const thinking = body['thinking'];
  const deepseekThinks = /reasoner|r1/i.test(model) || (isObject(thinking) && thinking['type'] === 'enabled');
  if (provider === 'deepseek' && deepseekThinks) {
    const asked = body['logprobs'] === true ? 'logprobs' : present('top_logprobs') ? 'top_logprobs' : undefined;
    return asked === undefined ? undefined : unsupported(asked);
  }
  if (provider !== 'openai') return undefined;
  if (/^o\d/.test(model)) {
    if (present('max_tokens')) return unsupported('max_tokens', " Use 'max_completion_tokens' instead.");
    const sampling = O_SERIES_REJECTED.find(present);
    return sampling === undefined ? undefined : unsupported(sampling);
  }
  return present('reasoning_effort') ? unsupported('reasoning_effort') : undefined;
}
