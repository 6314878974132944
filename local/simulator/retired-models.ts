/**
 * Upstream model ids that the providers' own deprecation pages mark retired, decommissioned or shut
 * down (as the team's provider reference read them; sections cited below): the one list both the simulator (which answers them with the provider's own model-not-found
 * error, so "every catalogue model answers" proves the ids are live) and the catalogue test
 * (test/catalogue/retired-ids.test.ts: no target may name one) read.
 *
 * Only ids the reference names with a past (or reported) retirement are here; ids with a future or
 * unconfirmed date (Claude Sonnet 4.5, Gemini 2.5 Pro) are not. Where the reference is wrong for a
 * live provider, the provider is right: fix both.
 */

/** Retired ids per upstream, with the section of providers.md that says so. */
export const RETIRED_UPSTREAM_MODELS = {
  /** §2.8: 3.5 Sonnet retired Oct 2025; 3.5 Haiku legacy/retired; 3.7 Sonnet Feb 2026; Sonnet 4 and
   * Opus 4 2026-06-15; Opus 4.1 removed from the SDK Aug 2026 (retired). Aliases retire with them. */
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
  /** §3.8: Gemini 1.5 Pro / Flash retired; 2.0 Flash (and its -001 and -lite rows) shut down;
   * §3.6: text-embedding-004 deprecated (Jan 14, 2026), embedding-001 deprecated Aug 2025. */
  gemini: ['gemini-1.5-pro', 'gemini-1.5-pro-002', 'gemini-1.5-flash', 'gemini-2.0-flash', 'gemini-2.0-flash-001', 'gemini-2.0-flash-lite', 'text-embedding-004', 'embedding-001'],
  /** providers.md §1.10 (docs/prices.md "Image generation"): gpt-image-1 shut down 2026-10-23;
   * dall-e-2 and dall-e-3 retired 2026-05-12. */
  openai: ['gpt-image-1', 'dall-e-2', 'dall-e-3'],
  /** §4.2: deepseek-chat / deepseek-reasoner retired after 2026-07-24 15:59 UTC (V4 replaced them). */
  deepseek: ['deepseek-chat', 'deepseek-reasoner'],
  /** §6: Groq's llama3-*-8192 decommissioned 2025; llama-3.3-70b-versatile and llama-3.1-8b-instant
   * reported decommissioned 2026-08-16. */
  groq: ['llama3-70b-8192', 'llama3-8b-8192', 'llama-3.3-70b-versatile', 'llama-3.1-8b-instant'],
} as const satisfies Record<string, readonly string[]>;

/** Every retired id, whichever upstream it belonged to (no live host reuses one). */
export const RETIRED_MODEL_IDS: ReadonlySet<string> = new Set(Object.values(RETIRED_UPSTREAM_MODELS).flat());

/**
 * True when the provider must answer its model-not-found error for `model`: an id in
 * {@link RETIRED_UPSTREAM_MODELS} (with or without Gemini's `models/` prefix), or any id containing
 * `retired` or `decommissioned` (for fault tests). Any other id is accepted, so the gateway's catalogue
 * can name whatever it likes.
 */
export function isRetiredModel(model: string | undefined): boolean {
  if (model === undefined) return false;
  return RETIRED_MODEL_IDS.has(model.startsWith('models/') ? model.slice('models/'.length) : model) || /decommissioned|retired/i.test(model);
}
