/**
 * Native Anthropic error bodies: `{"type":"error","error":{"type","message"},"request_id"}` with the
 * `request-id` header (providers.md §2.7).
 */
import type { JsonReply } from './deliver.js';
import { anthropicContextMessage } from './provider-errors.js';
import { type Problem, retryHeaders } from './types.js';

const TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error',
  404: 'not_found_error', 409: 'conflict_error', 413: 'request_too_large', 429: 'rate_limit_error',
  500: 'api_error', 504: 'timeout_error', 529: 'overloaded_error',
};

const STATUS_MESSAGES: Record<number, string> = {
  429: 'Number of request tokens has exceeded your per-minute rate limit.',
  500: 'Internal server error',
  529: 'Overloaded',
};

function describe(p: Problem): { status: number; message: string } {
  switch (p.kind) {
    case 'auth':
      return { status: 401, message: p.reason === 'missing' ? 'x-api-key header is required' : 'invalid x-api-key' };
    case 'model-not-found':
      return { status: 404, message: `model: ${p.model}` };
    case 'bad-request':
      return { status: 400, message: p.message };
    case 'no-route':
      return { status: 404, message: 'Not Found' };
    case 'context-length':
      return { status: 400, message: anthropicContextMessage(p) };
    case 'status':
      return { status: p.status, message: STATUS_MESSAGES[p.status] ?? `Simulated HTTP ${p.status}.` };
  }
}

/** The `error.type` Anthropic uses for an HTTP status. */
export function anthropicErrorType(status: number): string {
  return TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export function renderAnthropicError(p: Problem, requestId: string): JsonReply {
  const { status, message } = describe(p);
  return {
    kind: 'json',
    status,
    headers: { 'request-id': requestId, ...retryHeaders(p) },
    body: { type: 'error', error: { type: anthropicErrorType(status), message }, request_id: requestId },
  };
}

/** The mid-stream `error` event payload (providers.md §2.6). */
export function anthropicStreamError(requestId: string): unknown {
  return { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: requestId };
}
