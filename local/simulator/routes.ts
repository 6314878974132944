/**
 * URL layout: one server, provider chosen by path prefix (longest first, because `/gemini/v1beta`
 * contains `/gemini/v1beta/openai` and `/anthropic` contains the compat `/anthropic/v1/chat/completions`).
 * Real base URLs per providers.md §0; the simulator's prefix stands in for each host.
 */
import type { SimProvider } from './types.js';

/** What a request asks for, independent of the provider's URL spelling. */
export type Operation =
  | 'chat'
  | 'embeddings'
  | 'models'
  | 'anthropic-messages'
  | 'anthropic-models'
  | 'gemini-generate'
  | 'gemini-stream'
  | 'gemini-embed'
  | 'gemini-batch-embed'
  | 'gemini-models'
  | 'no-route';

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
  'anthropic-openai': '/anthropic/v1',
  gemini: '/gemini/v1beta',
  'gemini-openai': '/gemini/v1beta/openai',
  deepseek: '/deepseek',
  minimax: '/minimax/v1',
  together: '/together/v1',
  deepinfra: '/deepinfra/v1/openai',
  groq: '/groq/openai/v1',
};

const OPENAI_STYLE: readonly SimProvider[] = ['gemini-openai', 'deepinfra', 'groq', 'together', 'minimax', 'openai'];

function openAIOperation(method: string, rest: string): Operation {
  if (method === 'POST' && rest === '/chat/completions') return 'chat';
  if (method === 'POST' && rest === '/embeddings') return 'embeddings';
  if (method === 'GET' && rest === '/models') return 'models';
  return 'no-route';
}

function geminiRoute(method: string, rest: string): Route {
  if (method === 'GET' && rest === '/models') return { provider: 'gemini', op: 'gemini-models' };
  const m = /^\/models\/([^/:]+):([A-Za-z]+)$/.exec(rest);
  if (method === 'POST' && m) {
    const pathModel = decodeURIComponent(m[1]!);
    const ops: Record<string, Operation> = {
      generateContent: 'gemini-generate',
      streamGenerateContent: 'gemini-stream',
      embedContent: 'gemini-embed',
      batchEmbedContents: 'gemini-batch-embed',
    };
    const op = ops[m[2]!];
    if (op) return { provider: 'gemini', op, pathModel };
  }
  return { provider: 'gemini', op: 'no-route' };
}

function under(pathname: string, prefix: string): string | undefined {
  if (pathname === prefix) return '';
  return pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : undefined;
}

/** Resolve a request path (no query string) to provider and operation; undefined outside every prefix. */
export function resolveRoute(method: string, pathname: string): Route | undefined {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  for (const provider of OPENAI_STYLE) {
    const rest = under(path, PREFIXES[provider]);
    if (rest !== undefined) return { provider, op: openAIOperation(method, rest) };
  }
  const gemini = under(path, PREFIXES.gemini);
  if (gemini !== undefined) return geminiRoute(method, gemini);
  const anthropic = under(path, PREFIXES.anthropic);
  if (anthropic !== undefined) {
    if (anthropic === '/v1/chat/completions') return { provider: 'anthropic-openai', op: openAIOperation(method, '/chat/completions') };
    if (method === 'POST' && anthropic === '/v1/messages') return { provider: 'anthropic', op: 'anthropic-messages' };
    if (method === 'GET' && anthropic === '/v1/models') return { provider: 'anthropic', op: 'anthropic-models' };
    return { provider: 'anthropic', op: 'no-route' };
  }
  const deepseek = under(path, PREFIXES.deepseek);
  if (deepseek !== undefined) {
    // DeepSeek serves the same API with or without `/v1` (providers.md §4.1).
    return { provider: 'deepseek', op: openAIOperation(method, deepseek.replace(/^\/v1(?=\/)/, '')) };
  }
  return undefined;
}
