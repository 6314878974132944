import { tokenUsage, type TokenUsage } from '../../usage/token-usage';
import type { AnthropicUsage } from './wire';

/**
 * Anthropic `usage` → the normalised usage (tokens; providers.md §2.5, docs/prices.md). Anthropic's
 * counts are ADDITIVE: `input_tokens` excludes cache writes and reads, so the whole prompt adds them
 * back; the write is split by `cache_creation.ephemeral_5m/1h_input_tokens` (all 5-minute when the
 * split is absent, the default TTL). Thinking tokens are part of `output_tokens` already.
 *
 * @returns undefined when the counts are missing (the router then estimates).
 */
export function mapAnthropicUsage(u: AnthropicUsage | null | undefined): TokenUsage | undefined {
  if (u == null || u.input_tokens == null || u.output_tokens == null) return undefined;
  const read = u.cache_read_input_tokens ?? 0;
  const written = u.cache_creation_input_tokens ?? 0;
  const oneHour = Math.min(written, u.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  return tokenUsage({
    prompt: u.input_tokens + written + read,
    cachedRead: read,
    cacheWrite5m: written - oneHour,
    cacheWrite1h: oneHour,
    completion: u.output_tokens,
    reasoning: u.output_tokens_details?.thinking_tokens ?? 0,
  });
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
  if (later.cache_creation != null) out.cache_creation = later.cache_creation;
  if (later.output_tokens_details != null) out.output_tokens_details = later.output_tokens_details;
  return out;
}
