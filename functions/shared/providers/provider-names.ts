/**
 * The upstream providers modelmux can call. The registry (`registry.ts`) is the only place that maps
 * a name to an adapter and its configuration; the router and catalogue only carry the name.
 */
export const PROVIDER_NAMES = ['openai', 'anthropic', 'gemini', 'deepseek', 'minimax', 'together', 'deepinfra', 'groq'] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];
