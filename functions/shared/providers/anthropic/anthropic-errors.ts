import type { FailureKind, UpstreamFailure } from '../types';
import { kindForStatus, makeFailure, parseErrorBody, retryAfterMs } from '../upstream-failure';
import { errorBody, type ErrorObject } from './wire';

/**
 * Classifies Anthropic errors: non-2xx bodies `{"type":"error","error":{"type","message"}}` and the
 * same object arriving as an `error` stream event after the 200 (Anthropic Messages API,
 * providers.md §2.6–2.7). The `error.type` decides; the HTTP status is the fallback.
 */

/** The prompt does not fit this target's window: a larger-window equivalent may take it. */
const CONTEXT_LENGTH = /prompt is too long|exceed context limit/i;

/**
 * Out-of-money and spend-limit answers come as 400 `invalid_request_error` ("Your credit balance is
 * too low…", "You have reached your specified API usage limits…", bodies quoted in public issue
 * threads): our account's problem, never the client's, and no retry clears it.
 */
const ACCOUNT_LIMIT = /credit balance is too low|reached your specified api usage limits|spend limit/i;

/** Tier monthly spend cap on a 429 (providers.md §2.7): retrying does not help until the month ends. */
const SPEND_CAP_CODE = 'enforced_spend_limit_reached';

/**
 * The verdict for a non-2xx Messages response. `retry-after` / `retry-after-ms` is honoured.
 * A `client` verdict carries the upstream message as an OpenAI 400 for the caller.
 */
export function classifyAnthropicError(status: number, bodyText: string, headers: Headers): UpstreamFailure {
  return failureFromErrorObject(readErrorObject(bodyText), status, retryAfterMs(headers));
}

/**
 * The verdict for an Anthropic error object (from a body, a 200 body of `type: "error"`, or an
 * `error` stream event; pass status 200 for the last two).
 */
export function failureFromErrorObject(err: ErrorObject | undefined, status: number, retryAfter?: number): UpstreamFailure {
  const type = err?.type ?? undefined;
  const message = err?.message ?? `upstream returned HTTP ${status}`;
  const kind = kindForError(type, status, message, err?.details?.error_code ?? undefined);
  // The client sees the upstream wording as is; everything else is for our logs, so name the source.
  const logMessage = kind === 'client' ? message : `anthropic ${type ?? 'error'} (HTTP ${status}): ${message}`;
  return makeFailure(kind, status, logMessage, { retryAfterMs: retryAfter });
}

/** `error.type` → failure kind (types from providers.md §2.7); unknown types fall back to the status. */
function kindForError(type: string | undefined, status: number, message: string, detailCode: string | undefined): FailureKind {
  switch (type) {
    case 'invalid_request_error':
      if (CONTEXT_LENGTH.test(message)) return 'context-length';
      if (ACCOUNT_LIMIT.test(message)) return 'auth-config';
      // Anthropic also uses this type for other 4xx; a 200 (stream event) still means the request.
      return status === 200 ? 'client' : kindForStatus(status);
    case 'authentication_error':
    case 'permission_error':
    case 'billing_error':
      return 'auth-config';
    case 'not_found_error':
      return 'not-found';
    case 'request_too_large':
      return 'client';
    case 'rate_limit_error':
      return detailCode === SPEND_CAP_CODE ? 'auth-config' : 'rate-limit';
    case 'api_error':
    case 'conflict_error':
      return 'server';
    case 'timeout_error':
      return 'timeout';
    case 'overloaded_error':
      return 'overloaded';
    default:
      // No body type, or one added after this was written: the status decides; inside a 200 it is ours to retry.
      return status === 200 ? 'server' : kindForStatus(status);
  }
}

/** The `error` object of an error body, or undefined when the body is not Anthropic's shape. */
function readErrorObject(bodyText: string): ErrorObject | undefined {
  return parseErrorBody(bodyText, errorBody)?.error ?? undefined;
}
