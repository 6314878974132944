/**
 * Error bodies of the OpenAI-shaped providers: `{"error":{"message","type","param","code"}}`
 * (providers.md §1.5), with each host's own wording: DeepSeek §4.5, Groq §6 (`model_decommissioned`),
 * MiniMax §5.4 (`base_resp`, and HTTP 200 errors). Context-window errors: `provider-errors.ts`.
 */
import type { JsonReply } from './deliver.js';
import { deepSeekContextMessage, openAIContextMessage } from './provider-errors.js';
import { maskKey, type Problem, retryHeaders, type SimProvider } from './types.js';

interface OpenAIError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

const STATUS_ERRORS: Record<number, Omit<OpenAIError, 'param'>> = {
  400: { message: 'Simulated bad request.', type: 'invalid_request_error', code: null },
  401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
  402: { message: 'Insufficient Balance', type: 'invalid_request_error', code: 'insufficient_balance' },
  403: { message: 'Country, region, or territory not supported', type: 'request_forbidden', code: 'unsupported_country_region_territory' },
  404: { message: 'Not found.', type: 'invalid_request_error', code: null },
  408: { message: 'Request timed out.', type: 'timeout', code: null },
  429: { message: 'Rate limit reached for requests. Please try again in 1s.', type: 'requests', code: 'rate_limit_exceeded' },
  500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  502: { message: 'Bad gateway.', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
  504: { message: 'Gateway timeout.', type: 'server_error', code: null },
};

/** DeepSeek's documented one-line meanings per status (providers.md §4.5). */
const DEEPSEEK_MESSAGES: Record<number, string> = {
  400: 'Invalid Format', 401: 'Authentication Fails', 402: 'Insufficient Balance', 422: 'Invalid Parameters',
  429: 'Rate Limit Reached', 500: 'Server Error', 503: 'Server Overloaded',
};

/** MiniMax `base_resp` codes for statuses it reports as HTTP 200 (providers.md §5.4). */
const MINIMAX_200_CODES: Record<number, { code: number; msg: string }> = {
  402: { code: 1008, msg: 'insufficient balance' },
  408: { code: 1001, msg: 'request timeout' },
  429: { code: 1002, msg: 'rate limit exceeded(RPM)' },
  500: { code: 1000, msg: 'unknown error' },
  504: { code: 1001, msg: 'request timeout' },
};

function describe(provider: SimProvider, p: Problem): { status: number; error: OpenAIError } {
  switch (p.kind) {
    case 'auth': {
      if (p.reason === 'missing') {
        return { status: 401, error: { message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", type: 'invalid_request_error', param: null, code: null } };
      }
      const message = provider === 'deepseek'
        ? `Authentication Fails, Your api key: ${maskKey(p.key)} is invalid`
        : `Incorrect API key provided: ${maskKey(p.key)}.`;
      const type = provider === 'deepseek' ? 'authentication_error' : 'invalid_request_error';
      return { status: 401, error: { message, type, param: null, code: 'invalid_api_key' } };
    }
    case 'model-not-found':
      if (provider === 'deepseek' || provider === 'minimax') {
        return { status: 400, error: { message: 'Model Not Exist', type: 'invalid_request_error', param: 'model', code: 'invalid_request_error' } };
      }
      return { status: 404, error: { message: `The model \`${p.model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } };
    case 'bad-request':
      return { status: 400, error: { message: p.message, type: 'invalid_request_error', param: p.param ?? null, code: p.code ?? null } };
    case 'no-route':
      return { status: 404, error: { message: `Invalid URL (${p.method} ${p.path})`, type: 'invalid_request_error', param: null, code: null } };
    case 'context-length':
      if (provider === 'deepseek') {
        return { status: 400, error: { message: deepSeekContextMessage(p), type: 'invalid_request_error', param: null, code: 'invalid_request_error' } };
      }
      return { status: 400, error: { message: openAIContextMessage(p), type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
    case 'status': {
      const base = STATUS_ERRORS[p.status] ?? { message: `Simulated HTTP ${p.status}.`, type: p.status >= 500 ? 'server_error' : 'invalid_request_error', code: null };
      const message = provider === 'deepseek' ? (DEEPSEEK_MESSAGES[p.status] ?? base.message) : base.message;
      return { status: p.status, error: { ...base, message, param: null } };
    }
  }
}

/** Render `p` for an OpenAI-shaped provider (everything except Anthropic and Gemini). */
export function renderOpenAIStyleError(provider: SimProvider, p: Problem, requestId: string): JsonReply {
  const headers = { 'x-request-id': requestId, ...retryHeaders(p) };
  if (provider === 'minimax') {
    const native = p.kind === 'status' ? MINIMAX_200_CODES[p.status] : undefined;
    if (native) {
      // MiniMax reports these as a 200 whose base_resp carries the failure (providers.md §5.4).
      return { kind: 'json', status: 200, headers, body: { id: requestId, choices: null, created: Math.floor(Date.now() / 1000), object: 'chat.completion', usage: { total_tokens: 0 }, input_sensitive: false, output_sensitive: false, base_resp: { status_code: native.code, status_msg: native.msg } } };
    }
  }
  const { status, error } = describe(provider, p);
  if (provider === 'minimax') {
    const code = status === 401 ? 1004 : status === 400 ? 2013 : 1000;
    return { kind: 'json', status, headers, body: { error, base_resp: { status_code: code, status_msg: error.message } } };
  }
  return { kind: 'json', status, headers, body: { error } };
}

/** OpenAI-style mid-stream error payload: the SDKs throw on a `data:` object with top-level `error`. */
export function openAIStreamError(): { error: OpenAIError } {
  return { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } };
}
