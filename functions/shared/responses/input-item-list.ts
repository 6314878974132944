import { InvalidRequestError } from '../errors/gateway-errors';
import type { InputItem } from './request';
import { inputItemId, ITEM_ID_PREFIX } from './response-ids';

/**
 * `GET /v1/responses/{id}/input_items`: a stored response's input items as OpenAI lists them
 * (OpenAPI `ResponseItemList` of `ItemResource`): newest first by default, `limit` 1–100 (default 20),
 * `after` an item id, `order` `asc` | `desc`. Every item has an `id` and a `status` (an item sent
 * without an id is listed under `<prefix>_<request id>_in<n>`, response-ids.ts); user, system and
 * developer messages have content parts (a string becomes one `input_text`), an assistant message is an
 * output message with `output_text` parts (annotations and log probabilities as lists).
 */

/** The list body. `first_id` / `last_id` are null for an empty page, as OpenAI's other lists. */
export interface ItemList {
  object: 'list';
  data: Array<Record<string, unknown>>;
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** The listing's query (`limit`, `order`, `after`; `include` is accepted: nothing is left out to add). */
export interface ListQuery {
  limit: number;
  order: 'asc' | 'desc';
  after: string | undefined;
}

/**
 * Reads the query string.
 * @throws InvalidRequestError (400, `param` = the parameter) for a bad `limit` or `order`.
 */
export function listQuery(query: string | undefined): ListQuery {
  const q = new URLSearchParams(query ?? '');
  const rawLimit = q.get('limit');
  const limit = rawLimit === null ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new InvalidRequestError(`Invalid 'limit': expected an integer from 1 to 100, got '${rawLimit}'.`, { param: 'limit', code: 'invalid_value' });
  }
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    throw new InvalidRequestError(`Invalid 'order': expected 'asc' or 'desc', got '${order}'.`, { param: 'order', code: 'invalid_value' });
  return { limit, order, after: q.get('after') ?? undefined };
}

/** One page of `items` (the input of the response whose request id is `requestId`). */
export function listInputItems(items: readonly InputItem[], requestId: string, query: ListQuery): ItemList {
  const all = items.map((item, i) => asItemResource(item, requestId, i));
  if (query.order === 'desc') all.reverse();
  const start = query.after === undefined ? 0 : all.findIndex((i) => i['id'] === query.after) + 1;
  const data = start === 0 && query.after !== undefined ? [] : all.slice(start, start + query.limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.['id'] as string | undefined) ?? null,
    last_id: (data.at(-1)?.['id'] as string | undefined) ?? null,
    has_more: start + data.length < all.length,
  };
}

function asItemResource(item: InputItem, requestId: string, index: number): Record<string, unknown> {
  const id = (own: string | null | undefined, type: keyof typeof ITEM_ID_PREFIX): string => own ?? inputItemId(type, requestId, index);
  switch (item.type) {
    case 'message': {
      const status = item.status ?? 'completed';
      if (item.role === 'assistant') {
        const content =
          typeof item.content === 'string'
            ? [{ type: 'output_text', text: item.content, annotations: [], logprobs: [] }]
            : item.content.map((p) => (p.type === 'output_text' ? { ...p, annotations: p.annotations ?? [], logprobs: p.logprobs ?? [] } : p));
        return { id: id(item.id, 'message'), type: 'message', role: 'assistant', status, content };
      }
      const content =
        typeof item.content === 'string'
          ? [{ type: 'input_text', text: item.content }]
          : item.content.map((p) => (p.type === 'input_image' ? { ...p, detail: p.detail ?? 'auto' } : p));
      return { id: id(item.id, 'message'), type: 'message', role: item.role, status, content };
    }
    case 'function_call':
      return { ...item, id: id(item.id, 'function_call'), status: item.status ?? 'completed' };
    case 'function_call_output':
      return { ...item, id: id(item.id, 'function_call_output'), status: item.status ?? 'completed' };
    default:
      return { ...item };
  }
}
