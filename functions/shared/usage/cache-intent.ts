/**
 * Which prompt-cache writes a request can trigger (docs/prices.md), for the hold's worst case
 * (billing/hold-demand.ts): `1h` when any `cache_control` asks `ttl: "1h"` (1-hour writes, 2× input on
 * Claude), `5m` when any other `cache_control` is present (5-minute writes, 1.25×), else `none`.
 * Looked for on messages, their tool calls and content parts, on tools, and at the top level (automatic caching).
 */
import type { ChatCompletionRequest } from '../openai/chat-request';

/** The dearest cache write a request can trigger. */
export type CacheWriteIntent = 'none' | '5m' | '1h';

/** The dearest cache write `body` can trigger (see the module comment). */
export function cacheWriteIntent(body: ChatCompletionRequest): CacheWriteIntent {
  let intent: CacheWriteIntent = 'none';
  const see = (c: { ttl?: '5m' | '1h' | undefined } | undefined): void => {
    if (c === undefined) return;
    if (c.ttl === '1h') intent = '1h';
    else if (intent === 'none') intent = '5m';
  };
  see(body.cache_control ?? undefined);
  for (const t of body.tools ?? []) if (t.type === 'function') see(t.cache_control);
  for (const m of body.messages) {
    if ('cache_control' in m) see(m.cache_control);
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) if (c.type === 'function') see(c.cache_control);
    if (!('content' in m) || !Array.isArray(m.content)) continue;
    for (const p of m.content) if ('cache_control' in p) see(p.cache_control);
  }
  return intent;
}
