import type { GatewayHandler, GatewayRequest, GatewayResult } from '../http/types';
import { MethodNotAllowedError, NotFoundError, asGatewayError } from '../errors/gateway-errors';
import { publicBaseUrl } from '../http/public-url';
import { messagesErrorBody, messagesErrorKind } from '../messages/errors';
import { chatCompletions } from './chat-completions';
import { embeddings } from './embeddings';
import { imageGenerations } from './images';
import { generation } from './generation';
import { keyInfo } from './key-info';
import { listModels, retrieveModel } from './models';
import { responses } from './responses';
import { messages } from './messages';
import { countTokens } from './count-tokens';
import { storedResponses } from './stored-responses';
import { gemini, geminiRoute } from './gemini';
import { geminiModels, geminiModelsRoute } from './gemini-models';
import { geminiEmbed, geminiEmbedRoute } from './gemini-embed';

/**
 * The public routes under `/v1`. Both functions serve every route, so a single Function URL works
 * as an OpenAI base URL; the embeddings function exists so embedding and image traffic can run in
 * BUFFERED mode.
 * Unknown paths are 404, known paths with another method 405 (with `allow`), each naming the base URL
 * (`<origin>/v1`, http/public-url.ts) when it is known; under `/v1/messages` in Anthropic's error body
 * (messages/errors.ts), since the caller is an Anthropic client.
 */
export const dispatch: GatewayHandler = async (req: GatewayRequest): Promise<GatewayResult> => {
  if (!req.path.startsWith('/v1/messages')) return route(req);
  try {
    return await route(req);
  } catch (err) {
    const e = asGatewayError(err);
    // Only the routing errors are rendered here; the Messages route renders its own.
    if (!(e instanceof MethodNotAllowedError || e instanceof NotFoundError) || e.code === 'model_not_found') throw err;
    return { kind: 'json', status: messagesErrorKind(e.status).status, headers: e.headers, body: messagesErrorBody(e, req.requestId) };
  }
};

function route(req: GatewayRequest): Promise<GatewayResult> {
  const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
  if (path === '/v1/chat/completions') return only(req, 'POST', chatCompletions);
  if (path === '/v1/responses') return only(req, 'POST', responses);
  if (path === '/v1/messages') return only(req, 'POST', messages);
  if (path === '/v1/messages/count_tokens') return only(req, 'POST', countTokens);
  const g = geminiRoute(path);
  if (g !== undefined) return only(req, 'POST', (r) => gemini(r, g));
  const ge = geminiEmbedRoute(path);
  if (ge !== undefined) return only(req, 'POST', (r) => geminiEmbed(r, ge));
  const gm = geminiModelsRoute(path);
  if (gm !== undefined) return only(req, 'GET', (r) => geminiModels(r, gm));
  if (path === '/' && (req.method === 'HEAD' || req.method === 'GET')) return probe();
  if (path.startsWith('/v1/responses/')) return storedResponses(req, path.slice('/v1/responses/'.length));
  if (path === '/v1/embeddings') return only(req, 'POST', embeddings);
  if (path === '/v1/images/generations') return only(req, 'POST', imageGenerations);
  if (path === '/v1/models') return only(req, 'GET', listModels);
  if (path === '/v1/key') return only(req, 'GET', keyInfo);
  if (path === '/v1/generation') return only(req, 'GET', generation);
  if (path.startsWith('/v1/models/')) {
    const id = decodePathSegment(path.slice('/v1/models/'.length));
    return only(req, 'GET', (r) => retrieveModel(r, id));
  }
  throw new NotFoundError(
    `Unknown request URL: ${req.method} ${req.path}. modelmux serves /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings, /v1/images/generations, /v1/models, /v1/key and /v1/generation.${baseUrlHint(req)}`,
    {
      code: 'unknown_url',
    },
  );
}

function only(req: GatewayRequest, method: 'GET' | 'POST', handler: GatewayHandler): Promise<GatewayResult> {
  if (req.method !== method) throw new MethodNotAllowedError(req.method, req.path, [method], baseUrlHint(req));
  return handler(req);
}

/** ` The API's base URL is <origin>/v1.`, or '' when the origin may not be named (http/public-url.ts). */
function baseUrlHint(req: GatewayRequest): string {
  const base = publicBaseUrl(req);
  return base === '' ? '' : ` The API's base URL is ${base}/v1.`;
}

/** A malformed percent-encoding is just an id no model has (404), not a server error. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * `HEAD /` and `GET /`: the base URL answers, without a key (Claude Code probes its
 * `ANTHROPIC_BASE_URL` with a HEAD before its first request; docs/anthropic-messages.md).
 */
function probe(): Promise<GatewayResult> {
  return Promise.resolve({
    kind: 'json',
    status: 200,
    headers: {},
    body: {
      object: 'modelmux',
      endpoints: ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings', '/v1/images/generations', '/v1/models'],
    },
  });
}
