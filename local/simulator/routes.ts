/**
 * URL layout: one server, provider chosen by path prefix. Only what the gateway's adapters call
 * (functions/shared/providers/): chat completions everywhere, embeddings on the OpenAI-shaped hosts,
 * OpenAI's image generation,
 * Anthropic `POST /v1/messages`, Gemini `generateContent`, `streamGenerateContent` and
 * `batchEmbedContents`. The simulator's prefix stands in for each real host's base URL.
 */
import type { SimProvider } from './types.js';

/** What a request asks for, independent of the provider's URL spelling. */
export type Operation = 'chat' | 'embeddings' | 'images' | 'anthropic-messages' | 'anthropic-count-tokens' | 'gemini-generate' | 'gemini-stream' | 'gemini-batch-embed' | 'no-route';

export interface Route {
  provider: SimProvider;
  op: Operation;
  /** Gemini: the model from the URL, without `models/`. */
  pathModel?: string;
}

/** URL prefix of each provider (`Simulator.urls[p]` = base URL + prefix). */
export const PREFIXES: Record<SimProvider, string> = {
  openai: '/openai/v1',
  anthropic: '/anthropic',
  gemini: '/gemini/v1beta',
  deepseek: '/deepseek',
  minimax: '/minimax/v1',
  together: '/together/v1',
  deepinfra: '/deepinfra/v1/openai',
  groq: '/groq/openai/v1',
};

const GEMINI_METHODS: Record<string, Operation> = {
  generateContent: 'gemini-generate',
  streamGenerateContent: 'gemini-stream',
  batchEmbedContents: 'gemini-batch-embed',
};

function operation(provider: SimProvider, method: string, rest: string): Route {
  if (method !== 'POST') return { provider, op: 'no-route' };
  if (provider === 'anthropic') return { provider, op: rest === '/v1/messages' ? 'anthropic-messages' : rest === '/v1/messages/count_tokens' ? 'anthropic-count-tokens' : 'no-route' };
  if (provider === 'gemini') {
    const m = /^\/models\/([^/:]+):([A-Za-z]+)$/.exec(rest);
    const op = m ? GEMINI_METHODS[m[2]!] : undefined;
    return op ? { provider, op, pathModel: decodeURIComponent(m![1]!) } : { provider, op: 'no-route' };
  }
  if (rest === '/chat/completions') return { provider, op: 'chat' };
  if (provider === 'openai' && rest === '/images/generations') return { provider, op: 'images' };
  return { provider, op: rest === '/embeddings' ? 'embeddings' : 'no-route' };
}

/** Resolve a request path (no query string) to provider and operation; undefined outside every prefix. */
export function resolveRoute(method: string, pathname: string): Route | undefined {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  for (const [provider, prefix] of Object.entries(PREFIXES) as [SimProvider, string][]) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return operation(provider, method, path.slice(prefix.length));
  }
  return undefined;
}
