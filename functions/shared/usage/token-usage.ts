/**
 * The normalised token usage of one request, whatever the provider reported: the one shape billing
 * prices (money/price.ts, bucket by bucket), the adapters produce (providers/<wire>/usage.ts) and the
 * API surfaces encode (OpenAI chat `usage`, Responses `usage`, Anthropic Messages `usage`).
 *
 * Every count is in tokens. The cache buckets are SUBSETS of `prompt`, and `reasoning` is a subset of
 * `completion`, so `prompt` is always the whole prompt (OpenAI's `prompt_tokens` convention):
 *
 *   uncached input = prompt − cachedRead − cacheWrite5m − cacheWrite1h   (≥ 0, enforced by {@link tokenUsage})
 *
 * How each provider's report maps onto it (docs/prices.md has the sources):
 * - Anthropic is ADDITIVE: `input_tokens` excludes `cache_read_input_tokens` and
 *   `cache_creation_input_tokens`; prompt = the three summed; the write is split by
 *   `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens` (all 5-minute when absent).
 * - OpenAI and Gemini report the cached count as a SUBSET of the prompt
 *   (`prompt_tokens_details.cached_tokens`, `cachedContentTokenCount`); they bill no cache writes.
 * - DeepSeek reports `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` = `prompt_tokens`.
 */
export interface TokenUsage {
  /** The whole prompt: uncached input + cache reads + cache writes (tokens). */
  prompt: number;
  /** Of `prompt`, read from the provider's prompt cache (billed at the cached-input price). */
  cachedRead: number;
  /** Of `prompt`, written to the cache for 5 minutes (Anthropic's default TTL; billed at the 5-minute write price). */
  cacheWrite5m: number;
  /** Of `prompt`, written to the cache for 1 hour (Anthropic `ttl: "1h"`; billed at the 1-hour write price). */
  cacheWrite1h: number;
  /** Output tokens, reasoning included (reasoning is billed as output). */
  completion: number;
  /** Of `completion`, reasoning ("thinking") tokens; informational, never priced separately. */
  reasoning: number;
}

/**
 * A {@link TokenUsage} from possibly partial counts: missing buckets are 0, negatives and non-integers
 * from a lying upstream are clamped to whole non-negative counts, and the subsets are made consistent —
 * a cache bucket larger than what is left of the prompt is cut to it (cache reads keep priority over
 * writes, which are cut first, then 1-hour before 5-minute), reasoning is capped at the completion.
 * The prompt itself is never reduced: a report whose buckets exceed it bills the prompt it states.
 */
export function tokenUsage(counts: { prompt: number; completion: number } & Partial<Omit<TokenUsage, 'prompt' | 'completion'>>): TokenUsage {
  const prompt = whole(counts.prompt);
  const completion = whole(counts.completion);
  const cachedRead = Math.min(prompt, whole(counts.cachedRead));
  const cacheWrite5m = Math.min(prompt - cachedRead, whole(counts.cacheWrite5m));
  const cacheWrite1h = Math.min(prompt - cachedRead - cacheWrite5m, whole(counts.cacheWrite1h));
  return { prompt, cachedRead, cacheWrite5m, cacheWrite1h, completion, reasoning: Math.min(completion, whole(counts.reasoning)) };
}

/** Prompt tokens written to the cache, both lifetimes (OpenRouter's `cache_write_tokens`). */
export function cacheWriteTokens(u: TokenUsage): number {
  return u.cacheWrite5m + u.cacheWrite1h;
}

function whole(n: number | undefined): number {
  return n === undefined || !Number.isFinite(n) || n <= 0 ? 0 : Math.floor(n);
}
