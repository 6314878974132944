import type { AnthropicCacheControl, AnthropicRequestBody } from './request-body';

/**
 * Anthropic takes at most 4 `cache_control` breakpoints per request and answers 400 beyond that
 * (Anthropic prompt-caching docs; docs/prices.md). A client that marks every message (opencode marks
 * its system prompt and last messages, on messages, tool calls and parts alike) can pass that, so only
 * the LAST four, in Anthropic's prefix order (tools, system, then messages), are kept: the later a
 * breakpoint, the longer the prefix it caches, and earlier ones are read through it anyway
 * (Anthropic looks back from a breakpoint for a cached prefix).
 */
export const MAX_CACHE_BREAKPOINTS = 4;

type Marked = { cache_control?: AnthropicCacheControl };

/**
 * Removes all but the last {@link MAX_CACHE_BREAKPOINTS} block-level breakpoints of `body`, in place
 * (top-level automatic caching, `body.cache_control`, is not a block and is left as sent).
 * @returns how many were removed (0 when within the limit).
 */
export function capCacheBreakpoints(body: AnthropicRequestBody): number {
  const marked: Marked[] = [];
  const visit = (b: Marked): void => {
    if (b.cache_control !== undefined) marked.push(b);
  };
  for (const t of body.tools ?? []) visit(t as Marked);
  if (Array.isArray(body.system)) for (const b of body.system) visit(b);
  for (const m of body.messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) {
      visit(b);
      if (b.type === 'tool_result' && Array.isArray(b.content)) for (const c of b.content) visit(c);
    }
  }
  const excess = marked.length - MAX_CACHE_BREAKPOINTS;
  for (const b of marked.slice(0, Math.max(0, excess))) delete b.cache_control;
  return Math.max(0, excess);
}
