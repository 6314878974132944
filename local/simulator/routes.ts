/**
 * URL layout: one server, provider chosen by path prefix. Only what the gateway's adapters call
 * (functions/shared/providers/): chat completions everywhere, embeddings on the OpenAI-shaped hosts,
 * OpenAI's image generation,
 * Anthropic `POST /v1/messages`, Gemini `generateContent`, `streamGenerateContent` and
 * `batchEmbedContents`. The simulator's prefix stands in for each real host's base URL.
 */
import { PROVIDER_MANIFEST, type ProviderManifestEntry, type WireProtocol } from '../../functions/shared/providers/manifest.js';
import type { SimProvider } from './types.js';

/** What a request asks for, independent of the provider's URL spelling. */
export type Operation = 'chat' | 'embeddings' | 'images' | 'anthropic-messages' | 'anthropic-count-tokens' | 'gemini-generate' | 'gemini-stream' | 'gemini-batch-embed' | 'no-route';

export interface Route {
  provider: SimProvider;
  /** The provider's wire protocol (manifest `wire`): which dialect answers. */
  wire: WireProtocol;
  op: Operation;
  /** Gemini: the model from the URL, without `models/`. */
  pathModel?: string;
}

/**
 * URL prefix of each provider (`Simulator.urls[p]` = base URL + prefix): `/<name>` then the path of
 * its real base URL (manifest `defaultBaseUrl`), e.g. `/openai/v1`, `/anthropic`, `/deepinfra/v1/openai`.
 */
export const PREFIXES = Object.fromEntries(
  PROVIDER_MANIFEST.map((p) => [p.name, `/${p.name}${new URL(p.defaultBaseUrl).pathname.replace(/\/+$/, '')}`]),
) as Record<SimProvider, string>;

const WIRES = Object.fromEntries(PROVIDER_MANIFEST.map((p: ProviderManifestEntry) => [p.name, p.wire])) as Record<SimProvider, WireProtocol>;

const GEMINI_METHODS: Record<string, Operation> = {
  generateContent: 'gemini-generate',
  streamGenerateContent: 'gemini-stream',
  batchEmbedContents: 'gemini-batch-embed',
};

function operation(provider: SimProvider, method: string, rest: string): Route {
  const wire = WIRES[provider];
  if (method !== 'POST') return { provider, wire, op: 'no-route' };
  if (wire === 'anthropic') return { provider, wire, op: rest === '/v1/messages' ? 'anthropic-messages' : rest === '/v1/messages/count_tokens' ? 'anthropic-count-tokens' : 'no-route' };
  if (wire === 'gemini') {
    const m = /^\/models\/([^/:]+):([A-Za-z]+)$/.exec(rest);
    const op = m ? GEMINI_METHODS[m[2]!] : undefined;
    return op ? { provider, wire, op, pathModel: decodeURIComponent(m![1]!) } : { provider, wire, op: 'no-route' };
  }
  const ops: Record<string, Operation> = { '/chat/completions': 'chat', '/embeddings': 'embeddings', '/images/generations': 'images' };
  return { provider, wire, op: ops[rest] ?? 'no-route' };
}

/** Resolve a request path (no query string) to provider and operation; undefined outside every prefix. */
export function resolveRoute(method: string, pathname: string): Route | undefined {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  for (const [provider, prefix] of Object.entries(PREFIXES) as [SimProvider, string][]) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return operation(provider, method, path.slice(prefix.length));
  }
  return undefined;
}
