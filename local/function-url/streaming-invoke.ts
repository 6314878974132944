import { streamingHighWaterMark } from './awslambda-globals.js';
import { createContext } from './context.js';
import {
  deadline,
  describeError,
  isPromiseLike,
  settle,
  timeoutMessage,
  type InvocationInput,
  type InvocationOutcome,
  type InvocationResult,
} from './invocation.js';
import { ResponseStream } from './response-stream.js';
import { StreamRelay } from './stream-relay.js';

/**
 * One RESPONSE_STREAM invocation, sequenced like the runtime's StreamingInvokeProcessor
 * (aws-lambda-nodejs-runtime-interface-client `src/runtime/streaming-invoke-processor.ts`):
 * 1. call `handler(event, responseStream, context)`; a non-promise return is an error
 *    ("Streaming does not support non-async handlers.");
 * 2. await the promise; then wait until the stream has ENDED. A handler that resolves with its
 *    stream open hangs until the timeout, as in Lambda (runtime-interface-client issue #95);
 * 3. a throw / rejection is a function error: 502 if the client has seen nothing, else a cut.
 *
 * The client's response ends when the handler ends the stream, not when the handler returns: work
 * after `end()` (e.g. billing) runs with the client already served, and still counts against the
 * timeout. On timeout the stand-in cannot kill user code: later writes are dropped and
 * `context.getRemainingTimeInMillis()` goes negative. Client disconnect: see `stream-relay.ts`.
 */
export async function invokeStreaming(input: InvocationInput): Promise<InvocationResult> {
  const { handler, event, identity, requestId, timeoutMs, res, log } = input;
  const relay = new StreamRelay(res, requestId, log);
  const stream = new ResponseStream(relay, streamingHighWaterMark(handler));
  if (input.signalClientDisconnect === true) {
    // Opt-in, not Lambda: let the handler see the disconnect as a broken stream ('error' + 'close').
    relay.onClientDisconnect = () => stream.destroy(new Error('client disconnected'));
  }
  const context = createContext(identity, requestId, Date.now() + timeoutMs);
  const timer = deadline(timeoutMs);

  let outcome: InvocationOutcome = 'success';
  let error: string | undefined;
  const run = await Promise.race([settle(callHandler(handler, [event, stream, context])), timer.promise]);
  if (run === 'timeout') {
    outcome = 'timeout';
  } else if (run.kind === 'rejected') {
    outcome = 'function-error';
    error = describeError(run.error);
  } else {
    if (run.value !== undefined) log(`[function-url] ${requestId}: Streaming handlers ignore return values.`);
    if (!stream.writableEnded && !stream.destroyed) {
      log(`[function-url] ${requestId}: handler resolved without ending its response stream; Lambda keeps the connection open until the function times out`);
    }
    // end() may have been called with writes still queued: like the runtime, wait for the stream to finish.
    if (!stream.writableFinished && !stream.destroyed) {
      if ((await Promise.race([ended(stream), timer.promise])) === 'timeout') outcome = 'timeout';
    }
    if (stream.destroyed && !stream.writableFinished && relay.clientDisconnectedAt === undefined) {
      outcome = 'function-error';
      error = 'Error: Response stream is not finished.';
    }
  }
  timer.cancel();

  if (outcome === 'timeout') log(`[function-url] ${requestId} ${timeoutMessage(timeoutMs)}`);
  if (outcome === 'function-error') log(`[function-url] ${requestId} Invoke Error ${error ?? ''}`);
  if (outcome !== 'success') relay.fail();

  const result: InvocationResult = {
    outcome,
    statusCode: relay.statusCode,
    bytesSent: relay.bytesSent,
    bytesDiscarded: relay.bytesDiscarded,
  };
  if (error !== undefined) result.error = error;
  if (relay.clientDisconnectedAt !== undefined) result.clientDisconnectedAt = relay.clientDisconnectedAt;
  return result;
}

/** Calls user code; a synchronous throw or a non-promise return become a rejected promise. */
function callHandler(handler: unknown, args: unknown[]): Promise<unknown> {
  if (typeof handler !== 'function') return Promise.reject(new TypeError('handler is not a function'));
  let returned: unknown;
  try {
    returned = Reflect.apply(handler, undefined, args);
  } catch (thrown) {
    return Promise.reject(thrown);
  }
  if (!isPromiseLike(returned)) return Promise.reject(new Error('Streaming does not support non-async handlers.'));
  return Promise.resolve(returned);
}

/** Resolves once the stream has finished or been destroyed (never rejects). */
function ended(stream: ResponseStream): Promise<'ended'> {
  return new Promise((resolve) => {
    if (stream.writableFinished || stream.destroyed) return resolve('ended');
    const done = (): void => resolve('ended');
    stream.once('finish', done);
    stream.once('close', done);
  });
}
