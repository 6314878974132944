/**
 * Errors of store/dynamo-json.ts, made the SDK's way so every caller's checks keep working:
 * `instanceof ConditionalCheckFailedException` (with `Item`), `TransactionCanceledException` with
 * `CancellationReasons` (items still marshalled, as the SDK leaves them), `name`, `$fault` and
 * `$metadata.httpStatusCode` (store-errors.ts). Which errors are retried, and how long to wait, is the
 * SDK's standard retry strategy's own classification and delays (`@smithy/core/retry`).
 */
import {
  ConditionalCheckFailedException, DynamoDBServiceException, InternalServerError, ItemCollectionSizeLimitExceededException,
  ProvisionedThroughputExceededException, RequestLimitExceeded, ResourceNotFoundException, ThrottlingException,
  TransactionCanceledException, TransactionConflictException, TransactionInProgressException,
} from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETRY_DELAY_BASE, MAXIMUM_RETRY_DELAY, THROTTLING_RETRY_DELAY_BASE, isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { backoffMs } from '../retry/backoff';

type ExceptionClass = (new (opts: { message: string; $metadata: object } & Record<string, unknown>) => DynamoDBServiceException) & { shapeId: string };

/**
 * The errors a request-path call can meet, by the name in `__type` (DynamoDB API Reference, "Errors");
 * keyed by the SDK's `shapeId` (`com.amazonaws.dynamodb#Name`), which survives minification.
 */
const EXCEPTIONS: Record<string, ExceptionClass> = Object.fromEntries(
  [
    ConditionalCheckFailedException, TransactionCanceledException, TransactionConflictException, TransactionInProgressException,
    ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException, ResourceNotFoundException,
    InternalServerError, ItemCollectionSizeLimitExceededException,
  ].map((c) => [c.shapeId.slice(c.shapeId.indexOf('#') + 1), c as unknown as ExceptionClass]),
);

/**
 * The SDK-shaped error of a non-200 answer: its class when known, else a `DynamoDBServiceException`
 * named after `__type` (e.g. `ValidationException`, `UnrecognizedClientException`).
 */
export function errorFromResponse(status: number, text: string, attempts: number, totalRetryDelay: number): Error {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // A proxy's HTML error page: the status says enough.
  }
  const type = typeof body.__type === 'string' ? body.__type : '';
  const name = type.slice(type.lastIndexOf('#') + 1) || (status >= 500 ? 'InternalServerError' : 'UnknownError');
  const { __type: _type, message, Message, ...members } = body;
  const $metadata = { httpStatusCode: status, attempts, totalRetryDelay };
  const opts = { ...members, message: String(message ?? Message ?? `DynamoDB answered ${status}`), $metadata };
  const Known = EXCEPTIONS[name];
  if (Known !== undefined) return new Known(opts);
  return new DynamoDBServiceException({ ...opts, name, $fault: status >= 500 ? 'server' : 'client' });
}

/** True when the SDK's standard strategy would retry `err`: throttling, 5xx, timeouts, dropped connections. */
export function isRetryable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as Parameters<typeof isTransientError>[0];
  return isThrottlingError(e) || isTransientError(e) || isServerError(e);
}

/**
 * The wait before retry number `attempt` (1-based), ms: full jitter over `base · 2^(attempt-1)`,
 * base 500 ms for throttling and 100 ms otherwise, capped at 20 s (the SDK's standard strategy).
 */
export function retryDelayMs(err: unknown, attempt: number): number {
  const throttled = isThrottlingError(err as Parameters<typeof isThrottlingError>[0]);
  return backoffMs(attempt - 1, { baseMs: throttled ? THROTTLING_RETRY_DELAY_BASE : DEFAULT_RETRY_DELAY_BASE, capMs: MAXIMUM_RETRY_DELAY, jitter: 'full' });
}
