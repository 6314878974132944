import type { GatewayRequest, GatewayResult } from '../http/types';
import { InvalidRequestError, MethodNotAllowedError, NotFoundError } from '../errors/gateway-errors';
import { unsupportedParameter } from '../providers/unsupported-parameters';
import { withReferencedItems } from '../responses/conversation-state';
import { listInputItems, listQuery } from '../responses/input-item-list';
import { requestIdOfResponse } from '../responses/response-ids';
import { deleteStoredResponse, getStoredResponses } from '../responses/response-store';
import { authenticateRequest } from './guard';

/**
 * The stored responses of the caller's account (OpenAI's Responses API; responses/response-store.ts):
 *
 * | route | answer |
 * |---|---|
 * | `GET /v1/responses/{id}` | the `response` object as it was returned (log probabilities left out) |
 * | `DELETE /v1/responses/{id}` | `{id, object: "response", deleted: true}` |
 * | `GET /v1/responses/{id}/input_items` | `{object: "list", data, first_id, last_id, has_more}` (`limit`, `order`, `after`) |
 *
 * Every read and delete is keyed by the caller's account: another account's id, an unknown, expired
 * or deleted one are all 404 "Response with id '…' not found." (OpenAI's words). `GET …?stream=true`
 * (replaying a response's events) is a 400: stored responses are returned whole.
 * @param rest the path after `/v1/responses/`.
 * @throws NotFoundError 404, MethodNotAllowedError 405, InvalidRequestError 400, AuthenticationError 401.
 */
export async function storedResponses(req: GatewayRequest, rest: string): Promise<GatewayResult> {
  const [rawId = '', sub, ...extra] = rest.split('/');
  const id = decode(rawId);
  if (sub === undefined) {
    if (req.method === 'GET') return retrieve(req, id);
    if (req.method === 'DELETE') return remove(req, id);
    throw new MethodNotAllowedError(req.method, req.path, ['GET', 'DELETE']);
  }
  if (sub === 'input_items' && extra.length === 0) {
    if (req.method !== 'GET') throw new MethodNotAllowedError(req.method, req.path, ['GET']);
    return inputItems(req, id);
  }
  throw new NotFoundError(`Unknown request URL: ${req.method} ${req.path}. Stored responses are at /v1/responses/{id} and /v1/responses/{id}/input_items.`, {
    code: 'unknown_url',
  });
}

async function retrieve(req: GatewayRequest, id: string): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  if (new URLSearchParams(req.query ?? '').get('stream') === 'true') {
    throw unsupportedParameter('stream', 'Stored responses are returned whole; their events cannot be replayed.');
  }
  const stored = requestIdOfResponse(id) === undefined ? undefined : (await getStoredResponses(caller.accountId, [id], 'response')).get(id);
  if (stored === undefined) throw notFound(id);
  return { kind: 'json', status: 200, headers: {}, body: stored.response };
}

async function remove(req: GatewayRequest, id: string): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  if (requestIdOfResponse(id) === undefined || !(await deleteStoredResponse(caller.accountId, id))) throw notFound(id);
  return { kind: 'json', status: 200, headers: {}, body: { id, object: 'response', deleted: true } };
}

async function inputItems(req: GatewayRequest, id: string): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  const query = listQuery(req.query);
  const requestId = requestIdOfResponse(id);
  const stored = requestId === undefined ? undefined : (await getStoredResponses(caller.accountId, [id], 'all')).get(id);
  if (stored === undefined || requestId === undefined) throw notFound(id);
  if (stored.input === undefined) {
    throw new InvalidRequestError(`The input of response '${id}' was too large to store (over 8 MiB compressed); it has no input items to list.`, {
      code: 'invalid_value',
    });
  }
  const items = await withReferencedItems(caller.accountId, stored.input);
  return { kind: 'json', status: 200, headers: {}, body: listInputItems(items, requestId, query) };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`Response with id '${id}' not found.`);
}

/** A malformed percent-encoding is just an id no response has (404), not a server error. */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
