import type { ServerResponse } from 'node:http';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { FunctionIdentity } from './context.js';

/** Everything one invocation needs; shared by the streaming and buffered paths. */
export interface InvocationInput {
  /** The module's exported handler (for streaming: wrapped by `awslambda.streamifyResponse`). */
  handler: unknown;
  event: LambdaFunctionURLEvent;
  identity: FunctionIdentity;
  /** `context.awsRequestId` = `event.requestContext.requestId` = `x-amzn-requestid`. */
  requestId: string;
  /** Function timeout, ms. */
  timeoutMs: number;
  res: ServerResponse;
  log: (message: string) => void;
  /** NOT Lambda behaviour, opt-in: destroy the response stream when the client disconnects (see server.ts). */
  signalClientDisconnect?: boolean;
}

/**
 * How an invocation went:
 * - `success`: the handler settled normally (and, streaming, ended its stream) in time.
 * - `function-error`: it threw / rejected, returned a malformed or oversized response, or broke its
 *   stream. The client got 502 before any byte, or a cut connection after.
 * - `timeout`: it ran past `timeoutMs` (logged as Lambda logs it, "Task timed out after N seconds").
 */
export type InvocationOutcome = 'success' | 'function-error' | 'timeout';

/** What the invoke path reports back to the server. */
export interface InvocationResult {
  outcome: InvocationOutcome;
  /** Status the client got; undefined if it got none (left early, or the connection was cut first). */
  statusCode: number | undefined;
  /** `errorType: errorMessage` of a function error. */
  error?: string;
  /** Epoch ms when the client disconnected before its response was complete. */
  clientDisconnectedAt?: number;
  /** Body bytes the client received. */
  bytesSent: number;
  /** Bytes written by the handler that went nowhere (client gone, or invocation already failed). */
  bytesDiscarded: number;
}

/** A timer as a promise that resolves `'timeout'`; cancel() clears it. */
export function deadline(timeoutMs: number): { promise: Promise<'timeout'>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Result of running user code: never rejects, so a late failure cannot become an unhandled rejection. */
export type Settlement = { kind: 'resolved'; value: unknown } | { kind: 'rejected'; error: unknown };

/** Wraps a promise-like into a {@link Settlement}. */
export function settle(value: PromiseLike<unknown>): Promise<Settlement> {
  return Promise.resolve(value).then(
    (resolved): Settlement => ({ kind: 'resolved', value: resolved }),
    (error: unknown): Settlement => ({ kind: 'rejected', error }),
  );
}

/** True for thenables (what the runtime checks to tell async handlers apart). */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof Reflect.get(value, 'then') === 'function'
  );
}

/** `errorType: errorMessage`, the way the runtime names an error in its `Invoke Error` log line. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `Error: ${typeof error === 'string' ? error : JSON.stringify(error) ?? String(error)}`;
}

/** Lambda's timeout log line, e.g. `Task timed out after 300.00 seconds`. */
export function timeoutMessage(timeoutMs: number): string {
  return `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`;
}
