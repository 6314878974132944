/**
 * Errors of the store's JSON-protocol calls (aws/aws-json.ts), made the SDK's way so every caller's
 * checks keep working: `instanceof ConditionalCheckFailedException` (with `Item`),
 * `TransactionCanceledException` with `CancellationReasons` (items still marshalled, as the SDK leaves
 * them), `name`, `$fault` and `$metadata.httpStatusCode` (store-errors.ts). Only the exception classes
 * of `@aws-sdk/client-dynamodb` are imported (~2 KB bundled), not its client.
 */
import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  InternalServerError,
  ItemCollectionSizeLimitExceededException,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactionInProgressException,
} from '@aws-sdk/client-dynamodb';
import { errorName, type AwsJsonMetadata } from '../aws/aws-json';

type ExceptionClass = (new (opts: { message: string; $metadata: object } & Record<string, unknown>) => DynamoDBServiceException) & { shapeId: string };

/**
 * The errors a request-path call can meet, by the name in `__type` (DynamoDB API Reference, "Errors");
 * keyed by the SDK's `shapeId` (`com.amazonaws.dynamodb#Name`), which survives minification.
 */
const EXCEPTIONS: Record<string, ExceptionClass> = Object.fromEntries(
  [
    ConditionalCheckFailedException,
    TransactionCanceledException,
    TransactionConflictException,
    TransactionInProgressException,
    ProvisionedThroughputExceededException,
    RequestLimitExceeded,
    ThrottlingException,
    ResourceNotFoundException,
    InternalServerError,
    ItemCollectionSizeLimitExceededException,
  ].map((c) => [c.shapeId.slice(c.shapeId.indexOf('#') + 1), c as unknown as ExceptionClass]),
);

/**
 * The SDK-shaped error of a non-200 DynamoDB answer: its class when known, else a
 * `DynamoDBServiceException` named after `__type` (e.g. `ValidationException`, `UnrecognizedClientException`).
 */
export function dynamoErrorFromResponse(status: number, body: Record<string, unknown>, $metadata: AwsJsonMetadata): Error {
  const name = errorName(status, body);
  const { __type: _type, message, Message, ...members } = body;
  const opts = { ...members, message: String(message ?? Message ?? `DynamoDB answered ${status}`), $metadata };
  const Known = EXCEPTIONS[name];
  if (Known !== undefined) return new Known(opts);
  return new DynamoDBServiceException({ ...opts, name, $fault: status >= 500 ? 'server' : 'client' });
}
