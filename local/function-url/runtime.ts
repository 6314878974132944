import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

/**
 * What the Lambda Node.js managed runtime gives a handler, as far as modelmux's handlers use it (source:
 * aws/aws-lambda-nodejs-runtime-interface-client `src/utils/globals.ts`, `src/stream/*.ts`,
 * `src/context/context-builder.ts`): the `awslambda` global, the response stream and the context. The
 * runtime itself is proven by test/lib/lambda-runtime.test.ts (the real `aws-lambda-ric`); this is the
 * thin stand-in `npm start` and the integration tests run the handlers in.
 */

/** Content type that tells the Function URL service a JSON prelude + 8 NUL bytes lead the stream. */
export const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');

/** The hook `HttpResponseStream.from` installs; `write` sends a chunk ahead of the caller's first one. */
type BeforeFirstWriteHook = (write: (chunk: string | Uint8Array) => void) => void;

/**
 * `awslambda.HttpResponseStream.from`: sets the integration content type and writes
 * `JSON.stringify(prelude)` + 8 NUL bytes just before the first `write()` (not on `end(chunk)`, as in
 * the runtime: runtime-interface-client issue #97). Returns the same stream.
 */
class HttpResponseStream {
  static from<T extends { setContentType(type: string): void; _onBeforeFirstWrite?: BeforeFirstWriteHook | undefined }>(stream: T, prelude: object): T {
    stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
    const metadata = JSON.stringify(prelude);
    stream._onBeforeFirstWrite = (write) => {
      write(metadata);
      write(new Uint8Array(8));
    };
    return stream;
  }
}

/** Marks a handler as response-streaming and returns the same function (runtime semantics). */
function streamifyResponse<H extends object>(handler: H): H {
  Reflect.set(handler, HANDLER_STREAMING, 'response');
  return handler;
}

/** True when `handler` went through `streamifyResponse`. */
export function isStreamingHandler(handler: unknown): boolean {
  return typeof handler === 'function' && Reflect.get(handler, HANDLER_STREAMING) === 'response';
}

/**
 * Defines `globalThis.awslambda` unless a runtime's is there, so a handler module that calls
 * `awslambda.streamifyResponse` at load time can be imported. Call it BEFORE importing handlers.
 */
export function installAwslambdaGlobals(): void {
  const existing: unknown = Reflect.get(globalThis, 'awslambda');
  if (typeof existing === 'object' && existing !== null && typeof Reflect.get(existing, 'streamifyResponse') === 'function') return;
  Reflect.set(globalThis, 'awslambda', { streamifyResponse, HttpResponseStream });
}

/** Where the response stream's bytes go (the Function URL side). */
export interface ResponseSink {
  /** One chunk, with the stream's content type then; calls `done` once the sink can take more. */
  push(chunk: Buffer, contentType: string, done: () => void): void;
  /** The handler ended the stream. */
  finish(contentType: string): void;
}

/**
 * The `responseStream` a streaming handler receives. As the runtime's: `setContentType` throws after the
 * first `write()`; `HttpResponseStream.from`'s hook runs on the first `write()` only; no event when the
 * HTTP client disconnects (the invocation runs on, billed: runtime-interface-client issue #145; the Developer Guide's "Response
 * streaming" page).
 */
export class ResponseStream extends Writable {
  _onBeforeFirstWrite: BeforeFirstWriteHook | undefined = undefined;
  private contentType = 'application/octet-stream';
  private written = false;

  constructor(private readonly sink: ResponseSink) {
    super();
  }

  setContentType(contentType: string): void {
    if (this.written) throw new Error('Cannot set content-type, too late.');
    this.contentType = contentType;
  }

  override write(chunk: unknown, encodingOrCallback?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean {
    if (!this.written) this._onBeforeFirstWrite?.((early) => super.write(early));
    this.written = true;
    const data = typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : JSON.stringify(chunk);
    return typeof encodingOrCallback === 'string' ? super.write(data, encodingOrCallback, callback) : super.write(data, encodingOrCallback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.sink.push(chunk, this.contentType, done);
  }

  override _final(done: () => void): void {
    this.sink.finish(this.contentType);
    done();
  }
}

/** The invocation's context: ids and names as the runtime sets them; remaining time = deadline − now (ms, may go negative). */
export function createContext(functionName: string, memoryMb: number, awsRequestId: string, deadline: number): Context {
  const unsupported = (): never => {
    throw new TypeError('context.done/succeed/fail are not supported by the local stand-in');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${awsRequestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
