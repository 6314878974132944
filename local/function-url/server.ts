import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  buildFunctionUrlEvent,
  eventExceedsPayloadLimit,
  findPreludeDelimiter,
  functionUrlIdentity,
  MAX_PRELUDE_BYTES,
  MAX_REQUEST_PAYLOAD_BYTES,
  parsePrelude,
  readRequestBody,
  toFunctionUrlResponse,
} from './event';
import { createContext, HTTP_INTEGRATION_CONTENT_TYPE, isStreamingHandler, ResponseStream, type ResponseSink } from './runtime';

/**
 * One node:http server standing in for several Lambda Function URLs, routed by path (first match, else an
 * OpenAI-shaped 404; a real Function URL has one function and passes it every path). Per request: the
 * body (413 past 6 MiB, the function not run), the payload-2.0 event (event.ts), then a BUFFERED invoke
 * (the return value becomes the response) or a RESPONSE_STREAM invoke (bytes relayed as they come, the
 * http-integration prelude read into status and headers). A function error or timeout is the service's
 * 502 `{"Message":"Internal Server Error"}` before the first byte, a cut connection after.
 */

/** A Function URL invoke mode (Lambda `InvokeMode`). */
export type InvokeMode = 'RESPONSE_STREAM' | 'BUFFERED';

/** One function behind the stand-in. */
export interface FunctionUrlRoute {
  /** Claims a request by its path (no query string). Routes are tried in order. */
  match: (path: string) => boolean;
  /** The module's exported handler; for RESPONSE_STREAM wrapped by `awslambda.streamifyResponse`. */
  handler: unknown;
  invokeMode: InvokeMode;
  functionName: string;
  /** Function timeout, ms; default 300,000. */
  timeoutMs?: number;
  /** `context.memoryLimitInMB`; default 128. */
  memoryMb?: number;
}

/** What the stand-in reports after each invocation. */
export interface InvocationRecord {
  requestId: string;
  functionName: string;
  outcome: 'success' | 'function-error' | 'timeout';
  /** Status the client got; undefined when it got none. */
  statusCode: number | undefined;
  /** Invocation wall time, ms. */
  durationMs: number;
}

/** Options for {@link createFunctionUrlServer}. */
export interface FunctionUrlServerOptions {
  /** Where the stand-in logs what Lambda would log (timeouts, Invoke Error). Default console.error. */
  log?: (message: string) => void;
  /** Called once per invocation when it is over (a streamed one settles after its response has ended). */
  onInvocation?: (record: InvocationRecord) => void;
  /**
   * NOT what Lambda does (it gives the function no signal when the client disconnects mid-stream;
   * runtime-interface-client issue #145): destroy the handler's response stream then, so it can stop its
   * upstream work. For `npm start`, where that saves real tokens. Default false.
   */
  signalClientDisconnect?: boolean;
  /** Answers a request before any function sees it when it returns true (`npm start` serves the site so, as CloudFront does). */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

const FUNCTION_ERROR = '{"Message":"Internal Server Error"}';
const TOO_LARGE = `{"Message":"Request must be smaller than ${MAX_REQUEST_PAYLOAD_BYTES} bytes for the InvokeFunction operation"}`;
const UNKNOWN_PATH = '{"error":{"message":"Unknown path","type":"invalid_request_error","param":null,"code":null}}';

function send(res: ServerResponse, status: number, body: string, requestId?: string): void {
  if (res.headersSent || res.destroyed) return;
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...(requestId ? { 'x-amzn-requestid': requestId } : {}),
    })
    .end(body);
}

/** Creates the server. @throws TypeError when a route's handler does not match its invoke mode. */
export function createFunctionUrlServer(routes: FunctionUrlRoute[], opts: FunctionUrlServerOptions = {}): Server {
  const log = opts.log ?? ((message: string) => console.error(message));
  for (const r of routes) {
    if (isStreamingHandler(r.handler) !== (r.invokeMode === 'RESPONSE_STREAM'))
      throw new TypeError(`${r.functionName}: a streamifyResponse handler needs RESPONSE_STREAM, and only such a handler`);
  }
  const server = createServer({ noDelay: true, keepAlive: true }, (req, res) => {
    if (opts.intercept?.(req, res) === true) return;
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = routes.find((r) => r.match(path));
    if (route === undefined) return void req.resume().on('end', () => send(res, 404, UNKNOWN_PATH));
    invoke(route, req, res, log, opts).catch((error: unknown) => {
      if (!req.destroyed) log(`[function-url] request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.on('clientError', answerClientError);
  // Long enough that a benchmark client reuses connections; Node needs headersTimeout above it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

async function invoke(
  route: FunctionUrlRoute,
  req: IncomingMessage,
  res: ServerResponse,
  log: (m: string) => void,
  opts: FunctionUrlServerOptions,
): Promise<void> {
  const receivedAt = Date.now();
  const body = await readRequestBody(req, MAX_REQUEST_PAYLOAD_BYTES);
  const requestId = randomUUID();
  const event = body === undefined ? undefined : buildFunctionUrlEvent(req, body, functionUrlIdentity(route.functionName, 'us-east-1'), requestId, receivedAt);
  if (event === undefined || eventExceedsPayloadLimit(event)) return send(res, 413, TOO_LARGE);
  const timeoutMs = route.timeoutMs ?? 300_000;
  const context = createContext(route.functionName, route.memoryMb ?? 128, requestId, Date.now() + timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const startedAt = Date.now();
  const fail = (error: string): void => {
    log(`[function-url] ${requestId} ${error}`);
    if (!res.headersSent) send(res, 502, FUNCTION_ERROR, requestId);
    else res.destroy();
  };
  let outcome: InvocationRecord['outcome'] = 'success';
  try {
    if (route.invokeMode === 'RESPONSE_STREAM') {
      const relay = new StreamRelay(res, requestId);
      const stream = new ResponseStream(relay);
      relay.onBreak = (why) => {
        log(`[function-url] ${requestId}: ${why} -> 502`);
        stream.destroy();
      };
      if (opts.signalClientDisconnect === true) res.on('close', () => void (res.writableFinished || stream.destroy(new Error('client disconnected'))));
      const finished = new Promise<void>((resolve) => stream.on('finish', resolve).on('close', resolve));
      // As the runtime: the client's response ends when the stream ends; the invocation when the handler settles too.
      const run = await Promise.race([
        Promise.all([Promise.resolve().then(() => (route.handler as (...a: unknown[]) => unknown)(event, stream, context)), finished]),
        timeout,
      ]);
      if (run === 'timeout') outcome = 'timeout';
      else if (!stream.writableFinished && !res.destroyed) outcome = 'function-error';
    } else {
      const run = await Promise.race([Promise.resolve().then(() => (route.handler as (...a: unknown[]) => unknown)(event, context)), timeout]);
      if (run === 'timeout') outcome = 'timeout';
      else {
        const converted = toFunctionUrlResponse(run);
        if (!converted.ok) throw new Error(converted.reason);
        const { statusCode, headers, body: bytes } = converted.response;
        if (!res.destroyed) res.writeHead(statusCode, { ...headers, 'x-amzn-requestid': requestId, 'content-length': bytes.length }).end(bytes);
      }
    }
  } catch (error) {
    outcome = 'function-error';
    fail(`Invoke Error ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
  if (outcome === 'timeout') fail(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`);
  else if (outcome === 'function-error' && !res.writableFinished) fail('Invoke Error: Response stream is not finished.');
  opts.onInvocation?.({
    requestId,
    functionName: route.functionName,
    outcome,
    statusCode: res.headersSent ? res.statusCode : undefined,
    durationMs: Date.now() - startedAt,
  });
}

/**
 * The service's half of a streamed invocation: with the integration content type, the bytes up to the
 * 8 NUL bytes are the JSON prelude (status, headers, cookies), the rest body; else 200 with the stream's
 * content type. Each chunk goes to the client as it comes; once the client is gone, bytes are dropped.
 */
class StreamRelay implements ResponseSink {
  /** Called when the stream cannot become a response (bad or missing prelude). */
  onBreak: (why: string) => void = () => undefined;
  private prelude: Buffer | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
  ) {}

  push(chunk: Buffer, contentType: string, done: () => void): void {
    if (this.res.destroyed || this.res.writableEnded) return done();
    if (!this.res.headersSent) {
      if (contentType !== HTTP_INTEGRATION_CONTENT_TYPE) this.commit(200, { 'content-type': contentType });
      else {
        const buffer = this.prelude === undefined ? chunk : Buffer.concat([this.prelude, chunk]);
        const at = findPreludeDelimiter(buffer);
        if (at < 0) {
          this.prelude = buffer;
          if (buffer.length > MAX_PRELUDE_BYTES) this.onBreak(`no prelude delimiter in ${buffer.length} bytes`);
          return done();
        }
        const parsed = parsePrelude(buffer.subarray(0, at));
        if (parsed === undefined) return void this.onBreak('malformed http-integration prelude');
        this.commit(parsed.statusCode, parsed.headers);
        chunk = buffer.subarray(at + 8);
        // The runtime writes prelude, delimiter and first chunk back to back: headers go with that chunk.
        if (chunk.length === 0) return void setImmediate(() => (this.res.destroyed || this.res.flushHeaders(), done()));
      }
    }
    if (this.res.write(chunk)) done();
    else {
      const resume = (): void => {
        this.res.off('drain', resume).off('close', resume);
        done();
      };
      this.res.on('drain', resume).on('close', resume);
    }
  }

  finish(contentType: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (this.prelude !== undefined && !this.res.headersSent) return this.onBreak('stream ended before the prelude delimiter (end(chunk) without write()?)');
    // Nothing written: 200 without a body (with the integration type, without custom headers: runtime-interface-client issue #97).
    if (!this.res.headersSent) this.commit(200, contentType === HTTP_INTEGRATION_CONTENT_TYPE ? {} : { 'content-type': contentType });
    this.res.end();
  }

  private commit(statusCode: number, headers: OutgoingHttpHeaders): void {
    this.res.writeHead(statusCode, { ...headers, 'x-amzn-requestid': this.requestId });
  }
}

/**
 * A request Node's HTTP parser refuses never reaches a function; on AWS the Function URL service answers
 * it with its own body. Locally the client gets OpenAI's error shape (README "HTTP-level errors"): 431
 * `request_headers_too_large`, 408 `request_timeout`, else 400 `invalid_http_request`.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request_headers_too_large', 'The request headers are larger than the gateway accepts.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not received in time.']
        : [400, 'invalid_http_request', 'The request is not valid HTTP/1.1 (framing, method or a header).'];
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Starts `server` on loopback (`port` 0 = any free one): its base URL (no trailing slash) and a closer that drops every open socket. */
export function listen(server: Server, port = 0, host = '127.0.0.1'): Promise<{ url: string; close: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject).listen(port, host, () => {
      server.off('error', reject);
      const { port: bound } = server.address() as { port: number };
      const close = (): Promise<void> =>
        new Promise<void>((done, failed) => {
          server.close((error) => (error ? failed(error) : done()));
          server.closeAllConnections();
        });
      resolve({ url: `http://${host}:${bound}`, close });
    });
  });
}
