import type { GatewayError } from '../errors/gateway-errors';

/**
 * The gateway's errors in Anthropic's shape (docs/anthropic-messages.md, "Errors"; Anthropic API
 * errors page): body `{"type":"error","error":{"type","message"},"request_id"}` and the status of each
 * type — `invalid_request_error` 400, `authentication_error` 401, `billing_error` 402,
 * `permission_error` 403, `not_found_error` 404, `request_too_large` 413, `rate_limit_error` 429,
 * `api_error` 500, `timeout_error` 504, `overloaded_error` 529. The official SDKs map the status to
 * their typed errors (`BadRequestError`, …, `RateLimitError`, `InternalServerError` for 5xx and 529)
 * and retry 429, 5xx and 529, honouring `retry-after`, which a 429 keeps.
 */

/** An Anthropic error type. */
export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** `{"type":"error","error":{…},"request_id"}`. */
export interface MessagesErrorBody {
  type: 'error';
  error: { type: MessagesErrorType; message: string };
  request_id: string;
}

/** Anthropic's status and type for a gateway error's status. 503 (every upstream busy) is Anthropic's 529 overloaded. */
export function messagesErrorKind(status: number): { status: number; type: MessagesErrorType } {
  switch (status) {
    case 401:
      return { status, type: 'authentication_error' };
    case 402:
      return { status, type: 'billing_error' };
    case 403:
      return { status, type: 'permission_error' };
    case 404:
      return { status, type: 'not_found_error' };
    case 413:
      return { status, type: 'request_too_large' };
    case 429:
      return { status, type: 'rate_limit_error' };
    case 503:
    case 529:
      return { status: 529, type: 'overloaded_error' };
    case 504:
      return { status, type: 'timeout_error' };
    default:
      return status >= 500 ? { status: 500, type: 'api_error' } : { status, type: 'invalid_request_error' };
  }
}

/** The error body of a gateway error. */
export function messagesErrorBody(err: GatewayError, requestId: string): MessagesErrorBody {
  return { type: 'error', error: { type: messagesErrorKind(err.status).type, message: err.message }, request_id: requestId };
}

/** A mid-stream failure as Anthropic's `error` event (the status is already 200). */
export function messagesErrorEvent(err: GatewayError, requestId: string): string {
  return `event: error\ndata: ${JSON.stringify(messagesErrorBody(err, requestId))}\n\n`;
}
