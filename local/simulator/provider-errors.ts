/** Which error shape each provider answers in, and the context-length fault's words. */
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue.js';
import { renderAnthropicError } from './anthropic-errors.js';
import type { JsonReply } from './deliver.js';
import { renderGeminiError } from './gemini-errors.js';
import { renderOpenAIStyleError } from './openai-errors.js';
import type { Route } from './routes.js';
import type { Fault, Problem, SimProvider } from './types.js';

// Picks the error renderer for a provider: every error the simulator sends goes through here, so
// each provider answers in its own shape.
/** `p` as `provider` would send it. `requestId` goes into the request-id header/body where the provider has one. */
export function renderProblem({ provider, wire }: Route, p: Problem, requestId: string): JsonReply {
  switch (wire) {
    case 'anthropic':
      return renderAnthropicError(p, requestId);
    case 'gemini':
      return renderGeminiError(p);
    default:
      return renderOpenAIStyleError(provider, p, requestId);
  }
}

/** The status a provider uses when overloaded (providers.md §7 "Overload"): used when a mid-stream
 * error fault hits a buffered request, which can only fail before its headers. */
export function overloadStatus({ provider, wire }: Route): number {
  return wire === 'anthropic' ? 529 : provider === 'openai' ? 500 : 503;
}

// The `context-length` fault: each provider's own words for a prompt over the model's context window.
// The renderers (`openai-errors.ts`, `anthropic-errors.ts`, `gemini-errors.ts`) put these messages in
// their usual error shapes, all with HTTP 400.
type ContextLength = Extract<Problem, { kind: 'context-length' }>;

/**
 * The window (tokens) the error names when the fault does not say: the smallest context window of the
 * provider's chat models in the catalogue (gpt-4o 128K; Claude 200K; Gemini 2.5 1,048,576; …), or
 * 128K for a provider the catalogue does not name yet.
 */
function usualWindow(provider: SimProvider): number {
  const windows = [...CATALOGUE.values()].filter((e) => e.kind === 'chat').flatMap((e) => e.targets).filter((t) => t.provider === provider).map((t) => t.contextWindow);
  return windows.length === 0 ? 128_000 : Math.min(...windows);
}

/** The problem a `context-length` fault answers with on `provider`. */
export function contextLengthProblem(fault: Extract<Fault, { kind: 'context-length' }>, provider: SimProvider): ContextLength {
  const limit = fault.limit ?? usualWindow(provider);
  return { kind: 'context-length', limit, tokens: fault.tokens ?? limit + 1 };
}

/** OpenAI Chat Completions (providers.md §1.5: 400 `context_length_exceeded`, param `messages`). */
export function openAIContextMessage(p: ContextLength): string {
  return `This model's maximum context length is ${p.limit} tokens. However, your messages resulted in ${p.tokens} tokens. Please reduce the length of the messages.`;
}

/**
 * DeepSeek: the same opening, its own ending, and `code: "invalid_request_error"`, `param: null`
 * (bodies quoted in public issue threads, e.g. evalstate/fast-agent#621, NoFxAiOS/nofx#1278).
 */
export function deepSeekContextMessage(p: ContextLength): string {
  return `This model's maximum context length is ${p.limit} tokens. However, you requested ${p.tokens} tokens (${p.tokens} in the messages, 0 in the completion). Please reduce the length of the messages or completion.`;
}

/** Anthropic Messages API: 400 `invalid_request_error` (providers.md §2.7). */
export function anthropicContextMessage(p: ContextLength): string {
  return `prompt is too long: ${p.tokens} tokens > ${p.limit} maximum`;
}

/** Gemini API: 400 INVALID_ARGUMENT (providers.md §3.5; wording as in google-gemini/gemini-cli#6678). */
export function geminiContextMessage(p: ContextLength): string {
  return `The input token count (${p.tokens}) exceeds the maximum number of tokens allowed (${p.limit}).`;
}
