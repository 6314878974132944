import type { FailureKind, UpstreamFailure } from '../types';
import { kindForStatus, makeFailure, parseErrorBody, retryAfterMs } from '../upstream-failure';
import { rpcErrorBody, type RpcError } from './wire';

/**
 * Classifies Gemini errors (Gemini API, providers.md §3.5). Body: Google RPC style
 * `{"error":{"code","message","status","details":[ErrorInfo{reason}, RetryInfo{retryDelay}, …]}}`,
 * also accepted wrapped in an array (`[{"error":{…}}]`, the form of Gemini's compatibility layer, §3.9).
 */

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

/** Gemini's wording for a prompt longer than the model's window (observed: "The input token count (N) exceeds the maximum number of tokens allowed (M)"). */
const CONTEXT_LENGTH = /exceeds the maximum number of tokens/i;

/** The `error` object of a Gemini error body (object or array-wrapped), or undefined. */
export function readRpcError(bodyText: string): RpcError | undefined {
  return parseErrorBody(bodyText, rpcErrorBody)?.error;
}

/**
 * The verdict for a non-2xx Gemini response.
 * @param status the HTTP status.
 * @param headers the response headers (`retry-after` is read when RetryInfo is absent).
 */
export function classifyGeminiError(status: number, bodyText: string, headers: Headers): UpstreamFailure {
  return failureFromRpcError(readRpcError(bodyText), status, headers);
}

/**
 * The verdict for a Google RPC error, from an error response or from an `error` inside a 200 stream
 * chunk (then `status` is the error's own `code`, or 200 when it has none).
 * `retryAfterMs` comes from RetryInfo `retryDelay` ("12s", "1.5s"), else from the headers.
 */
export function failureFromRpcError(err: RpcError | undefined, status: number, headers?: Headers): UpstreamFailure {
  const message = err?.message ?? `gemini returned HTTP ${status}`;
  const retryAfter = retryDelayMs(err) ?? (headers ? retryAfterMs(headers) : undefined);
  return makeFailure(kindFor(err, status, message), status, message, { retryAfterMs: retryAfter });
}

function kindFor(err: RpcError | undefined, status: number, message: string): FailureKind {
  const reasons = (err?.details ?? []).filter((d) => d['@type'] === ERROR_INFO).map((d) => d.reason);
  // Gemini answers a bad or expired key with 400 INVALID_ARGUMENT, not 401 (§3.5): that is our
  // configuration, and the client must neither see it as its own bad request nor lose the fallback.
  if (reasons.includes('API_KEY_INVALID') || /API key not valid/i.test(message)) return 'auth-config';
  switch (err?.status) {
    case 'INVALID_ARGUMENT':
      return CONTEXT_LENGTH.test(message) ? 'context-length' : 'client';
    case 'FAILED_PRECONDITION': // billing or region not enabled for our project (§3.5)
    case 'PERMISSION_DENIED':
    case 'UNAUTHENTICATED':
      return 'auth-config';
    case 'NOT_FOUND':
      return 'not-found';
    case 'RESOURCE_EXHAUSTED': // 402: our project's prepaid credit is depleted (providers.md §10), else a rate limit
      return status === 402 ? 'auth-config' : 'rate-limit';
    case 'INTERNAL':
      return 'server';
    case 'UNAVAILABLE':
      return 'overloaded';
    case 'DEADLINE_EXCEEDED':
      return 'timeout';
    default:
      return kindForStatus(status);
  }
}

/** RetryInfo `retryDelay` is a protobuf Duration in JSON: decimal seconds with an `s` suffix. */
function retryDelayMs(err: RpcError | undefined): number | undefined {
  const delay = err?.details?.find((d) => d['@type'] === RETRY_INFO)?.retryDelay;
  const m = delay == null ? null : /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  return m?.[1] === undefined ? undefined : Math.round(Number(m[1]) * 1000);
}
