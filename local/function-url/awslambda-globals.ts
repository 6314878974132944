import type { BeforeFirstWriteHook } from './response-stream.js';

/**
 * The `awslambda` global as the Node.js managed runtime defines it (source:
 * aws/aws-lambda-nodejs-runtime-interface-client `src/utils/globals.ts`,
 * `src/stream/http-response-stream.ts`, `src/function/user-function-loader.ts`). Types for handler
 * code: `@types/aws-lambda` plus `functions/awslambda.d.ts`.
 */

/** Property the runtime sets on a streamified handler; value `'response'`. */
export const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
/** Property holding the `highWaterMark` option (bytes) of a streamified handler. */
export const HANDLER_HIGHWATERMARK = Symbol.for('aws.lambda.runtime.handler.streaming.highWaterMark');
const STREAM_RESPONSE = 'response';

/** Content type that tells the Function URL service a JSON prelude + 8 NUL bytes lead the stream. */
export const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
/** Length of the NUL delimiter after the prelude, bytes. */
export const PRELUDE_DELIMITER_LENGTH = 8;

/** What `HttpResponseStream.from` needs from a stream: the runtime's response stream, or ours. */
export interface PreludeTarget {
  setContentType(contentType: string): void;
  _onBeforeFirstWrite?: BeforeFirstWriteHook | undefined;
}

/** `awslambda.HttpResponseStream`: writes the metadata prelude into a response stream. */
export class HttpResponseStream {
  /**
   * Sets the stream's content type to {@link HTTP_INTEGRATION_CONTENT_TYPE} and arranges for
   * `JSON.stringify(prelude)` followed by 8 NUL bytes to be written just before the first `write()`.
   * Returns the same stream (not a new object), exactly like the runtime.
   */
  static from<T extends PreludeTarget>(underlyingStream: T, prelude: object): T {
    underlyingStream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
    // JSON.stringify escapes U+0000, so the prelude itself can never contain the delimiter.
    const metadataPrelude = JSON.stringify(prelude);
    underlyingStream._onBeforeFirstWrite = (write) => {
      write(metadataPrelude);
      write(new Uint8Array(PRELUDE_DELIMITER_LENGTH));
    };
    return underlyingStream;
  }
}

/** Second argument of `streamifyResponse`. */
export interface StreamifyOptions {
  /** `highWaterMark` of the response stream, bytes. */
  highWaterMark?: number;
}

/** Marks a handler as response-streaming and returns the same function (runtime semantics). */
export function streamifyResponse<H extends object>(handler: H, options?: StreamifyOptions): H {
  Reflect.set(handler, HANDLER_STREAMING, STREAM_RESPONSE);
  if (typeof options?.highWaterMark === 'number') Reflect.set(handler, HANDLER_HIGHWATERMARK, Math.trunc(options.highWaterMark));
  return handler;
}

/** True when `handler` went through `streamifyResponse`. */
export function isStreamingHandler(handler: unknown): boolean {
  return typeof handler === 'function' && Reflect.get(handler, HANDLER_STREAMING) === STREAM_RESPONSE;
}

/** The `highWaterMark` given to `streamifyResponse`, bytes, if any. */
export function streamingHighWaterMark(handler: unknown): number | undefined {
  if (typeof handler !== 'function') return undefined;
  const value: unknown = Reflect.get(handler, HANDLER_HIGHWATERMARK);
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** Shape of the object installed as `globalThis.awslambda`. */
export interface AwslambdaGlobal {
  streamifyResponse: typeof streamifyResponse;
  HttpResponseStream: typeof HttpResponseStream;
}

/**
 * Defines `globalThis.awslambda` unless it already exists (idempotent; a real runtime's global is
 * left alone), so a handler module that calls `awslambda.streamifyResponse` at load time can be
 * imported. Call it BEFORE importing handler modules, or import `./register.js` first. Honours the
 * runtime's escape hatch `AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA=1|true` (then nothing is defined).
 * Returns the global in force, or undefined when suppressed.
 */
export function installAwslambdaGlobals(): AwslambdaGlobal | undefined {
  const existing: unknown = Reflect.get(globalThis, 'awslambda');
  if (isAwslambdaGlobal(existing)) return existing;
  const optOut = process.env['AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA'];
  if (optOut === '1' || optOut === 'true') return undefined;
  const installed: AwslambdaGlobal = { streamifyResponse, HttpResponseStream };
  Reflect.set(globalThis, 'awslambda', installed);
  return installed;
}

function isAwslambdaGlobal(value: unknown): value is AwslambdaGlobal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'streamifyResponse') === 'function' &&
    typeof Reflect.get(value, 'HttpResponseStream') === 'function'
  );
}
