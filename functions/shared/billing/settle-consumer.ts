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
import { settleMessageSchema } from './settle-queue';

/** Applies every record; returns the ids of those to retry. */
export async function consumeSettleMessages(records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of records) {
    let parsed;
    try {
      parsed = settleMessageSchema.parse(JSON.parse(record.body));
    } catch (err) {
      // Unreadable forever: let it reach the dead-letter queue for a human.
      logger.error('settle message is not readable', { messageId: record.messageId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
      continue;
    }
    try {
      const r = await settleRecord(parsed.hold, parsed.outcome);
      if (!r.alreadySettled) recordSettlesRetried();
      logger.info('queued settle applied', { requestId: parsed.hold.requestId, kind: parsed.outcome.kind, alreadySettled: r.alreadySettled, costNanoUsd: r.costNanoUsd });
    } catch (err) {
      logger.warn('queued settle failed; SQS will deliver it again', { requestId: parsed.hold.requestId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}
