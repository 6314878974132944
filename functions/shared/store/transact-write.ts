/** One TransactWriteItems call through the container's client, with outages mapped to 503. */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { TransactWriteCommand } from './dynamo-commands';
import { documentClient } from './dynamo';
import { storeCall } from './store-errors';
import { retryOnConflict } from './transaction-retry';

/** The items of one transaction (at most 100; DynamoDB API Reference, TransactWriteItems). */
export type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/**
 * Writes `items` atomically. With `retryConflicts` (default true) a `TransactionConflict` cancellation
 * is retried with jittered backoff; a failed condition surfaces as `TransactionCanceledException`
 * (read it with `cancellationCodes`).
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable; the SDK's error otherwise.
 */
export async function transactWrite(items: TransactItems, opts: { retryConflicts?: boolean } = {}): Promise<void> {
  const once = async () => {
    await storeCall(() => documentClient().send(new TransactWriteCommand({ TransactItems: items })));
  };
  await (opts.retryConflicts === false ? once() : retryOnConflict(once));
}
