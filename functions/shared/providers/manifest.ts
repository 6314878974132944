/**
 * THE list of upstream providers, as plain data: name, where its key and base URL come from, its
 * default public base URL (providers.md §0), attempt-time overrides and whether users may attach their
 * own key. Nothing here imports an adapter or any I/O, so the credentials loader, the CDK stack, the
 * local runtime, the catalogue schema and the tests all derive from it without loading the adapters.
 *
 * Adding a provider: one entry here, one adapter line in registry.ts (the type checker asks for it) and
 * its models in catalogue/models.ts (ARCHITECTURE.md § "Adding a provider"); one folder under
 * providers/ when it speaks a new wire protocol. The local simulator, `npm start` and the tests derive
 * their tables from these three.
 */

/**
 * The wire protocol a provider's base URL speaks (docs/providers.md §0): OpenAI Chat Completions, the
 * Anthropic Messages API or Gemini's generateContent. The simulator answers each in its own dialect.
 */
export type WireProtocol = 'openai' | 'anthropic' | 'gemini';

/**
 * The most prompt tokens one image (and one PDF page) can cost, by the provider's own vision rule
 * (usage/media-tokens.ts): OpenAI's 512 px tiles (`openai-tiles`; `openai-mini-tiles` for the
 * gpt-4o-mini price scaling), Claude's pixels / 750 (`claude-pixels`), Gemini's 258-token tiles
 * (`gemini-tiles`). A target whose provider and catalogue entry name no rule is held by the largest.
 */
export const IMAGE_TOKEN_RULES = ['openai-tiles', 'openai-mini-tiles', 'claude-pixels', 'gemini-tiles'] as const;

/** One of {@link IMAGE_TOKEN_RULES}. */
export type ImageTokenRule = (typeof IMAGE_TOKEN_RULES)[number];

/** What the dashboard shows for a provider users may attach their own key for. */
export interface ByokLabel {
  /** The provider's name as people write it, e.g. `OpenAI`. */
  label: string;
  /** What its keys look like (placeholder), e.g. `sk-proj-…`. */
  keyExample: string;
}

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
  /** The wire protocol of `defaultBaseUrl` (default `openai`: OpenAI-compatible Chat Completions). */
  wire: WireProtocol;
  /** Attempt time limits for this provider, over the defaults (routing/timeouts.ts). */
  timeouts?: ProviderTimeoutOverrides;
  /**
   * Users may attach their own key for this provider (bring-your-own-key), shown with this label. Only
   * providers whose keys begin with `sk-` (the spec: BYOK takes `sk-` keys only): OpenAI (`sk-…`,
   * `sk-proj-…`), Anthropic (`sk-ant-…`), DeepSeek (`sk-…`).
   */
  byok?: ByokLabel;
  /** The image-token rule of its vision models (a catalogue target may name its own). */
  imageTokens?: ImageTokenRule;
}

type EntryExtras<N extends string> = Partial<Pick<ProviderManifestEntry<N>, 'wire' | 'timeouts' | 'byok' | 'imageTokens'>>;

function entry<const N extends string>(name: N, defaultBaseUrl: string, extra: EntryExtras<N> = {}): ProviderManifestEntry<N> {
  const prefix = name.toUpperCase() as Uppercase<N>;
  return { name, keyVar: `${prefix}_API_KEY`, baseUrlVar: `${prefix}_BASE_URL`, defaultBaseUrl, wire: 'openai', ...extra };
}

/** Every provider, in registry order (the order `npm start` lists them and the stack passes base URLs). */
export const PROVIDER_MANIFEST = [
  entry('openai', 'https://api.openai.com/v1', { byok: { label: 'OpenAI', keyExample: 'sk-proj-…' }, imageTokens: 'openai-tiles' }),
  entry('anthropic', 'https://api.anthropic.com', { wire: 'anthropic', byok: { label: 'Anthropic', keyExample: 'sk-ant-…' }, imageTokens: 'claude-pixels' }),
  entry('gemini', 'https://generativelanguage.googleapis.com/v1beta', { wire: 'gemini', imageTokens: 'gemini-tiles' }),
  // Under load DeepSeek holds the connection with keep-alive comments before inference starts
  // (providers.md §4.5). No longer a 90 s allowance: comments are not a first token, and an
  // equivalent's answer after the table's limit beats a queued one (routing/timeouts.ts).
  entry('deepseek', 'https://api.deepseek.com', { byok: { label: 'DeepSeek', keyExample: 'sk-…' } }),
  entry('minimax', 'https://api.minimax.io/v1'),
  entry('together', 'https://api.together.xyz/v1'),
  entry('deepinfra', 'https://api.deepinfra.com/v1/openai'),
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

/** The manifest entry of `name`. */
export function manifestEntry(name: ProviderName): ProviderManifestEntry<ProviderName> {
  return PROVIDER_MANIFEST.find((p) => p.name === name) as ProviderManifestEntry<ProviderName>;
}

/** The providers users may attach their own key for (manifest order). */
export function byokProviderNames(): readonly ProviderName[] {
  return PROVIDER_MANIFEST.filter((p) => (p as ProviderManifestEntry).byok !== undefined).map((p) => p.name);
}
