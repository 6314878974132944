import type { AuthenticatedKey } from '../accounts/authenticate';
import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { embeddingsDemand } from '../billing/hold-demand';
import { dashboardUrl } from '../http/public-url';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError } from '../errors/gateway-errors';
import { embeddingsRequest, toBase64Float32, type EmbeddingsRequest, type EmbeddingsResponse } from '../openai/embeddings';
import { parseJsonBody } from '../openai/parse-body';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { planAttempts } from '../routing/attempt-plan';
import { overheadMs } from '../routing/attempt-loop';
import { recordOverhead } from '../observability/metrics';
import { estimateTextTokens } from '../usage/estimate';
import { tokenUsage } from '../usage/token-usage';
import { authenticateRequest, billRequest, callAfterHold } from './guard';
import { assertDimensions } from '../openai/request-limits';
import { settleRequest, usageEntry } from './settle-request';
import { routingHeaders } from './chat-answer';

/** Default vector length when the catalogue names none (the largest of our models), for the size check. */
const FALLBACK_DIMENSIONS = 3_072;

/**
 * `POST /v1/embeddings`: `input` is a string or an array of strings; the answer is OpenAI's list
 * shape with one vector per input, in input order, through {@link embedInputs}.
 */
export async function embeddings(req: GatewayRequest): Promise<JsonResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, embeddingsRequest);
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const out = await embedInputs(req, caller, body, inputs);
  const response: EmbeddingsResponse = {
    object: 'list',
    data: out.vectors.map((v, index) => ({ object: 'embedding', index, embedding: body.encoding_format === 'base64' ? toBase64Float32(v) : v })),
    model: body.model,
    usage: { prompt_tokens: out.promptTokens, total_tokens: out.promptTokens },
  };
  return { kind: 'json', status: 200, headers: out.headers, body: response, after: out.after };
}

/** What the embeddings core produced: the vectors in input order, the prompt tokens billed, the routing and rate headers, and the settle to run after the answer. */
export interface EmbeddedInputs {
  vectors: number[][];
  promptTokens: number;
  headers: Record<string, string>;
  after: () => Promise<void>;
}

/**
 * The embeddings core, for every surface that embeds (`/v1/embeddings`; the Gemini API's
 * `:embedContent` and `:batchEmbedContents`, app/gemini-embed.ts): one vector per input, billed
 * through the same hold, ledger and settle. Embedding models never fall back to another model
 * (different vector spaces); only another target of the same upstream model may serve. An answer
 * that cannot fit the buffered 6 MB response is refused before the call (below); then the hold, as
 * for chat.
 * @throws NotFoundError (404) for a model that is not an embedding model; InvalidRequestError (400)
 *   for `dimensions` the model refuses or an answer too large; the hold's and the upstream's errors.
 */
export async function embedInputs(req: GatewayRequest, caller: AuthenticatedKey, body: EmbeddingsRequest, inputs: string[]): Promise<EmbeddedInputs> {
  const entry = getModel(body.model, 'embedding');
  const modelDimensions = entry.targets[0]?.dimensions ?? FALLBACK_DIMENSIONS;
  assertDimensions(body, entry, modelDimensions);
  assertEmbeddingsAnswerFits(inputs.length, body.dimensions ?? modelDimensions, body.encoding_format ?? 'float');
  // The account's own provider keys first (BYOK: billed the platform fee alone).
  const [credentials, byok] = await Promise.all([loadUpstreamCredentials(), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  const plan = planAttempts(entry, CATALOGUE, credentials, undefined, [], byok);
  const bill = billRequest(req, caller, body.model, embeddingsDemand(inputs, plan));
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
  // Gemini returns no token counts for embeddings (providers.md §3.6): count them ourselves.
  const estimated = outcome.result.promptTokens === undefined;
  const promptTokens = outcome.result.promptTokens ?? (await Promise.all(inputs.map(estimateTextTokens))).reduce((a, b) => a + b, 0);
  const usage = usageEntry({
    requestedModel: body.model,
    attempt: outcome.attempt,
    attempts: outcome.attempts,
    usage: { tokens: tokenUsage({ prompt: promptTokens, completion: 0 }), estimated },
    status: 'complete',
  });
  recordOverhead(overheadMs(req.receivedAt, outcome.attempts));
  return {
    vectors: outcome.result.vectors,
    promptTokens,
    headers: { ...routingHeaders(outcome), ...bill.rateHeaders() },
    after: () => settleRequest(bill, usage, { requestId: req.requestId, receivedAt: req.receivedAt, attempts: outcome.attempts.length }),
  };
}

/*
 * Will an embeddings answer fit a buffered Lambda response? The embeddings function answers through a
 * BUFFERED Function URL, whose response is at most 6 MB (Lambda quotas: 6,291,456 bytes; past it the
 * client would get Lambda's own `502 {"Message":…}`). The size is known before the call: inputs ×
 * dimensions × the bytes of one number — at most 26 as JSON text (`-0.0000012345678901234567,`: a
 * double's 17 significant digits, sign, point, leading zeros and comma), 16/3 as base64 float32
 * (`encoding_format: "base64"`) — plus each item's envelope. A request that cannot fit is refused
 * before any upstream call (and so before any charge), saying how many inputs fit.
 */

/**
 * Lambda's buffered response limit (bytes), less room for headers and the invocation's JSON wrapper:
 * the most an answer of the buffered function may be (embeddings here, images in images.ts).
 */
export const MAX_BUFFERED_ANSWER_BYTES = 6_291_456 - 32_768;

const FLOAT_JSON_BYTES = 26;
const ITEM_ENVELOPE_BYTES = 64;
const LIST_ENVELOPE_BYTES = 512;

/** Bytes of one vector's item, at most. */
function itemBytes(dimensions: number, encoding: 'float' | 'base64'): number {
  const vector = encoding === 'base64' ? 4 * Math.ceil((dimensions * 4) / 3) + 2 : dimensions * FLOAT_JSON_BYTES;
  return vector + ITEM_ENVELOPE_BYTES;
}

/** How many vectors of `dimensions` fit one answer in this encoding. */
function inputsThatFit(dimensions: number, encoding: 'float' | 'base64'): number {
  return Math.max(0, Math.floor((MAX_BUFFERED_ANSWER_BYTES - LIST_ENVELOPE_BYTES) / itemBytes(dimensions, encoding)));
}

/**
 * @throws InvalidRequestError (400, code `response_too_large`, param `input`) when `inputs` vectors of
 *   `dimensions` cannot fit, naming how many fit and what base64 allows.
 */
export function assertEmbeddingsAnswerFits(inputs: number, dimensions: number, encoding: 'float' | 'base64'): void {
  const fit = inputsThatFit(dimensions, encoding);
  if (inputs <= fit) return;
  const mb = ((inputs * itemBytes(dimensions, encoding)) / 1_048_576).toFixed(1);
  const base64 = inputsThatFit(dimensions, 'base64');
  const hint = encoding === 'float' ? ` With \`encoding_format: "base64"\` up to ${base64} inputs fit.` : '';
  throw new InvalidRequestError(
    `The answer to ${inputs} inputs of ${dimensions} dimensions could be up to ${mb} MB, over the 6 MB limit of a response: at most ${fit} inputs fit as ${encoding === 'float' ? 'JSON floats' : 'base64'}; send fewer per request.${hint}`,
    { param: 'input', code: 'response_too_large' },
  );
}
