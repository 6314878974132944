import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { dispatch } from '../shared/app/dispatch';
import { MAX_BUFFERED_ANSWER_BYTES } from '../shared/app/embeddings';
import { config } from '../shared/config/env';
import type { GatewayRequest, GatewayResult } from '../shared/http/types';
import { finishInvocation, fromFunctionUrlEvent, initGateway, logRequest, responseHeaders, runCore } from '../shared/edge/function-url';
import { acceptsGzip, encodeBody, IDENTITY_HEADERS } from '../shared/edge/response-encoding';
import { GatewayError, toErrorBody } from '../shared/errors/gateway-errors';
import { logger } from '../shared/observability/logger';

// Cold start: the upstream keys and the origin secret are read during INIT, not on the first request.
// INIT: every setting parsed now (config/env.ts), so a malformed variable fails the cold start naming it.
config();
await initGateway();

/**
 * Lambda's buffered response limit (6 MB, Lambda quotas) less room for headers and the invocation's own
 * JSON wrapper: past it Lambda answers its own `502 {"Message":…}`, which modelmux never lets happen.
 */
const MAX_BUFFERED_BODY_BYTES = MAX_BUFFERED_ANSWER_BYTES;

/**
 * The embeddings Lambda behind a BUFFERED Function URL (6 MB response limit): `/v1/embeddings`,
 * `/v1/images/generations` and the Gemini API's `…/models/{m}:embedContent | :batchEmbedContents`
 * (app/gemini-embed.ts; their errors in Google's body), whose answers are one JSON body each. A buffered invocation
 * returns its response only when the handler returns, so the ledger is settled before returning:
 * a frozen container must not hold an unbilled request. Every response is OpenAI-shaped: an answer
 * too large for the buffered limit (embeddings and images are sized before the call,
 * app/embeddings.ts and app/images.ts, so only a chat answer sent to this URL or an upstream's
 * image far past every bound can be) or any failure of this handler becomes an OpenAI error body.
 */
export const handler = async (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  const req = fromFunctionUrlEvent(event, new AbortController().signal, context);
  try {
    const result = await runCore(dispatch, req);
    let body: string;
    if (result.kind === 'stream') {
      // A streamed chat request sent to the buffered URL: collect it (the chat URL streams it live).
      body = '';
      for await (const frame of result.frames) body += frame;
    } else {
      body = JSON.stringify(result.body);
    }
    // Produced answers are billed (as if the client had left) even when they cannot be sent.
    await settleOrLog(req, result);
    if (Buffer.byteLength(body, 'utf8') > MAX_BUFFERED_BODY_BYTES) {
      const err = new GatewayError(
        500,
        'server_error',
        'The answer is larger than the 6 MB a buffered response can carry: ask for fewer items per request (or stream a chat answer, `stream: true`, through the chat endpoint).',
        { code: 'response_too_large' },
      );
      return {
        statusCode: 500,
        headers: responseHeaders({ kind: 'json', status: 500, headers: {}, body: null }, req.requestId),
        body: JSON.stringify(toErrorBody(err)),
      };
    }
    return { statusCode: result.status, ...bufferedBody(body, acceptsGzip(req.headers), responseHeaders(result, req.requestId)) };
  } catch (err) {
    logger.error('buffered handler failed', { requestId: req.requestId, error: err as Error });
    return {
      statusCode: 500,
      headers: responseHeaders({ kind: 'json', status: 500, headers: {}, body: null }, req.requestId),
      body: JSON.stringify(toErrorBody(err)),
    };
  } finally {
    finishInvocation(req);
  }
};

/**
 * The body and headers of a buffered answer: gzip'd (response-encoding.ts) when the client accepts it,
 * the body is at least 1 KB and the gzip is smaller than the text. A buffered Function URL carries
 * binary only as base64 (`isBase64Encoded`; the service decodes it, so the client and CloudFront get
 * the gzip bytes), and base64 is 4/3 of them: the gzip is sent only while its base64 stays within
 * {@link MAX_BUFFERED_BODY_BYTES}, the same bound the text was checked against, so the 6 MB payload
 * limit holds whichever is sent (the text, JSON-escaped in the payload, is if anything larger).
 * Measured at level 1: 1,536 JSON floats compress 2.1:1; base64 float32 (the openai SDK's default) only
 * 1.3:1, so there the Lambda payload (base64 of the gzip) stays about the size of the text while the bytes out shrink by a quarter.
 */
function bufferedBody(
  text: string,
  gzip: boolean,
  headers: Record<string, string>,
): Pick<APIGatewayProxyStructuredResultV2, 'body' | 'headers' | 'isBase64Encoded'> {
  const encoded = encodeBody(text, gzip);
  if (typeof encoded.body === 'string') return { headers: { ...headers, ...encoded.headers }, body: encoded.body };
  const base64 = encoded.body.toString('base64');
  if (encoded.body.length >= Buffer.byteLength(text, 'utf8') || base64.length > MAX_BUFFERED_BODY_BYTES)
    return { headers: { ...headers, ...IDENTITY_HEADERS }, body: text };
  return { headers: { ...headers, ...encoded.headers }, body: base64, isBase64Encoded: true };
}

/** A billed request logs its one line when settled (with tokens and cost); others log here. The handler's `finally` then sends the metrics. */
async function settleOrLog(req: GatewayRequest, result: GatewayResult): Promise<void> {
  if (result.after) await result.after();
  else logRequest(req, result.status);
}
