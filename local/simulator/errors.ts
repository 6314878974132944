/**
 * Every error the simulator sends, in the shape of the route's wire (manifest `wire`) with each host's
 * own wording: OpenAI-shaped `{"error":{"message","type","param","code"}}` (DeepSeek's messages;
 * MiniMax's `base_resp`, some statuses as HTTP 200), Anthropic `{"type":"error","error":{"type",
 * "message"},"request_id"}`, Gemini's Google RPC `{"error":{"code","message","status","details"}}`
 * (providers.md §1.5, §2.7, §3.5, §4.5, §5.4).
 */
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue.js';
import type { WireProtocol, ProviderName } from '../../functions/shared/providers/manifest.js';
import { jsonEvent, type JsonReply, type SseEvent } from './deliver.js';
import type { Route } from './routes.js';
import type { Fault, Problem } from './types.js';

/** OpenAI's message, type and code per status. */
const OPENAI_STATUS: Record<number, [string, string, string | null]> = {
  400: ['Simulated bad request.', 'invalid_request_error', null],
  401: ['Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'],
  402: ['Insufficient Balance', 'invalid_request_error', 'insufficient_balance'],
  403: ['Country, region, or territory not supported', 'request_forbidden', 'unsupported_country_region_territory'],
  404: ['Not found.', 'invalid_request_error', null],
  408: ['Request timed out.', 'timeout', null],
  429: ['Rate limit reached for requests. Please try again in 1s.', 'requests', 'rate_limit_exceeded'],
  500: ['The server had an error while processing your request. Sorry about that!', 'server_error', null],
  502: ['Bad gateway.', 'server_error', null],
  503: ['The engine is currently overloaded, please try again later.', 'server_error', null],
  504: ['Gateway timeout.', 'server_error', null],
};
/** DeepSeek's one-line meanings per status. */
const DEEPSEEK_STATUS: Record<number, string> = {
  400: 'Invalid Format',
  401: 'Authentication Fails',
  402: 'Insufficient Balance',
  422: 'Invalid Parameters',
  429: 'Rate Limit Reached',
  500: 'Server Error',
  503: 'Server Overloaded',
};
/** MiniMax `base_resp` codes of the statuses it reports as HTTP 200. */
const MINIMAX_200: Record<number, [number, string]> = {
  402: [1008, 'insufficient balance'],
  408: [1001, 'request timeout'],
  429: [1002, 'rate limit exceeded(RPM)'],
  500: [1000, 'unknown error'],
  504: [1001, 'request timeout'],
};
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};
const ANTHROPIC_STATUS: Record<number, string> = {
  429: 'Number of request tokens has exceeded your per-minute rate limit.',
  500: 'Internal server error',
  529: 'Overloaded',
};
const GEMINI_CODES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
const GEMINI_STATUS: Record<number, string> = {
  429: 'You exceeded your current quota, please check your plan and billing details.',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'Deadline expired before operation could complete.',
};

/** An error before it takes its wire's shape; `type`/`param`/`code` are OpenAI's, `details` Gemini's. */
interface Described {
  status: number;
  message: string;
  type?: string;
  param?: string | null;
  code?: string | null;
  details?: unknown[];
}

/** Key as echoed in error messages: masked like the real providers do. */
function maskKey(key: string | undefined): string {
  if (!key) return '***';
  return key.length <= 8 ? key : `${key.slice(0, 3)}…${key.slice(-4)}`;
}

function describeStatus(wire: WireProtocol, provider: ProviderName | undefined, p: Extract<Problem, { kind: 'status' }>): Described {
  const simulated = `Simulated HTTP ${p.status}.`;
  if (wire === 'anthropic') return { status: p.status, message: ANTHROPIC_STATUS[p.status] ?? simulated };
  if (wire === 'gemini') {
    const details =
      p.status === 429 && p.retryAfterSeconds !== undefined
        ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${p.retryAfterSeconds}s` }] }
        : {};
    return { status: p.status, message: GEMINI_STATUS[p.status] ?? simulated, ...details };
  }
  const [message, type, code] = OPENAI_STATUS[p.status] ?? [simulated, p.status >= 500 ? 'server_error' : 'invalid_request_error', null];
  return { status: p.status, message: (provider === 'deepseek' ? DEEPSEEK_STATUS[p.status] : undefined) ?? message, type, code };
}

function describe(wire: WireProtocol, provider: ProviderName | undefined, p: Problem): Described {
  const by = <T>(openai: T, anthropic: T, gemini: T): T => (wire === 'anthropic' ? anthropic : wire === 'gemini' ? gemini : openai);
  const deepseek = provider === 'deepseek';
  switch (p.kind) {
    case 'auth':
      if (p.reason === 'missing') {
        return by(
          {
            status: 401,
            message:
              "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          },
          { status: 401, message: 'x-api-key header is required' },
          {
            status: 403,
            message:
              "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
          },
        );
      }
      return by<Described>(
        deepseek
          ? { status: 401, message: `Authentication Fails, Your api key: ${maskKey(p.key)} is invalid`, type: 'authentication_error', code: 'invalid_api_key' }
          : { status: 401, message: `Incorrect API key provided: ${maskKey(p.key)}.`, code: 'invalid_api_key' },
        { status: 401, message: 'invalid x-api-key' },
        {
          status: 400,
          message: 'API key not valid. Please pass a valid API key.',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'API_KEY_INVALID',
              domain: 'googleapis.com',
              metadata: { service: 'generativelanguage.googleapis.com' },
            },
          ],
        },
      );
    case 'model-not-found':
      return by<Described>(
        deepseek || provider === 'minimax'
          ? { status: 400, message: 'Model Not Exist', param: 'model', code: 'invalid_request_error' }
          : { status: 404, message: `The model \`${p.model}\` does not exist or you do not have access to it.`, param: 'model', code: 'model_not_found' },
        { status: 404, message: `model: ${p.model}` },
        {
          status: 404,
          message: `models/${p.model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
        },
      );
    case 'bad-request':
      return { status: 400, message: p.message, param: p.param ?? null, code: p.code ?? null };
    case 'no-route':
      return { status: 404, message: by(`Invalid URL (${p.method} ${p.path})`, 'Not Found', `Method not found: ${p.method} ${p.path}`) };
    case 'context-length': {
      // Each provider's words for a prompt over the window (public issue threads quote them).
      const { limit, tokens } = p;
      if (deepseek) {
        const message = `This model's maximum context length is ${limit} tokens. However, you requested ${tokens} tokens (${tokens} in the messages, 0 in the completion). Please reduce the length of the messages or completion.`;
        return { status: 400, message, code: 'invalid_request_error' };
      }
      return by<Described>(
        {
          status: 400,
          message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
          param: 'messages',
          code: 'context_length_exceeded',
        },
        { status: 400, message: `prompt is too long: ${tokens} tokens > ${limit} maximum` },
        { status: 400, message: `The input token count (${tokens}) exceeds the maximum number of tokens allowed (${limit}).` },
      );
    }
    case 'status':
      return describeStatus(wire, provider, p);
  }
}

/** The body of `d` in the wire's shape. */
function errorBody(wire: WireProtocol, d: Described, requestId: string): unknown {
  if (wire === 'anthropic')
    return {
      type: 'error',
      error: { type: ANTHROPIC_TYPES[d.status] ?? (d.status >= 500 ? 'api_error' : 'invalid_request_error'), message: d.message },
      request_id: requestId,
    };
  if (wire === 'gemini') {
    const status = GEMINI_CODES[d.status] ?? (d.status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
    return { error: { code: d.status, message: d.message, status, ...(d.details ? { details: d.details } : {}) } };
  }
  return { error: { message: d.message, type: d.type ?? 'invalid_request_error', param: d.param ?? null, code: d.code ?? null } };
}

/** `p` as the route's provider sends it; `requestId` goes where the provider has one. */
export function renderProblem({ provider, wire }: Route, p: Problem, requestId: string): JsonReply {
  const retry =
    p.kind !== 'status'
      ? {}
      : {
          ...(p.retryAfterSeconds === undefined ? {} : { 'retry-after': String(p.retryAfterSeconds) }),
          ...(p.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(p.retryAfterMs) }),
        };
  const headers = { ...(wire === 'gemini' ? {} : { [wire === 'anthropic' ? 'request-id' : 'x-request-id']: requestId }), ...retry };
  const minimax200 = provider === 'minimax' && p.kind === 'status' ? MINIMAX_200[p.status] : undefined;
  if (minimax200) {
    const [status_code, status_msg] = minimax200;
    const body = {
      id: requestId,
      choices: null,
      created: Math.floor(Date.now() / 1000),
      object: 'chat.completion',
      usage: { total_tokens: 0 },
      input_sensitive: false,
      output_sensitive: false,
      base_resp: { status_code, status_msg },
    };
    return { kind: 'json', status: 200, headers, body };
  }
  const d = describe(wire, provider, p);
  const body = errorBody(wire, d, requestId);
  if (provider !== 'minimax') return { kind: 'json', status: d.status, headers, body };
  const code = d.status === 401 ? 1004 : d.status === 400 ? 2013 : 1000;
  return { kind: 'json', status: d.status, headers, body: { ...(body as object), base_resp: { status_code: code, status_msg: d.message } } };
}

/** The status a provider answers when overloaded: a mid-stream error fault on a buffered request. */
export function overloadStatus({ provider, wire }: Route): number {
  return wire === 'anthropic' ? 529 : provider === 'openai' ? 500 : 503;
}

/** The wire's mid-stream error event (the SDKs throw on it): the body of its overload error. */
export function streamErrorEvent(wire: WireProtocol, requestId: string): SseEvent {
  const status = wire === 'anthropic' ? 529 : wire === 'gemini' ? 503 : 500;
  return jsonEvent(errorBody(wire, describe(wire, undefined, { kind: 'status', status }), requestId), wire === 'anthropic' ? { event: 'error' } : {});
}

/**
 * The problem a `context-length` fault answers with. The window defaults to the smallest context window
 * of the provider's chat models in the catalogue (128K for a provider it does not name yet).
 */
export function contextLengthProblem(fault: Extract<Fault, { kind: 'context-length' }>, provider: ProviderName): Extract<Problem, { kind: 'context-length' }> {
  const windows = [...CATALOGUE.values()]
    .filter((e) => e.kind === 'chat')
    .flatMap((e) => e.targets)
    .filter((t) => t.provider === provider)
    .map((t) => t.contextWindow);
  const limit = fault.limit ?? (windows.length === 0 ? 128_000 : Math.min(...windows));
  return { kind: 'context-length', limit, tokens: fault.tokens ?? limit + 1 };
}
