/**
 * URL layout: one server, the provider chosen by path prefix, the dialect by its manifest `wire`. Only
 * what the gateway's adapters call: chat completions, embeddings and image generation on OpenAI-shaped
 * hosts, Anthropic `POST /v1/messages` (and `count_tokens`), Gemini `generateContent`,
 * `streamGenerateContent` and `batchEmbedContents`.
 */
import { PROVIDER_MANIFEST, type WireProtocol, type ProviderName } from '../../functions/shared/providers/manifest.js';

/** What a request asks for, independent of the provider's URL spelling. */
export type Operation =
  'chat' | 'embeddings' | 'images' | 'anthropic-messages' | 'anthropic-count-tokens' | 'gemini-generate' | 'gemini-stream' | 'gemini-batch-embed' | 'no-route';

export interface Route {
  provider: ProviderName;
  wire: WireProtocol;
  op: Operation;
  /** Gemini: the model from the URL, without `models/`. */
  pathModel?: string;
}

/** URL prefix of each provider: `/<name>` + the path of its manifest `defaultBaseUrl`, e.g. `/openai/v1`. */
export const PREFIXES = Object.fromEntries(
  PROVIDER_MANIFEST.map((p) => [p.name, `/${p.name}${new URL(p.defaultBaseUrl).pathname.replace(/\/+$/, '')}`]),
) as Record<ProviderName, string>;

const OPERATIONS: Record<WireProtocol, Record<string, Operation>> = {
  openai: { '/chat/completions': 'chat', '/embeddings': 'embeddings', '/images/generations': 'images' },
  anthropic: { '/v1/messages': 'anthropic-messages', '/v1/messages/count_tokens': 'anthropic-count-tokens' },
  gemini: { generateContent: 'gemini-generate', streamGenerateContent: 'gemini-stream', batchEmbedContents: 'gemini-batch-embed' },
};

/** Resolve a request path (no query string) to provider and operation; undefined outside every prefix. */
export function resolveRoute(method: string, pathname: string): Route | undefined {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  const found = PROVIDER_MANIFEST.find((p) => path === PREFIXES[p.name] || path.startsWith(`${PREFIXES[p.name]}/`));
  if (!found) return undefined;
  const { name: provider, wire } = found;
  const rest = path.slice(PREFIXES[provider].length);
  const gemini = wire === 'gemini' ? /^\/models\/([^/:]+):([A-Za-z]+)$/.exec(rest) : null;
  const key = gemini ? gemini[2]! : wire === 'gemini' ? undefined : rest;
  const op = method === 'POST' && key !== undefined && Object.hasOwn(OPERATIONS[wire], key) ? OPERATIONS[wire][key] : undefined;
  if (op === undefined) return { provider, wire, op: 'no-route' };
  return { provider, wire, op, ...(gemini ? { pathModel: decodeURIComponent(gemini[1]!) } : {}) };
}
