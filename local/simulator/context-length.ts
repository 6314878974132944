/**
 * The `context-length` fault: each provider's own words for a prompt over the model's context window.
 * The renderers (`openai-errors.ts`, `anthropic-errors.ts`, `gemini-errors.ts`) put these messages in
 * their usual error shapes, all with HTTP 400.
 */
import type { Problem } from './problem.js';
import type { Fault, SimProvider } from './types.js';

type ContextLength = Extract<Problem, { kind: 'context-length' }>;

/**
 * The window (tokens) the error names when the fault does not say: the provider's usual one
 * (gpt-4o 128K; Claude 200K; Gemini 2.5 1,048,576, the figure its error quotes; DeepSeek V3.1+ 128K =
 * 131,072 as its error quotes; MiniMax M2 204,800; Llama 3.1/3.3 128K; providers.md §2, §3, §4.2, §5.1, §6).
 */
const USUAL_WINDOW: Record<SimProvider, number> = {
  openai: 128_000,
  anthropic: 200_000,
  gemini: 1_048_576,
  deepseek: 131_072,
  minimax: 204_800,
  together: 131_072,
  deepinfra: 131_072,
  groq: 131_072,
};

/** The problem a `context-length` fault answers with on `provider`. */
export function contextLengthProblem(fault: Extract<Fault, { kind: 'context-length' }>, provider: SimProvider): ContextLength {
  const limit = fault.limit ?? USUAL_WINDOW[provider];
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
