import { GatewayError, InvalidRequestError, NotFoundError } from '../errors/gateway-errors';
import type { CreateResponseRequest, InputItem } from './request';
import { isResponseId, responseIdOfItem } from './response-ids';
import type { OutputItem } from './response-object';
import { getStoredResponses, StoredReadTooLargeError, type StoredResponse } from './response-store';

/**
 * The conversation a Responses request continues, from stored responses (response-store.ts), always
 * within the caller's account:
 *
 * - `previous_response_id`: that response's input items and then its output items go before this
 *   request's input (OpenAI: "the model will use the previous response's input and output as
 *   context"). Its `instructions` are not carried over (OpenAI's rule), nor its tools or settings.
 *   Chains follow: each stored response holds its whole input, history included.
 * - `item_reference` items (what the Vercel AI SDK sends for earlier output with its default
 *   `store: true`): each becomes the stored output item it names. An item id names its response
 *   (response-ids.ts), so every referenced response is read by key, all in one batch.
 *
 * Errors mirror OpenAI's bodies: an unknown, expired, deleted or other account's `previous_response_id`
 * is 400 `previous_response_not_found` ("Previous response with id 'resp_…' not found."); an item that
 * cannot be found is 404 ("Item with id '…' not found. Items are not persisted when `store` is set
 * to false. …").
 */

/** The input of a request with its stored context. */
export interface ConversationInput {
  /** What is stored with the new response: the history and this request's items, references kept as references. */
  stored: InputItem[];
  /** What the model sees: the same with every `item_reference` replaced by the item it names. */
  resolved: InputItem[];
}

/** Most stored responses one request may reference items of (a 1,000-turn conversation); each costs a read. */
export const MAX_REFERENCED_RESPONSES = 1_000;

/** Most compressed bytes the responses a request references may take together (read and held in memory). */
export const REFERENCE_READ_BUDGET_BYTES = 32 * 1024 * 1024;

/**
 * Builds the input of `body` with its stored context; without `previous_response_id` and item
 * references it reads nothing.
 * @throws InvalidRequestError 400 `previous_response_not_found`, or when a request references too much;
 *   NotFoundError 404 for an item that is not stored; a 503 GatewayError when the store is down.
 */
export async function conversationInput(accountId: string, body: Pick<CreateResponseRequest, 'input' | 'previous_response_id'>): Promise<ConversationInput> {
  const own: InputItem[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  const known = new Map<string, StoredResponse>();
  let stored = own;
  const previousId = body.previous_response_id;
  if (previousId != null) {
    const previous = isResponseId(previousId) ? (await getStoredResponses(accountId, [previousId], 'all')).get(previousId) : undefined;
    if (previous === undefined) throw previousNotFound(`Previous response with id '${previousId}' not found.`);
    if (previous.input === undefined) {
      throw previousNotFound(
        `Previous response with id '${previousId}' was stored without its input (over 8 MiB compressed), so it cannot be continued; send the conversation in input instead.`,
      );
    }
    known.set(previousId, previous);
    stored = [...previous.input, ...previous.response.output.map(asInputItem), ...own];
  }
  if (!stored.some((i) => i.type === 'item_reference')) return { stored, resolved: stored };
  const wanted = referencedResponses(stored).filter((id) => !known.has(id));
  try {
    for (const [id, response] of await getStoredResponses(accountId, wanted, 'response', Date.now(), REFERENCE_READ_BUDGET_BYTES)) known.set(id, response);
  } catch (err) {
    if (err instanceof StoredReadTooLargeError) {
      throw new InvalidRequestError(
        `The items this request references belong to stored responses over ${REFERENCE_READ_BUDGET_BYTES / 1024 / 1024} MiB together; send the earlier items themselves instead of references.`,
        { param: 'input', code: 'invalid_value' },
      );
    }
    throw err;
  }
  return { stored, resolved: stored.map((item) => (item.type === 'item_reference' ? lookUp(item.id, known) : item)) };
}

/**
 * A stored input as `GET …/input_items` lists it: each reference replaced by the item it names, when
 * that is still stored (one batch read); a reference to a response deleted or expired since stays as
 * it was sent.
 * @throws a 503 GatewayError when the store is down.
 */
export async function withReferencedItems(accountId: string, items: readonly InputItem[]): Promise<InputItem[]> {
  const ids = [...new Set(items.flatMap((i) => (i.type === 'item_reference' ? [responseIdOfItem(i.id) ?? []].flat() : [])))];
  if (ids.length === 0) return [...items];
  const known = await getStoredResponses(accountId, ids, 'response', Date.now(), REFERENCE_READ_BUDGET_BYTES).catch((err: unknown) => {
    if (err instanceof StoredReadTooLargeError) return new Map<string, StoredResponse>();
    throw err;
  });
  return items.map((item) => {
    if (item.type !== 'item_reference') return item;
    try {
      return lookUp(item.id, known);
    } catch {
      return item;
    }
  });
}

/** The distinct responses the references in `items` name. @throws NotFoundError for an id no stored response can hold. */
function referencedResponses(items: readonly InputItem[]): string[] {
  const ids = new Set<string>();
  for (const item of items) {
    if (item.type !== 'item_reference') continue;
    const responseId = responseIdOfItem(item.id);
    if (responseId === undefined) throw itemNotFound(item.id);
    ids.add(responseId);
  }
  if (ids.size > MAX_REFERENCED_RESPONSES) {
    throw new InvalidRequestError(
      `This request references items of ${ids.size} stored responses; at most ${MAX_REFERENCED_RESPONSES} per request. Continue with previous_response_id, or send older items themselves.`,
      { param: 'input', code: 'invalid_value' },
    );
  }
  return [...ids];
}

function lookUp(itemId: string, known: ReadonlyMap<string, StoredResponse>): InputItem {
  const responseId = responseIdOfItem(itemId);
  const item = responseId === undefined ? undefined : known.get(responseId)?.response.output.find((o) => o.id === itemId);
  if (item === undefined) throw itemNotFound(itemId);
  return asInputItem(item);
}

/** An output item, sent back as input (every output item type modelmux makes is also an input item type). */
export function asInputItem(item: OutputItem): InputItem {
  return item as InputItem;
}

function previousNotFound(message: string): GatewayError {
  return new InvalidRequestError(message, { param: 'previous_response_id', code: 'previous_response_not_found' });
}

function itemNotFound(id: string): GatewayError {
  return new NotFoundError(
    `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
    { param: 'input' },
  );
}
