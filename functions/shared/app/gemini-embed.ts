import type { GatewayRequest, GatewayResult } from '../http/types';
import { parseJsonBody } from '../openai/parse-body';
import { batchEmbedContentsBody, embedContentBody, GEMINI_EMBED_PATH, toEmbeddingsRequest } from '../gemini-api/embed';
import { embedInputs } from './embeddings';
import { inGeminiApi, withGoogleKey } from './gemini';
import { authenticateRequest } from './guard';

/** The Gemini embeddings route a path names, if any: the model (without `models/`) and the method. */
export function geminiEmbedRoute(path: string): { model: string; batch: boolean } | undefined {
  const m = GEMINI_EMBED_PATH.exec(path);
  if (m === null) return undefined;
  try {
    return { model: decodeURIComponent(m[1] ?? ''), batch: m[2] === 'batchEmbedContents' };
  } catch {
    return { model: m[1] ?? '', batch: m[2] === 'batchEmbedContents' };
  }
}

/**
 * `POST …/models/{model}:embedContent` → `{embedding:{values}}` and `:batchEmbedContents` →
 * `{embeddings:[{values}]}` (gemini-api/embed.ts; Google's reference, https://ai.google.dev/api/embeddings),
 * answered by the embeddings function (buffered), through the same core as `/v1/embeddings`
 * ({@link embedInputs}: the same hold, ledger and settle). The key from `x-goog-api-key`, `?key=`
 * or `Authorization: Bearer`; every error is Google's body and status (app/gemini.ts).
 */
export function geminiEmbed(req: GatewayRequest, route: { model: string; batch: boolean }): Promise<GatewayResult> {
  return inGeminiApi(req, async () => {
    const authed = withGoogleKey(req);
    const caller = await authenticateRequest(authed);
    const requests = route.batch ? parseJsonBody(req.body, batchEmbedContentsBody).requests : [parseJsonBody(req.body, embedContentBody)];
    const { body, inputs } = toEmbeddingsRequest(route.model, requests);
    const out = await embedInputs(authed, caller, body, inputs);
    const values = out.vectors.map((v) => ({ values: v }));
    return { kind: 'json', status: 200, headers: out.headers, body: route.batch ? { embeddings: values } : { embedding: values[0] }, after: out.after };
  });
}
