/**
 * THE list of upstream providers, as plain data: name, where its key and base URL come from, its
 * default public base URL (providers.md §0), attempt-time overrides and whether users may attach their
 * own key. Nothing here imports an adapter or any I/O, so the credentials loader, the CDK stack, the
 * local runtime, the catalogue schema and the tests all derive from it without loading the adapters.
 *
 * Adding a provider: one entry here, one adapter line in registry.ts (the type checker asks for it),
 * and one folder when it speaks a new wire protocol.
 */

/** Attempt time limits (ms) a provider overrides, per mode; see routing/timeouts.ts `Timeouts`. */
export interface ProviderTimeoutOverrides {
  stream?: Partial<{ connectMs: number; headersMs: number; firstTokenMs: number; idleMs: number }>;
  buffered?: Partial<{ connectMs: number; headersMs: number; firstTokenMs: number; idleMs: number }>;
}

/** One provider's manifest entry; `N` is its name, from which the env-var names are typed. */
export interface ProviderManifestEntry<N extends string = string> {
  name: N;
  /** Environment / secret variable holding the upstream API key: `<NAME>_API_KEY`. */
  keyVar: `${Uppercase<N>}_API_KEY`;
  /** Environment variable overriding the base URL (no trailing slash): `<NAME>_BASE_URL`. */
  baseUrlVar: `${Uppercase<N>}_BASE_URL`;
  /** The provider's public API base URL (providers.md §0). */
  defaultBaseUrl: string;
  /** Attempt time limits for this provider, over the defaults (routing/timeouts.ts). */
  timeouts?: ProviderTimeoutOverrides;
  /**
   * Users may attach their own key for this provider (bring-your-own-key). Only providers whose keys
   * begin with `sk-` (the spec: BYOK takes `sk-` keys only): OpenAI (`sk-…`, `sk-proj-…`), Anthropic
   * (`sk-ant-…`), DeepSeek (`sk-…`).
   */
  byok?: boolean;
}

function entry<const N extends string>(name: N, defaultBaseUrl: string, extra: Pick<ProviderManifestEntry<N>, 'timeouts' | 'byok'> = {}): ProviderManifestEntry<N> {
  const prefix = name.toUpperCase() as Uppercase<N>;
  return { name, keyVar: `${prefix}_API_KEY`, baseUrlVar: `${prefix}_BASE_URL`, defaultBaseUrl, ...extra };
}

/** Every provider, in registry order (the order `npm start` lists them and the stack passes base URLs). */
export const PROVIDER_MANIFEST = [
  entry('openai', 'https://api.openai.com/v1', { byok: true }),
  entry('anthropic', 'https://api.anthropic.com', { byok: true }),
  entry('gemini', 'https://generativelanguage.googleapis.com/v1beta'),
  // Under load DeepSeek holds the connection with keep-alive comments before inference starts
  // (providers.md §4.5). No longer a 90 s allowance: comments are not a first token, and an
  // equivalent's answer after the table's limit beats a queued one (routing/timeouts.ts).
  entry('deepseek', 'https://api.deepseek.com', { byok: true }),
  entry('minimax', 'https://api.minimax.io/v1'),
  entry('together', 'https://api.together.xyz/v1'),
  entry('deepinfra', 'https://api.deepinfra.com/v1/openai'),
  entry('groq', 'https://api.groq.com/openai/v1'),
] as const;

/** The upstream providers modelmux can call; the router and catalogue only carry the name. */
export type ProviderName = (typeof PROVIDER_MANIFEST)[number]['name'];

/** The provider names, in manifest order (the catalogue schema's enum). */
export const PROVIDER_NAMES = PROVIDER_MANIFEST.map((p) => p.name) as unknown as readonly [ProviderName, ...ProviderName[]];

/** Env/secret names of the upstream API keys, one per provider. */
export const UPSTREAM_API_KEY_VARS = PROVIDER_MANIFEST.map((p) => p.keyVar);

/** Env names of the upstream base-URL overrides (not secret; the stack may pass them as plain env). */
export const UPSTREAM_BASE_URL_VARS = PROVIDER_MANIFEST.map((p) => p.baseUrlVar);

/** One of {@link UPSTREAM_BASE_URL_VARS}. */
export type UpstreamBaseUrlVar = (typeof PROVIDER_MANIFEST)[number]['baseUrlVar'];

/** One of the upstream key or base-URL variables. */
export type UpstreamEnvVar = UpstreamBaseUrlVar | (typeof PROVIDER_MANIFEST)[number]['keyVar'];

/** Every upstream variable the credentials loader reads from `process.env`. */
export const UPSTREAM_ENV_VARS: readonly UpstreamEnvVar[] = [...UPSTREAM_API_KEY_VARS, ...UPSTREAM_BASE_URL_VARS];

/** The providers users may attach their own key for (manifest order). */
export function byokProviderNames(): readonly ProviderName[] {
  return PROVIDER_MANIFEST.filter((p) => 'byok' in p && p.byok === true).map((p) => p.name);
}
