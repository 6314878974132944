/**
 * Upstream model ids the providers' deprecation pages mark retired, decommissioned or shut down (a past
 * or reported date; not a future one): the simulator answers them with the provider's model-not-found
 * error, so "every catalogue model answers" proves the ids are live, and test/catalogue/retired-ids.test.ts
 * checks no target names one. Where this list is wrong for a live provider, the provider is right.
 */
export const RETIRED_UPSTREAM_MODELS = {
  /** 3.5 Sonnet (Oct 2025), 3.5 Haiku, 3.7 Sonnet (Feb 2026), Sonnet 4 and Opus 4 (2026-06-15), Opus 4.1 (Aug 2026); aliases with them. */
  anthropic: [
    'claude-3-5-sonnet-20241022',
    'claude-3-5-sonnet-20240620',
    'claude-3-5-sonnet-latest',
    'claude-3-7-sonnet-20250219',
    'claude-3-5-haiku-20241022',
    'claude-opus-4-20250514',
    'claude-opus-4-0',
    'claude-opus-4-1-20250805',
    'claude-opus-4-1',
    'claude-sonnet-4-20250514',
    'claude-sonnet-4-0',
  ],
  /** Gemini 1.5 Pro / Flash, 2.0 Flash (and -001, -lite); text-embedding-004 (Jan 14, 2026), embedding-001 (Aug 2025). */
  gemini: [
    'gemini-1.5-pro',
    'gemini-1.5-pro-002',
    'gemini-1.5-flash',
    'gemini-2.0-flash',
    'gemini-2.0-flash-001',
    'gemini-2.0-flash-lite',
    'text-embedding-004',
    'embedding-001',
  ],
  /** gpt-image-1 shut down 2026-10-23; dall-e-2 and dall-e-3 retired 2026-05-12 (docs/prices.md "Image generation"). */
  openai: ['gpt-image-1', 'dall-e-2', 'dall-e-3'],
  /** deepseek-chat / deepseek-reasoner retired after 2026-07-24 15:59 UTC (V4 replaced them). */
  deepseek: ['deepseek-chat', 'deepseek-reasoner'],
  /** Groq's llama3-*-8192 (2025); llama-3.3-70b-versatile and llama-3.1-8b-instant reported decommissioned 2026-08-16. */
  groq: ['llama3-70b-8192', 'llama3-8b-8192', 'llama-3.3-70b-versatile', 'llama-3.1-8b-instant'],
} as const satisfies Record<string, readonly string[]>;

/** Every retired id, whichever upstream it belonged to (no live host reuses one). */
export const RETIRED_MODEL_IDS: ReadonlySet<string> = new Set(Object.values(RETIRED_UPSTREAM_MODELS).flat());

/** A retired id (with or without Gemini's `models/`), or any id containing `retired` / `decommissioned` (for fault tests). */
export function isRetiredModel(model: string | undefined): boolean {
  if (model === undefined) return false;
  return RETIRED_MODEL_IDS.has(model.replace(/^models\//, '')) || /decommissioned|retired/i.test(model);
}
