import type { CatalogueEntry } from '../catalogue/catalogue';
import { InvalidRequestError } from '../errors/gateway-errors';

/**
 * Models in Anthropic's shape (`GET /v1/models` sent with `anthropic-version`; Anthropic Models API,
 * docs/anthropic-messages.md): `{type:"model", id, display_name, created_at}` (RFC 3339), listed as
 * `{data, has_more, first_id, last_id}` with Anthropic's cursor paging (`limit` 1–1000, default 20;
 * `after_id`, `before_id`). Claude Code's gateway model discovery reads it.
 */

/** One model, as Anthropic writes it. */
export interface AnthropicModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

/** A catalogue entry as Anthropic's model object. */
export function anthropicModelInfo(e: CatalogueEntry): AnthropicModelInfo {
  return { type: 'model', id: e.id, display_name: displayName(e.id), created_at: new Date(e.created * 1000).toISOString() };
}

/** `claude-3-5-sonnet` → `Claude 3.5 Sonnet`, `gpt-4o-mini` → `GPT 4o Mini`: words capitalised, version digits joined by dots. */
export function displayName(id: string): string {
  const words: string[] = [];
  for (const w of id.split('-')) {
    const prev = words[words.length - 1];
    if (/^\d+$/.test(w) && prev !== undefined && /^\d+(\.\d+)*$/.test(prev)) words[words.length - 1] = `${prev}.${w}`;
    else words.push(w === 'gpt' ? 'GPT' : w.charAt(0).toUpperCase() + w.slice(1));
  }
  return words.join(' ');
}

/**
 * One page of the list.
 * @param query the raw query string (`limit=…&after_id=…`).
 * @throws InvalidRequestError (400) for a `limit` outside 1–1000.
 */
export function anthropicModelPage(
  entries: readonly CatalogueEntry[],
  query: string | undefined,
): { data: AnthropicModelInfo[]; has_more: boolean; first_id: string | null; last_id: string | null } {
  const params = new URLSearchParams(query ?? '');
  const limit = params.has('limit') ? Number(params.get('limit')) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new InvalidRequestError('limit: Input should be an integer between 1 and 1000', { param: 'limit' });
  const ids = entries.map((e) => e.id);
  const after = params.get('after_id');
  const before = params.get('before_id');
  let from = after !== null ? ids.indexOf(after) + 1 : 0;
  let to = before !== null && ids.includes(before) ? ids.indexOf(before) : ids.length;
  if (before !== null && after === null) from = Math.max(0, to - limit);
  else to = Math.min(to, from + limit);
  const data = entries.slice(from, to).map(anthropicModelInfo);
  const hasMore = before !== null && after === null ? from > 0 : to < ids.length;
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}
