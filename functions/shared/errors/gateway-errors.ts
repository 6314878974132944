/**
 * The gateway's one error family. Every failure the client can see is a {@link GatewayError} carrying
 * the HTTP status and the four fields of OpenAI's error body, so that the official `openai` SDK maps it
 * to the same exception class it would raise against OpenAI (400 BadRequestError, 401 AuthenticationError,
 * 404 NotFoundError, 429 RateLimitError, >=500 InternalServerError; source: openai-node `error.ts`).
 *
 * Body shape (OpenAI API reference, "Error codes"): `{"error":{"message","type","param","code"}}`,
 * with `param` and `code` possibly null.
 */

/** OpenAI's `error.type` values that modelmux emits. */
export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'permission_error'
  | 'insufficient_quota'
  | 'rate_limit_error'
  /** OpenAI's type of a 429 on the requests-per-minute limit (providers.md §1.5). */
  | 'requests'
  | 'server_error'
  | 'timeout_error'
  | 'service_unavailable';

/** The JSON body of every error response: OpenAI's shape exactly. */
export interface OpenAIErrorBody {
  error: { message: string; type: OpenAIErrorType; param: string | null; code: string | null };
}

/** Options shared by every error constructor. */
export interface GatewayErrorInit {
  param?: string | null;
  code?: string | null;
  /** Extra response headers (e.g. `retry-after`, `allow`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * A client-visible failure: HTTP `status` plus the OpenAI error fields.
 * Throw it anywhere below the handler; the handler renders it with {@link toErrorBody}.
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: OpenAIErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(status: number, type: OpenAIErrorType, message: string, init: GatewayErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    // Each subclass names itself (`override name`): the bundles are minified without keepNames, so
    // `new.target.name` would be a mangled identifier.
    this.name = 'GatewayError';
    this.status = status;
    this.type = type;
    this.param = init.param ?? null;
    this.code = init.code ?? null;
    this.headers = init.headers ?? {};
  }
}

/** 400: the body is not JSON, or fails validation. `param` names the offending field. */
export class InvalidRequestError extends GatewayError {
  override name = 'InvalidRequestError';
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(400, 'invalid_request_error', message, { code: 'invalid_request', ...init });
  }
}

/** 401: missing, malformed, unknown or revoked API key (OpenAI: type `invalid_request_error`, providers.md §1.5). */
export class AuthenticationError extends GatewayError {
  override name = 'AuthenticationError';
  constructor(message: string, code: string | null = 'invalid_api_key') {
    super(401, 'invalid_request_error', message, { code });
  }
}

/**
 * 402: what the request could cost is more than the account (or the key's spend limit) has left,
 * checked by the hold before any upstream call (billing/hold.ts). The message names what was asked
 * and what is affordable.
 */
export class InsufficientCreditError extends GatewayError {
  override name = 'InsufficientCreditError';
  constructor(message = 'Your account has no free tokens or credit left. Add credit to continue.') {
    super(402, 'insufficient_quota', message, { code: 'insufficient_quota' });
  }
}

/** 404: unknown model, or unknown path (OpenAI: type `invalid_request_error`, code `model_not_found`; providers.md §1.5). */
export class NotFoundError extends GatewayError {
  override name = 'NotFoundError';
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(404, 'invalid_request_error', message, init);
  }
}

/** 405: the path exists but not with this method; `allow` lists the methods it takes. */
export class MethodNotAllowedError extends GatewayError {
  override name = 'MethodNotAllowedError';
  /** @param hint appended to the message (the base URL, app/dispatch.ts). */
  constructor(method: string, path: string, allow: readonly string[], hint = '') {
    super(405, 'invalid_request_error', `Method ${method} is not allowed on ${path}. Use ${allow.join(', ')}.${hint}`, {
      code: 'method_not_allowed',
      headers: { allow: allow.join(', ') },
    });
  }
}

/** 413: the request body is larger than the gateway accepts (bytes). */
export class PayloadTooLargeError extends GatewayError {
  override name = 'PayloadTooLargeError';
  constructor(limitBytes: number) {
    super(413, 'invalid_request_error', `Request body exceeds the limit of ${limitBytes} bytes.`, {
      code: 'request_too_large',
    });
  }
}

/**
 * 502/503/504: no upstream model could answer. 502 an upstream answered badly, 503 none was available,
 * 504 every attempt timed out. Our own outages have their own classes below.
 */
export class UpstreamUnavailableError extends GatewayError {
  override name = 'UpstreamUnavailableError';
  constructor(status: 502 | 503 | 504, message: string, init: GatewayErrorInit = {}) {
    super(status, status === 504 ? 'timeout_error' : 'server_error', message, {
      code: status === 504 ? 'upstream_timeout' : 'upstream_unavailable',
      ...init,
    });
  }
}

/**
 * 503: our own store (DynamoDB) is unreachable, throttled or too contended to answer now. Type
 * `server_error` like an upstream outage, so clients retry it alike (OpenAI SDK:
 * `InternalServerError`), with its own code `store_unavailable`: it is not the upstream.
 */
export class StoreUnavailableError extends GatewayError {
  override name = 'StoreUnavailableError';
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(503, 'server_error', message, { code: 'store_unavailable', ...init });
  }
}

/**
 * 503: the gateway's own configuration or a platform service it depends on cannot be used: a secret
 * (upstream keys, origin secret, a BYOK key) cannot be read, sign-in or BYOK is not configured, the
 * sign-in service cannot be reached. Same body as an upstream outage unless `init.code` says more.
 */
export class ConfigUnavailableError extends GatewayError {
  override name = 'ConfigUnavailableError';
  constructor(message: string, init: GatewayErrorInit = {}) {
    super(503, 'server_error', message, { code: 'upstream_unavailable', ...init });
  }
}

/** Renders any error as OpenAI's body; an unknown error becomes a generic 500 without its message. */
export function toErrorBody(err: unknown): OpenAIErrorBody {
  const e = asGatewayError(err);
  return { error: { message: e.message, type: e.type, param: e.param, code: e.code } };
}

/** Narrows anything thrown to a {@link GatewayError}; unknown errors become 500 `server_error`. */
export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(500, 'server_error', 'The gateway had an internal error while processing your request.', {
    cause: err,
  });
}
