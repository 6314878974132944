/**
 * The settle queue's consumer: each message is one settle (settle-queue.ts), applied with the same
 * idempotent transaction as in-process settles. Failures are reported per message (SQS partial batch
 * responses, `ReportBatchItemFailures`), so one bad record never re-delivers the others; a message
 * that keeps failing goes to the dead-letter queue after the queue's maxReceiveCount.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { logger } from '../observability/logger';
import { recordSettlesRetried } from '../observability/metrics';
import { settleRecord } from './lease-settle';
import { balanceMessageSchema, queueBalanceAction, settleMessageSchema } from './settle-queue';
import { watchBalance, type BalanceDispatch } from './balance-watch';

/**
 * Applies every record; returns the ids of those to retry. A settle that lands is followed by the
 * balance watch (balance-watch.ts, reading the account when this container has no view of it; its
 * follow-ups are queued as messages of their own); a balance message (a crossing's follow-up) is run
 * by `runBalance`, which throws to be retried (payments/auto-top-up.ts: idempotent).
 */
export async function consumeSettleMessages(records: readonly SQSRecord[], runBalance: BalanceDispatch): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of records) {
    let parsed;
    try {
      const body: unknown = JSON.parse(record.body);
      const balance = balanceMessageSchema.safeParse(body);
      if (balance.success) {
        await runBalance(balance.data.balance).catch((err: unknown) => {
          logger.warn('balance action failed; SQS will deliver it again', { messageId: record.messageId, kind: balance.data.balance.kind, error: err as Error });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        });
        continue;
      }
      parsed = settleMessageSchema.parse(body);
    } catch (err) {
      // Unreadable forever: let it reach the dead-letter queue for a human.
      logger.error('settle message is not readable', { messageId: record.messageId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
      continue;
    }
    try {
      const r = await settleRecord(parsed.hold, parsed.outcome);
      if (!r.alreadySettled) recordSettlesRetried();
      if (!r.alreadySettled && parsed.outcome.kind === 'bill') await watchBalance(parsed.hold.accountId, { keyHash: parsed.hold.keyHash, heldNanoUsd: parsed.hold.holdNanoUsd, read: true }, queueBalanceAction);
      logger.info('queued settle applied', { requestId: parsed.hold.requestId, kind: parsed.outcome.kind, alreadySettled: r.alreadySettled, costNanoUsd: r.costNanoUsd });
    } catch (err) {
      logger.warn('queued settle failed; SQS will deliver it again', { requestId: parsed.hold.requestId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}
