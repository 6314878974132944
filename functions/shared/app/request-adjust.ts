import type { ChatSurface } from './chat-answer';
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
 *   on every model); OpenRouter's `reasoning` object likewise (`x-modelmux-dropped-params: reasoning`);
 * - OpenRouter's `reasoning` (docs/openrouter.md §1) becomes `reasoning_effort` when that is not set:
 *   its `effort`; else `none` for `enabled: false`; else the effort nearest its `max_tokens`
 *   ({@link effortForBudget}); else `medium` for `enabled: true` or `exclude` alone. `max_tokens` stays on
 *   the body for the adapters that take a thinking budget (Anthropic, Gemini);
 * - OpenRouter's `transforms`: a non-empty list is not applied: `x-modelmux-dropped-params: transforms`.
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
  const dropped: string[] = [];
  if (out.reasoning != null && out.reasoning_effort == null) out = { ...out, reasoning_effort: effortOf(out.reasoning) };
  if (entry.targets.every((t) => t.capabilities.reasoning === 'none')) {
    if (body.reasoning_effort != null) dropped.push('reasoning_effort');
    if (body.reasoning != null) dropped.push('reasoning');
    if (dropped.length > 0) {
      out = { ...out };
      delete out.reasoning_effort;
      delete out.reasoning;
    }
  }
  if ((body.transforms?.length ?? 0) > 0) dropped.push('transforms');
  if (dropped.length > 0) headers['x-modelmux-dropped-params'] = dropped.join(', ');
  return { body: out, headers };
}

type Effort = NonNullable<RoutedChatRequest['reasoning_effort']>;

/** OpenRouter's `reasoning` object → one `reasoning_effort` (the rule in {@link adjustChatRequest}). */
function effortOf(r: NonNullable<RoutedChatRequest['reasoning']>): Effort {
  if (r.effort != null) return r.effort;
  if (r.enabled === false) return 'none';
  if (r.max_tokens != null) return effortForBudget(r.max_tokens);
  return 'medium';
}

/**
 * The effort whose Anthropic thinking budget (providers/anthropic/thinking.ts: 1,024 / 4,096 / 16,384 /
 * 32,768) is nearest above `budget` tokens, for an upstream that takes an effort rather than a budget.
 */
export function effortForBudget(budget: number): Effort {
  if (budget <= 1024) return 'low';
  if (budget <= 4096) return 'medium';
  if (budget <= 16_384) return 'high';
  return 'xhigh';
}

/** `extra` merged into a result's headers, joining comma-separated lists (`x-modelmux-dropped-params`). */
export function withHeaders<R extends { headers?: Record<string, string> }>(result: R, extra: Record<string, string>): R {
  if (Object.keys(extra).length === 0) return result;
  const headers: Record<string, string> = { ...result.headers };
  for (const [k, v] of Object.entries(extra)) headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  return { ...result, headers };
}

/**
 * OpenRouter's `reasoning.exclude: true` (docs/openrouter.md §1): the model still reasons (and the
 * reasoning is billed as output), but `reasoning_content` is removed from the answer's messages and
 * stream deltas. Other surfaces (Responses, Messages) never set the field.
 */
export function hidingReasoning(surface: ChatSurface): ChatSurface {
  return {
    ...surface,
    present: (completion, parts) =>
      surface.present({ ...completion, choices: completion.choices.map((c) => ({ ...c, message: withoutKey(c.message, 'reasoning_content') })) }, parts),
    streamEncoder(stream) {
      const inner = surface.streamEncoder(stream);
      return {
        wantsFinalUsage: inner.wantsFinalUsage,
        parts: (parts) => {
          // A choice whose delta carried reasoning alone is not sent at all.
          const onlyReasoning = (c: (typeof parts.choices)[number]) =>
            'reasoning_content' in c.delta && Object.keys(c.delta).every((k) => k === 'reasoning_content') && c.finish_reason === null;
          const kept = parts.choices.filter((c) => !onlyReasoning(c)).map((c) => ({ ...c, delta: withoutKey(c.delta, 'reasoning_content') }));
          return kept.length === 0 && parts.choices.length > 0 ? [] : inner.parts({ ...parts, choices: kept });
        },
        complete: (usage) => inner.complete(usage),
        failed: (err) => inner.failed(err),
      };
    },
  };
}

function withoutKey<T extends object, K extends keyof T>(o: T, key: K): T {
  if (!(key in o)) return o;
  const copy = { ...o };
  delete copy[key];
  return copy;
}
