import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { dispatch } from '../shared/app/dispatch';
import { config } from '../shared/config/env';
import { finishInvocation, fromFunctionUrlEvent, initGateway, logRequest, responseHeaders, runCore } from '../shared/edge/function-url';
import { acceptsGzip, encodeBody, GZIP_HEADERS, IDENTITY_HEADERS } from '../shared/edge/response-encoding';
import { writeFrames } from '../shared/edge/stream-writer';

// INIT: every setting parsed now (config/env.ts), so a malformed variable fails the cold start naming it.
config();

// Cold start: the upstream keys and the origin secret are read during INIT, not on the first request.
await initGateway();

/**
 * The chat Lambda behind a RESPONSE_STREAM Function URL. Streams SSE chunks as they arrive; buffered
 * answers are written in one piece. Billing (`after`) runs once the last byte is written, so it adds
 * nothing to what the client waits for (the invocation stays alive until this promise settles).
 *
 * Runtime rules (functions/awslambda.d.ts): write() before end(), always end(); no disconnect signal
 * exists in Lambda, so `signal` aborts only where the host reports a closed stream (the local stand-in).
 * The stream's 'error'/'close' are listened to from the start: a host that breaks the stream while
 * the core is still routing (before the first byte) must stop the upstream attempt, and an 'error'
 * with no listener would crash the process.
 */
export const handler = awslambda.streamifyResponse(async (event: APIGatewayProxyEventV2, responseStream, context) => {
  const controller = new AbortController();
  const gone = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
  responseStream.on('error', () => controller.abort());
  responseStream.on('close', () => {
    if (!responseStream.writableFinished) controller.abort();
  });
  const req = fromFunctionUrlEvent(event, controller.signal, context);
  try {
    const result = await runCore(dispatch, req);

    // The client left before the first byte: nothing to write to, but an answer that was produced is
    // still stopped and billed by `after`.
    if (!responseStream.destroyed) {
      // gzip when the client accepts it (response-encoding.ts): streams always, buffered bodies from 1 KB.
      const gzip = acceptsGzip(req.headers);
      const headers = responseHeaders(result, req.requestId);
      if (result.kind === 'json') {
        const encoded = encodeBody(JSON.stringify(result.body), gzip);
        const out = awslambda.HttpResponseStream.from(responseStream, { statusCode: result.status, headers: { ...headers, ...encoded.headers } });
        out.write(encoded.body);
        if (!out.destroyed) out.end();
      } else {
        const out = awslambda.HttpResponseStream.from(responseStream, {
          statusCode: result.status,
          headers: { ...headers, ...(gzip ? GZIP_HEADERS : IDENTITY_HEADERS) },
        });
        await writeFrames(out, result.frames, { gzip, signal: controller.signal, gone });
      }
    }
    // A billed request logs its one line when settled (with tokens and cost); others log here.
    if (result.after) await result.after();
    else logRequest(req, result.status);
  } finally {
    finishInvocation(req);
  }
});
