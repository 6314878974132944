import type { Usage } from '../../openai/chat-response';
import { makeUsage } from '../../openai/chat-response';
import type { AnthropicUsage } from './wire';

/**
 * Anthropic `usage` → OpenAI usage (tokens; providers.md §2.5). Anthropic's `input_tokens` excludes
 * cache writes and reads, so the OpenAI prompt count adds them back; `cached_tokens` is the cache-read
 * share, as OpenAI reports it. Thinking tokens are part of `output_tokens` already.
 *
 * @returns undefined when the counts are missing (the router then estimates).
 */
export function mapAnthropicUsage(u: AnthropicUsage | null | undefined): Usage | undefined {
  if (u == null || u.input_tokens == null || u.output_tokens == null) return undefined;
  const prompt = u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
  const extra: Partial<Usage> = {};
  if (u.cache_read_input_tokens != null) extra.prompt_tokens_details = { cached_tokens: u.cache_read_input_tokens };
  const thinking = u.output_tokens_details?.thinking_tokens;
  if (thinking != null) extra.completion_tokens_details = { reasoning_tokens: thinking };
  return makeUsage(prompt, u.output_tokens, extra);
}

/**
 * Folds a later usage report into an earlier one. Stream counts are cumulative (providers.md §2.6;
 * Anthropic SDK `MessageDeltaUsage`): a later non-null field replaces the earlier one, never adds.
 */
export function mergeUsage(earlier: AnthropicUsage, later: AnthropicUsage | null | undefined): AnthropicUsage {
  if (later == null) return earlier;
  const out: AnthropicUsage = { ...earlier };
  if (later.input_tokens != null) out.input_tokens = later.input_tokens;
  if (later.output_tokens != null) out.output_tokens = later.output_tokens;
  if (later.cache_creation_input_tokens != null) out.cache_creation_input_tokens = later.cache_creation_input_tokens;
  if (later.cache_read_input_tokens != null) out.cache_read_input_tokens = later.cache_read_input_tokens;
  if (later.output_tokens_details != null) out.output_tokens_details = later.output_tokens_details;
  return out;
}
