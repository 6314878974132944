/**
 * Gemini errors in the Google RPC shape `{"error":{"code","message","status","details"}}`
 * (providers.md §3.5); a bad key is 400 INVALID_ARGUMENT with reason API_KEY_INVALID.
 */
import type { JsonReply } from './deliver.js';
import { geminiContextMessage } from './provider-errors.js';
import { type Problem, retryHeaders } from './types.js';

const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL', 501: 'NOT_IMPLEMENTED', 503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const STATUS_MESSAGES: Record<number, string> = {
  429: 'You exceeded your current quota, please check your plan and billing details.',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'Deadline expired before operation could complete.',
};

/** The Google RPC error object (the value of the top-level `error` key). */
export interface GoogleRpcError {
  code: number;
  message: string;
  status: string;
  details?: unknown[];
}

function describe(p: Problem): GoogleRpcError {
  switch (p.kind) {
    case 'auth':
      if (p.reason === 'missing') {
        return { code: 403, status: 'PERMISSION_DENIED', message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API." };
      }
      return {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: 'API key not valid. Please pass a valid API key.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }],
      };
    case 'model-not-found':
      return { code: 404, status: 'NOT_FOUND', message: `models/${p.model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.` };
    case 'bad-request':
      return { code: 400, status: 'INVALID_ARGUMENT', message: p.message };
    case 'no-route':
      return { code: 404, status: 'NOT_FOUND', message: `Method not found: ${p.method} ${p.path}` };
    case 'context-length':
      return { code: 400, status: 'INVALID_ARGUMENT', message: geminiContextMessage(p) };
    case 'status': {
      const error: GoogleRpcError = { code: p.status, status: STATUSES[p.status] ?? (p.status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION'), message: STATUS_MESSAGES[p.status] ?? `Simulated HTTP ${p.status}.` };
      if (p.status === 429 && p.retryAfterSeconds !== undefined) {
        error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${p.retryAfterSeconds}s` }];
      }
      return error;
    }
  }
}

/** Native Gemini error reply. */
export function renderGeminiError(p: Problem): JsonReply {
  const error = describe(p);
  return { kind: 'json', status: error.code, headers: retryHeaders(p), body: { error } };
}

/** A stream chunk with top-level `error`, which the Gen AI SDK turns into an ApiError (§3.4). */
export function geminiStreamError(): { error: GoogleRpcError } {
  return { error: { code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' } };
}
