import { parseUpstreamJson } from '../upstream-failure';
import type { EmbeddingParts, EmbeddingsRequest } from '../../openai/embeddings';
import type { AdapterContext, UpstreamHttpRequest } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure } from '../upstream-failure';
import { failureFromRpcError } from './gemini-errors';
import { geminiHeaders, geminiModelUrl } from './request';
import { batchEmbedResponse, rpcErrorBody } from './wire';

/**
 * Embeddings through `batchEmbedContents` (Gemini API, providers.md §3.6), used for one input too so
 * there is a single request and response shape:
 * `POST {baseUrl}/models/{model}:batchEmbedContents`
 * `{"requests":[{"model":"models/<id>","content":{"parts":[{"text":…}]},"outputDimensionality"?:…}]}`.
 * `dimensions` → `outputDimensionality` on every item.
 */
export function buildGeminiEmbeddingsRequest(req: EmbeddingsRequest, inputs: readonly string[], ctx: AdapterContext): UpstreamHttpRequest {
  const model = `models/${ctx.target.upstreamModel}`;
  const requests = inputs.map((text) => ({
    model,
    content: { parts: [{ text }] },
    ...(req.dimensions === undefined ? {} : { outputDimensionality: req.dimensions }),
  }));
  return {
    url: geminiModelUrl(ctx, 'batchEmbedContents'),
    headers: geminiHeaders(ctx.endpoint.apiKey, 'application/json'),
    body: JSON.stringify({ requests }),
  };
}

/**
 * `{"embeddings":[{"values":[…]}]}` → vectors in input order. Gemini reports no token usage (§3.6):
 * `promptTokens` is undefined and the caller estimates.
 * @throws UpstreamAttemptError — retryable `server` for a malformed body; classified for an `error`.
 */
export function parseGeminiEmbeddingsResponse(bodyText: string, _ctx: AdapterContext): EmbeddingParts {
  const json = parseUpstreamJson(bodyText, 'gemini: embeddings body is not valid JSON');
  const err = rpcErrorBody.safeParse(Array.isArray(json) ? json[0] : json);
  if (err.success) throw new UpstreamAttemptError(failureFromRpcError(err.data.error, err.data.error.code ?? 200));
  const parsed = batchEmbedResponse.safeParse(json);
  if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, 'gemini: malformed batchEmbedContents body'));
  return { vectors: parsed.data.embeddings.map((e) => e.values), promptTokens: undefined };
}
