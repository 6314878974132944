import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { accountDispatch } from '../shared/account-api/router';
import { config } from '../shared/config/env';
import { finishInvocation, fromFunctionUrlEvent, logRequest, responseHeaders, runCore } from '../shared/edge/function-url';
import { prefetchSigningKeys } from '../shared/identity/verify-token';

// Cold start: the user pool's signing keys are fetched during INIT, not on the first request.
// INIT: every setting parsed now (config/env.ts), so a malformed variable fails the cold start naming it.
config();
await prefetchSigningKeys();

/**
 * The account Lambda behind a BUFFERED Function URL: the account API (Cognito JWT), `/config.json`.
 * Nothing here is billed, so the answer is returned as soon as it is ready. Its metrics (`Requests`,
 * 4xx/5xx, direct calls refused) are flushed at the end of every invocation, like the gateway's.
 */
export const handler = async (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  const req = fromFunctionUrlEvent(event, new AbortController().signal, context);
  try {
    const result = await runCore(accountDispatch, req);
    logRequest(req, result.status);
    if (result.kind === 'stream') throw new Error('the account API never streams');
    return { statusCode: result.status, headers: responseHeaders(result, req.requestId), body: JSON.stringify(result.body) };
  } finally {
    finishInvocation(req);
  }
};
