import type { CatalogueAliasData } from './schema';

/**
 * Other names of catalogue models, as data (schema.ts `aliasSchema`; validated in test/catalogue): the
 * names clients bring from OpenRouter (`provider/model` slugs), providers' dated snapshot ids, and
 * retired OpenAI names mapped to their documented successor. `buildCatalogue` attaches each to its
 * model (an alias that names an unknown model, or repeats a model id or another alias, fails the build);
 * `GET /v1/models` lists them on their model. Facts and rules: docs/model-names.md.
 */

const slug = (alias: string, model: string): CatalogueAliasData => ({ alias, model, kind: 'slug' });
const dated = (alias: string, model: string): CatalogueAliasData => ({ alias, model, kind: 'dated' });
const deprecated = (alias: string, model: string, source: string): CatalogueAliasData => ({ alias, model, kind: 'deprecated', source });

/** OpenAI's model pages name the successor of each retired family (docs/model-names.md). */
const GPT35_SUCCESSOR = 'platform.openai.com/docs/models/gpt-3.5-turbo: "we recommend using gpt-4o-mini" (docs/model-names.md)';
const GPT4_SUCCESSOR = 'platform.openai.com/docs/models/gpt-4 and /gpt-4-turbo: "we recommend using … GPT-4o" (docs/model-names.md)';

/** DeepSeek's pricing page: the legacy deepseek-v4-flash is served by DeepSeek-V4.1-Flash from 2026-09-10 (providers.md §8). */
const DEEPSEEK_FLASH_SUCCESSOR =
  'api-docs.deepseek.com/quick_start/pricing: deepseek-v4-flash is served by deepseek-flash (V4.1-Flash) from 2026-09-10 (providers.md §8)';

/** The aliases of this deployment's catalogue. */
export const CATALOGUE_ALIASES: readonly CatalogueAliasData[] = [
  // ── OpenAI ──
  slug('openai/gpt-4o', 'gpt-4o'),
  dated('gpt-4o-2024-08-06', 'gpt-4o'),
  dated('gpt-4o-2024-11-20', 'gpt-4o'),
  slug('openai/gpt-4o-2024-08-06', 'gpt-4o'),
  slug('openai/gpt-4o-2024-11-20', 'gpt-4o'),
  slug('openai/gpt-4o-mini', 'gpt-4o-mini'),
  dated('gpt-4o-mini-2024-07-18', 'gpt-4o-mini'),
  slug('openai/gpt-4o-mini-2024-07-18', 'gpt-4o-mini'),
  slug('openai/o3-mini', 'o3-mini'),
  dated('o3-mini-2025-01-31', 'o3-mini'),
  // Retired OpenAI names: served by the documented successor (the rule: docs/model-names.md).
  deprecated('gpt-3.5-turbo', 'gpt-4o-mini', GPT35_SUCCESSOR),
  deprecated('gpt-3.5-turbo-0125', 'gpt-4o-mini', GPT35_SUCCESSOR),
  deprecated('gpt-3.5-turbo-1106', 'gpt-4o-mini', GPT35_SUCCESSOR),
  deprecated('openai/gpt-3.5-turbo', 'gpt-4o-mini', GPT35_SUCCESSOR),
  deprecated('gpt-4', 'gpt-4o', GPT4_SUCCESSOR),
  deprecated('gpt-4-0613', 'gpt-4o', GPT4_SUCCESSOR),
  deprecated('openai/gpt-4', 'gpt-4o', GPT4_SUCCESSOR),
  deprecated('gpt-4-turbo', 'gpt-4o', GPT4_SUCCESSOR),
  deprecated('gpt-4-turbo-2024-04-09', 'gpt-4o', GPT4_SUCCESSOR),
  deprecated('gpt-4-turbo-preview', 'gpt-4o', GPT4_SUCCESSOR),
  deprecated('openai/gpt-4-turbo', 'gpt-4o', GPT4_SUCCESSOR),
  // ── Anthropic (OpenRouter writes versions with dots) ──
  slug('anthropic/claude-3.5-sonnet', 'claude-3-5-sonnet'),
  slug('anthropic/claude-sonnet-4', 'claude-sonnet-4'),
  slug('anthropic/claude-sonnet-4.5', 'claude-sonnet-4-5'),
  slug('anthropic/claude-sonnet-4.6', 'claude-sonnet-4-6'),
  slug('anthropic/claude-opus-4', 'claude-opus-4'),
  slug('anthropic/claude-opus-4.5', 'claude-opus-4-5'),
  slug('anthropic/claude-opus-4.6', 'claude-opus-4-6'),
  slug('anthropic/claude-haiku-4.5', 'claude-haiku-4-5'),
  // ── Google ──
  slug('google/gemini-2.0-flash-001', 'gemini-2.0-flash'),
  slug('google/gemini-pro-1.5', 'gemini-1.5-pro'),
  slug('google/gemini-flash-1.5', 'gemini-1.5-flash'),
  slug('google/gemini-2.5-pro', 'gemini-2.5-pro'),
  slug('google/gemini-2.5-flash', 'gemini-2.5-flash'),
  slug('google/gemini-2.5-flash-lite', 'gemini-2.5-flash-lite'),
  slug('google/gemini-embedding-001', 'gemini-embedding-001'),
  // ── DeepSeek, MiniMax, Llama ──
  slug('deepseek/deepseek-chat', 'deepseek-chat'),
  slug('deepseek/deepseek-r1', 'deepseek-r1'),
  deprecated('deepseek-v4-flash', 'deepseek-flash', DEEPSEEK_FLASH_SUCCESSOR),
  slug('deepseek/deepseek-v4-flash', 'deepseek-flash'),
  slug('deepseek/deepseek-v4-pro', 'deepseek-v4-pro'),
  // ── the current families (OpenRouter's slugs) ──
  slug('openai/gpt-5', 'gpt-5'),
  slug('openai/gpt-5-mini', 'gpt-5-mini'),
  slug('openai/gpt-5.5', 'gpt-5.5'),
  slug('openai/o3', 'o3'),
  slug('openai/o4-mini', 'o4-mini'),
  slug('anthropic/claude-opus-5.5', 'claude-opus-5-5'),
  slug('anthropic/claude-sonnet-5', 'claude-sonnet-5'),
  slug('anthropic/claude-sonnet-5.5', 'claude-sonnet-5-5'),
  slug('anthropic/claude-haiku-5.5', 'claude-haiku-5-5'),
  slug('google/gemini-3.5-flash', 'gemini-3.5-flash'),
  slug('google/gemini-3.1-pro-preview', 'gemini-3.1-pro-preview'),
  slug('minimax/minimax-m2.7', 'minimax-m2.7'),
  slug('minimax/minimax-m2.5', 'minimax-m2.5'),
  slug('meta-llama/llama-3-70b-instruct', 'llama-3-70b'),
  slug('meta-llama/llama-3-8b-instruct', 'llama-3-8b'),
  // ── Embeddings ──
  slug('openai/text-embedding-3-small', 'text-embedding-3-small'),
  slug('openai/text-embedding-3-large', 'text-embedding-3-large'),
  slug('openai/text-embedding-ada-002', 'text-embedding-ada-002'),
];
