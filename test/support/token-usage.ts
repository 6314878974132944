import type { Usage } from '../../functions/shared/openai/chat-response';
import { tokenUsage, type TokenUsage } from '../../functions/shared/usage/token-usage';

/**
 * An expected usage written in OpenAI's shape, as the normalised TokenUsage the adapters produce:
 * `cached_tokens` a cache read, `cache_write_tokens` a 5-minute write (`cache_write_1h` a 1-hour one).
 */
export function tokensOf(u: Omit<Usage, 'total_tokens'> & { total_tokens?: number; cache_write_1h?: number }): TokenUsage {
  return tokenUsage({
    prompt: u.prompt_tokens,
    completion: u.completion_tokens,
    cachedRead: u.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite5m: u.prompt_tokens_details?.cache_write_tokens ?? 0,
    cacheWrite1h: u.cache_write_1h ?? 0,
    reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0,
  });
}
