import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The answer for an API client that reached a site path of `npm start` (CloudFront's default
 * behaviour in AWS): an OpenAI-shaped JSON error that names the API's base URL (`<origin>/v1`), never
 * the site's text/plain. On a `/messages` path the body is Anthropic's error shape
 * (`{type: "error", error: {type, message}}`, docs/anthropic-messages.md), since the client is an
 * Anthropic SDK.
 *
 * - an API route without its `/v1` (`POST /chat/completions`, `GET /models`…): 404 `unknown_url`,
 *   naming the same route under `/v1`;
 * - any other method than GET/HEAD on a site path: 405 `method_not_allowed` with `allow: GET, HEAD`.
 */

/** The API routes a client may call without `/v1` by mistake (the routes of functions/shared/app/dispatch.ts). */
const ROUTES = [
  '/chat/completions',
  '/responses',
  '/messages',
  '/messages/count_tokens',
  '/embeddings',
  '/images/generations',
  '/models',
  '/key',
  '/generation',
];

/** True when `path` is one of {@link ROUTES} (or below `/responses/`, `/models/`), i.e. an API call that lacks `/v1`. */
export function isApiRouteWithoutV1(path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return ROUTES.includes(p) || p.startsWith('/responses/');
}

/** Writes the JSON error for a request that is not the site's (see the file comment); `path` is the URL's path. */
export function writeWrongPath(req: IncomingMessage, res: ServerResponse, path: string): void {
  const base = `http://${req.headers.host ?? '127.0.0.1'}/v1`;
  const method = req.method ?? 'GET';
  const missing = isApiRouteWithoutV1(path);
  const status = missing ? 404 : 405;
  const message = missing
    ? `Unknown request URL: ${method} ${path}. The API's base URL is ${base}: use ${method} ${base}${path}.`
    : `Method ${method} is not allowed on ${path}: the dashboard's pages take GET and HEAD. The API's base URL is ${base}.`;
  const anthropic = path.startsWith('/messages');
  const body = anthropic
    ? { type: 'error', error: { type: missing ? 'not_found_error' : 'invalid_request_error', message } }
    : { error: { message, type: 'invalid_request_error', param: null, code: missing ? 'unknown_url' : 'method_not_allowed' } };
  const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store' };
  if (!missing) headers.allow = 'GET, HEAD';
  res.writeHead(status, headers).end(JSON.stringify(body));
}
