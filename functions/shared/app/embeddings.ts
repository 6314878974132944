import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { embeddingsDemand } from '../billing/hold-demand';
import { dashboardUrl } from '../http/public-url';
import { startBill } from '../billing/request-bill';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import type { GatewayRequest, JsonResult } from '../http/types';
import { embeddingsRequest, toBase64Float32, type EmbeddingsResponse } from '../openai/embeddings';
import { parseJsonBody } from '../openai/parse-body';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { planAttempts } from '../routing/attempt-plan';
import { overheadMs } from '../routing/attempt-loop';
import { recordOverhead } from '../observability/metrics';
import { estimateTextTokens } from '../usage/estimate';
import { tokenUsage } from '../usage/token-usage';
import { assertEmbeddingsAnswerFits } from './embeddings-size';
import { authenticateRequest, callAfterHold } from './guard';
import { holdEndsAt } from '../routing/timeouts';
import { assertDimensions } from '../openai/request-limits';
import { settleRequest, usageEntry } from './settle-request';
import { routingHeaders } from './routing-headers';

/** Default vector length when the catalogue names none (the largest of our models), for the size check. */
const FALLBACK_DIMENSIONS = 3_072;

/**
 * `POST /v1/embeddings`: `input` is a string or an array of strings; the answer is OpenAI's list
 * shape with one vector per input, in input order. Embedding models never fall back to another
 * model (different vector spaces); only another target of the same upstream model may serve.
 * An answer that cannot fit the buffered 6 MB response is refused before the call (embeddings-size.ts);
 * then the hold, as for chat.
 */
export async function embeddings(req: GatewayRequest): Promise<JsonResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, embeddingsRequest);
  const entry = getModel(body.model, 'embedding');
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const modelDimensions = entry.targets[0]?.dimensions ?? FALLBACK_DIMENSIONS;
  assertDimensions(body, entry, modelDimensions);
  assertEmbeddingsAnswerFits(inputs.length, body.dimensions ?? modelDimensions, body.encoding_format ?? 'float');
  // [issue 11] The account's own provider keys first (BYOK: billed the platform fee alone).
  const [credentials, byok] = await Promise.all([loadUpstreamCredentials(), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  const plan = planAttempts(entry, CATALOGUE, credentials, undefined, [], byok);
  const { demand, promptTokensEstimate } = embeddingsDemand(inputs, plan);
  const bill = startBill({ accountId: caller.accountId, keyHash: caller.keyHash, requestId: req.requestId, publicModel: body.model, demand, promptTokensEstimate, endsAt: holdEndsAt(req) });
  // Embeddings are short and cheap to refuse: the hold comes first, then the call.
  const outcome = await callAfterHold(
    bill,
    plan,
    req,
    caller,
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
  const usage = usageEntry({ requestedModel: body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: { tokens: tokenUsage({ prompt: promptTokens, completion: 0 }), estimated }, status: 'complete' });
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
    headers: { ...routingHeaders(outcome), ...bill.rateHeaders() },
    body: response,
    after: () => settleRequest(bill, usage, { requestId: req.requestId, receivedAt: req.receivedAt, attempts: outcome.attempts.length }),
  };
}
