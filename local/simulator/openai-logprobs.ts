/**
 * Token log probabilities in OpenAI's shape (openai-node 6.x `ChatCompletionTokenLogprob`;
 * providers.md §1.3–1.4): a choice's `logprobs` is `{content: [...], refusal: null}`, one entry per
 * token `{token, logprob, bytes, top_logprobs}`, where `bytes` are the token's UTF-8 bytes and
 * `top_logprobs` the `top` most likely tokens at that position, most likely first (at most 20).
 *
 * The simulator's tokens are its words (token-count.ts), each carrying the whitespace after it (the
 * first also any before it), as its stream pieces do (chunking.ts): the tokens of a text, or of each
 * streamed piece of it, concatenate to that text, and their number is its completion tokens. Values are deterministic: the chosen token's
 * logprob comes from its characters, alternatives (filler words) are each less likely.
 */
import type { JsonObject } from './json-narrowing.js';
import { FILLER_WORDS } from './reply.js';

/** The tokens of `text`: words with their trailing whitespace (the first keeps any leading space too). */
export function tokensOf(text: string): string[] {
  const tokens = text.match(/\S+\s*/g) ?? [];
  const lead = text.match(/^\s*/)?.[0] ?? '';
  if (tokens.length > 0 && lead !== '') tokens[0] = lead + tokens[0];
  return tokens;
}

function bytesOf(token: string): number[] {
  return [...Buffer.from(token, 'utf8')];
}

/** A stable logprob in (-1, 0] for a token: the model's simulated confidence. */
function chosenLogprob(token: string): number {
  let h = 0;
  for (const ch of token) h = (h * 31 + ch.codePointAt(0)!) % 997;
  return -Math.round((h / 997) * 1000) / 1000;
}

function entry(token: string, logprob: number): JsonObject {
  return { token, logprob, bytes: bytesOf(token) };
}

/** One `ChatCompletionTokenLogprob` with `top` alternatives (the chosen token first). */
function tokenLogprob(token: string, top: number): JsonObject {
  const logprob = chosenLogprob(token);
  const trail = token.match(/\s*$/)?.[0] ?? '';
  const alternatives = FILLER_WORDS.filter((w) => w + trail !== token).map((w, i) => entry(w + trail, logprob - 1.5 - i));
  return { ...entry(token, logprob), top_logprobs: [entry(token, logprob), ...alternatives].slice(0, top) };
}

/** A choice's `logprobs` for the content `text` (`top` alternatives per token, 0–20). */
export function contentLogprobs(text: string, top: number): JsonObject {
  return { content: tokensOf(text).map((t) => tokenLogprob(t, top)), refusal: null };
}
