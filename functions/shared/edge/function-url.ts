import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { newRequestId } from '../http/request-id';
import type { GatewayHandler, GatewayRequest, GatewayResult, JsonResult } from '../http/types';
import { asGatewayError, toErrorBody } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import { invocationStarted, publishMetrics, recordDirectAccessRefused, recordRequest } from '../observability/metrics';
import { initTracing } from '../observability/tracer';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { DirectAccessForbiddenError, prefetchOriginSecret, verifyOrigin } from './origin-secret';

/**
 * The edge shared by both Lambda handlers: Function URL event (payload format 2.0) → GatewayRequest,
 * and any thrown error → OpenAI's error body with its status. Only the handlers import this.
 */
import { requestDeadline } from '../routing/timeouts';

/**
 * Builds the core's request from a Function URL event.
 * @param signal aborted when the client is known to be gone.
 * @param context the invocation context; its remaining time sets the request's deadline.
 */
export function fromFunctionUrlEvent(event: APIGatewayProxyEventV2, signal: AbortSignal, context?: Pick<Context, 'getRemainingTimeInMillis'>): GatewayRequest {
  const raw = event.body ?? '';
  const now = Date.now();
  invocationStarted(); // ended by finishInvocation, which every handler reaches in a `finally`
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    query: event.rawQueryString ?? '',
    headers: event.headers,
    sourceIp: event.requestContext.http.sourceIp,
    body: event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw,
    signal,
    requestId: newRequestId(now),
    receivedAt: now,
    ...(context ? { deadline: requestDeadline(now, context.getRemainingTimeInMillis()) } : {}),
  };
}

/**
 * Runs the core behind the origin check (origin-secret.ts: 403 for a direct call when CloudFront is in
 * front); a thrown error becomes its OpenAI-shaped JSON result (never a crash). Records the request's
 * `Requests` metric (and its error status) for {@link finishInvocation} to publish.
 */
export async function runCore(handler: GatewayHandler, req: GatewayRequest): Promise<GatewayResult> {
  const result = await runChecked(handler, req);
  recordRequest(result.status);
  return result;
}

async function runChecked(handler: GatewayHandler, req: GatewayRequest): Promise<GatewayResult> {
  try {
    await verifyOrigin(req.headers);
    return await handler(req);
  } catch (err) {
    const e = asGatewayError(err);
    if (e instanceof DirectAccessForbiddenError) recordDirectAccessRefused();
    if (e.status >= 500) logger.error('request failed', { requestId: req.requestId, path: req.path, status: e.status, error: err as Error });
    else logger.info('request refused', { requestId: req.requestId, path: req.path, status: e.status, code: e.code });
    const result: JsonResult = { kind: 'json', status: e.status, headers: e.headers, body: toErrorBody(e) };
    return result;
  }
}

/** The response headers of a result: content type, our request id, and the result's own. */
export function responseHeaders(result: GatewayResult, requestId: string): Record<string, string> {
  const base: Record<string, string> =
    result.kind === 'stream'
      ? { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }
      : { 'content-type': 'application/json' };
  return { ...base, ...result.headers, 'x-request-id': requestId };
}

/** One log line per request: ids, path, status, latency (ms). */
export function logRequest(req: GatewayRequest, status: number): void {
  logger.info('request', { requestId: req.requestId, method: req.method, path: req.path, status, latencyMs: Date.now() - req.receivedAt });
}

/**
 * Everything a handler module awaits at INIT (top level): the upstream keys and the origin secret
 * ({@link prefetchUpstreamCredentials}, never throws, at most 2 s) and, only when tracing is on, the
 * X-Ray tracer (observability/tracer.ts; nothing is loaded when it is off).
 */
export async function initGateway(): Promise<void> {
  await Promise.all([prefetchUpstreamCredentials(), initTracing()]);
}

/** The end of every invocation (in its handler's `finally`), after the response and the settle: publishes the metrics it recorded (EMF). */
export function finishInvocation(req: GatewayRequest): void {
  publishMetrics(req.requestId);
}

/** Longest a cold start waits for the upstream keys before INIT ends anyway (ms). */
export const CREDENTIALS_PREFETCH_MAX_WAIT_MS = 2_000;

/**
 * Fetches the upstream keys (and the origin secret, when set) during INIT, so the first request does not pay for GetSecretValue: both
 * handler modules `await` this at top level, and Lambda finishes INIT only when the module has (ESM
 * top-level await; Lambda Developer Guide, "Lambda Node.js handler", ES module initialization). Never
 * throws and never waits longer than `maxWaitMs`: a slow or failing secret must not fail INIT (10 s
 * limit); the first request then tries again (credentials.ts caches no failure) and answers 503 if the
 * keys still cannot be read. Resolves at once when no secret is configured (local runs).
 */
export async function prefetchUpstreamCredentials(maxWaitMs = CREDENTIALS_PREFETCH_MAX_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, maxWaitMs);
  });
  const fetched = Promise.all([
    loadUpstreamCredentials().then(
      () => undefined,
      (err: unknown) => logger.warn('upstream keys not readable at cold start; the first request retries', { error: err as Error }),
    ),
    prefetchOriginSecret(),
  ]);
  await Promise.race([fetched, waited]);
  clearTimeout(timer);
}
