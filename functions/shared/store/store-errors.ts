/**
 * What a DynamoDB failure means to the client. When the store cannot be reached or is throttling us,
 * the request fails with 503 before any upstream call: we never serve tokens we cannot bill.
 */
import { StoreUnavailableError } from '../errors/gateway-errors';

/** The message every store outage shows the client. */
export const STORE_UNAVAILABLE_MESSAGE = "The gateway's data store is unavailable. Please retry your request in a few seconds.";

/** Socket-level error codes (Node.js `errno` names) meaning "could not talk to DynamoDB". */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);

/**
 * Error names meaning "DynamoDB is there but will not serve us now" (DynamoDB API Reference, "Common
 * Errors" and per-operation errors), plus the SDK's own timeout/credential failures. A missing table
 * (`ResourceNotFoundException`) is a deployment fault the client cannot fix either: same 503.
 */
const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'CredentialsProviderError',
  'ResourceNotFoundException',
  'UnrecognizedClientException',
  'AccessDeniedException',
]);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/** True when `err` is a failure to reach or use DynamoDB at all (as opposed to a failed condition or a bug). */
export function isStoreUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as SdkErrorShape;
  if (typeof e.code === 'string' && NETWORK_ERROR_CODES.has(e.code)) return true;
  if (typeof e.name === 'string' && UNAVAILABLE_ERROR_NAMES.has(e.name)) return true;
  const status = e.$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 500) return true;
  // Node wraps some socket failures (e.g. AggregateError from happy-eyeballs); look one level down.
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== err && isStoreUnavailable(cause)) return true;
  const inner = (err as { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.some((x) => isStoreUnavailable(x));
}

/**
 * Maps `err` to the error the caller should throw: store outages become
 * `StoreUnavailableError` (OpenAI SDK: `InternalServerError`, which it retries); anything
 * else is returned unchanged.
 */
export function toStoreError(err: unknown): unknown {
  if (isStoreUnavailable(err)) return new StoreUnavailableError(STORE_UNAVAILABLE_MESSAGE, { cause: err });
  return err;
}

/** Whether this container's last store call failed with an outage (cleared by the next success). */
let lastCallFailed = false;

/**
 * True when this container's last store call failed with an outage. A hold is then never predicted
 * (billing/hold.ts): no upstream is connected before the store has answered again.
 */
export function storeRecentlyFailed(): boolean {
  return lastCallFailed;
}

/**
 * Runs one store call and maps its failure with {@link toStoreError}.
 * @throws StoreUnavailableError (503) when DynamoDB is unreachable, throttling or failing.
 */
export async function storeCall<T>(op: () => Promise<T>): Promise<T> {
  try {
    const out = await op();
    lastCallFailed = false;
    return out;
  } catch (err) {
    if (isStoreUnavailable(err)) lastCallFailed = true;
    throw toStoreError(err);
  }
}
