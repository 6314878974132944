import { anthropicAdapter } from './anthropic/adapter';
import { geminiAdapter } from './gemini/adapter';
import { createOpenAICompatibleAdapter } from './openai-compatible/adapter';
import { replayReasoningInToolLoop } from './openai-compatible/history';
import { miniMaxAdjust, miniMaxErrorInBody, replayMiniMaxReasoning } from './openai-compatible/minimax';
import { openAIAdjust } from './openai-compatible/o-series';
import { PROVIDER_MANIFEST, type ProviderManifestEntry, type ProviderName } from './manifest';
import type { ProviderAdapter, ProviderEndpoint } from './types';

/**
 * The adapter of each provider in the manifest (manifest.ts holds its name, env vars, base URL, wire
 * protocol, timeouts and BYOK label). The router asks this module; it never names a provider itself.
 */

/** How one provider is reached and translated: its manifest entry plus its adapter. */
export interface ProviderSpec extends ProviderManifestEntry<ProviderName> {
  adapter: ProviderAdapter;
}

const ADAPTERS: Readonly<Record<ProviderName, ProviderAdapter>> = {
  // OpenAI alone takes custom tools and allowed_tools (openai-node 6.x ChatCompletionCustomTool).
  openai: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings', imagesPath: '/images/generations', adjustBody: openAIAdjust, customTools: true }),
  // Native Messages API: Anthropic's OpenAI-compatible endpoint is beta, drops fields and shapes
  // errors its own way (providers.md §2.9).
  anthropic: anthropicAdapter,
  // Native generateContent: the OpenAI-compatible layer is beta, answers errors as JSON arrays and
  // reports `stop` for tool calls (providers.md §3.9).
  gemini: geminiAdapter,
  // Original R1 refuses an echoed reasoning_content; V3.2+/V4 thinking mode wants it within the
  // current tool loop (providers.md §4.3).
  deepseek: createOpenAICompatibleAdapter({ replayReasoning: replayReasoningInToolLoop }),
  minimax: createOpenAICompatibleAdapter({ adjustBody: miniMaxAdjust, errorInBody: miniMaxErrorInBody, replayReasoning: replayMiniMaxReasoning }),
  together: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings' }),
  deepinfra: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings' }),
};

const REGISTRY = Object.fromEntries(
  PROVIDER_MANIFEST.map((entry) => [entry.name, { ...(entry as ProviderManifestEntry<ProviderName>), adapter: ADAPTERS[entry.name] }]),
) as Readonly<Record<ProviderName, ProviderSpec>>;

/** The spec of one provider. */
export function providerSpec(name: ProviderName): ProviderSpec {
  return REGISTRY[name];
}

/** All providers, in registry order. */
export function allProviders(): readonly ProviderSpec[] {
  return Object.values(REGISTRY);
}

/**
 * Where to reach `name` with the given credentials (env and secret values by variable name).
 * @returns undefined when no key is configured: the router skips such targets.
 */
export function resolveEndpoint(name: ProviderName, credentials: Readonly<Record<string, string | undefined>>): ProviderEndpoint | undefined {
  const spec = REGISTRY[name];
  const apiKey = credentials[spec.keyVar];
  if (apiKey === undefined || apiKey === '') return undefined;
  const baseUrl = (credentials[spec.baseUrlVar] || spec.defaultBaseUrl).replace(/\/+$/, '');
  return { provider: name, baseUrl, apiKey };
}

/**
 * Where to reach `name` with a user's own key: the provider's base URL (the same override the platform
 * uses) and `apiKey`. Needs no platform key for the provider.
 */
export function resolveByokEndpoint(name: ProviderName, credentials: Readonly<Record<string, string | undefined>>, apiKey: string): ProviderEndpoint {
  const spec = REGISTRY[name];
  const baseUrl = (credentials[spec.baseUrlVar] || spec.defaultBaseUrl).replace(/\/+$/, '');
  return { provider: name, baseUrl, apiKey };
}
