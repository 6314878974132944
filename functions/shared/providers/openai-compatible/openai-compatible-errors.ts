import * as z from '../../validation/zod';
import type { UpstreamFailure } from '../types';
import { kindForStatus, makeFailure, parseErrorBody, retryAfterMs } from '../upstream-failure';

/**
 * Classifies an error response from an OpenAI-compatible upstream (providers.md §1.5, §4.5, §6, §3.9).
 * Body: `{"error":{"message","type","param","code"}}`; Gemini's compatibility layer wraps it in an
 * array (`[{"error":{…}}]`, §3.9), handled here too.
 */

const errorBody = z.looseObject({
  error: z.nullish(
    z.looseObject({
      message: z.nullish(z.string()),
      type: z.nullish(z.string()),
      code: z.nullish(z.union([z.string(), z.number()])),
      param: z.nullish(z.string()),
      status: z.nullish(z.string()),
    }),
  ),
});

/**
 * A prompt over the target's window, in the words each host uses: OpenAI and DeepSeek "This model's
 * maximum context length is N tokens…" (§1.5, §4.5; DeepSeek's code is `invalid_request_error`, so the
 * words decide), Anthropic's compat layer its own "prompt is too long: N tokens > M maximum" (§2.9,
 * §2.7), Gemini's compat layer its own "The input token count (N) exceeds the maximum number of tokens
 * allowed (M)." inside an array (§3.9, §3.5).
 */
const CONTEXT_LENGTH = /context length|too many tokens|prompt is too long|exceeds the maximum number of tokens/i;

/** The parsed `error` object of an OpenAI-style error body, if there is one. */
export function readOpenAIError(bodyText: string): z.infer<typeof errorBody>['error'] {
  return parseErrorBody(bodyText, errorBody)?.error;
}

/** The verdict for a non-2xx OpenAI-compatible response. */
export function classifyOpenAIError(status: number, bodyText: string, headers: Headers): UpstreamFailure {
  const err = readOpenAIError(bodyText);
  const code = err?.code == null ? undefined : String(err.code);
  const message = err?.message ?? `upstream returned HTTP ${status}`;
  const retryAfter = retryAfterMs(headers);
  let kind = kindForStatus(status);
  if (code === 'context_length_exceeded' || CONTEXT_LENGTH.test(message)) {
    kind = 'context-length';
  } else if (code === 'model_not_found' || code === 'model_decommissioned') {
    // A retired or unknown upstream id is our catalogue's problem, not the client's (Groq answers 400).
    kind = 'not-found';
  } else if (err?.type === 'insufficient_quota' || code === 'insufficient_quota') {
    // OpenAI's "out of money" is a 429 that never clears by retrying (providers.md §1.5).
    kind = 'auth-config';
  } else if (status === 400 && (code === 'invalid_api_key' || (err?.status === 'INVALID_ARGUMENT' && /api key/i.test(message)))) {
    kind = 'auth-config';
  }
  return makeFailure(kind, status, message, { retryAfterMs: retryAfter, param: err?.param ?? null, code: code ?? null });
}
