import { anthropicAdapter } from './anthropic/adapter';
import { geminiAdapter } from './gemini/adapter';
import { createOpenAICompatibleAdapter } from './openai-compatible/adapter';
import { replayReasoningInToolLoop } from './openai-compatible/history';
import { miniMaxAdjust, miniMaxErrorInBody, replayMiniMaxReasoning } from './openai-compatible/minimax';
import { openAIAdjust } from './openai-compatible/o-series';
import type { TimeoutOverrides } from '../routing/timeouts';
import type { ProviderName } from './provider-names';
import type { ProviderAdapter, ProviderEndpoint } from './types';

/**
 * The only list of providers: name → adapter, where its key and base URL come from, and its default
 * public base URL (providers.md §0). The router asks this module; it never names a provider itself.
 */

/** How one provider is reached and translated. */
export interface ProviderSpec {
  name: ProviderName;
  adapter: ProviderAdapter;
  /** Environment / secret variable holding the upstream API key. */
  keyVar: string;
  /** Environment variable overriding the base URL (no trailing slash). */
  baseUrlVar: string;
  defaultBaseUrl: string;
  /** Attempt time limits for this provider, over the defaults (routing/timeouts.ts). */
  timeouts?: TimeoutOverrides;
  /**
   * Users may attach their own key for this provider (bring-your-own-key). Only providers whose keys
   * begin with `sk-` (the spec: BYOK takes `sk-` keys only): OpenAI (`sk-…`, `sk-proj-…`), Anthropic
   * (`sk-ant-…`), DeepSeek (`sk-…`).
   */
  byok?: boolean;
}

const REGISTRY: Readonly<Record<ProviderName, ProviderSpec>> = {
  openai: {
    name: 'openai',
    // OpenAI alone takes custom tools and allowed_tools (openai-node 6.x ChatCompletionCustomTool).
    adapter: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings', adjustBody: openAIAdjust, customTools: true }),
    keyVar: 'OPENAI_API_KEY',
    baseUrlVar: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    byok: true,
  },
  anthropic: {
    name: 'anthropic',
    // Native Messages API: Anthropic's OpenAI-compatible endpoint is beta, drops fields and shapes
    // errors its own way (providers.md §2.9).
    adapter: anthropicAdapter,
    keyVar: 'ANTHROPIC_API_KEY',
    baseUrlVar: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com',
    byok: true,
  },
  gemini: {
    name: 'gemini',
    // Native generateContent: the OpenAI-compatible layer is beta, answers errors as JSON arrays and
    // reports `stop` for tool calls (providers.md §3.9).
    adapter: geminiAdapter,
    keyVar: 'GEMINI_API_KEY',
    baseUrlVar: 'GEMINI_BASE_URL',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  },
  deepseek: {
    name: 'deepseek',
    // Original R1 refuses an echoed reasoning_content; V3.2+/V4 thinking mode wants it within the
    // current tool loop (providers.md §4.3).
    adapter: createOpenAICompatibleAdapter({ replayReasoning: replayReasoningInToolLoop }),
    keyVar: 'DEEPSEEK_API_KEY',
    baseUrlVar: 'DEEPSEEK_BASE_URL',
    defaultBaseUrl: 'https://api.deepseek.com',
    byok: true,
    // Under load DeepSeek holds the connection with keep-alive comments before inference starts
    // (providers.md §4.5). No longer a 90 s allowance: comments are not a first token, and an
    // equivalent's answer after the table's limit beats a queued one (routing/timeouts.ts).
  },
  minimax: {
    name: 'minimax',
    adapter: createOpenAICompatibleAdapter({ adjustBody: miniMaxAdjust, errorInBody: miniMaxErrorInBody, replayReasoning: replayMiniMaxReasoning }),
    keyVar: 'MINIMAX_API_KEY',
    baseUrlVar: 'MINIMAX_BASE_URL',
    defaultBaseUrl: 'https://api.minimax.io/v1',
  },
  together: {
    name: 'together',
    adapter: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings' }),
    keyVar: 'TOGETHER_API_KEY',
    baseUrlVar: 'TOGETHER_BASE_URL',
    defaultBaseUrl: 'https://api.together.xyz/v1',
  },
  deepinfra: {
    name: 'deepinfra',
    adapter: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings' }),
    keyVar: 'DEEPINFRA_API_KEY',
    baseUrlVar: 'DEEPINFRA_BASE_URL',
    defaultBaseUrl: 'https://api.deepinfra.com/v1/openai',
  },
  groq: {
    name: 'groq',
    adapter: createOpenAICompatibleAdapter(),
    keyVar: 'GROQ_API_KEY',
    baseUrlVar: 'GROQ_BASE_URL',
    defaultBaseUrl: 'https://api.groq.com/openai/v1',
  },
};

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

/** The providers users may attach their own key for (registry order). */
export function byokProviders(): readonly ProviderSpec[] {
  return allProviders().filter((p) => p.byok === true);
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
