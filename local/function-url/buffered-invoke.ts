import { toFunctionUrlResponse } from './buffered-response.js';
import { createContext } from './context.js';
import {
  deadline,
  describeError,
  isPromiseLike,
  settle,
  timeoutMessage,
  type InvocationInput,
  type InvocationResult,
  type Settlement,
} from './invocation.js';
import { sendFunctionError } from './service-responses.js';

/**
 * One BUFFERED invocation: `handler(event, context, callback)` like the runtime's non-streaming
 * path (aws-lambda-nodejs-runtime-interface-client `src/Runtime.js` handleOnceNonStreaming). The
 * first of: the returned promise settling, the callback, or `context.succeed/fail/done` decides the
 * result. A handler that returns a non-promise and never calls back waits for the timeout (the
 * runtime would wait for an empty event loop, which a shared server never has).
 * Result -> HTTP per `buffered-response.ts`; error, timeout or malformed output -> 502.
 * Client disconnect: Lambda does not cancel the invocation either; it runs, its response is
 * dropped, and the record says when the client left.
 */
export async function invokeBuffered(input: InvocationInput): Promise<InvocationResult> {
  const { handler, event, identity, requestId, timeoutMs, res, log } = input;
  let clientDisconnectedAt: number | undefined;
  res.on('close', () => {
    if (res.writableFinished || clientDisconnectedAt !== undefined) return;
    clientDisconnectedAt = Date.now();
    log(`[function-url] ${requestId}: client disconnected before the response; as in Lambda the function runs on (billed)`);
  });

  let complete: (settlement: Settlement) => void = () => undefined;
  const completion = new Promise<Settlement>((resolve) => {
    complete = resolve;
  });
  const callback = (error: unknown, value?: unknown): void =>
    complete(error === null || error === undefined ? { kind: 'resolved', value } : { kind: 'rejected', error });
  const context = createContext(identity, requestId, Date.now() + timeoutMs, callback);
  const timer = deadline(timeoutMs);

  if (typeof handler !== 'function') {
    complete({ kind: 'rejected', error: new TypeError('handler is not a function') });
  } else {
    try {
      const returned: unknown = Reflect.apply(handler, undefined, [event, context, callback]);
      if (isPromiseLike(returned)) void settle(returned).then(complete);
    } catch (thrown) {
      complete({ kind: 'rejected', error: thrown });
    }
  }
  const run = await Promise.race([completion, timer.promise]);
  timer.cancel();

  const result: InvocationResult = { outcome: 'success', statusCode: undefined, bytesSent: 0, bytesDiscarded: 0 };
  if (run === 'timeout') {
    result.outcome = 'timeout';
    log(`[function-url] ${requestId} ${timeoutMessage(timeoutMs)}`);
  } else if (run.kind === 'rejected') {
    result.outcome = 'function-error';
    result.error = describeError(run.error);
    log(`[function-url] ${requestId} Invoke Error ${result.error}`);
  } else {
    const conversion = toFunctionUrlResponse(run.value);
    if (conversion.ok) {
      const { statusCode, headers, body } = conversion.response;
      headers['x-amzn-requestid'] = requestId;
      // A buffered response has a known length (the doc's examples show content-length); without it
      // writeHead would commit Node to chunked encoding.
      headers['content-length'] = body.length;
      if (!res.destroyed) {
        res.writeHead(statusCode, headers);
        res.end(body);
        result.statusCode = statusCode;
        result.bytesSent = body.length;
      } else {
        result.bytesDiscarded = body.length;
      }
    } else {
      result.outcome = 'function-error';
      result.error = `Error: ${conversion.reason}`;
      log(`[function-url] ${requestId} malformed function response: ${conversion.reason} -> 502`);
    }
  }
  if (result.outcome !== 'success' && !res.destroyed) {
    sendFunctionError(res, requestId);
    result.statusCode = 502;
  }
  if (clientDisconnectedAt !== undefined) result.clientDisconnectedAt = clientDisconnectedAt;
  return result;
}
