import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isStreamingHandler } from './awslambda-globals.js';
import { invokeBuffered } from './buffered-invoke.js';
import { rememberHost } from './listen.js';
import { functionIdentity, type FunctionIdentity } from './context.js';
import { buildFunctionUrlEvent, eventExceedsPayloadLimit, functionUrlIdentity, type FunctionUrlIdentity } from './event.js';
import type { InvocationInput, InvocationResult } from './invocation.js';
import { DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_MS, MAX_REQUEST_PAYLOAD_BYTES, MAX_TIMEOUT_MS } from './limits.js';
import { readRequestBody } from './request-body.js';
import { answerClientError, sendPayloadTooLarge, sendUnknownPath } from './service-responses.js';
import { invokeStreaming } from './streaming-invoke.js';

/** A Function URL invoke mode (Lambda `InvokeMode`). */
export type InvokeMode = 'RESPONSE_STREAM' | 'BUFFERED';

/** One function behind the stand-in. */
export interface FunctionUrlRoute {
  /** Claims a request by its path (no query string). Routes are tried in order. */
  match: (path: string) => boolean;
  /** The module's exported handler; for RESPONSE_STREAM it must come from `awslambda.streamifyResponse`. */
  handler: unknown;
  invokeMode: InvokeMode;
  functionName: string;
  /** Function timeout, ms; default 300,000; at most 900,000 (Lambda's maximum). */
  timeoutMs?: number;
  /** Function memory, MB, reported by `context.memoryLimitInMB`; default 128. */
  memoryMb?: number;
  /** Receives requests no route matches (the first default route wins). */
  default?: boolean;
}

/** What the stand-in reports after each invocation (for logs, tests, and the bench). */
export interface InvocationRecord extends InvocationResult {
  requestId: string;
  functionName: string;
  invokeMode: InvokeMode;
  method: string;
  path: string;
  /** Epoch ms the request arrived. */
  receivedAt: number;
  /** Invocation wall time, ms: handler start to settle, timeout or failure (what Lambda bills). */
  durationMs: number;
}

/** Options for {@link createFunctionUrlServer}. */
export interface FunctionUrlServerOptions {
  /** Interface `listen()` binds when not given one. Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Region and account used in ARNs and domain names. Defaults: us-east-1, 000000000000. */
  region?: string;
  accountId?: string;
  /** Where the stand-in logs what Lambda would log (timeouts, Invoke Error). Default console.error. */
  log?: (message: string) => void;
  /** Called once per invocation when it is over (including ones the client walked away from). */
  onInvocation?: (record: InvocationRecord) => void;
  /**
   * NOT what Lambda does (see stream-relay.ts): when the client disconnects mid-stream, destroy the
   * handler's response stream so it sees 'error'/'close' and can stop its upstream work. For local
   * development, where stopping a real upstream saves real tokens, and for testing a handler's
   * reaction to that signal. Default false: faithful to Lambda.
   */
  signalClientDisconnect?: boolean;
  /**
   * Answers requests before any function sees them when it returns true (`npm start` serves the
   * dashboard's static files this way, as CloudFront's S3 behaviour does in AWS). Not Function URL
   * behaviour: a real Function URL passes every path to its function.
   */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

interface PreparedRoute {
  route: FunctionUrlRoute;
  timeoutMs: number;
  identity: FunctionIdentity;
  url: FunctionUrlIdentity;
  invoke: (input: InvocationInput) => Promise<InvocationResult>;
}

/** Idle keep-alive, ms: long enough that a benchmark client reuses connections. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * One node:http server standing in for several Lambda Function URLs, routed by path (first match,
 * else the first `default` route, else an OpenAI-shaped 404; a real Function URL has one function
 * and passes it every path). Per request: read the body (413 past 6 MiB, function not run), build
 * the v2.0 event and context, invoke per `invokeMode`. Keep-alive on, Nagle off.
 *
 * Throws TypeError when a route's handler does not match its mode (a streamified handler under
 * BUFFERED or a plain one under RESPONSE_STREAM): what Lambda does then is undocumented, so the
 * stand-in refuses rather than guess. Handlers must be imported after `installAwslambdaGlobals()`.
 */
export function createFunctionUrlServer(routes: FunctionUrlRoute[], opts: FunctionUrlServerOptions = {}): Server {
  const region = opts.region ?? 'us-east-1';
  const accountId = opts.accountId ?? '000000000000';
  const log = opts.log ?? ((message: string) => console.error(message));
  const prepared = routes.map((route) => prepare(route, region, accountId));
  const fallback = prepared.find((p) => p.route.default === true);

  const server = createServer({ noDelay: true, keepAlive: true }, (req, res) => {
    if (opts.intercept?.(req, res) === true) return;
    const target = req.url ?? '/';
    const queryAt = target.indexOf('?');
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    const chosen = prepared.find((p) => p.route.match(path)) ?? fallback;
    if (chosen === undefined) {
      req.resume();
      sendUnknownPath(res);
      return;
    }
    handle(chosen, req, res, path, log, opts.onInvocation, opts.signalClientDisconnect === true).catch((error: unknown) => {
      // A client that aborts its own upload is not worth a log line.
      if (!req.destroyed) log(`[function-url] request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Node requires headersTimeout > keepAliveTimeout, or a request racing the idle timer is dropped.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  rememberHost(server, opts.host ?? '127.0.0.1');
  return server;
}

function prepare(route: FunctionUrlRoute, region: string, accountId: string): PreparedRoute {
  const streaming = isStreamingHandler(route.handler);
  if (typeof route.handler !== 'function') throw new TypeError(`${route.functionName}: handler is not a function`);
  if (route.invokeMode === 'RESPONSE_STREAM' && !streaming) {
    throw new TypeError(`${route.functionName}: RESPONSE_STREAM needs a handler wrapped by awslambda.streamifyResponse`);
  }
  if (route.invokeMode === 'BUFFERED' && streaming) {
    throw new TypeError(`${route.functionName}: a streamifyResponse handler needs invokeMode RESPONSE_STREAM`);
  }
  const timeoutMs = route.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new RangeError(`${route.functionName}: timeoutMs must be in (0, ${MAX_TIMEOUT_MS}]`);
  }
  return {
    route,
    timeoutMs,
    identity: functionIdentity(route.functionName, route.memoryMb ?? DEFAULT_MEMORY_MB, region, accountId),
    url: functionUrlIdentity(route.functionName, region),
    invoke: route.invokeMode === 'RESPONSE_STREAM' ? invokeStreaming : invokeBuffered,
  };
}

async function handle(
  target: PreparedRoute,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  log: (message: string) => void,
  onInvocation: ((record: InvocationRecord) => void) | undefined,
  signalClientDisconnect: boolean,
): Promise<void> {
  const receivedAt = Date.now();
  const body = await readRequestBody(req, MAX_REQUEST_PAYLOAD_BYTES);
  const requestId = randomUUID();
  const event = body === undefined ? undefined : buildFunctionUrlEvent(req, body, target.url, requestId, receivedAt);
  if (event === undefined || eventExceedsPayloadLimit(event)) {
    sendPayloadTooLarge(res);
    return;
  }
  const startedAt = Date.now();
  const result = await target.invoke({
    handler: target.route.handler,
    event,
    identity: target.identity,
    requestId,
    timeoutMs: target.timeoutMs,
    res,
    log,
    signalClientDisconnect,
  });
  onInvocation?.({
    ...result,
    requestId,
    functionName: target.route.functionName,
    invokeMode: target.route.invokeMode,
    method: req.method ?? 'GET',
    path,
    receivedAt,
    durationMs: Date.now() - startedAt,
  });
}
