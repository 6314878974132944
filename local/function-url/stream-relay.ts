import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { HTTP_INTEGRATION_CONTENT_TYPE } from './awslambda-globals.js';
import { findPreludeDelimiter, parsePrelude } from './http-integration-prelude.js';
import { MAX_PRELUDE_BYTES, MAX_STREAMED_RESPONSE_BYTES } from './limits.js';
import type { ResponseSink } from './response-stream.js';
import { sendFunctionError } from './service-responses.js';

/**
 * The Function URL service's half of a RESPONSE_STREAM invocation: takes the bytes the handler
 * writes and relays them to the HTTP client AS THEY ARRIVE (one `res.write` per chunk, no
 * re-buffering; the server runs with Nagle off).
 *
 * - Integration content type: bytes up to the 8-NUL delimiter are the JSON prelude -> status,
 *   headers, `set-cookie`; everything after is body. Otherwise: 200 with the stream's content type.
 * - Stream ended with nothing written: 200, no body (with the integration type: no custom headers,
 *   runtime-interface-client issue #97). Bytes but no delimiter, or a bad prelude: 502.
 * - {@link fail} (handler error, timeout, destroyed stream): 502 if nothing reached the client yet,
 *   else the connection is cut so the client sees a truncated body, never a clean end.
 *
 * CLIENT DISCONNECT (what real Lambda does, and so what this does): the handler gets NO signal. No
 * 'close' or 'error' on its response stream, writes keep succeeding (the bytes are dropped), and the
 * invocation runs to completion or timeout and is billed for all of it. Sources:
 * aws-lambda-nodejs-runtime-interface-client issue #145 (no event on the stream when the client
 * aborts; 'close' fires only on end()), opennextjs-aws PR #952 (same finding), Lambda Developer Guide
 * "Response streaming for Lambda functions" (a disconnecting client does not interrupt or stop the
 * streamed response; the full duration is billed). The disconnect is visible only to the stand-in's
 * operator, through {@link clientDisconnectedAt} / {@link bytesDiscarded} in the invocation record.
 */
export class StreamRelay implements ResponseSink {
  /** Wall-clock ms when the client went away mid-response, if it did. */
  clientDisconnectedAt: number | undefined;
  /** Bytes the handler wrote after the client left (or after the invocation failed), dropped. */
  bytesDiscarded = 0;
  /** Body bytes relayed to the client (prelude excluded). */
  bytesSent = 0;
  /** HTTP status sent to the client, once decided. */
  statusCode: number | undefined;
  /** Opt-in hook (not Lambda behaviour): called once when the client disconnects mid-response. */
  onClientDisconnect: (() => void) | undefined;

  private state: 'idle' | 'prelude' | 'body' | 'ended' | 'discarding' = 'idle';
  private prelude: Buffer | undefined;
  private drainWaiters: Array<() => void> = [];
  private headersPending = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
    private readonly log: (message: string) => void,
  ) {
    res.on('drain', () => this.releaseWaiters());
    res.on('close', () => {
      if (res.writableFinished || this.state === 'discarding' || this.state === 'ended') return;
      this.clientDisconnectedAt = Date.now();
      this.state = 'discarding';
      this.releaseWaiters();
      if (this.onClientDisconnect) {
        this.log(`[function-url] ${requestId}: client disconnected mid-response; signalling the handler (opt-in, not Lambda behaviour)`);
        this.onClientDisconnect();
      } else {
        this.log(`[function-url] ${requestId}: client disconnected mid-response; as in Lambda the function gets no signal and runs on (billed)`);
      }
    });
  }

  /** True once the client has the complete response (or the relay gave up on it). */
  get settled(): boolean {
    return this.state === 'ended' || this.state === 'discarding';
  }

  push(chunk: Buffer, contentType: string): boolean {
    switch (this.state) {
      case 'discarding':
      case 'ended':
        this.bytesDiscarded += chunk.length;
        return true;
      case 'idle':
        if (contentType === HTTP_INTEGRATION_CONTENT_TYPE) {
          this.state = 'prelude';
          return this.collectPrelude(chunk);
        }
        this.commit(200, { 'content-type': contentType });
        return this.forward(chunk);
      case 'prelude':
        return this.collectPrelude(chunk);
      case 'body':
        return this.forward(chunk);
    }
  }

  whenWritable(done: () => void): void {
    if (this.state === 'discarding' || this.state === 'ended' || !this.res.writableNeedDrain) done();
    else this.drainWaiters.push(done);
  }

  cork(): void {
    this.res.cork();
  }

  uncork(): void {
    this.res.uncork();
  }

  finish(contentType: string): void {
    if (this.state === 'idle') {
      this.commit(200, contentType === HTTP_INTEGRATION_CONTENT_TYPE ? {} : { 'content-type': contentType });
    } else if (this.state === 'prelude') {
      this.log(`[function-url] ${this.requestId}: stream ended before the prelude delimiter (end(chunk) without write()?) -> 502`);
      this.fail();
      return;
    }
    if (this.state === 'body') this.res.end();
    if (this.state !== 'discarding') this.state = 'ended';
  }

  abort(reason: string): void {
    this.log(`[function-url] ${this.requestId}: response stream broke off (${reason})`);
    this.fail();
  }

  /** The invocation failed: 502 if the client has seen nothing yet, else cut the connection. */
  fail(): void {
    if (this.state === 'ended' || this.state === 'discarding') return;
    this.state = 'discarding';
    if (this.statusCode === undefined) {
      this.statusCode = 502;
      sendFunctionError(this.res, this.requestId);
    } else {
      this.res.destroy();
    }
    this.releaseWaiters();
  }

  private collectPrelude(chunk: Buffer): boolean {
    const previous = this.prelude?.length ?? 0;
    const buffer = this.prelude === undefined ? chunk : Buffer.concat([this.prelude, chunk]);
    const at = findPreludeDelimiter(buffer, previous);
    if (at < 0) {
      if (buffer.length > MAX_PRELUDE_BYTES) {
        this.log(`[function-url] ${this.requestId}: no prelude delimiter in ${buffer.length} bytes -> 502`);
        this.fail();
      } else {
        this.prelude = buffer;
      }
      return true;
    }
    this.prelude = undefined;
    const parsed = parsePrelude(buffer.subarray(0, at));
    if (parsed === undefined) {
      this.log(`[function-url] ${this.requestId}: malformed http-integration prelude -> 502`);
      this.fail();
      return true;
    }
    this.commit(parsed.statusCode, parsed.headers);
    const rest = buffer.subarray(at + 8);
    if (rest.length > 0) return this.forward(rest);
    // The runtime writes prelude, delimiter and first chunk back to back: send headers with that
    // chunk when it follows in the same tick, on their own otherwise.
    this.headersPending = true;
    process.nextTick(() => {
      if (this.headersPending && this.state === 'body') this.res.flushHeaders();
      this.headersPending = false;
    });
    return true;
  }

  private commit(statusCode: number, headers: OutgoingHttpHeaders): void {
    this.statusCode = statusCode;
    headers['x-amzn-requestid'] = this.requestId;
    this.res.writeHead(statusCode, headers);
    this.state = 'body';
  }

  private forward(chunk: Buffer): boolean {
    this.headersPending = false;
    this.bytesSent += chunk.length;
    if (this.bytesSent > MAX_STREAMED_RESPONSE_BYTES) {
      this.log(`[function-url] ${this.requestId}: streamed response over ${MAX_STREAMED_RESPONSE_BYTES} bytes -> cut`);
      this.fail();
      return true;
    }
    return this.res.write(chunk);
  }

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    if (waiters.length === 0) return;
    this.drainWaiters = [];
    for (const done of waiters) done();
  }
}
