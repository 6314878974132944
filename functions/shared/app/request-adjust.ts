import type { CatalogueEntry } from '../catalogue/catalogue';
import { outputLimitOf } from '../openai/request-limits';
import type { RoutedChatRequest } from '../providers/types';

/**
 * What the gateway changes in a chat request before it is held and routed, rather than refusing it,
 * and the headers that say so (DESIGN.md "Style": nothing is changed silently):
 *
 * - an output budget (`max_completion_tokens`, else `max_tokens`) above the model's output cap (the
 *   largest `maxOutputTokens` of its targets, openai/request-limits.ts `outputLimitOf`) is lowered to
 *   that cap: `x-modelmux-max-tokens-clamped: <asked>-><used>` (agents such as opencode and Claude Code
 *   send 32,000 whatever the model; a caller cannot know which model a fallback lands on);
 * - `reasoning_effort` on a model none of whose targets reason (`capabilities.reasoning === 'none'`) is
 *   dropped: `x-modelmux-dropped-params: reasoning_effort` (OpenAI answers 400 there; Codex CLI sends it
 *   on every model).
 *
 * The hold is computed from the returned body, so it is never below what goes upstream. A value that is
 * not a positive integer never reaches this (the request schema's 400).
 */
export function adjustChatRequest(body: RoutedChatRequest, entry: CatalogueEntry): { body: RoutedChatRequest; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  let out = body;
  const param = body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const asked = body[param];
  const cap = outputLimitOf(entry);
  if (asked != null && asked > cap) {
    out = { ...out, [param]: cap };
    headers['x-modelmux-max-tokens-clamped'] = `${asked}->${cap}`;
  }
  if (body.reasoning_effort != null && entry.targets.every((t) => t.capabilities.reasoning === 'none')) {
    out = { ...out };
    delete out.reasoning_effort;
    headers['x-modelmux-dropped-params'] = 'reasoning_effort';
  }
  return { body: out, headers };
}

/** `extra` merged into a result's headers, joining comma-separated lists (`x-modelmux-dropped-params`). */
export function withHeaders<R extends { headers?: Record<string, string> }>(result: R, extra: Record<string, string>): R {
  if (Object.keys(extra).length === 0) return result;
  const headers: Record<string, string> = { ...result.headers };
  for (const [k, v] of Object.entries(extra)) headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  return { ...result, headers };
}
