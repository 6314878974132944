import { Writable } from 'node:stream';

/**
 * The `responseStream` a streaming handler receives, built to behave like the managed runtime's
 * (aws/aws-lambda-nodejs-runtime-interface-client `src/stream/response-stream.ts`): there it is an
 * HTTP/1.1 chunked request to the local Runtime API; here the bytes go to a {@link ResponseSink}
 * that plays the Function URL service. Behaviours kept on purpose:
 * - `setContentType` throws once `write()` has been called ("Cannot set content-type, too late.").
 * - `write()` JSON-stringifies anything that is not a string / Buffer / Uint8Array.
 * - `HttpResponseStream.from` installs `_onBeforeFirstWrite`, which runs on the first `write()` only.
 *   `end(chunk)` does not go through `write()` (in the runtime it is `ClientRequest.end`), so ending
 *   with a chunk and no prior `write()` skips the prelude (runtime-interface-client issue #97).
 * - Nothing happens on this stream when the HTTP client disconnects (see `stream-relay.ts`).
 */

/** Content type of a stream whose handler never called `setContentType`. */
export const DEFAULT_STREAM_CONTENT_TYPE = 'application/octet-stream';

/** Thrown by `setContentType` after the first write; the runtime's error of the same name. */
export class InvalidStreamingOperation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidStreamingOperation';
  }
}

/** Where the response bytes go: the Function URL side of the stream. */
export interface ResponseSink {
  /** Accepts one chunk. `contentType` is the stream's content type at that moment. False = wait for drain. */
  push(chunk: Buffer, contentType: string): boolean;
  /** Calls `done` once the sink can take more (immediately if it already can). */
  whenWritable(done: () => void): void;
  /** Groups several pushes into one socket write. */
  cork(): void;
  uncork(): void;
  /** The handler ended the stream; every pushed chunk has been accepted. */
  finish(contentType: string): void;
  /** The stream broke off (destroyed) before it finished. */
  abort(reason: string): void;
}

/** The hook `HttpResponseStream.from` installs; `write` sends a chunk ahead of the caller's first one. */
export type BeforeFirstWriteHook = (write: (chunk: string | Uint8Array) => void) => void;

type WriteCallback = (error?: Error | null) => void;

/** The Writable handed to streaming handlers. `highWaterMark` in bytes (streamifyResponse option). */
export class ResponseStream extends Writable {
  /** Set by `HttpResponseStream.from`; same property name as the runtime's. */
  _onBeforeFirstWrite: BeforeFirstWriteHook | undefined = undefined;
  private contentType = DEFAULT_STREAM_CONTENT_TYPE;
  private writeCalled = false;

  constructor(
    private readonly sink: ResponseSink,
    highWaterMark?: number,
  ) {
    super(highWaterMark === undefined ? {} : { highWaterMark });
  }

  /** Sets the content type the Function URL service sees; only before the first `write()`. */
  setContentType(contentType: string): void {
    if (this.writeCalled) throw new InvalidStreamingOperation('Cannot set content-type, too late.');
    this.contentType = contentType;
  }

  override write(chunk: unknown, encodingOrCallback?: BufferEncoding | WriteCallback, callback?: WriteCallback): boolean {
    const data = typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : JSON.stringify(chunk);
    if (!this.writeCalled && typeof this._onBeforeFirstWrite === 'function') {
      this._onBeforeFirstWrite((early) => {
        super.write(early);
      });
    }
    const result =
      typeof encodingOrCallback === 'string'
        ? super.write(data, encodingOrCallback, callback)
        : super.write(data, encodingOrCallback);
    this.writeCalled = true;
    return result;
  }

  override _write(chunk: unknown, _encoding: BufferEncoding, done: WriteCallback): void {
    if (this.sink.push(toBuffer(chunk), this.contentType)) done();
    else this.sink.whenWritable(() => done());
  }

  override _writev(chunks: Array<{ chunk: unknown; encoding: BufferEncoding }>, done: WriteCallback): void {
    let writable = true;
    this.sink.cork();
    for (const { chunk } of chunks) writable = this.sink.push(toBuffer(chunk), this.contentType) && writable;
    this.sink.uncork();
    if (writable) done();
    else this.sink.whenWritable(() => done());
  }

  override _final(done: WriteCallback): void {
    this.sink.finish(this.contentType);
    done();
  }

  override _destroy(error: Error | null, done: WriteCallback): void {
    // autoDestroy also lands here after a normal finish; only a stream destroyed mid-way is a break.
    if (!this.writableFinished) this.sink.abort(error === null ? 'response stream destroyed' : error.message);
    done(error);
  }
}

function toBuffer(chunk: unknown): Buffer {
  // Writable (decodeStrings, not objectMode) already hands _write Buffers; the check keeps types honest.
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
}
