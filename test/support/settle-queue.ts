/**
 * Signals of the gateway's durable settle path (local/settle-runner.ts) for tests that must know that
 * nothing more is coming: awaited instead of a fixed wall-clock wait.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { vi } from 'vitest';
import { returnAllLeases } from '../../functions/shared/billing/lease';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import type { RunningGateway } from '../../local/gateway';

/** Time between two looks (`vi.waitFor`'s interval, ms). */
const POLL_MS = 50;

/**
 * Resolves once the settle queue holds no message: none visible, none in flight (a message is invisible
 * from its receive until the poller deletes it after the settle handler ran it, or until its visibility
 * timeout when the handler failed it) and none delayed. Everything queued before the call has then run.
 * @throws Error when the queue is not empty within `ms`.
 */
export async function settleQueueDrained(gw: RunningGateway, ms = 30_000): Promise<void> {
  const sqs = new SQSClient({
    endpoint: gw.settle.sqsEndpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
  try {
    await vi.waitFor(
      async () => {
        const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: gw.settle.queueUrl, AttributeNames: [...names] }));
        if (!names.every((n) => Number(Attributes[n] ?? 0) === 0)) throw new Error(`settle queue not drained within ${ms} ms: ${JSON.stringify(Attributes)}`);
      },
      { timeout: ms, interval: POLL_MS },
    );
  } finally {
    sqs.destroy();
  }
}

/**
 * Resolves once the account's root item holds nothing (`heldNanoUsd` and `heldFreeTokens` 0), returning
 * this process's credit leases at once on each look (as at shutdown). A lease is returned only when no
 * request rides it, and a request leaves its lease just after its ledger entry is written, so one
 * return right after the last entry appears can miss it: this looks again until nothing is held.
 * @throws Error when a hold stays on the account for `ms`.
 */
export async function holdsReturned(accountId: string, ms = 30_000): Promise<void> {
  await vi.waitFor(
    async () => {
      await returnAllLeases();
      const root = (await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }))).Item ?? {};
      if (root.heldNanoUsd || root.heldFreeTokens) throw new Error(`holds still on ${accountId} after ${ms} ms`);
    },
    { timeout: ms, interval: POLL_MS },
  );
}

/**
 * Waits until the account's billing in this process is at rest: every hold on its root item settled
 * (its requests' settles run after their answers went out) and this process's credit leases returned at
 * once (as at shutdown, instead of after their idle time; a return runs the balance watch, which may
 * queue an action), the settle queue drained (queued settles and balance actions run: Stripe charges,
 * emails), and the Stripe stand-in's webhooks delivered (when the gateway has one). A step can start
 * the one before it again (a webhook's credit, a charge's failure), so the round runs twice.
 * @throws Error when a hold stays on the account for `ms`.
 */
export async function billingAtRest(gw: RunningGateway, accountId: string, ms = 30_000): Promise<void> {
  for (let round = 0; round < 2; round++) {
    await holdsReturned(accountId, ms);
    await settleQueueDrained(gw);
    await gw.stripe?.standIn?.webhooks.idle();
  }
}
