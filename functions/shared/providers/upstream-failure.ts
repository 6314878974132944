import { safeParse, type core } from '../validation/zod';
import { InvalidRequestError } from '../errors/gateway-errors';
import { UpstreamAttemptError, type FailureKind, type UpstreamFailure } from './types';

/**
 * Shared pieces of error classification. Each adapter reads its own error body; the status rules
 * common to all HTTP upstreams live here.
 */

/**
 * Reads `retry-after-ms` (ms) or `retry-after` (seconds or an HTTP date) — the headers the OpenAI and
 * Anthropic SDKs honour (providers.md §1.6).
 * @returns milliseconds to wait, or undefined when absent or unparseable.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = headers.get('retry-after');
  if (ra === null) return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The default verdict for an HTTP status, before provider-specific body codes refine it. */
export function kindForStatus(status: number): FailureKind {
  switch (true) {
    case status === 401 || status === 403 || status === 402:
      // Our upstream key is wrong or its account is out of money: the client did nothing wrong.
      return 'auth-config';
    case status === 404:
      return 'not-found';
    case status === 408 || status === 504:
      return 'timeout';
    case status === 429:
      return 'rate-limit';
    case status === 503 || status === 529:
      return 'overloaded';
    case status === 409 || status >= 500:
      return 'server';
    case status === 400 || status === 413 || status === 422:
      return 'client';
    default:
      return 'server';
  }
}

/** Whether retrying the same target can help, per kind. */
export function isRetryable(kind: FailureKind): boolean {
  switch (kind) {
    case 'rate-limit':
    case 'overloaded':
    case 'server':
    case 'timeout':
    case 'connection':
      return true;
    case 'client':
    case 'auth-config':
    case 'not-found':
    case 'context-length':
      return false;
    default:
      return false;
  }
}

/**
 * Builds the verdict. For `client` failures, the upstream's own message is passed on as a 400 so the
 * caller can fix the request (the status is normalised: 413/422 upstream become OpenAI's 400).
 */
export function makeFailure(
  kind: FailureKind,
  status: number,
  message: string,
  opts: { retryAfterMs?: number | undefined; param?: string | null; code?: string | null } = {},
): UpstreamFailure {
  const failure: UpstreamFailure = { kind, retryable: isRetryable(kind), status, message };
  if (opts.retryAfterMs !== undefined) failure.retryAfterMs = opts.retryAfterMs;
  if (kind === 'client') {
    failure.clientError = new InvalidRequestError(message, { param: opts.param ?? null, code: opts.code ?? 'invalid_request' });
  }
  return failure;
}

/**
 * OpenAI's error code for a request or answer refused by a safety system (OpenAI returns it as a 400
 * `invalid_request_error`); modelmux uses it for every upstream's content-policy refusal.
 */
export const CONTENT_POLICY_CODE = 'content_policy_violation';

/**
 * An upstream refused the content (the prompt or the answer): the client's 400, never retried or
 * sent to another model, since a fallback would silently route around the policy.
 */
export function contentPolicyFailure(status: number, message: string): UpstreamFailure {
  return makeFailure('client', status, message, { code: CONTENT_POLICY_CODE });
}

/** True for a {@link contentPolicyFailure}: a stream already under way ends with `content_filter` instead. */
export function isContentPolicyFailure(f: UpstreamFailure): boolean {
  return f.clientError?.code === CONTENT_POLICY_CODE;
}

/** A failure raised before any HTTP status: connection refused/reset, DNS, our timers. */
export function transportFailure(err: unknown, timedOut: boolean): UpstreamFailure {
  if (timedOut) return makeFailure('timeout', 0, 'upstream timed out');
  const code = errorCode(err);
  return makeFailure('connection', 0, `upstream connection failed${code ? ` (${code})` : ''}`);
}

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error; depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = e.cause;
  }
  return undefined;
}

/**
 * Reads an upstream error body: JSON-parses it (an array is unwrapped to its first element — Gemini's
 * compatibility layer wraps errors so, providers.md §3.9) and validates it with the provider's
 * tolerant `schema`.
 * @returns the parsed body, or undefined when the body is not JSON of that shape.
 */
export function parseErrorBody<S extends core.$ZodType>(bodyText: string, schema: S): core.output<S> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  if (Array.isArray(json)) json = json[0];
  const parsed = safeParse(schema, json);
  return parsed.success ? parsed.data : undefined;
}

/**
 * JSON.parse for an upstream 200 body or SSE event: text that is not JSON is the upstream answering
 * badly, a retryable `server` failure (the next target may do better). Leading whitespace is legal
 * JSON, which covers DeepSeek's keep-alive blank lines before a buffered body (providers.md §4.5).
 * @param failureMessage the log-safe failure message (never the text itself)
 * @throws UpstreamAttemptError (retryable `server`, status 200) when `text` is not JSON.
 */
export function parseUpstreamJson(text: string, failureMessage: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamAttemptError(makeFailure('server', 200, failureMessage));
  }
}
