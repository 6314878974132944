import { anthropicAdapter } from './anthropic/adapter';
import { geminiAdapter } from './gemini/adapter';
import { createOpenAICompatibleAdapter, type UpstreamBody } from './openai-compatible/adapter';
import type { TimeoutOverrides } from '../routing/timeouts';
import type { ProviderName } from './provider-names';
import type { ProviderAdapter, ProviderEndpoint, UpstreamFailure } from './types';
import { kindForStatus, makeFailure } from './upstream-failure';

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
}

/** Sampling fields OpenAI's o-series rejects with 400 `unsupported_parameter` (providers.md §1.9). */
const O_SERIES_REJECTED = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias'] as const;

function openAIAdjust(body: UpstreamBody, _req: unknown, ctx: { target: { capabilities: { reasoning: string } } }): void {
  if (ctx.target.capabilities.reasoning !== 'hidden') return;
  // o-series: max_tokens is refused; max_completion_tokens is the same bound incl. reasoning tokens.
  if (body.max_tokens != null && body.max_completion_tokens == null) body.max_completion_tokens = body.max_tokens;
  delete body.max_tokens;
  for (const f of O_SERIES_REJECTED) delete body[f];
}

/** MiniMax takes temperature in (0, 1] only (providers.md §5.1); 0 is refused, so send the smallest step. */
function miniMaxAdjust(body: UpstreamBody): void {
  const t = body.temperature;
  if (typeof t === 'number') body.temperature = Math.min(1, Math.max(0.01, t));
  // Reasoning apart from the answer, in reasoning_details, instead of inline <think> tags (§5.2).
  body.reasoning_split = true;
}

/** MiniMax may report an error inside an HTTP 200 as `base_resp.status_code != 0` (providers.md §5.4). */
function miniMaxErrorInBody(body: unknown): UpstreamFailure | undefined {
  if (typeof body !== 'object' || body === null || !('base_resp' in body)) return undefined;
  const br = (body as { base_resp?: { status_code?: unknown; status_msg?: unknown } | null }).base_resp;
  const code = typeof br?.status_code === 'number' ? br.status_code : 0;
  if (code === 0) return undefined;
  const message = `minimax: ${typeof br?.status_msg === 'string' ? br.status_msg : 'error'} (base_resp ${code})`;
  switch (code) {
    case 1002:
      return makeFailure('rate-limit', 429, message);
    case 1001:
      return makeFailure('timeout', 504, message);
    case 1004:
    case 1008:
      return makeFailure('auth-config', 401, message);
    case 2013:
      return makeFailure('client', 400, message);
    default:
      return makeFailure(kindForStatus(500), 500, message);
  }
}

const REGISTRY: Readonly<Record<ProviderName, ProviderSpec>> = {
  openai: {
    name: 'openai',
    adapter: createOpenAICompatibleAdapter({ embeddingsPath: '/embeddings', adjustBody: openAIAdjust }),
    keyVar: 'OPENAI_API_KEY',
    baseUrlVar: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
  },
  anthropic: {
    name: 'anthropic',
    // Native Messages API: Anthropic's OpenAI-compatible endpoint is beta, drops fields and shapes
    // errors its own way (providers.md §2.9).
    adapter: anthropicAdapter,
    keyVar: 'ANTHROPIC_API_KEY',
    baseUrlVar: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com',
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
    // V4 thinking mode wants reasoning_content echoed within a tool loop (providers.md §4.3).
    adapter: createOpenAICompatibleAdapter({ keepReasoningInHistory: true }),
    keyVar: 'DEEPSEEK_API_KEY',
    baseUrlVar: 'DEEPSEEK_BASE_URL',
    defaultBaseUrl: 'https://api.deepseek.com',
    // Under load DeepSeek holds the connection with keep-alive comments before inference starts
    // (providers.md §4.5): comments reset the idle timer, but the first token may come late.
    timeouts: { stream: { firstTokenMs: 90_000 } },
  },
  minimax: {
    name: 'minimax',
    adapter: createOpenAICompatibleAdapter({ adjustBody: miniMaxAdjust, errorInBody: miniMaxErrorInBody }),
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
