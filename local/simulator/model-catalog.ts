/**
 * What the simulated model-list endpoints return, and which ids count as gone: the upstream ids
 * providers.md marks retired (retired-models.ts), and any id containing `retired` or
 * `decommissioned` (for fault tests). Any other model id is accepted, so the gateway's catalogue can
 * name whatever it likes.
 */
import { isListedRetired } from './retired-models.js';
import type { SimProvider } from './types.js';

/** True when the provider must answer its model-not-found error for `model`. */
export function isRetiredModel(model: string | undefined): boolean {
  return model !== undefined && (isListedRetired(model) || /decommissioned|retired/i.test(model));
}

/** A few representative live ids per provider (providers.md §1-6), served by the list endpoints. */
export const LISTED_MODELS: Record<SimProvider, readonly string[]> = {
  openai: ['gpt-4o', 'gpt-4o-mini', 'o3-mini', 'text-embedding-3-small', 'text-embedding-3-large'],
  anthropic: ['claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-opus-4-5'],
  'anthropic-openai': ['claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-opus-4-5'],
  gemini: ['gemini-2.5-flash-lite', 'gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-embedding-001'],
  'gemini-openai': ['gemini-2.5-flash-lite', 'gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-embedding-001'],
  deepseek: ['deepseek-v4-flash', 'deepseek-v4-pro'],
  minimax: ['MiniMax-M2', 'MiniMax-M2.5', 'MiniMax-M2.7'],
  together: ['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'meta-llama/Meta-Llama-3-70B-Instruct-Turbo', 'BAAI/bge-base-en-v1.5'],
  deepinfra: ['meta-llama/Meta-Llama-3-70B-Instruct', 'meta-llama/Llama-3.3-70B-Instruct-Turbo', 'BAAI/bge-base-en-v1.5'],
  groq: ['openai/gpt-oss-120b', 'qwen/qwen3-32b'],
};

/** Fixed creation time for listed models (seconds), so list bodies are stable across runs. */
export const LISTED_CREATED = 1_715_367_049;

const OWNERS: Partial<Record<SimProvider, string>> = {
  openai: 'system',
  deepseek: 'deepseek',
  minimax: 'minimax',
  groq: 'Meta',
  'gemini-openai': 'google',
};

/** OpenAI `GET /models` body (providers.md §1.8). */
export function openAIModelList(provider: SimProvider): unknown {
  return {
    object: 'list',
    data: LISTED_MODELS[provider].map((id) => ({ id, object: 'model', created: LISTED_CREATED, owned_by: OWNERS[provider] ?? provider })),
  };
}

/** Gemini `GET /v1beta/models` body (providers.md §3.7): names carry the `models/` prefix. */
export function geminiModelList(): unknown {
  return {
    models: LISTED_MODELS.gemini.map((id) => ({
      name: `models/${id}`,
      version: '001',
      displayName: id,
      inputTokenLimit: id.includes('embedding') ? 2048 : 1_048_576,
      outputTokenLimit: id.includes('embedding') ? 1 : 8192,
      supportedGenerationMethods: id.includes('embedding') ? ['embedContent', 'countTokens'] : ['generateContent', 'countTokens'],
    })),
  };
}

/** Anthropic `GET /v1/models` body. */
export function anthropicModelList(): unknown {
  const data = LISTED_MODELS.anthropic.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-10-01T00:00:00Z' }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}
