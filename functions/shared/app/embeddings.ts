import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { admit } from '../billing/admit';
import { dashboardUrl } from '../http/public-url';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import type { GatewayRequest, JsonResult } from '../http/types';
import { embeddingsRequest, toBase64Float32, type EmbeddingsResponse } from '../openai/embeddings';
import { parseJsonBody } from '../openai/parse-body';
import { loadUpstreamCredentials } from '../providers/credentials';
import { planAttempts } from '../routing/attempt-plan';
import { overheadMs, routeBufferedCall } from '../routing/chat-router';
import { recordOverhead } from '../observability/metrics';
import { estimateTextTokens } from '../usage/estimate';
import { authenticateRequest, routeOptions } from './guard';
import { settleRequest } from './settle-request';

/**
 * `POST /v1/embeddings`: `input` is a string or an array of strings; the answer is OpenAI's list
 * shape with one vector per input, in input order. Embedding models never fall back to another
 * model (different vector spaces); only another target of the same upstream model may serve.
 */
export async function embeddings(req: GatewayRequest): Promise<JsonResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, embeddingsRequest);
  const entry = getModel(body.model, 'embedding');
  const [, byok] = await Promise.all([admit(caller.accountId), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const plan = planAttempts(entry, CATALOGUE, await loadUpstreamCredentials(), undefined, [], byok);
  const outcome = await routeBufferedCall(
    plan,
    routeOptions(req),
    (a, ctx) => a.adapter.buildEmbeddingsRequest?.(body, inputs, ctx),
    (text, a, ctx) => {
      if (a.adapter.parseEmbeddingsResponse === undefined) throw new Error('adapter has no embeddings');
      return a.adapter.parseEmbeddingsResponse(text, ctx);
    },
  );
  const { vectors } = outcome.result;
  // Gemini returns no token counts for embeddings (providers.md §3.6): count them ourselves.
  const estimated = outcome.result.promptTokens === undefined;
  const promptTokens = outcome.result.promptTokens ?? (await Promise.all(inputs.map(estimateTextTokens))).reduce((a, b) => a + b, 0);
  const response: EmbeddingsResponse = {
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: body.encoding_format === 'base64' ? toBase64Float32(v) : v })),
    model: body.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
  recordOverhead(overheadMs(req.receivedAt, outcome.attempts));
  return {
    kind: 'json',
    status: 200,
    headers: {
      'x-modelmux-model': outcome.attempt.publicModel,
      'x-modelmux-provider': outcome.attempt.target.provider,
      'x-modelmux-attempts': String(outcome.attempts.length),
    },
    body: response,
    after: () =>
      settleRequest({
        accountId: caller.accountId,
        keyHash: caller.keyHash,
        requestId: req.requestId,
        receivedAt: req.receivedAt,
        requestedModel: body.model,
        attempt: outcome.attempt,
        attempts: outcome.attempts,
        usage: { promptTokens, completionTokens: 0, estimated },
        status: 'complete',
      }),
  };
}
