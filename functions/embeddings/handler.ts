import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { dispatch } from '../shared/app/dispatch';
import type { GatewayRequest, GatewayResult } from '../shared/http/types';
import { finishInvocation, fromFunctionUrlEvent, initGateway, logRequest, responseHeaders, runCore } from '../shared/edge/function-url';

// Cold start: the upstream keys and the origin secret are read during INIT, not on the first request.
await initGateway();

/**
 * The embeddings Lambda behind a BUFFERED Function URL (6 MB response limit). A buffered invocation
 * returns its response only when the handler returns, so the ledger is settled before returning:
 * a frozen container must not hold an unbilled request.
 */
export const handler = async (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  const req = fromFunctionUrlEvent(event, new AbortController().signal, context);
  let result = await runCore(dispatch, req);
  if (result.kind === 'stream') {
    // A streamed chat request sent to the buffered URL: collect it (the chat URL streams it live).
    let body = '';
    for await (const frame of result.frames) body += frame;
    await settleOrLog(req, result);
    return { statusCode: result.status, headers: responseHeaders(result, req.requestId), body };
  }
  await settleOrLog(req, result);
  return { statusCode: result.status, headers: responseHeaders(result, req.requestId), body: JSON.stringify(result.body) };
};

/** A billed request logs its one line when settled (with tokens and cost); others log here. Then the metrics go out. */
async function settleOrLog(req: GatewayRequest, result: GatewayResult): Promise<void> {
  if (result.after) await result.after();
  else logRequest(req, result.status);
  finishInvocation(req);
}
